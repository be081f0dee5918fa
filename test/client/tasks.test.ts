import { VirtualTimeScheduler, firstValueFrom, lastValueFrom, take, toArray } from 'rxjs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  AbortError,
  LimitExceededError,
  PaymentRequiredError,
  TaskDeadlineError,
  TaskFailedError,
  TaskTimeoutError,
  TimeoutError,
  pollDelay,
  taskResult,
  type RxVoiceClient,
  type TaskEvent,
} from '../../src/index.js';
import { PollingOptionsSchema } from '../../src/client/config.js';
import { TaskStatusAnswerSchema } from '../../src/client/tasks.js';
import type { Emulator } from '../../src/emulator/index.js';
import { clientFor, emulator, VirtualClock } from './helpers.js';

let emu: Emulator;
let client: RxVoiceClient;

beforeAll(async () => {
  emu = await emulator({ taskDurationMs: 20 });
  client = clientFor(emu);
});
afterAll(async () => {
  await client.close();
  await emu.close();
});
afterEach(() => {
  emu.context.options.faults.taskOutcome = undefined;
  emu.context.options.faults.httpLatencyMs = undefined;
  emu.context.options.taskDurationMs = 20;
});

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const DEFAULTS = { initialDelayMs: 500, multiplier: 1.5, maxDelayMs: 5000, jitter: 0, deadlineMs: 600_000 };

describe('task events', () => {
  it('created, pending..., result (last); taskResult() maps to the value', async () => {
    const events = await lastValueFrom(client.translate({ texts: ['Hi'], source_language: 'en-us', target_language: 'de-de' }).pipe(toArray()));
    expect(events[0]!.type).toBe('created');
    expect(events.at(-1)!.type).toBe('result');
    for (const e of events.slice(1, -1)) expect(e.type).toBe('pending');
    const ids = new Set(events.map((e) => e.task_id));
    expect(ids.size).toBe(1);
    const value = await lastValueFrom(client.translate({ texts: ['Hi'], source_language: 'en-us', target_language: 'de-de' }).pipe(taskResult()));
    expect(value.texts).toHaveLength(1);
  });

  it('is cold: each subscription creates its own task', async () => {
    const task$ = client.translate({ texts: ['Hi'], source_language: 'en-us', target_language: 'de-de' });
    const before = emu.requests.filter((r) => r.method === 'POST' && r.path === '/translation').length;
    const [a, b] = await Promise.all([firstValueFrom(task$), firstValueFrom(task$)]);
    expect(a.task_id).not.toBe(b.task_id);
    expect(emu.requests.filter((r) => r.method === 'POST' && r.path === '/translation').length).toBe(before + 2);
  });
});

describe('result size', () => {
  it('a result whose content-length is exactly maxResponseBytes arrives whole; one byte over the limit is refused at the headers', async () => {
    const done = await lastValueFrom(client.textToSound({ prompt: 'short rain', duration: 1 }));
    if (done.type !== 'result') throw new Error('no result event');
    const size = done.result.byteLength;
    const withLimit = (maxResponseBytes: number): RxVoiceClient => clientFor(emu, { maxResponseBytes });
    const exact = withLimit(size);
    expect((await lastValueFrom(exact.sound.result(done.run_id))).byteLength).toBe(size);
    const under = withLimit(size - 1);
    await expect(lastValueFrom(under.sound.result(done.run_id))).rejects.toBeInstanceOf(LimitExceededError);
    await Promise.all([exact.close(), under.close()]);
  });
});

describe('terminal statuses', () => {
  const cases = [
    ['ERROR', TaskFailedError, 'task_failed'],
    ['TIMEOUT', TaskTimeoutError, 'task_timeout'],
    ['PAYMENT_REQUIRED', PaymentRequiredError, 'payment_required'],
  ] as const;
  for (const [status, ErrorClass, code] of cases) {
    it(`${status} -> ${ErrorClass.name} carrying the task id`, async () => {
      emu.context.options.faults.taskOutcome = { 'text-to-sound': status };
      const events: TaskEvent<Uint8Array>[] = [];
      const error = await new Promise<unknown>((resolve) => {
        client.textToSound({ prompt: 'fail' }).subscribe({ next: (e) => events.push(e), error: resolve, complete: () => resolve(undefined) });
      });
      expect(error).toBeInstanceOf(ErrorClass);
      const taskError = error as InstanceType<typeof ErrorClass>;
      expect(taskError.code).toBe(code);
      expect(taskError.status).toBe(status);
      expect(taskError.taskId).toBe(events[0]!.task_id);
      expect(taskError.message).toContain(events[0]!.task_id);
    });
  }
  it('ERROR carries the service message when there is one', async () => {
    emu.context.options.faults.taskOutcome = { '*': 'ERROR' };
    const error = (await lastValueFrom(client.translate({ texts: ['x'], source_language: 'en-us', target_language: 'de-de' })).catch((e: unknown) => e)) as TaskFailedError;
    expect(error).toBeInstanceOf(TaskFailedError);
    expect(error.retryable).toBe(false);
    expect(error.serviceMessage).toBe('emulated failure of the translation task (fault injection)');
    expect(error.message).toContain('emulated failure of the translation task');
  });

  it('ERROR: the key is scrubbed from the service message', async () => {
    emu.context.options.faults.taskOutcome = { '*': 'ERROR' };
    const { task_id } = await firstValueFrom(client.translate({ texts: ['x'], source_language: 'en-us', target_language: 'de-de' }));
    emu.context.tasks.get(task_id)!.message = `no access for key ${emu.apiKey}`;
    const error = (await lastValueFrom(client.tasks.resume('translation', task_id)).catch((e: unknown) => e)) as TaskFailedError;
    expect(error).toBeInstanceOf(TaskFailedError);
    expect(error.serviceMessage).toBe('no access for key ***');
    expect(error.message).toContain('no access for key ***');
    expect(error.message).not.toContain(emu.apiKey);
  });

  it('a status FAILED (as a sample client checks for stories) is read as ERROR', () => {
    expect(TaskStatusAnswerSchema.parse({ status: 'FAILED', run_id: null })).toMatchObject({ status: 'ERROR' });
    expect(TaskStatusAnswerSchema.parse('PENDING')).toEqual({ status: 'PENDING' });
    expect(TaskStatusAnswerSchema.safeParse({ status: 'DONE' }).success).toBe(false);
  });

  it('TIMEOUT advises splitting the work; PAYMENT_REQUIRED adding credits', async () => {
    emu.context.options.faults.taskOutcome = { '*': 'TIMEOUT' };
    const timeout = await lastValueFrom(client.textToSound({ prompt: 'long' })).catch((e: unknown) => e);
    expect(timeout).toBeInstanceOf(TaskTimeoutError);
    expect((timeout as TaskTimeoutError).message).toMatch(/split the work into smaller requests/i);
    emu.context.options.faults.taskOutcome = { '*': 'PAYMENT_REQUIRED' };
    const payment = await lastValueFrom(client.textToSound({ prompt: 'costly' })).catch((e: unknown) => e);
    expect(payment).toBeInstanceOf(PaymentRequiredError);
    expect((payment as PaymentRequiredError).message).toMatch(/add credits/i);
  });
});

describe('polling in virtual time', () => {
  it('the configured schedule: 0.5 s, x1.5, capped at 5 s, exact (no jitter); the default is a call every second', () => {
    const delays = Array.from({ length: 9 }, (_, n) => pollDelay(n, DEFAULTS));
    expect(delays).toEqual([500, 750, 1125, 1688, 2531, 3797, 5000, 5000, 5000]);
    // jitter applies to learned waits only: the configured schedule ignores it
    const jittered = PollingOptionsSchema.parse({ ...DEFAULTS, jitter: 0.2 });
    expect(Array.from({ length: 9 }, (_, n) => pollDelay(n, jittered))).toEqual(delays);
    const defaults = PollingOptionsSchema.parse({});
    expect(Array.from({ length: 5 }, (_, n) => pollDelay(n, defaults))).toEqual([1000, 1000, 1000, 1000, 1000]);
  });

  it('polls on the injected scheduler with the backoff delays (real requests)', async () => {
    // real time for the task, virtual time for the waits: long enough for several polls on a loaded machine
    emu.context.options.taskDurationMs = 400;
    const clock = new VirtualClock();
    const polling = { ...DEFAULTS, deadlineMs: 1e12 };
    const c = clientFor(emu, { scheduler: clock, polling });
    const events = await lastValueFrom(c.translate({ texts: ['Hi'], source_language: 'en-us', target_language: 'de-de' }).pipe(toArray()));
    const pending = events.filter((e) => e.type === 'pending');
    expect(pending.length).toBeGreaterThan(1);
    const expected = Array.from({ length: pending.length + 1 }, (_, n) => pollDelay(n, polling));
    expect(clock.delays).toEqual(expected);
    let sum = 0;
    pending.forEach((e, i) => {
      sum += expected[i]!;
      expect(e).toMatchObject({ polls: i + 1, elapsedMs: sum });
    });
    // the result's timing, on the same clock: every call counted, the last pending one and the one that found it done
    const result = events.at(-1)!;
    expect(result.type).toBe('result');
    if (result.type !== 'result') return;
    expect(result.timing).toEqual({ createMs: 0, pendingMs: sum + expected.at(-1)!, lastPendingMs: sum, polls: pending.length + 1, resultMs: 0 });
    await c.close();
  });

  it('the deadline ends polling with a TimeoutError carrying the task id', async () => {
    emu.context.options.taskDurationMs = 60_000;
    const clock = new VirtualClock();
    const c = clientFor(emu, { scheduler: clock, polling: { ...DEFAULTS, deadlineMs: 3000 } });
    const events: TaskEvent<unknown>[] = [];
    const error = await new Promise<unknown>((resolve) => {
      c.translate({ texts: ['Hi'], source_language: 'en-us', target_language: 'de-de' }).subscribe({ next: (e) => events.push(e), error: resolve });
    });
    expect(error).toBeInstanceOf(TaskDeadlineError);
    expect(error).toBeInstanceOf(TimeoutError);
    expect((error as TaskDeadlineError).taskId).toBe(events[0]!.task_id);
    expect(clock.delays).toEqual([500, 750, 1125, 625]);
    expect(clock.now()).toBe(3000);
    await c.close();
  });
});

describe('cancellation', () => {
  it('unsubscribing stops polling at once', async () => {
    emu.context.options.taskDurationMs = 60_000;
    const task$ = client.translate({ texts: ['Hi'], source_language: 'en-us', target_language: 'de-de' });
    const firstTwo = await lastValueFrom(task$.pipe(take(3), toArray()));
    expect(firstTwo.map((e) => e.type)).toEqual(['created', 'pending', 'pending']);
    const id = firstTwo[0]!.task_id;
    const count = (): number => emu.requests.filter((r) => r.path === `/translation/${id}`).length;
    const after = count();
    await sleep(100);
    expect(count()).toBe(after);
  });

  it('an abort signal aborts the request in flight with AbortError', async () => {
    // The answer would take 5 s; the abort at 50 ms ends the call long before.
    emu.context.options.faults.httpLatencyMs = 5_000;
    const controller = new AbortController();
    const t0 = Date.now();
    const pending = lastValueFrom(client.translate({ texts: ['Hi'], source_language: 'en-us', target_language: 'de-de' }, { signal: controller.signal })).catch((e: unknown) => e);
    setTimeout(() => controller.abort(), 50);
    const error = await pending;
    expect(error).toBeInstanceOf(AbortError);
    expect(Date.now() - t0).toBeLessThan(4_000);
    const already = await lastValueFrom(client.voices.list({ signal: controller.signal })).catch((e: unknown) => e);
    expect(already).toBeInstanceOf(AbortError);
  });

  it('an abort signal also ends the wait between two status calls', async () => {
    emu.context.options.taskDurationMs = 60_000;
    const c = clientFor(emu, { polling: { ...DEFAULTS, initialDelayMs: 5000 } });
    const controller = new AbortController();
    const events: string[] = [];
    const t0 = Date.now();
    const done = new Promise<unknown>((resolve) => {
      c.translate({ texts: ['Hi'], source_language: 'en-us', target_language: 'de-de' }, { signal: controller.signal }).subscribe({
        next: (e) => {
          events.push(e.type);
          setTimeout(() => controller.abort(), 10);
        },
        error: resolve,
      });
    });
    expect(await done).toBeInstanceOf(AbortError);
    expect(events).toEqual(['created']);
    expect(Date.now() - t0).toBeLessThan(1000);
    await c.close();
  });

  it('resuming a task: an abort signal ends the wait before the next status call', async () => {
    emu.context.options.taskDurationMs = 60_000;
    const { task_id } = await firstValueFrom(client.translate({ texts: ['Hi'], source_language: 'en-us', target_language: 'de-de' }));
    // virtual time that does not move: the first status call waits until the abort
    const frozen = new VirtualTimeScheduler();
    const c = clientFor(emu, { scheduler: frozen });
    const controller = new AbortController();
    let error: unknown;
    c.tasks.resume('translation', task_id, { signal: controller.signal }).subscribe({ error: (e: unknown) => (error = e) });
    // control: the wait is scheduled, nothing has ended it
    expect(frozen.actions).toHaveLength(1);
    expect(error).toBeUndefined();
    controller.abort();
    expect(error).toBeInstanceOf(AbortError);
    await c.close();
  });

  it('unsubscribing during a request: no value, no completion, nothing more sent', async () => {
    emu.context.options.faults.httpLatencyMs = 300;
    let closed = false;
    const before = emu.requests.length;
    const sub = client.voices.list().subscribe({ complete: () => (closed = true) });
    await sleep(60);
    expect(emu.requests.length).toBe(before + 1);
    sub.unsubscribe();
    await sleep(350);
    expect(closed).toBe(false);
    expect(emu.requests.length).toBe(before + 1);
  });
});
