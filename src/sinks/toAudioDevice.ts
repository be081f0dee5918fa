import { spawn as nodeSpawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { asyncScheduler, type OperatorFunction, type SchedulerLike, type Subscription } from 'rxjs';
import { wavHeader, type PcmFormat } from '../audio/wav.js';
import { pcmSeconds, streamingWavHeader } from '../audio/pcm.js';
import type { SpokenSegment } from '../live/events.js';
import { SinkError, toSinkError } from './errors.js';
import { isPcmChunk, isSpokenSegment, PcmAssembler, segmentIsWav, type PcmSinkInput } from './inputs.js';
import { DEFAULT_PLAYERS, findPlayer, type PlayerCandidate, type PlayerCommand, type PlayerInput } from './players.js';
import { sinkOperator } from './runSink.js';
import { checkOptions } from '../core/validation.js';
import { AudioDeviceOptionsSchema } from './options.js';
import { StreamWriter } from './streamWriter.js';
import { stripId3v1, stripId3v2 } from './id3.js';

/** Options of `toAudioDevice`: which player, where to look for one, how to stop it. */
export interface AudioDeviceOptions {
  /** Play with this command (reading the stream on stdin) instead of looking on PATH. */
  player?: PlayerCommand;
  /** Players looked for on PATH, in order. Default `DEFAULT_PLAYERS` (aplay, paplay, ffplay, play). */
  players?: readonly PlayerCandidate[];
  /** Environment of the player, and the PATH searched. Default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** `child_process.spawn`, replaceable (tests, sandboxes). */
  spawn?: (command: string, args: readonly string[], options: SpawnOptions) => ChildProcess;
  /** After SIGTERM on unsubscribe, SIGKILL follows after this many ms. Default 500. */
  killGraceMs?: number;
  /** Times the kill grace and the wait for a dying player's exit. Default `asyncScheduler`. */
  scheduler?: SchedulerLike;
}

/** Emitted by `toAudioDevice` after each value was handed to the player. */
export interface AudioDevicePlaying {
  type: 'playing';
  /** The player's process id and command. */
  pid: number;
  command: string;
  segments: number;
  /** Bytes sent to the player (WAV header included). */
  bytes: number;
  /** Seconds of PCM sent (0 for compressed formats). */
  seconds: number;
}

/** Emitted by `toAudioDevice` once, last, after the player read everything and exited 0. */
export interface AudioDeviceDone {
  type: 'done';
  pid: number | undefined;
  command: string | undefined;
  segments: number;
  bytes: number;
  seconds: number;
}

/** What `toAudioDevice` emits: `playing` per value, then `done`. */
export type AudioDeviceProgress = AudioDevicePlaying | AudioDeviceDone;

/** What `toAudioDevice` plays: WAV segments, PCM chunks, or segments in mp3/flac/aac. */
export type AudioDeviceInput = PcmSinkInput;

/**
 * How long a broken pipe waits for the player's exit, so that the error carries how it
 * ended and its stderr (`audio open error`) rather than `write EPIPE`: a player that
 * closed its stdin is dying, but a busy machine may take a moment to report it.
 */
const PLAYER_EXIT_WAIT_MS = 5000;

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  error?: Error;
}

/**
 * Plays segments (or PCM chunks) in real time through a system player reading stdin.
 *
 * <span class="informal">The player's pace is the pace of the stream: writes wait for
 * its stdin to drain.</span>
 *
 * On the first value, a player is chosen: `options.player`, else the first of `aplay`,
 * `paplay`, `ffplay -nodisp -autoexit`, `play` (sox) found on PATH that plays the
 * stream's format (WAV: all four; mp3/flac: ffplay, play; aac: ffplay). None found:
 * `SinkError` (reason `'no_player'`) naming them. WAV segments and PCM chunks are sent
 * as ONE WAV stream: a header with streaming sizes (0xFFFFFFFF), then the PCM of each
 * input unwrapped; compressed segments are sent as their bytes (for mp3/aac, ID3 tags
 * of later segments dropped). Last, on macOS, `afplay`, which reads files, not stdin: with
 * it (or any `{ player: { command, file: true } }`), each value is written to a temporary
 * file (a complete WAV, or the segment's bytes), played, awaited and removed, one after
 * the other; a PCM chunk is one file, so give such players whole segments.
 *
 * Unsubscribing (barge-in) stops the sound at once: SIGTERM, then SIGKILL after
 * `killGraceMs`. On source complete, stdin is closed and the output waits for the
 * player to exit: exit code 0 emits `done` and completes; another code, a signal, a
 * spawn failure, or a player that exits before the end errors with `SinkError`
 * (reason `'player_failed'`, with the end of its stderr).
 *
 * ```
 * segments:      --s1------s2----|
 * toAudioDevice: -----p1------p2------(d|)      d: after the player exited
 * ```
 *
 * ## Example
 * ```ts
 * const playback = segments$.pipe(toAudioDevice()).subscribe();
 * onUserSpeaks(() => playback.unsubscribe()); // barge-in: silence now
 * ```
 *
 * @param options The player, the PATH to search, the kill grace.
 * @return An Observable of playback progress, ending with `done`.
 * @throws {ValidationError} At once, for bad options (nothing is opened or written).
 */
export function toAudioDevice(options: AudioDeviceOptions = {}): OperatorFunction<AudioDeviceInput, AudioDeviceProgress> {
  checkOptions(AudioDeviceOptionsSchema, options, 'toAudioDevice');
  const spawn = options.spawn ?? nodeSpawn;
  const env = options.env ?? process.env;
  const grace = options.killGraceMs ?? 500;
  const scheduler = options.scheduler ?? asyncScheduler;
  return sinkOperator<AudioDeviceInput, AudioDeviceProgress>((fail) => {
    const assembler = new PcmAssembler('toAudioDevice');
    let child: ChildProcess | undefined;
    let command: string | undefined;
    let writer: StreamWriter | undefined;
    let exited: Promise<Exit> | undefined;
    let exitInfo: Exit | undefined;
    let stdinClosed = false;
    let interrupted = false;
    let input: PlayerInput | undefined;
    let segments = 0;
    let pcmBytes = 0;
    let format: PcmFormat | undefined;
    let stderrTail = '';
    let killTimer: Subscription | undefined;
    let started = false;
    /** File mode (a player that reads files): its command line, and the file playing now. */
    let filePlayer: { command: string; args: readonly string[] } | undefined;
    let playingFile: string | undefined;
    let lastPid: number | undefined;
    let sentBytes = 0;

    const failure = (exit: Exit): SinkError => {
      const how = exit.error
        ? `could not run (${exit.error.message})`
        : exit.signal
          ? `was killed by ${exit.signal}`
          : exit.code === 0
            ? 'exited before the end of the stream'
            : `exited with code ${exit.code}`;
      const tail = stderrSummary(stderrTail);
      return new SinkError('player_failed', `toAudioDevice: player ${command ?? ''} ${how}${tail ? `: ${tail}` : ''}`, {
        cause: exit.error,
      });
    };

    const start = async (kind: PlayerInput): Promise<void> => {
      const player = options.player
        ? { command: options.player.command, args: options.player.args ?? [], file: options.player.file === true }
        : await findPlayer(kind, env, options.players ?? DEFAULT_PLAYERS);
      if (interrupted) throw new SinkError('player_failed', 'toAudioDevice was stopped');
      command = player.command;
      if (player.file) {
        filePlayer = player;
        return;
      }
      const proc = spawn(player.command, [...player.args], { stdio: ['pipe', 'ignore', 'pipe'], env });
      child = proc;
      exited = new Promise<Exit>((resolve) => {
        proc.once('error', (error) => resolve({ code: null, signal: null, error }));
        proc.once('close', (code, signal) => resolve({ code, signal }));
      });
      void exited.then((exit) => {
        exitInfo = exit;
        killTimer?.unsubscribe();
        killTimer = undefined;
        // Died while we were still streaming: that is a failure, even between writes.
        if (!stdinClosed && !interrupted) fail(failure(exit));
      });
      proc.stderr?.setEncoding('utf8');
      proc.stderr?.on('data', (text: string) => {
        stderrTail = (stderrTail + text).slice(-2000);
      });
      if (!proc.stdin) throw new SinkError('player_failed', `toAudioDevice: player ${player.command} has no stdin`);
      writer = new StreamWriter(proc.stdin);
    };

    const send = async (pieces: readonly Uint8Array[]): Promise<void> => {
      const active = writer as StreamWriter;
      const death = (exited as Promise<Exit>).then((exit) => {
        throw failure(exit);
      });
      death.catch(() => undefined);
      try {
        for (const piece of pieces) await Promise.race([active.write(piece), death]);
      } catch (error) {
        // A broken pipe usually means the player is dying: report how it ended.
        const exit = exitInfo ?? (await exitedWithin(exited as Promise<Exit>, PLAYER_EXIT_WAIT_MS, scheduler));
        if (exit) throw failure(exit);
        throw toSinkError(error, `toAudioDevice could not write to ${command ?? 'the player'}`, 'player_failed');
      }
    };

    /** File mode: play `pieces` as one temporary file, wait for the player, remove the file. */
    const playFile = async (pieces: readonly Uint8Array[]): Promise<void> => {
      const player = filePlayer as { command: string; args: readonly string[] };
      const size = pieces.reduce((n, piece) => n + piece.byteLength, 0);
      if (size === 0) return;
      const parts = input === 'wav' && format ? [wavHeader(format, size), ...pieces, ...(size % 2 ? [new Uint8Array(1)] : [])] : [...pieces];
      const path = join(tmpdir(), `rxvoice-play-${randomBytes(6).toString('hex')}.${input ?? 'wav'}`);
      playingFile = path;
      try {
        await writeFile(path, parts, { mode: 0o600 });
        if (interrupted) throw new SinkError('player_failed', 'toAudioDevice was stopped');
        stderrTail = '';
        const proc = spawn(player.command, [...player.args, path], { stdio: ['ignore', 'ignore', 'pipe'], env });
        child = proc;
        lastPid = proc.pid;
        exited = new Promise<Exit>((resolve) => {
          proc.once('error', (error) => resolve({ code: null, signal: null, error }));
          proc.once('close', (code, signal) => resolve({ code, signal }));
        });
        proc.stderr?.setEncoding('utf8');
        proc.stderr?.on('data', (text: string) => {
          stderrTail = (stderrTail + text).slice(-2000);
        });
        const exit = await exited;
        killTimer?.unsubscribe();
        killTimer = undefined;
        if (interrupted) throw new SinkError('player_failed', 'toAudioDevice was stopped');
        if (exit.error || exit.code !== 0) throw failure(exit);
        sentBytes += parts.reduce((n, part) => n + part.byteLength, 0);
      } finally {
        child = undefined;
        playingFile = undefined;
        await unlink(path).catch(() => undefined);
      }
    };

    const kindOf = (value: AudioDeviceInput): PlayerInput => {
      if (isPcmChunk(value)) return 'wav';
      if (isSpokenSegment(value)) {
        if (segmentIsWav(value)) return 'wav';
        if (value.format) return value.format;
      }
      throw new SinkError('invalid_audio', 'toAudioDevice takes WAV or mp3/flac/aac segments, or { pcm, format } chunks');
    };

    const piecesOf = (value: AudioDeviceInput, first: boolean): Uint8Array[] => {
      const segment = value as SpokenSegment;
      if (kindOf(value) !== input) {
        const what = isPcmChunk(value) ? 'a PCM chunk' : `segment ${segment.segment_id} (${segment.format ?? 'WAV'})`;
        throw new SinkError('format_mismatch', `toAudioDevice: ${what} does not match the stream, which is ${input ?? ''}`);
      }
      if (input === 'wav') {
        const pieces = assembler.push(value);
        format = assembler.format;
        return pieces;
      }
      let audio = segment.audio;
      if (input === 'mp3' || input === 'aac') {
        if (!first) audio = stripId3v2(audio);
        audio = stripId3v1(audio);
      }
      return [audio];
    };

    return {
      async write(value) {
        const first = !started;
        if (first) {
          started = true;
          input = kindOf(value);
          await start(input);
        }
        const pieces = piecesOf(value, first);
        if (filePlayer) {
          await playFile(pieces);
        } else {
          if (first && format) await send([streamingWavHeader(format)]);
          await send(pieces);
        }
        for (const piece of pieces) pcmBytes += piece.byteLength;
        segments++;
        return {
          type: 'playing',
          pid: child?.pid ?? lastPid ?? -1,
          command: command ?? '',
          segments,
          bytes: writer?.bytes ?? sentBytes,
          seconds: format ? pcmSeconds(pcmBytes, format) : 0,
        };
      },
      async finish() {
        assembler.end();
        if (child && writer && exited) {
          stdinClosed = true;
          try {
            await writer.end();
          } catch (error) {
            // A player that exits closes its stdin: report how it ended.
            const exit = exitInfo ?? (await exitedWithin(exited, PLAYER_EXIT_WAIT_MS, scheduler));
            if (!exit) throw toSinkError(error, `toAudioDevice could not close the player's stdin`, 'player_failed');
          }
          const exit = await exited;
          if (exit.error || exit.code !== 0) throw failure(exit);
        }
        return {
          type: 'done',
          pid: child?.pid ?? lastPid,
          command,
          segments,
          bytes: writer?.bytes ?? sentBytes,
          seconds: format ? pcmSeconds(pcmBytes, format) : 0,
        };
      },
      interrupt() {
        interrupted = true;
        const proc = child;
        if (!proc || exitInfo || proc.exitCode !== null || proc.signalCode !== null) return;
        proc.stdin?.destroy();
        proc.kill('SIGTERM');
        killTimer = scheduler.schedule(() => {
          if (!exitInfo && proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
        }, grace);
      },
      async abort() {
        interrupted = true;
        writer?.detach();
        if (exited) await exited;
        killTimer?.unsubscribe();
        killTimer = undefined;
        if (playingFile) await unlink(playingFile).catch(() => undefined);
      },
    };
  });
}

/**
 * The end of a player's stderr for an error message: its last two non-empty lines (the
 * reason; ALSA and friends print pages of noise before it), at most 300 characters.
 */
export function stderrSummary(stderr: string): string {
  const lines = stderr
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '');
  const summary = lines.slice(-2).join(' / ');
  return summary.length > 300 ? `…${summary.slice(-299)}` : summary;
}

/** The exit of the player if it comes within `ms`, else undefined. */
function exitedWithin(exited: Promise<Exit>, ms: number, scheduler: SchedulerLike): Promise<Exit | undefined> {
  let timer: Subscription | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = scheduler.schedule(() => resolve(undefined), ms);
  });
  return Promise.race([exited, timeout]).finally(() => timer?.unsubscribe());
}
