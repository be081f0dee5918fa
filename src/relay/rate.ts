/**
 * Rates and waits of the relay, on its scheduler: a token bucket of bytes per second, and
 * a promise raced against a deadline.
 *
 * @internal
 */
import type { SchedulerLike } from 'rxjs';

/** A token bucket of bytes per second: `take` answers how long to wait, ms (0: go on). */
export class ByteRate {
  private tokens: number;
  private last: number;
  /** Sessions sharing this bucket (a client's sessions share one). */
  users = 0;
  constructor(
    private readonly perSecond: number,
    private readonly burst: number,
    now: number,
  ) {
    this.tokens = burst;
    this.last = now;
  }
  take(bytes: number, now: number): number {
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) * this.perSecond) / 1000);
    this.last = now;
    this.tokens -= bytes;
    return this.tokens >= 0 ? 0 : Math.ceil((-this.tokens * 1000) / this.perSecond);
  }
}

/**
 * `promise`, or a rejection after `ms` on `scheduler`. `late`, when given, receives the
 * value of a promise that resolves after the deadline (to undo what it did).
 */
export function within<T>(promise: Promise<T>, ms: number, scheduler: SchedulerLike, late?: (value: T) => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let timedOut = false;
    const timer = scheduler.schedule(() => {
      timedOut = true;
      reject(new Error(`no answer within ${ms} ms`));
    }, ms);
    promise.then(
      (value) => {
        timer.unsubscribe();
        if (timedOut) late?.(value);
        else resolve(value);
      },
      (error: unknown) => {
        timer.unsubscribe();
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}
