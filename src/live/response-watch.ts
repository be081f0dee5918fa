/**
 * The watch on the service's progress while text waits to be spoken (`responseTimeoutMs`,
 * and `stall.afterMs`): one per live session (session.ts). It notes progress from the
 * frames that arrive, pings the socket while the service is quiet, and tells the session
 * when the service stalled or went silent; the session decides what that means. The
 * checks of every session on one scheduler (with one period) are driven by one
 * `WatchRound`: one scheduled action for all, not a timer a session.
 */
import type { SchedulerLike, Subscription } from 'rxjs';
import { progressAudioBytes, type Connection } from './connection.js';
import type { ResolvedSpeak } from './options.js';
import { reportUnhandledError } from './report-unhandled.js';

/** What the watch asks of its session. */
export interface ResponseWatchHost {
  /** Text was pushed and not yet delivered as audio, on this socket (the one in use, ready). */
  waitsForSpeech(connection: Connection): boolean;
  /** No segment started for `stall.afterMs` while text waited (the watch has stopped). */
  onStall(connection: Connection, afterMs: number): void;
  /** Nothing came for `responseTimeoutMs` while text waited (the watch has stopped). */
  onSilent(connection: Connection, ms: number): void;
}

/**
 * The checks of every watch on one scheduler with one period: the watches in the order of
 * their next check (each is due one period after it started, then every period), and one
 * scheduled action, due at the first of them. A session's watch costs a place in the queue
 * (no timer, action and state of its own), and each watch is checked at the times it would
 * have been by a timer of its own: `every` ms after it started, then every `every` ms.
 * @internal
 */
export class WatchRound {
  /** The watches, by their next check (`dueAt`). */
  private readonly queue: ResponseWatch[] = [];
  /** The action due at the first watch's check (undefined when the queue is empty, and while the round runs). */
  private action: Subscription | undefined;
  /** Scheduler time when the action was scheduled: time going back (a new virtual run) reschedules. */
  private scheduledAt = 0;

  constructor(
    readonly scheduler: SchedulerLike,
    readonly every: number,
  ) {}

  /** Queue `watch`, its first check one period from now. */
  add(watch: ResponseWatch): void {
    const now = this.scheduler.now();
    // the clock went back (another TestScheduler run, a stepped clock): the checks keep their spacing from now
    const back = Math.min(0, now - this.scheduledAt);
    for (const queued of this.queue) queued.dueAt += back;
    this.enqueue(watch, now + this.every);
    // the first watch queued: no action waits (a run under way waits again when it ends)
    if (back < 0 || this.queue.length === 1) this.wait();
  }

  /** Take `watch` out (it stopped); the action goes with the last one. */
  remove(watch: ResponseWatch): void {
    const at = this.queue.indexOf(watch); // not there while the round checks it
    if (at >= 0) this.queue.splice(at, 1);
    if (this.queue.length === 0) this.wait();
  }

  /** Queue `watch` for `due`, at the end (never before the last: the queue stays in order). */
  enqueue(watch: ResponseWatch, due: number): void {
    watch.dueAt = Math.max(due, this.queue.at(-1)?.dueAt ?? due);
    this.queue.push(watch);
  }

  /** Check every watch due, then wait for the next one (none: nothing is queued). */
  run(): void {
    const now = this.scheduler.now();
    const queue = this.queue;
    this.action = undefined; // this one has fired
    // (an empty queue compares undefined, which is never <= now)
    while ((queue[0]?.dueAt as number) <= now) {
      try {
        (queue.shift() as ResponseWatch).tick(this);
      } catch (error) {
        // a session's handler threw: the other sessions' checks go on
        reportUnhandledError(error);
      }
    }
    this.wait();
  }

  /** The one action, due at the first watch's check (none when the queue is empty), instead of any before. */
  private wait(): void {
    const now = this.scheduler.now();
    const first = this.queue[0];
    this.action?.unsubscribe();
    this.scheduledAt = now;
    // at most what a Node timer can wait (a longer one fires after 1 ms): the round then looks again
    this.action = first && this.scheduler.schedule(runRound, Math.min(Math.max(0, first.dueAt - now), 2_147_483_647), this);
  }
}

/** The round's action (a module function: no closure per round). */
function runRound(round: WatchRound | undefined): void {
  round?.run();
}

/** The rounds of each scheduler, by period. */
const rounds = new WeakMap<SchedulerLike, Record<number, WatchRound>>();

/** The round of `scheduler` for checks every `every` ms (made on first use, kept for the next watches). */
export function watchRound(scheduler: SchedulerLike, every: number): WatchRound {
  let byPeriod = rounds.get(scheduler);
  if (byPeriod === undefined) rounds.set(scheduler, (byPeriod = {}));
  return (byPeriod[every] ??= new WatchRound(scheduler, every));
}

/** Watches one session's progress, checked by the round of its scheduler and period. */
export class ResponseWatch {
  /** The connection watched (undefined when nothing waits: the watch is in no queue then). */
  private connection: Connection | undefined;
  /** Scheduler time of its next check, while in its round's queue. @internal */
  dueAt = NaN;
  private readonly round: WatchRound;

  constructor(
    private readonly options: Pick<ResolvedSpeak, 'responseTimeoutMs' | 'stall' | 'scheduler' | 'config'>,
    private readonly host: ResponseWatchHost,
  ) {
    this.round = watchRound(options.scheduler, Math.min(options.responseTimeoutMs, options.stall?.afterMs ?? Infinity) / 3);
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
    this.round.remove(this);
  }

  /**
   * The round's check of this watch: it stops when nothing waits, and a stall or a silence
   * ends the session; else a ping, and the next check one period on. @internal
   */
  tick(round: WatchRound): void {
    const connection = this.connection as Connection; // queued only while it watches (stop takes it out)
    const due = this.dueAt;
    if (!this.host.waitsForSpeech(connection)) return this.stop();
    const { responseTimeoutMs: ms, stall } = this.options;
    const silent = this.options.scheduler.now() - connection.lastFrameAt;
    // a stall: nothing started for afterMs (a segment already started stays live: responseTimeoutMs)
    if (stall !== undefined && connection.inProgress === undefined && silent >= stall.afterMs) {
      this.stop();
      return this.host.onStall(connection, stall.afterMs);
    }
    if (silent >= ms) {
      this.stop();
      return this.host.onSilent(connection, ms);
    }
    // a ping keeps intermediaries open and makes a dead TCP peer fail sooner
    try {
      (connection.socket as { ping?: () => void }).ping?.();
    } catch {
      // closing meanwhile: the close event says what happened
    }
    round.enqueue(this, due + round.every);
  }
}
