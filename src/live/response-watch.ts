/**
 * The watch on the service's progress while text waits to be spoken (`responseTimeoutMs`,
 * and `stall.afterMs`): one per live session (session.ts). It notes progress from the
 * frames that arrive, pings the socket while the service is quiet, and tells the session
 * when the service stalled or went silent; the session decides what that means. The
 * checks of every session on one scheduler (with one period) are driven by one
 * `TimerRound` (timer-round.ts): one scheduled action for all, not a timer a session, each
 * watch checked exactly when a timer of its own would: one period after it started, then
 * every period.
 */
import { progressAudioBytes, type Connection } from './connection.js';
import type { ResolvedSpeak } from './options.js';
import { timerRound, type RoundEntry, type TimerRound } from './timer-round.js';

/** What the watch asks of its session. */
export interface ResponseWatchHost {
  /** Text was pushed and not yet delivered as audio, on this socket (the one in use, ready). */
  waitsForSpeech(connection: Connection): boolean;
  /** Since when (scheduler time) the service has owed a segment for the text it was sent: it rightly waits for a sentence's end, or `idle_timeout`. */
  speechDueAt(connection: Connection): number;
  /** No segment started for `stall.afterMs` while text waited (the watch has stopped). */
  onStall(connection: Connection, afterMs: number): void;
  /** Nothing came for `responseTimeoutMs` while text waited (the watch has stopped). */
  onSilent(connection: Connection, ms: number): void;
}

/** Watches one session's progress, checked by the round of its scheduler and period. */
export class ResponseWatch implements RoundEntry {
  /** The connection watched (undefined when nothing waits: the watch is in no queue then). */
  private connection: Connection | undefined;
  /** Scheduler time of its next check, while in its round's queue. @internal */
  dueAt = NaN;
  private readonly round: TimerRound;

  constructor(
    private readonly options: Pick<ResolvedSpeak, 'responseTimeoutMs' | 'stall' | 'scheduler' | 'config'>,
    private readonly host: ResponseWatchHost,
  ) {
    this.round = timerRound(options.scheduler, Math.min(options.responseTimeoutMs, options.stall?.afterMs ?? Infinity) / 3);
  }

  /**
   * Start watching for `responseTimeoutMs` of silence, if text waits to be spoken and no
   * watch runs: the silence counts from now. Checked each third of the timeout (or of
   * `stall.afterMs`, when shorter).
   */
  watch(connection: Connection): void {
    if (this.connection !== undefined || !this.host.waitsForSpeech(connection)) return;
    connection.lastFrameAt = this.options.scheduler.now();
    this.connection = connection;
    this.round.add(this);
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

  /** Stop watching (a later `watch` starts again). */
  stop(): void {
    if (this.connection === undefined) return;
    this.connection = undefined;
    this.round.cancel(this);
  }

  /**
   * The round's check of this watch: it stops when nothing waits, and a stall or a silence
   * ends the session; else a ping if nothing came for a period, and the next check one
   * period on. @internal
   */
  fire(round: TimerRound, due: number): void {
    const connection = this.connection as Connection; // queued only while it watches (stop takes it out)
    if (!this.host.waitsForSpeech(connection)) return this.stop();
    const { responseTimeoutMs: ms, stall } = this.options;
    const now = this.options.scheduler.now();
    const silent = now - connection.lastFrameAt;
    // Between segments the service is late only from when it owed one (text without a
    // sentence end waits for more text or idle_timeout); within a segment, from its last frame.
    const late = connection.inProgress === undefined ? now - Math.max(connection.lastFrameAt, this.host.speechDueAt(connection)) : silent;
    // a stall: nothing started for afterMs (a segment already started stays live: responseTimeoutMs)
    if (stall !== undefined && connection.inProgress === undefined && late >= stall.afterMs) {
      this.stop();
      return this.host.onStall(connection, stall.afterMs);
    }
    if (late >= ms) {
      this.stop();
      return this.host.onSilent(connection, ms);
    }
    // the service quiet since the last check: a ping keeps intermediaries open and makes a
    // dead TCP peer fail sooner (a service that spoke within the period needs none: a talker's
    // session, its text trickling in for seconds, sent 0.5 ping a sentence before)
    if (silent >= round.every) {
      try {
        (connection.socket as { ping?: () => void }).ping?.();
      } catch {
        // closing meanwhile: the close event says what happened
      }
    }
    round.add(this, due + round.every);
  }
}
