/**
 * The worker of `toAudioDevice`: one subscription's player, in named steps (choose and start
 * the player, send to its stdin or play a file, finish, interrupt, abort), and what was heard.
 */
import type { ChildProcess, SpawnOptions } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SchedulerLike, Subscription } from 'rxjs';
import { wavHeader, type PcmFormat } from '../audio/wav.js';
import { pcmSeconds, streamingWavHeader } from '../audio/pcm.js';
import type { SpokenSegment } from '../live/events.js';
import { HeardTracker, type HeardReport } from '../live/heard.js';
import { SinkError, toSinkError } from './errors.js';
import { isPcmChunk, isSpokenSegment, PcmAssembler, segmentIsWav, type PcmSinkInput } from './inputs.js';
import { findPlayer, type PlayerCandidate, type PlayerCommand, type PlayerInput } from './players.js';
import type { SinkWorker } from './runSink.js';
import { StreamWriter } from './streamWriter.js';
import { stripId3v1, stripId3v2 } from './id3.js';

/** The checked options of `toAudioDevice`, defaults applied. */
export interface DeviceSettings {
  player: PlayerCommand | undefined;
  players: readonly PlayerCandidate[];
  spawn: (command: string, args: readonly string[], options: SpawnOptions) => ChildProcess;
  env: NodeJS.ProcessEnv;
  killGraceMs: number;
  scheduler: SchedulerLike;
  onHeard: ((report: HeardReport) => void) | undefined;
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

type Progress = AudioDeviceProgress;

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

/** One subscription of `toAudioDevice` (see the file's summary). */
export class DevicePlayback implements SinkWorker<PcmSinkInput, Progress> {
  private readonly assembler = new PcmAssembler('toAudioDevice');
  private readonly tracker = new HeardTracker();
  private child: ChildProcess | undefined;
  private command: string | undefined;
  private writer: StreamWriter | undefined;
  private exited: Promise<Exit> | undefined;
  private exitInfo: Exit | undefined;
  private stdinClosed = false;
  private interrupted = false;
  private input: PlayerInput | undefined;
  private segments = 0;
  private pcmBytes = 0;
  private format: PcmFormat | undefined;
  private stderrTail = '';
  private killTimer: Subscription | undefined;
  private started = false;
  /** When the first audio went to the player (scheduler time, ms). */
  private startedAt: number | undefined;
  /** File mode (a player that reads files): its command line, and the file playing now. */
  private filePlayer: { command: string; args: readonly string[] } | undefined;
  private playingFile: string | undefined;
  private lastPid: number | undefined;
  private sentBytes = 0;
  private reported = false;

  constructor(
    private readonly settings: DeviceSettings,
    private readonly fail: (error: unknown) => void,
  ) {}

  async write(value: PcmSinkInput): Promise<Progress> {
    const first = !this.started;
    if (first) {
      this.started = true;
      this.input = this.kindOf(value);
      await this.start(this.input);
    }
    const pieces = this.piecesOf(value, first);
    if (isSpokenSegment(value)) this.tracker.push(value);
    this.startedAt ??= this.settings.scheduler.now();
    if (this.filePlayer) {
      await this.playFile(pieces);
    } else {
      if (first && this.format) await this.send([streamingWavHeader(this.format)]);
      await this.send(pieces);
    }
    for (const piece of pieces) this.pcmBytes += piece.byteLength;
    this.segments++;
    return { type: 'playing', pid: this.child?.pid ?? this.lastPid ?? -1, command: this.command ?? '', ...this.counts() };
  }

  async finish(): Promise<Progress> {
    this.assembler.end();
    const { child, writer, exited } = this;
    if (child && writer && exited) {
      this.stdinClosed = true;
      try {
        await writer.end();
      } catch (error) {
        // A player that exits closes its stdin: report how it ended.
        const exit = this.exitInfo ?? (await exitedWithin(exited, PLAYER_EXIT_WAIT_MS, this.settings.scheduler));
        if (!exit) throw toSinkError(error, `toAudioDevice could not close the player's stdin`, 'player_failed');
      }
      const exit = await exited;
      if (exit.error || exit.code !== 0) throw this.failure(exit);
    }
    this.reportHeard(true);
    return { type: 'done', pid: this.child?.pid ?? this.lastPid, command: this.command, ...this.counts() };
  }

  interrupt(): void {
    this.interrupted = true;
    this.reportHeard(false);
    const proc = this.child;
    if (!proc || this.exitInfo || proc.exitCode !== null || proc.signalCode !== null) return;
    proc.stdin?.destroy();
    proc.kill('SIGTERM');
    this.killTimer = this.settings.scheduler.schedule(() => {
      if (!this.exitInfo && proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
    }, this.settings.killGraceMs);
  }

  async abort(): Promise<void> {
    this.interrupted = true;
    this.reportHeard(false);
    this.writer?.detach();
    if (this.exited) await this.exited;
    this.killTimer?.unsubscribe();
    this.killTimer = undefined;
    if (this.playingFile) await unlink(this.playingFile).catch(() => undefined);
  }

  private counts(): { segments: number; bytes: number; seconds: number } {
    return {
      segments: this.segments,
      bytes: this.writer?.bytes ?? this.sentBytes,
      seconds: this.format ? pcmSeconds(this.pcmBytes, this.format) : 0,
    };
  }

  /** Once: what was heard. All of it after a clean end; else the audio sent, at most the time since it started. */
  private reportHeard(all: boolean): void {
    if (this.reported || this.settings.onHeard === undefined) return;
    this.reported = true;
    const total = this.tracker.totalSeconds;
    const elapsed = this.startedAt === undefined ? 0 : Math.max(0, (this.settings.scheduler.now() - this.startedAt) / 1000);
    const sent = this.format ? pcmSeconds(this.pcmBytes, this.format) : total;
    const report = this.tracker.report(all ? total : Math.min(sent, elapsed, total));
    // interrupted: complete only if some speech was given and its clock covers all of it
    this.settings.onHeard({ ...report, complete: report.complete && (all || total > 0) });
  }

  private failure(exit: Exit): SinkError {
    const how = exit.error
      ? `could not run (${exit.error.message})`
      : exit.signal
        ? `was killed by ${exit.signal}`
        : exit.code === 0
          ? 'exited before the end of the stream'
          : `exited with code ${exit.code}`;
    const tail = stderrSummary(this.stderrTail);
    return new SinkError('player_failed', `toAudioDevice: player ${this.command ?? ''} ${how}${tail ? `: ${tail}` : ''}`, {
      cause: exit.error,
    });
  }

  /** Chooses the player and, unless it reads files, starts it with a pipe to its stdin. */
  private async start(kind: PlayerInput): Promise<void> {
    const { settings } = this;
    const player = settings.player
      ? { command: settings.player.command, args: settings.player.args ?? [], file: settings.player.file === true }
      : await findPlayer(kind, settings.env, settings.players);
    if (this.interrupted) throw new SinkError('player_failed', 'toAudioDevice was stopped');
    this.command = player.command;
    if (player.file) {
      this.filePlayer = player;
      return;
    }
    const proc = settings.spawn(player.command, [...player.args], { stdio: ['pipe', 'ignore', 'pipe'], env: settings.env });
    this.child = proc;
    this.exited = this.watch(proc);
    void this.exited.then((exit) => {
      this.exitInfo = exit;
      this.killTimer?.unsubscribe();
      this.killTimer = undefined;
      // Died while we were still streaming: that is a failure, even between writes.
      if (!this.stdinClosed && !this.interrupted) this.fail(this.failure(exit));
    });
    if (!proc.stdin) throw new SinkError('player_failed', `toAudioDevice: player ${player.command} has no stdin`);
    this.writer = new StreamWriter(proc.stdin);
  }

  /** The player's exit, and the end of its stderr kept for the error message. */
  private watch(proc: ChildProcess): Promise<Exit> {
    proc.stderr?.setEncoding('utf8');
    proc.stderr?.on('data', (text: string) => {
      this.stderrTail = (this.stderrTail + text).slice(-2000);
    });
    return new Promise<Exit>((resolve) => {
      proc.once('error', (error) => resolve({ code: null, signal: null, error }));
      proc.once('close', (code, signal) => resolve({ code, signal }));
    });
  }

  /** Writes to the player's stdin; a broken pipe is reported as how the player ended. */
  private async send(pieces: readonly Uint8Array[]): Promise<void> {
    const active = this.writer as StreamWriter;
    const exited = this.exited as Promise<Exit>;
    const death = exited.then((exit) => {
      throw this.failure(exit);
    });
    death.catch(() => undefined);
    try {
      for (const piece of pieces) await Promise.race([active.write(piece), death]);
    } catch (error) {
      // A broken pipe usually means the player is dying: report how it ended.
      const exit = this.exitInfo ?? (await exitedWithin(exited, PLAYER_EXIT_WAIT_MS, this.settings.scheduler));
      if (exit) throw this.failure(exit);
      throw toSinkError(error, `toAudioDevice could not write to ${this.command ?? 'the player'}`, 'player_failed');
    }
  }

  /** File mode: play `pieces` as one temporary file, wait for the player, remove the file. */
  private async playFile(pieces: readonly Uint8Array[]): Promise<void> {
    const player = this.filePlayer as { command: string; args: readonly string[] };
    const size = pieces.reduce((n, piece) => n + piece.byteLength, 0);
    if (size === 0) return;
    const parts =
      this.input === 'wav' && this.format ? [wavHeader(this.format, size), ...pieces, ...(size % 2 ? [new Uint8Array(1)] : [])] : [...pieces];
    const path = join(tmpdir(), `rxvoice-play-${randomBytes(6).toString('hex')}.${this.input ?? 'wav'}`);
    this.playingFile = path;
    try {
      await writeFile(path, parts, { mode: 0o600 });
      if (this.interrupted) throw new SinkError('player_failed', 'toAudioDevice was stopped');
      this.stderrTail = '';
      const proc = this.settings.spawn(player.command, [...player.args, path], { stdio: ['ignore', 'ignore', 'pipe'], env: this.settings.env });
      this.child = proc;
      this.lastPid = proc.pid;
      this.exited = this.watch(proc);
      const exit = await this.exited;
      this.killTimer?.unsubscribe();
      this.killTimer = undefined;
      if (this.interrupted) throw new SinkError('player_failed', 'toAudioDevice was stopped');
      if (exit.error || exit.code !== 0) throw this.failure(exit);
      this.sentBytes += parts.reduce((n, part) => n + part.byteLength, 0);
    } finally {
      this.child = undefined;
      this.playingFile = undefined;
      await unlink(path).catch(() => undefined);
    }
  }

  private kindOf(value: PcmSinkInput): PlayerInput {
    if (isPcmChunk(value)) return 'wav';
    if (isSpokenSegment(value)) {
      if (segmentIsWav(value)) return 'wav';
      if (value.format) return value.format;
    }
    throw new SinkError('invalid_audio', 'toAudioDevice takes WAV or mp3/flac/aac segments, or { pcm, format } chunks');
  }

  /** The bytes to play for a value: PCM unwrapped into the one WAV stream, or the segment's bytes (ID3 tags of later ones dropped). */
  private piecesOf(value: PcmSinkInput, first: boolean): Uint8Array[] {
    const segment = value as SpokenSegment;
    if (this.kindOf(value) !== this.input) {
      const what = isPcmChunk(value) ? 'a PCM chunk' : `segment ${segment.segment_id} (${segment.format ?? 'WAV'})`;
      throw new SinkError('format_mismatch', `toAudioDevice: ${what} does not match the stream, which is ${this.input ?? ''}`);
    }
    if (this.input === 'wav') {
      const pieces = this.assembler.push(value);
      this.format = this.assembler.format;
      return pieces;
    }
    let audio = segment.audio;
    if (this.input === 'mp3' || this.input === 'aac') {
      if (!first) audio = stripId3v2(audio);
      audio = stripId3v1(audio);
    }
    return [audio];
  }
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
