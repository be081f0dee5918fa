/**
 * Learned polling: the pure model and interval rule (src/client/polling.ts), and the
 * client using them in virtual time against the emulator.
 */
import fc from 'fast-check';
import { lastValueFrom, toArray } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PollingOptionsSchema } from '../../src/client/config.js';
import { createTaskDurationModel, learnedPollInterval, MIN_SAMPLES, nextPollDelay } from '../../src/client/polling.js';
import { TaskDeadlineError, type RxVoiceClient } from '../../src/index.js';
import type { Emulator } from '../../src/emulator/index.js';
import { clientFor, emulator, VirtualClock } from './helpers.js';
import { familyMix, familyRows, simulateOurs, simulatePeer } from '../../bench/polling.js';
import { frontier, latenessAt, logNormal, optimalSchedule } from '../../bench/polling-optimal.js';
import { seeded } from '../../bench/util.js';

const POLICY = PollingOptionsSchema.parse({});

describe('task duration model', () => {
  it('predicts nothing before MIN_SAMPLES tasks of the family, then per family', () => {
    const model = createTaskDurationModel();
    for (let i = 0; i < MIN_SAMPLES - 1; i++) model.record('translation', 100, 900, 1100);
    expect(model.predict('translation', 100)).toBeUndefined();
    model.record('translation', 100, 900, 1100);
    const prediction = model.predict('translation', 100);
    expect(prediction).toBeDefined();
    expect(Math.exp(prediction!.mu)).toBeCloseTo(1000, 6);
    expect(model.predict('text-to-sound', 100)).toBeUndefined();
  });

  it('learns duration against request size (a line in log-log), and the mean without a size', () => {
    const model = createTaskDurationModel();
    // 1 s per 100 characters.
    for (const size of [100, 200, 400, 800, 1600]) model.record('translation', size, size * 10 - 5, size * 10 + 5);
    expect(Math.exp(model.predict('translation', 3200)!.mu)).toBeCloseTo(32_000, -2);
    expect(Math.exp(model.predict('translation', 150)!.mu)).toBeCloseTo(1500, -1);
    // No size: the geometric mean of what was seen.
    expect(Math.exp(model.predict('translation', undefined)!.mu)).toBeCloseTo(4000, -1);
  });

  it('a task done at the first status call counts three quarters of that wait (it is only known to be shorter)', () => {
    const model = createTaskDurationModel();
    for (let i = 0; i < MIN_SAMPLES; i++) model.record('sound', undefined, 0, 2000);
    expect(Math.exp(model.predict('sound', undefined)!.mu)).toBeCloseTo(1500, 6);
  });

  it('forgets all but the last 64 tasks of a family', () => {
    const model = createTaskDurationModel();
    for (let i = 0; i < 64; i++) model.record('sound', undefined, 59_000, 61_000);
    for (let i = 0; i < 64; i++) model.record('sound', undefined, 1900, 2100);
    expect(Math.exp(model.predict('sound', undefined)!.mu)).toBeCloseTo(2000, 6);
  });
});

describe('learned poll interval', () => {
  const prediction = { mu: Math.log(10_000), sigma: 0.2 };

  it('waits through the unlikely start, polls densely around the likely completion', () => {
    const first = learnedPollInterval(prediction, 0, POLICY);
    expect(first).toBeGreaterThan(5000);
    expect(first).toBeLessThan(10_000);
    const nearMedian = learnedPollInterval(prediction, 10_000, POLICY);
    expect(nearMedian).toBeLessThan(1500);
    expect(nearMedian).toBeGreaterThanOrEqual(POLICY.minIntervalMs);
    // A lower lateness budget polls more densely.
    expect(learnedPollInterval(prediction, 10_000, { ...POLICY, latenessPerPollMs: 25 })).toBeLessThan(nearMedian);
  });

  it('the first call (nothing waited yet) has no minimum interval; later calls do', () => {
    const quick = { mu: Math.log(5), sigma: 0.1 };
    const options = { ...POLICY, minIntervalMs: 1000 };
    const first = learnedPollInterval(quick, 0, options);
    expect(first).toBeGreaterThan(0);
    expect(first).toBeLessThan(1000);
    // control: once something was waited, the minimum holds
    expect(learnedPollInterval(quick, 1, options)).toBe(1000);
  });

  it('jitter only shortens a learned wait, by at most its fraction', () => {
    const options = { ...POLICY, jitter: 0.2 };
    const interval = learnedPollInterval(prediction, 0, options);
    expect(nextPollDelay(prediction, 3, 0, 0, options, () => 0)).toBe(Math.round(interval));
    expect(nextPollDelay(prediction, 3, 0, 0, options, () => 0.5)).toBe(Math.round(interval * 0.9));
    // the wait runs from the previous call: 2 s after it was sent, 2 s less remain
    expect(nextPollDelay(prediction, 3, 0, 2000, options, () => 0)).toBe(Math.round(interval - 2000));
  });

  it('stays within [minIntervalMs, maxLearnedDelayMs] and spends at most the lateness budget per call', () => {
    fc.assert(
      fc.property(
        fc.double({ min: Math.log(50), max: Math.log(300_000), noNaN: true }),
        fc.double({ min: 0.1, max: 2, noNaN: true }),
        fc.double({ min: 1, max: 120_000, noNaN: true }),
        fc.double({ min: 10, max: 2000, noNaN: true }),
        (mu, sigma, elapsed, budget) => {
          const options = { ...POLICY, latenessPerPollMs: budget };
          const interval = learnedPollInterval({ mu, sigma }, elapsed, options);
          expect(interval).toBeGreaterThanOrEqual(POLICY.minIntervalMs);
          expect(interval).toBeLessThanOrEqual(POLICY.maxLearnedDelayMs);
          // A smaller lateness budget never lengthens the interval.
          expect(learnedPollInterval({ mu, sigma }, elapsed, { ...options, latenessPerPollMs: budget / 2 })).toBeLessThanOrEqual(interval);
        },
      ),
    );
  });
});

describe('the client polls with what it learned (virtual time, real requests)', () => {
  let emu: Emulator;
  beforeAll(async () => {
    // Tasks done at once: each first status call finds SUCCESS.
    emu = await emulator({ taskDurationMs: 0 });
  });
  afterAll(() => emu.close());

  const translate = (client: RxVoiceClient) =>
    lastValueFrom(client.translate({ texts: ['Hello there.'], source_language: 'en-us', target_language: 'de-de' }).pipe(toArray()));

  it('backs off for the first tasks of a family, then polls sooner where tasks were seen to end', async () => {
    const polling = { initialDelayMs: 500, multiplier: 1.5, maxDelayMs: 5000, jitter: 0, deadlineMs: 60_000, latenessPerPollMs: 20 };
    const clock = new VirtualClock();
    const client = clientFor(emu, { scheduler: clock, polling });
    const control = new VirtualClock();
    const fixed = clientFor(emu, { scheduler: control, polling: { ...polling, adaptive: false } });
    try {
      for (let i = 0; i < MIN_SAMPLES; i++) {
        await translate(client);
        await translate(fixed);
      }
      expect(clock.delays).toEqual([500, 500, 500]);
      await translate(client);
      await translate(fixed);
      // Seen done by 500 ms three times: the next first call goes earlier.
      expect(clock.delays[MIN_SAMPLES]).toBeLessThan(500);
      expect(clock.delays[MIN_SAMPLES]).toBeGreaterThan(0);
      // The control, with adaptive polling off, keeps the backoff.
      expect(control.delays).toEqual([500, 500, 500, 500]);
    } finally {
      await client.close();
      await fixed.close();
    }
  });

  it('keeps the deadline after learning', async () => {
    const clock = new VirtualClock();
    const client = clientFor(emu, { scheduler: clock, polling: { jitter: 0, deadlineMs: 3000 } });
    try {
      for (let i = 0; i < MIN_SAMPLES; i++) await translate(client);
      emu.context.options.taskDurationMs = 600_000;
      const started = clock.now();
      const error = await translate(client).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TaskDeadlineError);
      expect(clock.now() - started).toBe(3000);
    } finally {
      emu.context.options.taskDurationMs = 0;
      await client.close();
    }
  });
});

describe('the default policy before it has learned a family (virtual time, real requests)', () => {
  let emu: Emulator;
  beforeAll(async () => {
    emu = await emulator({ taskDurationMs: 30 });
  });
  afterAll(() => emu.close());

  it('calls every second, like a plain 1 s loop, then polls by what it learned', async () => {
    const clock = new VirtualClock();
    // the default polling options (clientFor's fast test polling replaced)
    const client = clientFor(emu, { scheduler: clock, polling: {} });
    try {
      const translate = () =>
        lastValueFrom(client.translate({ texts: ['Hello there.'], source_language: 'en-us', target_language: 'de-de' }).pipe(toArray()));
      for (let i = 0; i < MIN_SAMPLES; i++) await translate();
      expect(clock.delays.length).toBeGreaterThanOrEqual(MIN_SAMPLES);
      expect(new Set(clock.delays)).toEqual(new Set([1000]));
      const before = clock.delays.length;
      await translate();
      // control: the same clock records a learned wait once 3 tasks were seen
      expect(clock.delays.slice(before).some((d) => d !== 1000)).toBe(true);
    } finally {
      await client.close();
    }
  });
});

describe('the policy against the 1 s loop and the best schedule (simulated, virtual time)', () => {
  it('first task of a family: the same calls and delay as the 1 s loop, task by task, medians 1-60 s', () => {
    for (const medianMs of [1000, 3000, 10_000, 30_000, 60_000]) {
      for (const task of familyMix(200, medianMs, seeded(medianMs))) {
        const [ours] = simulateOurs([task], 50, seeded(1));
        const loop = simulatePeer(task, 50);
        expect(ours!.calls).toBeLessThanOrEqual(loop.calls);
        expect(ours!.latenessMs).toBeLessThanOrEqual(loop.latenessMs);
      }
    }
  });

  it('after 20 tasks of a family: delay within 1.3x of the best schedule at the same calls (medians 3 s and 30 s)', () => {
    for (const medianMs of [3000, 30_000]) {
      const [first, calls, learned] = familyRows(medianMs, 50, { first: 300, clients: 40 });
      expect(first!.ratio).toBeLessThanOrEqual(1);
      expect(calls!.ratio).toBeLessThanOrEqual(1);
      expect(learned!.ratio).toBeLessThanOrEqual(1.3);
      // control: the 1 s loop is later than the best schedule at its own calls
      expect(first!.note).toMatch(/frontier \(best possible at the loop's [\d.]+ calls\): (\d+) ms/);
      const best = Number(/: (\d+) ms$/.exec(first!.note!)![1]);
      expect(best).toBeLessThan(first!.peer);
    }
  });

  it('the frontier: scales with the median (no network), falls as calls grow', () => {
    const a = frontier(logNormal(3000, 0.8));
    const b = frontier(logNormal(30_000, 0.8));
    for (const calls of [2, 3, 5, 8]) {
      expect(latenessAt(b, calls) / latenessAt(a, calls)).toBeCloseTo(10, 1);
      expect(latenessAt(a, calls + 1)).toBeLessThan(latenessAt(a, calls));
    }
    // the one-call schedule (calls cost everything): a single call once all but 1e-4 are done
    const single = optimalSchedule(logNormal(3000, 0.8), 1e9);
    expect(single.times).toHaveLength(1);
    expect(single.calls).toBe(1);
  });
});
