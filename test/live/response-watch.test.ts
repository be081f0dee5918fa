/**
 * The response watch in virtual time: every watch of a scheduler checked by one round (one
 * scheduled action), each at the times a timer of its own would check it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { asyncScheduler, config, type SchedulerAction } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { newConnection, type Connection, type SocketEventsHost } from '../../src/live/connection.js';
import { ResponseWatch, type ResponseWatchHost } from '../../src/live/response-watch.js';
import type { ResolvedSpeak } from '../../src/live/options.js';

const socketHost: SocketEventsHost = { onOpen() {}, onMessage() {}, onClose() {}, onSocketError() {} };

/** One session's side of a watch: what it waits for, and what the watch told it (scheduler times). */
class FakeSession implements ResponseWatchHost {
  waiting = true;
  readonly pings: number[] = [];
  readonly silent: number[] = [];
  readonly stalled: number[] = [];
  readonly connection: Connection;
  readonly watch: ResponseWatch;

  constructor(
    readonly scheduler: TestScheduler,
    options: { responseTimeoutMs: number; stall?: { afterMs: number; fallback: 'error' } },
  ) {
    const socket = { ping: () => this.pings.push(scheduler.now()) } as unknown as Connection['socket'];
    this.connection = newConnection(socket, scheduler.now(), socketHost);
    const resolved = { responseTimeoutMs: options.responseTimeoutMs, stall: options.stall, scheduler, config: { output_format: 'wav', sample_rate: 16000 } };
    this.watch = new ResponseWatch(resolved as unknown as Pick<ResolvedSpeak, 'responseTimeoutMs' | 'stall' | 'scheduler' | 'config'>, this);
  }

  /** Since when the fake's service owes a segment (default: at once, from the first frame). */
  dueAt = -Infinity;

  waitsForSpeech(connection: Connection): boolean {
    return connection === this.connection && this.waiting;
  }
  speechDueAt(): number {
    return this.dueAt;
  }
  onSilent(_connection: Connection, ms: number): void {
    this.silent.push(this.scheduler.now());
    expect(ms).toBeGreaterThan(0);
  }
  onStall(): void {
    this.stalled.push(this.scheduler.now());
  }
}

const newScheduler = () => {
  const scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
  scheduler.maxFrames = 10_000; // (750 by default)
  return scheduler;
};
/** Run `work` at virtual time `at`. */
const at = (scheduler: TestScheduler, time: number, work: () => void) => scheduler.schedule(work, time);

afterEach(() => {
  config.onUnhandledError = null;
});

describe('ResponseWatch (virtual time)', () => {
  it('a silent service: pings each third of responseTimeoutMs, then onSilent exactly at responseTimeoutMs', () => {
    const scheduler = newScheduler();
    const session = new FakeSession(scheduler, { responseTimeoutMs: 300 });
    at(scheduler, 40, () => session.watch.watch(session.connection));
    scheduler.flush();
    expect(session.pings).toEqual([140, 240]);
    expect(session.silent).toEqual([340]);
    // stopped: nothing scheduled any more
    expect(scheduler.actions).toHaveLength(0);
  });

  it('progress moves the silence on: checked on the same beat, timed from the last progress', () => {
    const scheduler = newScheduler();
    const session = new FakeSession(scheduler, { responseTimeoutMs: 300 });
    at(scheduler, 0, () => session.watch.watch(session.connection));
    at(scheduler, 250, () => session.watch.noteProgress(session.connection, '{"type":"segment.start"}'));
    scheduler.flush();
    // checks at 100, 200, ...: at 500 silent 250 (< 300), at 600 silent 350
    expect(session.silent).toEqual([600]);
    // a ping where nothing came for a period: not at 300 (progress 50 before), again from 400
    expect(session.pings).toEqual([100, 200, 400, 500]);
  });

  it('a service that speaks within every period is not pinged; a quiet one beside it is', () => {
    const scheduler = newScheduler();
    const talking = new FakeSession(scheduler, { responseTimeoutMs: 300 });
    const quiet = new FakeSession(scheduler, { responseTimeoutMs: 3000 });
    at(scheduler, 0, () => {
      talking.watch.watch(talking.connection);
      quiet.watch.watch(quiet.connection);
    });
    // a frame every 90 ms (under the period, 100): a talker's segments
    for (let t = 90; t < 1000; t += 90) at(scheduler, t, () => talking.watch.noteProgress(talking.connection, '{"type":"segment.done"}'));
    at(scheduler, 1000, () => (talking.waiting = false));
    at(scheduler, 1500, () => (quiet.waiting = false));
    scheduler.flush();
    expect(talking.pings).toEqual([]);
    expect(talking.silent).toEqual([]);
    // control: the quiet one, on a period of 1000, was pinged at its check
    expect(quiet.pings).toEqual([1000]);
  });

  it('a stall (stall.afterMs shorter): checked each third of afterMs, onStall at afterMs', () => {
    const scheduler = newScheduler();
    const session = new FakeSession(scheduler, { responseTimeoutMs: 300, stall: { afterMs: 150, fallback: 'error' } });
    at(scheduler, 0, () => session.watch.watch(session.connection));
    scheduler.flush();
    expect(session.stalled).toEqual([150]);
    expect(session.silent).toEqual([]);
  });

  it('a segment in progress is not a stall: the watch waits for responseTimeoutMs instead', () => {
    const scheduler = newScheduler();
    const session = new FakeSession(scheduler, { responseTimeoutMs: 300, stall: { afterMs: 150, fallback: 'error' } });
    const control = new FakeSession(scheduler, { responseTimeoutMs: 300, stall: { afterMs: 150, fallback: 'error' } });
    at(scheduler, 0, () => {
      session.connection.inProgress = 0; // segment 0 started, its audio not yet done
      session.watch.watch(session.connection);
      control.watch.watch(control.connection);
    });
    scheduler.flush();
    expect(session.stalled).toEqual([]);
    expect(session.silent).toEqual([300]);
    // control: with no segment started, the same silence is a stall at afterMs
    expect(control.stalled).toEqual([150]);
  });

  it('text the service rightly holds (no sentence end yet): stall and silence count from when it is owed, pings from the last frame', () => {
    const scheduler = newScheduler();
    const session = new FakeSession(scheduler, { responseTimeoutMs: 300, stall: { afterMs: 150, fallback: 'error' } });
    const silentOne = new FakeSession(scheduler, { responseTimeoutMs: 300, stall: undefined });
    const control = new FakeSession(scheduler, { responseTimeoutMs: 300, stall: { afterMs: 150, fallback: 'error' } });
    // owed from 400 on: an LLM's words until 0, then idle_timeout (400 here) of no text
    session.dueAt = 400;
    silentOne.dueAt = 400;
    at(scheduler, 0, () => {
      for (const s of [session, silentOne, control]) s.watch.watch(s.connection);
    });
    scheduler.flush();
    expect(session.stalled).toEqual([550]); // the next check at or after 400 + 150, on the beat of 50
    expect(silentOne.silent).toEqual([700]);
    expect(silentOne.pings.slice(0, 2)).toEqual([100, 200]); // the service itself is quiet all along
    // control: owed from the first frame, the same silence is a stall at afterMs
    expect(control.stalled).toEqual([150]);
  });

  it('nothing waits any more: the watch lapses at its next check (no ping, no timeout), and no action stays scheduled', () => {
    const scheduler = newScheduler();
    const session = new FakeSession(scheduler, { responseTimeoutMs: 300 });
    const control = new FakeSession(scheduler, { responseTimeoutMs: 300 });
    at(scheduler, 0, () => {
      session.watch.watch(session.connection);
      control.watch.watch(control.connection);
    });
    at(scheduler, 150, () => {
      session.waiting = false;
    });
    scheduler.flush();
    expect(session.pings).toEqual([100]);
    expect(session.silent).toEqual([]);
    // control: the other one, still waiting, was seen timing out on the same round
    expect(control.silent).toEqual([300]);
    expect(scheduler.actions).toHaveLength(0);
  });

  it('every watch of one scheduler and period shares one scheduled action; stopping the last one leaves none', () => {
    const scheduler = newScheduler();
    const sessions = [0, 10, 20].map(() => new FakeSession(scheduler, { responseTimeoutMs: 300 }));
    sessions.forEach((s, i) => at(scheduler, i * 10, () => s.watch.watch(s.connection)));
    const counts: number[] = [];
    at(scheduler, 50, () => counts.push(scheduler.actions.filter((a) => !a.closed).length));
    // control: a watch with another period is another round, another action
    const other = new FakeSession(scheduler, { responseTimeoutMs: 600 });
    at(scheduler, 60, () => other.watch.watch(other.connection));
    at(scheduler, 70, () => counts.push(scheduler.actions.filter((a) => !a.closed).length));
    at(scheduler, 80, () => {
      for (const s of [...sessions, other]) s.watch.stop();
      counts.push(scheduler.actions.filter((a) => !a.closed).length);
    });
    scheduler.flush();
    // at 50: the round's action and the 3 pending `at`s (60, 70, 80); at 70: two rounds' actions and the `at` of 80
    expect(counts).toEqual([1 + 3, 2 + 1, 0 + 0]);
    expect(sessions.map((s) => s.silent)).toEqual([[], [], []]);
  });

  it('a session whose handler throws: reported (config.onUnhandledError), and the other sessions are still checked', () => {
    const reported: unknown[] = [];
    config.onUnhandledError = (error) => reported.push(error);
    const scheduler = newScheduler();
    const thrower = new FakeSession(scheduler, { responseTimeoutMs: 300 });
    thrower.onSilent = () => {
      throw new Error('handler failed');
    };
    const other = new FakeSession(scheduler, { responseTimeoutMs: 300 });
    at(scheduler, 0, () => thrower.watch.watch(thrower.connection));
    at(scheduler, 10, () => other.watch.watch(other.connection));
    // a third one, watched later, is checked by the same round after the throw
    const later = new FakeSession(scheduler, { responseTimeoutMs: 300 });
    at(scheduler, 305, () => later.watch.watch(later.connection));
    scheduler.flush();
    expect(other.silent).toEqual([310]);
    expect(later.silent).toEqual([605]);
    return new Promise<void>((resolve) =>
      setTimeout(() => {
        expect((reported[0] as Error).message).toBe('handler failed');
        resolve();
      }, 5),
    );
  });

  it('asyncScheduler (a scheduler a caller may pass) in two TestScheduler runs: a watch left running in the first does not stop those of the second', () => {
    const host = (scheduler: TestScheduler) => {
      const session = new FakeSession(scheduler, { responseTimeoutMs: 300 });
      // the watch on asyncScheduler, delegated to the TestScheduler inside run (the default is
      // host-timers.ts, which run does not make virtual)
      const resolved = { responseTimeoutMs: 300, stall: undefined, scheduler: asyncScheduler, config: { output_format: 'wav' } };
      return Object.assign(session, { watch: new ResponseWatch(resolved as unknown as ConstructorParameters<typeof ResponseWatch>[0], session) });
    };
    const first = newScheduler();
    first.run(() => {
      const left = host(first);
      at(first, 500, () => left.watch.watch(left.connection));
      // the run ends at 650 (its flush stops there): the watch is left with a check pending at 700
      first.maxFrames = 650;
    });
    const second = newScheduler();
    let silentAt: number[] = [];
    second.run(() => {
      const session = host(second);
      at(second, 0, () => session.watch.watch(session.connection));
      second.flush();
      silentAt = session.silent;
    });
    expect(silentAt).toEqual([300]);
  });

  it('property: sessions started and heard at random times time out exactly when a timer of their own would have', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ start: fc.integer({ min: 0, max: 1000 }), heard: fc.array(fc.integer({ min: 1, max: 900 }), { maxLength: 4 }) }), { minLength: 1, maxLength: 8 }),
        fc.constantFrom(30, 90, 300),
        (specs, ms) => {
          const scheduler = newScheduler();
          const sessions = specs.map((spec) => {
            const session = new FakeSession(scheduler, { responseTimeoutMs: ms });
            at(scheduler, spec.start, () => session.watch.watch(session.connection));
            for (const h of spec.heard) at(scheduler, spec.start + h, () => session.watch.noteProgress(session.connection, '{}'));
            return session;
          });
          scheduler.flush();
          specs.forEach((spec, i) => {
            // the model: checks every ms/3 from the start, silence timed from the last progress before the check
            const every = ms / 3;
            for (let check = spec.start + every; ; check += every) {
              const last = Math.max(spec.start, ...spec.heard.map((h) => spec.start + h).filter((t) => t <= check));
              if (check - last >= ms) {
                expect(sessions[i]!.silent).toEqual([check]);
                break;
              }
            }
          });
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('ResponseWatch (real timers)', () => {
  it('a period longer than a Node timer can wait: the round waits the longest a timer can, not 1 ms over and over', async () => {
    let runs = 0;
    // asyncScheduler, counting the runs of the round's action (its rescheduling keeps the counting work)
    const counting = {
      now: () => asyncScheduler.now(),
      schedule<T>(work: (this: SchedulerAction<T>, state?: T) => void, delay?: number, state?: T) {
        return asyncScheduler.schedule<T>(function (this: SchedulerAction<T>, s?: T) {
          runs++;
          work.call(this, s);
        }, delay, state);
      },
    };
    const make = (responseTimeoutMs: number) => {
      const scheduler = counting as unknown as TestScheduler;
      const session = new FakeSession(newScheduler(), { responseTimeoutMs });
      const resolved = { responseTimeoutMs, stall: undefined, scheduler, config: { output_format: 'wav' } };
      return Object.assign(session, { watch: new ResponseWatch(resolved as unknown as ConstructorParameters<typeof ResponseWatch>[0], session) });
    };
    const long = make(1e10);
    long.watch.watch(long.connection);
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect(runs).toBe(0);
    long.watch.stop();
    // control: a short period runs (and the counting sees it)
    const short = make(15);
    short.watch.watch(short.connection);
    await new Promise((resolve) => setTimeout(resolve, 40));
    short.watch.stop();
    expect(runs).toBeGreaterThan(0);
  });
});
