/**
 * The watch on the service's progress while text waits to be spoken (`responseTimeoutMs`,
 * and `stall.afterMs`): one per live session (session.ts). It notes progress from the
 * frames that arrive, pings the socket while the service is quiet, and tells the session
 * when the service stalled or went silent; the session decides what that means.
 */
import type { SchedulerAction, Subscription } from 'rxjs';
import { progressAudioBytes, type Connection } from './connection.js';
import type { ResolvedSpeak } from './options.js';

/** What the watch asks of its session. */
export interface ResponseWatchHost {
  /** Text was pushed and not yet delivered as audio, on this socket (the one in use, ready). */
  waitsForSpeech(connection: Connection): boolean;
  /** No segment started for `stall.afterMs` while text waited (the watch has stopped). */
  onStall(connection: Connection, afterMs: number): void;
  /** Nothing came for `responseTimeoutMs` while text waited (the watch has stopped). */
  onSilent(connection: Connection, ms: number): void;
}

/** A check of the watch, then the next one in `every` ms (one scheduled action, no closure per watch). */
function checkThenRepeat(this: SchedulerAction<WatchState>, state: WatchState): void {
  state.watch.check(state.connection);
  // still watching (the check did not stop it): the same action again, its timer kept
  if (state.watch.watching(state)) this.schedule(state, state.every);
}

/** What a running check timer watches. */
interface WatchState {
  watch: ResponseWatch;
  connection: Connection;
  every: number;
}

/** Watches one session's progress; at most one check timer runs at a time. */
export class ResponseWatch {
  /** The check timer (undefined when nothing waits), and what it watches. */
  private subscription: Subscription | undefined;
  private state: WatchState | undefined;

  constructor(
    private readonly options: Pick<ResolvedSpeak, 'responseTimeoutMs' | 'stall' | 'scheduler' | 'config'>,
    private readonly host: ResponseWatchHost,
  ) {}

  /**
   * Start watching for `responseTimeoutMs` of silence, if text waits to be spoken and no
   * watch runs: the silence counts from now. Checked each third of the timeout.
   */
  watch(connection: Connection): void {
    if (this.subscription !== undefined || !this.host.waitsForSpeech(connection)) return;
    connection.lastFrameAt = this.options.scheduler.now();
    const every = Math.min(this.options.responseTimeoutMs, this.options.stall?.afterMs ?? Infinity) / 3;
    const state: WatchState = { watch: this, connection, every };
    this.state = state;
    this.subscription = this.options.scheduler.schedule(checkThenRepeat, every, state);
  }

  /** Whether the check timer of `state` is the one running. */
  watching(state: WatchState): boolean {
    return this.state === state;
  }

  /**
   * Progress of the service, for `responseTimeoutMs`: any JSON frame (a segment event), or
   * audio adding up to `PROGRESS_AUDIO_SECONDS` of sound. Counted in audio time, not
   * frames, so a trickle of tiny frames cannot hold a session open forever.
   */
  noteProgress(connection: Connection, data: unknown): void {
    if (typeof data !== 'string') {
      // the length alone: a view of the bytes is made once, in onAudioFrame
      connection.audioSinceProgress += data instanceof ArrayBuffer || ArrayBuffer.isView(data) ? data.byteLength : 0;
      if (connection.audioSinceProgress < progressAudioBytes(this.options.config)) return;
    }
    connection.audioSinceProgress = 0;
    connection.lastFrameAt = this.options.scheduler.now();
  }

  /** Stop the check timer (a later `watch` starts a new one). */
  stop(): void {
    this.subscription?.unsubscribe();
    this.subscription = undefined;
    this.state = undefined;
  }

  /** One check: stop when nothing waits, a stall or a silence ends the session, else a ping. @internal */
  check(connection: Connection): void {
    if (!this.host.waitsForSpeech(connection)) return this.stop();
    const ms = this.options.responseTimeoutMs;
    const silent = this.options.scheduler.now() - connection.lastFrameAt;
    const stall = this.options.stall;
    // a stall: nothing started for afterMs (a segment already started stays live: responseTimeoutMs)
    if (stall !== undefined && connection.inProgress === undefined && silent >= stall.afterMs) {
      this.stop();
      return this.host.onStall(connection, stall.afterMs);
    }
    if (silent < ms) {
      // a ping keeps intermediaries open and makes a dead TCP peer fail sooner
      try {
        (connection.socket as { ping?: () => void }).ping?.();
      } catch {
        // closing meanwhile: the close event says what happened
      }
      return;
    }
    this.stop();
    this.host.onSilent(connection, ms);
  }
}
