/**
 * `rxvoice voices` (a table, or JSON lines) and `rxvoice voice create`.
 */
import { resolve } from 'node:path';
import type { Gender, Voice } from '../../core/schemas.js';
import { onePositional, noPositionals, parseCommand, readNumber, requireString } from '../args.js';
import { withConnection, type CommandContext } from '../context.js';
import { ExitCode, UsageError } from '../exit-codes.js';
import { COMMAND_HELP } from '../help.js';
import { checkReadableFile, writeJson, writeLine } from '../io.js';
import { startProgress } from '../progress.js';
import { runToEnd } from '../run.js';

/** `rxvoice voices`: list voices as a table or JSON lines. Resolves with the exit code. */
export async function voicesCommand(argv: string[], context: CommandContext): Promise<number> {
  const { io } = context;
  const { values, positionals } = parseCommand('voices', argv, {});
  if (values.help) {
    io.stdout.write(COMMAND_HELP['voices'] as string);
    return ExitCode.ok;
  }
  // `rxvoice voices list` reads naturally too.
  noPositionals('voices', positionals[0] === 'list' ? positionals.slice(1) : positionals);
  return withConnection(context, async ({ client }) => {
    const voices = (await runToEnd(client.voices.list({ signal: context.signal }), context.signal)) ?? [];
    if (values.json) {
      for (const voice of voices) writeJson(io.stdout, voice);
    } else {
      io.stdout.write(voiceTable(voices));
    }
    return ExitCode.ok;
  });
}

/** The voices as an aligned text table. */
export function voiceTable(voices: readonly Voice[]): string {
  const header = ['ID', 'NAME', 'GENDER', 'AGE', 'LANGUAGE', 'PUBLISHED', 'DESCRIPTION'];
  const rows = voices.map((v) => [
    String(v.id),
    v.voice_name,
    String(v.gender),
    v.age === null ? '-' : String(v.age),
    v.language ?? '-',
    v.is_published ? 'yes' : 'no',
    v.description ?? '',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]): string =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n') + '\n';
}

/** `rxvoice voice create`: clone a voice from an audio sample and print its id. Resolves with the exit code. */
export async function voiceCommand(argv: string[], context: CommandContext): Promise<number> {
  const { io } = context;
  const [sub, ...rest] = argv;
  if (sub === undefined || sub === '-h' || sub === '--help') {
    io.stdout.write(COMMAND_HELP['voice'] as string);
    return sub === undefined ? ExitCode.usage : ExitCode.ok;
  }
  if (sub !== 'create') throw new UsageError(`unknown subcommand voice ${JSON.stringify(sub)} (expected: voice create)`, 'voice');
  const { values, positionals } = parseCommand('voice', rest, {
    name: { type: 'string' },
    gender: { type: 'string' },
    description: { type: 'string' },
    age: { type: 'string' },
    language: { type: 'string' },
    enhance: { type: 'boolean' },
  });
  if (values.help) {
    io.stdout.write(COMMAND_HELP['voice'] as string);
    return ExitCode.ok;
  }
  const name = requireString('voice', values.name, 'name');
  // Allowed values (0, 1, 2, 9; age at least 1) are the client's rules: ValidationError, exit code 4.
  const gender = readNumber('voice', requireString('voice', values.gender, 'gender'), 'gender') as Gender;
  const age = readNumber('voice', values.age, 'age');
  const file = resolve(io.cwd ?? process.cwd(), onePositional('voice', positionals, 'audio sample file'));
  // Before any connection (and before "uploading"): a sample that cannot be read is a
  // file error, exit code 1, as `--help` lists it.
  await checkReadableFile(file, 'the audio sample');

  return withConnection(context, async ({ client }) => {
    const progress = startProgress(io.stderr, 'voice create', { silent: values.json === true });
    try {
      progress.update('uploading', file);
      const created = await runToEnd(
        client.voices.create(
          {
            voice_name: name,
            gender,
            file,
            ...(values.description !== undefined ? { description: values.description } : {}),
            ...(age !== undefined ? { age } : {}),
            ...(values.language !== undefined ? { language: values.language } : {}),
            ...(values.enhance ? { enhance_audio: true } : {}),
          },
          { signal: context.signal },
        ),
        context.signal,
      );
      if (!created) throw new Error('the service answered no voice id');
      if (values.json) writeJson(io.stdout, { voice_id: created.voice_id, voice_name: name });
      progress.above(() => {
        if (!values.json) writeLine(io.stdout, String(created.voice_id));
      });
      progress.succeed(`created voice ${created.voice_id} (${name})`);
      return ExitCode.ok;
    } finally {
      progress.stop();
    }
  });
}
