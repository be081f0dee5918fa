import { spawn as nodeSpawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { asyncScheduler, type OperatorFunction, type SchedulerLike } from 'rxjs';
import type { HeardReport } from '../live/heard.js';
import type { PcmSinkInput } from './inputs.js';
import { DEFAULT_PLAYERS, type PlayerCandidate, type PlayerCommand } from './players.js';
import { sinkOperator } from './runSink.js';
import { checkOptions } from '../core/validation.js';
import { AudioDeviceOptionsSchema } from './options.js';
import { DevicePlayback, type AudioDeviceProgress, type DeviceSettings } from './devicePlayback.js';

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
  /**
   * Called once with what the listener heard (a `HeardReport` of `rxvoice/live`) when playback
   * ends (everything), fails or is unsubscribed (barge-in): the text of the segments cut after
   * the seconds played, estimated as the audio sent to the player and no more than the time
   * since it started (the player's own buffer, about 0.1 s, is not known). PCM chunks carry no text.
   */
  onHeard?: (report: HeardReport) => void;
}

export type { AudioDevicePlaying, AudioDeviceDone, AudioDeviceProgress } from './devicePlayback.js';

/** What `toAudioDevice` plays: WAV segments, PCM chunks, or segments in mp3/flac/aac. */
export type AudioDeviceInput = PcmSinkInput;

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
 * `killGraceMs`; `onHeard` then gets what was heard (and at the end, or on failure). On source complete, stdin is closed and the output waits for the
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
  const settings: DeviceSettings = {
    player: options.player,
    players: options.players ?? DEFAULT_PLAYERS,
    spawn: options.spawn ?? nodeSpawn,
    env: options.env ?? process.env,
    killGraceMs: options.killGraceMs ?? 500,
    scheduler: options.scheduler ?? asyncScheduler,
    onHeard: options.onHeard,
  };
  return sinkOperator<AudioDeviceInput, AudioDeviceProgress>((fail) => new DevicePlayback(settings, fail));
}

export { stderrSummary } from './devicePlayback.js';
