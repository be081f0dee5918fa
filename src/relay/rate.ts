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
  /** Whether the bucket, refilled up to `now`, is full: a new bucket would be the same. */
  full(now: number): boolean {
    return this.tokens + ((now - this.last) * this.perSecond) / 1000 >= this.burst;
  }
}

/**
 * Forgets the buckets that no session uses and that have refilled. A bucket still short of
 * full is kept with no user, so that a client cannot clear what it spent by closing its
 * sessions and opening new ones.
 */
export function forgetRefilled(rates: Map<string, ByteRate>, now: number): void {
  for (const [client, rate] of rates) if (rate.users === 0 && rate.full(now)) rates.delete(client);
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
