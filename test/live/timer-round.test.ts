/**
 * The timer round with slack (the boundary holds' round, timer-round.ts) in virtual time: an
 * entry fires at its time, or up to `slack` sooner together with an entry due before it,
 * never later; taken back or queued again, it fires once for its last queuing or not at all.
 * (The watches' round, slack 0, is checked against one timer a watch in response-watch.test.ts.)
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { TestScheduler } from 'rxjs/testing';
import { TimerRound, type RoundEntry } from '../../src/live/timer-round.js';

class Entry implements RoundEntry {
  dueAt = NaN;
  readonly firedAt: number[] = [];
  constructor(readonly scheduler: TestScheduler) {}
  fire(): void {
    this.firedAt.push(this.scheduler.now());
  }
}

const newScheduler = () => {
  const scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
  scheduler.maxFrames = 100_000;
  return scheduler;
};
const at = (scheduler: TestScheduler, time: number, work: () => void) => scheduler.schedule(work, time);

/** Runs of the round's action (each a wake-up of the process under a real timer). */
function countRuns(round: TimerRound): () => number {
  let runs = 0;
  const run = round.run.bind(round);
  round.run = () => {
    runs++;
    run();
  };
  return () => runs;
}

type Op = { at: number; entry: number; cancel: boolean };

/**
 * Plays `ops` (adds and takebacks of `count` entries) on a round in virtual time and checks
 * each entry's firings: each queuing fires once in [due - slack, due] unless taken back or
 * queued again first, each wake-up fires one entry exactly on time, and no action is left.
 * Returns how many firings there were.
 */
function playQueuings(every: number, count: number, ops: readonly Op[], maxFrames = 100_000): number {
  const scheduler = newScheduler();
  scheduler.maxFrames = maxFrames;
  const slack = every / 16;
  const round = new TimerRound(scheduler, every, slack);
  const entries = Array.from({ length: count }, () => new Entry(scheduler));
  const sorted = [...ops].sort((a, b) => a.at - b.at);
  for (const op of sorted) at(scheduler, op.at, () => (op.cancel ? round.cancel(entries[op.entry]!) : round.add(entries[op.entry]!)));
  scheduler.flush();
  const firedDues = new Map<number, number[]>(); // firing time -> dues of the queuings fired then
  let fired = 0;
  entries.forEach((entry, i) => {
    const mine = sorted.filter((o) => o.entry === i);
    // each queuing: its due, and the time of the entry's next op (which takes it back or queues it again)
    const queued = mine.flatMap((o, k) => (o.cancel ? [] : [{ due: o.at + every, next: mine[k + 1]?.at ?? Infinity, used: false }]));
    for (const t of entry.firedAt) {
      const q = queued.find((x) => !x.used && t >= x.due - slack && t <= x.due && t < x.next);
      expect(q, `entry ${i} fired at ${t}`).toBeDefined();
      q!.used = true;
      fired++;
      firedDues.set(t, [...(firedDues.get(t) ?? []), q!.due]);
    }
    // a queuing left alone until its due fired
    for (const q of queued) if (q.next > q.due) expect(q.used).toBe(true);
  });
  for (const [t, dues] of firedDues) expect(dues).toContain(t);
  expect(scheduler.actions).toHaveLength(0);
  return fired;
}

describe('TimerRound with slack (virtual time)', () => {
  it('an entry alone fires exactly `every` after it was added; one added later within the slack fires with it, sooner', () => {
    const scheduler = newScheduler();
    const round = new TimerRound(scheduler, 250, 250 / 16);
    const [a, b, c] = [new Entry(scheduler), new Entry(scheduler), new Entry(scheduler)];
    at(scheduler, 100, () => round.add(a));
    at(scheduler, 110, () => round.add(b)); // due 360: within 15.625 of 350
    at(scheduler, 120, () => round.add(c)); // due 370: not within it
    scheduler.flush();
    expect(a.firedAt).toEqual([350]);
    expect(b.firedAt).toEqual([350]); // 10 ms before its time, with a
    expect(c.firedAt).toEqual([370]); // control: the slack has an end, and c fires on time
    expect(scheduler.actions).toHaveLength(0);
  });

  it('1,000 entries added over one period: a wake-up for each sixteenth of it, not one an entry', () => {
    const scheduler = newScheduler();
    const slack = 250 / 16;
    const round = new TimerRound(scheduler, 250, slack);
    const runs = countRuns(round);
    const entries = Array.from({ length: 1000 }, () => new Entry(scheduler));
    entries.forEach((entry, i) => at(scheduler, i / 4, () => round.add(entry)));
    scheduler.flush();
    expect(entries.every((e) => e.firedAt.length === 1)).toBe(true);
    expect(runs()).toBeLessThanOrEqual(Math.ceil(250 / slack) + 1);
    // control: without the slack, the same entries wake the round once a time they are due (the count sees runs)
    const exact = new TimerRound(scheduler, 250, 0);
    const exactRuns = countRuns(exact);
    const base = scheduler.now();
    entries.forEach((entry, i) => at(scheduler, i / 4, () => exact.add(entry)));
    scheduler.flush();
    expect(scheduler.now()).toBeGreaterThan(base);
    expect(exactRuns()).toBe(1000);
  });

  it('taken back before its time: never fires, and the last entry taken back leaves no action', () => {
    const scheduler = newScheduler();
    const round = new TimerRound(scheduler, 100, 100 / 16);
    const [kept, taken] = [new Entry(scheduler), new Entry(scheduler)];
    at(scheduler, 0, () => {
      round.add(taken);
      round.add(kept);
    });
    at(scheduler, 50, () => round.cancel(taken));
    at(scheduler, 60, () => round.cancel(kept));
    const left: number[] = [];
    at(scheduler, 61, () => left.push(scheduler.actions.filter((a) => !a.closed).length));
    scheduler.flush();
    expect(taken.firedAt).toEqual([]);
    expect(kept.firedAt).toEqual([]);
    expect(left).toEqual([0]);
  });

  it('property: each queuing fires once in [due - slack, due] unless taken back or queued again first; each wake-up fires one entry exactly on time', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(31, 91, 251),
        // ops at even times, dues at odd ones: an op and a firing never share a time
        fc.array(fc.record({ at: fc.integer({ min: 0, max: 300 }).map((k) => 2 * k), entry: fc.integer({ min: 0, max: 5 }), cancel: fc.boolean() }), { minLength: 1, maxLength: 30 }),
        (every, ops: Op[]) => {
          playQueuings(every, 6, ops);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('a firing entry that takes back another and queues a third while the round runs: every other entry fires once, on time', () => {
    const scheduler = newScheduler();
    const round = new TimerRound(scheduler, 100, 100 / 16);
    const entries = Array.from({ length: 3000 }, () => new Entry(scheduler));
    const victim = entries[2999]!;
    // entry 1500 fires with 1500 passed and 1,499 still queued: it takes back the last one
    const taker = entries[1500]!;
    taker.fire = function (this: Entry) {
      Entry.prototype.fire.call(this);
      round.cancel(victim);
      round.add(late);
    };
    const late = new Entry(scheduler);
    at(scheduler, 10, () => entries.forEach((entry) => round.add(entry)));
    scheduler.flush();
    expect(entries.slice(0, 2999).every((entry) => entry.firedAt.length === 1 && entry.firedAt[0] === 110)).toBe(true);
    expect(victim.firedAt).toEqual([]);
    expect(late.firedAt).toEqual([210]); // queued at 110 by the taker: fired a period later
    expect(scheduler.actions).toHaveLength(0);
    // control: without the taker's cancel the victim fires with the others (the check above sees it)
    const again = new TimerRound(scheduler, 100, 100 / 16);
    const plain = Array.from({ length: 3000 }, () => new Entry(scheduler));
    const start = scheduler.now();
    at(scheduler, 10, () => plain.forEach((entry) => again.add(entry)));
    scheduler.flush();
    expect(plain[2999]!.firedAt).toEqual([start + 110]);
  });

  it('property, at scale: thousands of queuings of 40 entries over 40 s fire as queued', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(31, 251),
        fc.array(fc.record({ at: fc.integer({ min: 0, max: 20_000 }).map((k) => 2 * k), entry: fc.integer({ min: 0, max: 39 }), cancel: fc.boolean() }), { minLength: 2000, maxLength: 4000 }),
        (every, ops: Op[]) => {
          expect(playQueuings(every, 40, ops, 200_000)).toBeGreaterThan(0);
        },
      ),
      { numRuns: 25 },
    );
  });
});
