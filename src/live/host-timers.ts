/**
 * The live sessions' default scheduler: wall-clock time and the host's `setTimeout`, as
 * RxJS's `asyncScheduler`, whose action classes (`AsyncAction`, `AsyncScheduler`, `Action`,
 * `Scheduler`, `intervalProvider`) are about 2.5 KB of the 54 KB minified `speak` page, for a
 * handful of one-shot timers (the ready timeout, the shared timer round, a reconnect's delay).
 * A scheduler given in the options replaces it (a `TestScheduler` in tests). Unlike
 * `asyncScheduler`, `TestScheduler.run` does not make it virtual, nor should it: a session's
 * socket runs in real time, after `run` has flushed its virtual frames (a ready timeout made
 * virtual there would fire at the flush). See `docs/performance.md`, the bundle's fifth pass.
 */
import { Subscription, type SchedulerAction, type SchedulerLike } from 'rxjs';

/** One scheduled work: a host timer; the work may schedule itself again (`this.schedule(state, delay)`). */
class TimeoutAction<T> extends Subscription implements SchedulerAction<T> {
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly work: (this: SchedulerAction<T>, state?: T) => void) {
    super();
  }

  schedule(state?: T, delay = 0): Subscription {
    if (this.closed) return this;
    this.clearTimer();
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.work(state); // not closed after (as an `asyncScheduler` action): it may be scheduled again
    }, delay);
    return this;
  }

  override unsubscribe(): void {
    this.clearTimer();
    super.unsubscribe();
  }

  private clearTimer(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }
}

/** Wall-clock `now()` and host timers: the default `scheduler` of a live session. @internal */
export const hostTimers: SchedulerLike = {
  now: () => Date.now(),
  schedule: <T>(work: (this: SchedulerAction<T>, state?: T) => void, delay?: number, state?: T): Subscription => new TimeoutAction(work).schedule(state, delay),
};
