/**
 * `rxvoice speak "text" | -`: speaks text (or stdin, as a token stream) over a live
 * session, and writes the audio to a WAV file, stdout, and/or the audio device.
 */
import { resolve } from 'node:path';
import type { Writable } from 'node:stream';
import { catchError, EMPTY, merge, of, share, tap, throwError, type Observable } from 'rxjs';
import type { LiveSpeechEvent, SpokenSegment } from '../../live/events.js';
import type { SessionMetrics, SpeechMetrics } from '../../live/metrics.js';
import { concatSegments, resubmitSkipped } from '../../operators/index.js';
import { checkWritablePath, SinkError, toAudioDevice, toWavFile, toWritable } from '../../sinks/index.js';
import { fromTokens } from '../../sources/index.js';
import { LiveSessionError } from '../../core/errors.js';
import { onePositional, parseCommand, readNumber } from '../args.js';
import { audioSeconds } from '../audio-info.js';
import { withConnection, type CommandContext } from '../context.js';
import { ExitCode, UsageError } from '../exit-codes.js';
import { isNothingToSpeak } from '../../live/nothing-to-speak.js';
import { COMMAND_HELP } from '../help.js';
import { writeJson, writeLine, type CliOutput } from '../io.js';
import { startProgress } from '../progress.js';
import { SPEAKABLE_FLAGS, speakableFromFlags } from '../speakable-flags.js';
import { errorOnAbort, runToEnd } from '../run.js';

/** The service's documented default voice. */
export const DEFAULT_VOICE_ID = 1;

/** `rxvoice speak`: speak text or stdin over a live session, to a file, stdout or the speaker. Resolves with the exit code. */
export async function speakCommand(argv: string[], context: CommandContext): Promise<number> {
  const { io } = context;
  const { values, positionals } = parseCommand('speak', argv, {
    output: { type: 'string', short: 'o' },
    play: { type: 'boolean' },
    voice: { type: 'string' },
    language: { type: 'string' },
    'word-timestamps': { type: 'boolean' },
    'idle-timeout': { type: 'string' },
    'speaking-rate': { type: 'string' },
    'resubmit-skipped': { type: 'boolean' },
    ...SPEAKABLE_FLAGS,
  });
  if (values.help) {
    io.stdout.write(COMMAND_HELP['speak'] as string);
    return ExitCode.ok;
  }
  const textArg = onePositional('speak', positionals, 'text to speak (or - for stdin)');
  if (textArg !== '-' && textArg.trim() === '') throw new UsageError('the text to speak is empty', 'speak');
  const output = values.output;
  if (output === undefined && !values.play) throw new UsageError('say where the audio goes: -o FILE (- for stdout) and/or --play', 'speak');
  if (output === '-' && values.json) throw new UsageError('-o - writes audio to stdout; it cannot be combined with --json', 'speak');
  const voiceId = readNumber('speak', values.voice, 'voice') ?? DEFAULT_VOICE_ID;
  // Ranges are checked by the session's schema (ValidationError, exit code 4).
  const idleTimeout = readNumber('speak', values['idle-timeout'], 'idle-timeout');
  const speakingRate = readNumber('speak', values['speaking-rate'], 'speaking-rate');
  const wordTimestamps = values['word-timestamps'] === true;
  const speakable = speakableFromFlags(values, io.cwd ?? process.cwd());
  // Reports go to stdout, unless stdout carries the audio.
  const report: CliOutput = output === '-' ? io.stderr : io.stdout;
  const path = output !== undefined && output !== '-' ? resolve(io.cwd ?? process.cwd(), output) : undefined;
  // Before anything is paid for: the output must be writable.
  if (path !== undefined) checkWritablePath(path);

  return withConnection(context, async ({ client }) => {
    const progress = startProgress(io.stderr, 'speak', { silent: values.json === true });
    const lost: string[] = [];
    let segments = 0;
    let audioTotal = 0;
    let sessionId: string | undefined;
    // Timing as data, from the session (the `metrics` option of speak).
    let timing: SessionMetrics | undefined;
    try {
      const text$: Observable<string> = textArg === '-' ? fromTokens(io.stdin) : of(textArg);
      const speakOperator = client.speak({
        voice_id: voiceId,
        output_format: 'wav',
        word_timestamps: wordTimestamps,
        ...(values.language !== undefined ? { language: values.language } : {}),
        ...(idleTimeout !== undefined ? { idle_timeout: idleTimeout } : {}),
        ...(speakingRate !== undefined ? { speaking_rate: speakingRate } : {}),
        speakable,
        metrics: (report: SpeechMetrics) => {
          if (report.type === 'session') timing = report;
        },
      });
      const events$ = text$.pipe(
        // Opt-in: a resubmitted text is spoken later than its place in the input, which a
        // user asking for a file of the text in order may not want.
        values['resubmit-skipped'] ? resubmitSkipped(speakOperator) : speakOperator,
        tap((event: LiveSpeechEvent) => {
          if (event.type === 'ready') {
            sessionId = event.session_id;
            progress.update('speaking', `session ${event.session_id}`);
            if (values.json) writeJson(io.stdout, { type: 'ready', session_id: event.session_id, run_id: event.run_id });
          } else if (event.type === 'segmentSkipped') {
            if (event.final !== false) lost.push(event.text.trim());
            if (values.json) writeJson(io.stdout, { type: 'skipped', segment_id: event.segment_id, text: event.text, final: event.final !== false });
            else {
              const line = `rxvoice: segment ${event.segment_id} skipped${event.final === false ? ', resubmitted' : ''}: ${JSON.stringify(event.text.trim())}`;
              progress.above(() => writeLine(io.stderr, line));
            }
          } else if (event.type === 'reconnected') {
            progress.above(() => writeLine(io.stderr, `rxvoice: reconnected (attempt ${event.attempt})`));
          }
        }),
      );
      const segments$ = events$.pipe(
        concatSegments(),
        tap((segment: SpokenSegment) => {
          const seconds = audioSeconds(segment.audio) ?? 0;
          const start = audioTotal;
          audioTotal += seconds;
          segments++;
          progress.update('speaking', `segment ${segment.segment_id} (${audioTotal.toFixed(1)} s of audio)`);
          progress.above(() => printSegment(report, segment, start, seconds, values.json === true, wordTimestamps));
        }),
        errorOnAbort(context.signal),
        share(),
      );
      const { sinks, playbackError } = audioSinks(segments$, output, path, values.play === true, io);
      await runToEnd(merge(...sinks), context.signal, 3000);
      const summary = {
        type: 'done',
        session_id: sessionId,
        segments,
        seconds: round(audioTotal),
        ...(path ? { path } : {}),
        skipped: lost,
        ...(timing ? { timing: { connectMs: timing.connectMs, readyMs: timing.readyMs, firstAudioMs: timing.firstAudioMs, totalMs: timing.totalMs } } : {}),
      };
      if (values.json) writeJson(io.stdout, summary);
      if (playbackError()) throw playbackError();
      if (lost.length > 0) {
        throw new LiveSessionError('segments_skipped', `${lost.length} segment(s) could not be synthesized and were not spoken`, { unspoken: lost.join(' ') });
      }
      progress.succeed(`spoke ${segments} segment(s), ${audioTotal.toFixed(2)} s of audio${path ? ` to ${path}` : ''}${timingText(timing)}`);
      return ExitCode.ok;
    } catch (error) {
      // `-` with nothing on standard input: a usage error (exit 2), no file, no session
      if (textArg === '-' && isNothingToSpeak(error)) throw new UsageError('nothing to speak: standard input was empty (or only whitespace)', 'speak');
      throw error;
    } finally {
      progress.stop();
    }
  });
}

/**
 * Where the segments' audio goes: stdout (`-o -`), a WAV file, and/or the audio device. With
 * an output too, a player that fails (no sound card) does not cost the file: its error is
 * kept (`playbackError`) and the command fails with it once the file is finished.
 */
function audioSinks(
  segments$: Observable<SpokenSegment>,
  output: string | undefined,
  path: string | undefined,
  play: boolean,
  io: CommandContext['io'],
): { sinks: Array<Observable<{ type: string }>>; playbackError: () => SinkError | undefined } {
  const sinks: Array<Observable<{ type: string }>> = [];
  if (output === '-') sinks.push(segments$.pipe(toWritable(io.stdout as unknown as Writable, { unwrapWav: true })));
  else if (path !== undefined) sinks.push(segments$.pipe(toWavFile(path)));
  let playbackError: SinkError | undefined;
  if (play) {
    const played$ = segments$.pipe(toAudioDevice({ env: { ...process.env, ...io.env } }));
    // With an output too, a player that fails (no sound card) does not cost the file:
    // the file is finished, then the command fails with the player's error.
    sinks.push(
      sinks.length === 0
        ? played$
        : played$.pipe(
            catchError((error: unknown) => {
              if (!(error instanceof SinkError)) return throwError(() => error);
              playbackError = error;
              return EMPTY;
            }),
          ),
    );
  }
  return { sinks, playbackError: () => playbackError };
}

function printSegment(out: CliOutput, segment: SpokenSegment, start: number, seconds: number, json: boolean, words: boolean): void {
  if (json) {
    writeJson(out, {
      type: 'segment',
      segment_id: segment.segment_id,
      text: segment.text,
      start: round(start),
      seconds: round(seconds),
      bytes: segment.audio.byteLength,
      ...(words ? { word_timestamps: segment.word_timestamps } : {}),
    });
    // One line per word, timed in the output audio (seconds from its start).
    if (words) {
      segment.word_timestamps.forEach((word, index) => {
        writeJson(out, { type: 'word', segment_id: segment.segment_id, index, word: word.word, start: round(start + word.start), end: round(start + word.end) });
      });
    }
    return;
  }
  writeLine(out, `[${segment.segment_id}] ${start.toFixed(2)}-${(start + seconds).toFixed(2)} s  ${segment.text.trim()}`);
  if (words) {
    for (const word of segment.word_timestamps) {
      writeLine(out, `      ${(start + word.start).toFixed(3)}  ${(start + word.end).toFixed(3)}  ${word.word}`);
    }
  }
}

/** `; first audio after 140 ms (connect 61 ms, ready 102 ms)` from the session's metrics. */
function timingText(timing: SessionMetrics | undefined): string {
  if (timing?.firstAudioMs === undefined) return '';
  const ms = (value: number | undefined): string => (value === undefined ? '-' : `${Math.round(value)} ms`);
  return `; first audio after ${ms(timing.firstAudioMs)} (connect ${ms(timing.connectMs)}, ready ${ms(timing.readyMs)})`;
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}
