/**
 * `ratePerSecond`: creation calls spaced `1000 / ratePerSecond` ms apart, in virtual time
 * (the batch's `scheduler`): the first goes at once, each next one an interval after the
 * one before, also when they all ask at the same moment.
 */
import { VirtualTimeScheduler } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { rateLimiter } from '../../src/batch/batch.js';

/** Let the promises settled by the scheduler's timers run their callbacks. */
const settle = async (): Promise<void> => {
  for (let i = 0; i < 10; i++) await Promise.resolve();
};

describe('rateLimiter', () => {
  it('three creation calls asked at once at 2 per second go at 0, 500 and 1000 ms', async () => {
    const scheduler = new VirtualTimeScheduler();
    const limit = rateLimiter(2, scheduler);
    const signal = new AbortController().signal;
    const gone: number[] = [];
    const calls = [0, 1, 2].map((n) => limit(signal).then(() => gone.push(n)));
    /** Run the timers due up to `ms`, and what they released. */
    const until = async (ms: number): Promise<number[]> => {
      scheduler.maxFrames = ms;
      scheduler.flush();
      await settle();
      return [...gone];
    };
    expect(await until(0)).toEqual([0]);
    expect(await until(499)).toEqual([0]);
    expect(await until(500)).toEqual([0, 1]);
    expect(await until(999)).toEqual([0, 1]);
    expect(await until(1000)).toEqual([0, 1, 2]);
    await Promise.all(calls);
  });

  it('without ratePerSecond nothing waits', async () => {
    const limit = rateLimiter(undefined, new VirtualTimeScheduler());
    const signal = new AbortController().signal;
    const gone: number[] = [];
    for (const n of [0, 1, 2]) void limit(signal).then(() => gone.push(n));
    await settle();
    expect(gone).toEqual([0, 1, 2]);
  });
});
