/**
 * `rxvoice sound "prompt" [--music] [--duration S] -o out.wav`: a text-to-sound task,
 * with its progress on stderr, and the audio written to a file.
 */
import { resolve } from 'node:path';
import { tap } from 'rxjs';
import type { TaskEvent } from '../../client/tasks.js';
import { onePositional, parseCommand, readNumber } from '../args.js';
import { withConnection, type CommandContext } from '../context.js';
import { ExitCode } from '../exit-codes.js';
import { COMMAND_HELP } from '../help.js';
import { writeJson } from '../io.js';
import { startProgress } from '../progress.js';
import { runToEnd } from '../run.js';
import { audioSeconds } from '../audio-info.js';
import { checkWritablePath } from '../../sinks/index.js';
import { AtomicFile } from '../../sinks/atomicFile.js';

/** `rxvoice sound`: run a text-to-sound task and write its audio. Resolves with the exit code. */
export async function soundCommand(argv: string[], context: CommandContext): Promise<number> {
  const { io } = context;
  const { values, positionals } = parseCommand('sound', argv, {
    output: { type: 'string', short: 'o' },
    music: { type: 'boolean' },
    duration: { type: 'string' },
  });
  if (values.help) {
    io.stdout.write(COMMAND_HELP['sound'] as string);
    return ExitCode.ok;
  }
  const prompt = onePositional('sound', positionals, 'prompt');
  // Range rules (at most 10 s) are the client's: a ValidationError, exit code 4.
  const duration = readNumber('sound', values.duration, 'duration');
  const output = resolve(io.cwd ?? process.cwd(), values.output ?? 'sound.wav');
  const audioType = values.music ? 'music' : 'sound';
  // Before the task is created (and paid for): the output must be writable.
  checkWritablePath(output);

  return withConnection(context, async ({ client }) => {
    const progress = startProgress(io.stderr, audioType, { silent: values.json === true });
    try {
      const events$ = client
        .textToSound({ prompt, audio_type: audioType, ...(duration !== undefined ? { duration } : {}) })
        .pipe(
          tap((event: TaskEvent<Uint8Array>) => {
            if (event.type === 'created') {
              progress.update('PENDING', `task ${event.task_id}`);
              if (values.json) writeJson(io.stdout, { type: 'created', task_id: event.task_id });
            } else if (event.type === 'pending') {
              progress.update('PENDING', `task ${event.task_id}, poll ${event.polls}`);
              if (values.json) writeJson(io.stdout, { type: 'pending', task_id: event.task_id, polls: event.polls, elapsedMs: event.elapsedMs });
            } else {
              progress.update('SUCCESS', `run ${event.run_id}, downloading`);
            }
          }),
        );
      const last = await runToEnd(events$, context.signal);
      if (!last || last.type !== 'result') throw new Error('the task ended without a result');
      // whole or not at all: a kill or a full disk mid-write leaves any earlier file as it was
      await AtomicFile.write(output, last.result);
      const seconds = audioSeconds(last.result);
      const summary = {
        type: 'result',
        task_id: last.task_id,
        run_id: last.run_id,
        path: output,
        bytes: last.result.byteLength,
        ...(seconds !== undefined ? { seconds } : {}),
        timing: last.timing,
      };
      if (values.json) writeJson(io.stdout, summary);
      progress.succeed(`wrote ${output}${seconds !== undefined ? ` (${seconds.toFixed(2)} s of audio)` : ''}, run ${last.run_id}`);
      return ExitCode.ok;
    } finally {
      progress.stop();
    }
  });
}
