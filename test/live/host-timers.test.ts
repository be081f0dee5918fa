/**
 * The live sessions' default scheduler (host-timers.ts) against RxJS's `asyncScheduler`, in
 * real time: the same works, delays, cancellations and reschedules give the same events in the
 * same order. Only order is asserted (never how long a timer took), so a busy machine changes
 * nothing; each cancelled work has a later one beside it that shows it would have been seen.
 */
import { describe, expect, it } from 'vitest';
import { asyncScheduler, type SchedulerLike, type Subscription } from 'rxjs';
import { hostTimers } from '../../src/live/host-timers.js';

/**
 * Runs a scenario on `scheduler`: the order in which works scheduled together fired (their
 * order holds however late the host runs them: by due time, then by when scheduled), a
 * rescheduling work's runs, and which actions were closed at the end.
 */
function scenario(scheduler: SchedulerLike): Promise<{ fired: string[]; runs: number[]; closed: boolean[] }> {
  return new Promise((resolve) => {
    const fired: string[] = [];
    const runs: number[] = [];
    let left = 2;
    const finish = (): void => {
      if (--left === 0) resolve({ fired, runs, closed: [zero.closed, cancelled.closed, again.closed] });
    };
    scheduler.schedule((state) => {
      fired.push(`a:${String(state)}`);
      finish();
    }, 12, 'x');
    const cancelled = scheduler.schedule(() => fired.push('cancelled'), 4);
    const again = scheduler.schedule<number>(function (count = 0) {
      if (count === 0) fired.push('again');
      runs.push(count);
      if (count < 2) this.schedule(count + 1, 3);
      else finish();
    }, 1);
    const zero = scheduler.schedule(() => fired.push('zero'));
    cancelled.unsubscribe();
  });
}

describe('hostTimers', () => {
  it('fires, reschedules and cancels as asyncScheduler does', async () => {
    const ours = await scenario(hostTimers);
    const rxjs = await scenario(asyncScheduler);
    expect(ours).toEqual(rxjs);
    // a 0 ms timer is a 1 ms one to the host: `zero` after `again`, scheduled before it; an
    // action that ran stays open (it may be scheduled again), a cancelled one is closed
    expect(ours).toEqual({ fired: ['again', 'zero', 'a:x'], runs: [0, 1, 2], closed: [false, true, false] });
  });

  it('a cancelled work never runs; the same work left scheduled does (control)', async () => {
    const ran: string[] = [];
    const done = new Promise<void>((resolve) => hostTimers.schedule(() => resolve(), 20));
    hostTimers.schedule(() => ran.push('kept'), 5);
    hostTimers.schedule(() => ran.push('cancelled'), 5).unsubscribe();
    await done;
    expect(ran).toEqual(['kept']);
  });

  it('a work that scheduled itself again and was then cancelled stops', async () => {
    const ran: number[] = [];
    let action: Subscription | undefined;
    // cancelled after its second run, which scheduled a third (due 2 ms on: before the check's
    // 15 ms timer, made later, however late the host runs them; the first test shows such a
    // third run happens when not cancelled)
    await new Promise<void>((resolve) => {
      action = hostTimers.schedule<number>(function (n = 0) {
        ran.push(n);
        if (n === 1) resolve();
        this.schedule(n + 1, 2);
      });
    });
    action?.unsubscribe();
    await new Promise<void>((resolve) => hostTimers.schedule(() => resolve(), 15));
    expect(ran).toEqual([0, 1]);
    expect(action?.closed).toBe(true);
  });

  it('now() is the wall clock', () => {
    const before = Date.now();
    const now = hostTimers.now();
    expect(now).toBeGreaterThanOrEqual(before);
    expect(now).toBeLessThanOrEqual(Date.now());
  });
});
