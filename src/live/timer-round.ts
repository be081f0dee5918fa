/**
 * One scheduled action for the timers of every live session on one scheduler: the response
 * watches' checks (response-watch.ts) and the boundary holds (text-path.ts). A timer a
 * session cost each one an action, a Node timer and, for the holds, a wake-up of the
 * process a sentence; a round queues its entries in the order they are due and schedules
 * one action, due at the first.
 *
 * An entry is due `every` ms after it is added (or at the time it is added for). When the
 * action fires, every entry due by then is fired, and with them those due within `slack`
 * ms more: the holds take `every / 16` (a hold ends at `boundaryHoldMs`, or up to a
 * sixteenth sooner when another ends then, never later), the watches none (each checked
 * exactly when a timer of its own would). An entry alone on its round fires exactly on time.
 *
 * An entry taken back is not searched for: it is marked (`dueAt` NaN, or a later time when
 * added again) and passed over when the round reaches it.
 */
import type { SchedulerLike, Subscription } from 'rxjs';
import { reportUnhandledError } from './report-unhandled.js';

/** What a round fires: `dueAt` is the scheduler time it is due, while queued (else NaN). */
export interface RoundEntry {
  dueAt: number;
  /** Fired by `round`, `due` the time it was due (its `dueAt` is NaN by then). */
  fire(round: TimerRound, due: number): void;
}

/** The longest a Node timer can wait (a longer one fires after 1 ms). */
const LONGEST_TIMER = 2_147_483_647;

/** @internal */
export class TimerRound {
  /** The entries in the order they are due, and when each was due as queued (NaN-marked or re-added entries differ). */
  private readonly entries: RoundEntry[] = [];
  private readonly dues: number[] = [];
  /** The action due at the first entry (undefined when none is queued, and while the round runs). */
  private action: Subscription | undefined;
  /** Scheduler time of the last add or run: time going back (a new virtual run) moves the queue with it. */
  private clock = -Infinity;

  constructor(
    readonly scheduler: SchedulerLike,
    readonly every: number,
    private readonly slack: number,
  ) {}

  /** Queue `entry` for `due` (default `every` from now), in place of any earlier queuing; never before the last queued. */
  add(entry: RoundEntry, due?: number): void {
    const now = this.scheduler.now();
    const back = now - this.clock;
    this.clock = now;
    const { entries, dues } = this;
    if (back < 0) {
      // the clock went back (another TestScheduler run): the entries keep their time left
      for (let i = 0; i < dues.length; i++) {
        if (entries[i]!.dueAt === dues[i]) entries[i]!.dueAt += back;
        dues[i]! += back;
      }
      this.action?.unsubscribe();
      this.action = undefined;
    }
    entry.dueAt = Math.max(due ?? now + this.every, dues.at(-1) ?? -Infinity);
    entries.push(entry);
    dues.push(entry.dueAt);
    this.action ??= this.wait(now);
  }

  /** `entry` is not queued any more; the action goes with the last entry. */
  cancel(entry: RoundEntry): void {
    entry.dueAt = NaN;
    this.dropTaken();
    if (this.entries.length === 0) {
      this.action?.unsubscribe();
      this.action = undefined;
    }
  }

  /**
   * The action fired: when an entry is due (not only one taken back), fire every entry due
   * by now + `slack` (of those queued before), then wait for the next.
   */
  run(): void {
    const now = this.scheduler.now();
    const { entries, dues } = this;
    this.action = undefined;
    this.clock = now;
    this.dropTaken();
    // (an empty queue compares undefined, which is never <= now)
    const until = (dues[0] as number) <= now ? now + this.slack : now;
    for (let n = entries.length; n > 0 && (dues[0] as number) <= until; n--) {
      const entry = entries.shift() as RoundEntry;
      const due = dues.shift() as number;
      if (entry.dueAt !== due) continue; // taken back, or queued again later
      entry.dueAt = NaN;
      try {
        entry.fire(this, due);
      } catch (error) {
        // one session's failure: the others' timers go on
        reportUnhandledError(error);
      }
    }
    this.dropTaken();
    // (an entry added while this ran scheduled the action already)
    if (entries.length > 0) this.action ??= this.wait(now);
  }

  /** Drop the entries taken back from the front of the queue. */
  private dropTaken(): void {
    while (this.entries.length > 0 && this.entries[0]!.dueAt !== this.dues[0]) {
      this.entries.shift();
      this.dues.shift();
    }
  }

  private wait(now: number): Subscription {
    return this.scheduler.schedule(runRound, Math.min(Math.max(0, (this.dues[0] as number) - now), LONGEST_TIMER), this);
  }
}

/** The round's action (a module function: no closure per round). */
function runRound(round: TimerRound | undefined): void {
  round?.run();
}

/** The rounds of each scheduler, by period and slack. */
const rounds = new WeakMap<SchedulerLike, Record<string, TimerRound>>();

/** The round of `scheduler` for entries due `every` ms after they are added, fired with `slack` (made on first use). */
export function timerRound(scheduler: SchedulerLike, every: number, slack = 0): TimerRound {
  let byPeriod = rounds.get(scheduler);
  if (byPeriod === undefined) rounds.set(scheduler, (byPeriod = {}));
  return (byPeriod[`${every} ${slack}`] ??= new TimerRound(scheduler, every, slack));
}
