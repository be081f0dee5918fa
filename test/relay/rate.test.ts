/**
 * The relay's rate and deadline helpers in virtual time: `ByteRate` lets a burst through and
 * then answers how long to wait, and is forgotten once unused and full again; `within` rejects at its deadline on the scheduler given,
 * and hands a value that lands after it to `late` (how a claim the relay gave up on is
 * released), never to the caller; a value in time goes to the caller, never to `late`.
 */
import { describe, expect, it } from 'vitest';
import { VirtualTimeScheduler } from 'rxjs';
import { ByteRate, forgetRefilled, within } from '../../src/relay/rate.js';

describe('ByteRate', () => {
  it('passes a burst at once, then asks to wait for the bytes over it; refills with time', () => {
    const rate = new ByteRate(1000, 2000, 0);
    expect(rate.take(2000, 0)).toBe(0);
    expect(rate.take(500, 0)).toBe(500); // 500 bytes over: half a second at 1000 per second
    expect(rate.take(0, 500)).toBe(0); // refilled
    expect(rate.take(3000, 10_000)).toBe(1000); // full again (2000), 1000 over
  });

  it('forgetRefilled drops the unused buckets that are full again, and keeps one still spent or in use', () => {
    const spent = new ByteRate(1000, 2000, 0);
    spent.take(3000, 0); // 1000 in debt: full again 3 s later
    const inUse = new ByteRate(1000, 2000, 0);
    inUse.users = 1;
    const idle = new ByteRate(1000, 2000, 0);
    const rates = new Map([
      ['spent', spent],
      ['inUse', inUse],
      ['idle', idle],
    ]);
    forgetRefilled(rates, 2999);
    expect([...rates.keys()]).toEqual(['spent', 'inUse']);
    forgetRefilled(rates, 3000);
    expect([...rates.keys()]).toEqual(['inUse']);
  });
});

describe('within', () => {
  /** A promise and its resolver. */
  function deferred<T>(): { promise: Promise<T>; resolve(value: T): void } {
    let resolve!: (value: T) => void;
    const promise = new Promise<T>((r) => (resolve = r));
    return { promise, resolve };
  }

  it('rejects at the deadline in virtual time; a value that lands later goes to late, not to the caller', async () => {
    const scheduler = new VirtualTimeScheduler();
    const answer = deferred<boolean>();
    const late: boolean[] = [];
    const outcome: string[] = [];
    const raced = within(answer.promise, 2000, scheduler, (value) => late.push(value)).then(
      (value) => outcome.push(`value ${value}`),
      (error: Error) => outcome.push(`${error.message} at ${scheduler.now()}`),
    );
    scheduler.flush();
    await raced;
    expect(outcome).toEqual(['no answer within 2000 ms at 2000']);
    expect(late).toEqual([]);
    answer.resolve(true);
    await answer.promise;
    await Promise.resolve();
    expect(late).toEqual([true]);
    expect(outcome).toHaveLength(1);
  });

  it('control: a value in time goes to the caller, and late is never called', async () => {
    const scheduler = new VirtualTimeScheduler();
    const answer = deferred<boolean>();
    const late: boolean[] = [];
    const raced = within(answer.promise, 2000, scheduler, (value) => late.push(value));
    answer.resolve(true);
    expect(await raced).toBe(true);
    scheduler.flush(); // the deadline's timer was cancelled: nothing happens at 2000
    expect(scheduler.now()).toBe(0);
    expect(late).toEqual([]);
  });
});
