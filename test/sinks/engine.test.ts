import { from, lastValueFrom, Subject, toArray } from 'rxjs';
import { describe, expect, it, vi } from 'vitest';
import { sinkOperator, type SinkWorker } from '../../src/sinks/runSink.js';

/** A worker that logs every call and takes one macrotask per write. */
function loggingWorker(log: string[], options: { failOn?: number; failFinish?: boolean; batch?: boolean } = {}): SinkWorker<number, string> {
  const tick = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 1));
  const worker: SinkWorker<number, string> = {
    async write(value) {
      log.push(`write ${value}`);
      await tick();
      if (value === options.failOn) throw new Error(`bad ${value}`);
      return `wrote ${value}`;
    },
    async finish() {
      log.push('finish');
      await tick();
      if (options.failFinish) throw new Error('finish failed');
      return 'done';
    },
    interrupt() {
      log.push('interrupt');
    },
    async abort() {
      await tick();
      log.push('abort');
    },
  };
  if (options.batch) {
    worker.writeMany = async (values) => {
      log.push(`writeMany ${values.join(',')}`);
      await tick();
      return `wrote ${values.join(',')}`;
    };
  }
  return worker;
}

describe('sinkOperator (the engine under the sinks)', () => {
  it('writes one value at a time, in order, then finishes, then completes', async () => {
    const log: string[] = [];
    const out = await lastValueFrom(from([1, 2, 3]).pipe(sinkOperator(() => loggingWorker(log)), toArray()));
    expect(out).toEqual(['wrote 1', 'wrote 2', 'wrote 3', 'done']);
    expect(log).toEqual(['write 1', 'write 2', 'write 3', 'finish']);
  });

  it('batches what queued up meanwhile when the worker can', async () => {
    const log: string[] = [];
    const out = await lastValueFrom(from([1, 2, 3, 4]).pipe(sinkOperator(() => loggingWorker(log, { batch: true })), toArray()));
    expect(out).toEqual(['wrote 1', 'wrote 2,3,4', 'done']);
  });

  it('on a source error: interrupts, waits for the write in flight, aborts, then errors with the same error', async () => {
    const log: string[] = [];
    const boom = new Error('boom');
    const values = new Subject<number>();
    const result = lastValueFrom(values.pipe(sinkOperator(() => loggingWorker(log)))).catch((e: unknown) => {
      log.push('error delivered');
      return e;
    });
    values.next(1);
    values.error(boom);
    expect(await result).toBe(boom);
    expect(log).toEqual(['write 1', 'interrupt', 'abort', 'error delivered']);
  });

  it('on a failed write or finish: aborts, then errors; later values are not written', async () => {
    const log: string[] = [];
    const error = await lastValueFrom(from([1, 2, 3]).pipe(sinkOperator(() => loggingWorker(log, { failOn: 2 })))).catch((e: Error) => e);
    expect((error as Error).message).toBe('bad 2');
    expect(log).toEqual(['write 1', 'write 2', 'interrupt', 'abort']);

    const log2: string[] = [];
    const error2 = await lastValueFrom(from([1]).pipe(sinkOperator(() => loggingWorker(log2, { failFinish: true })))).catch((e: Error) => e);
    expect((error2 as Error).message).toBe('finish failed');
    expect(log2).toEqual(['write 1', 'finish', 'interrupt', 'abort']);
  });

  it('on unsubscribe: interrupts at once, aborts after the write in flight, unsubscribes the source', async () => {
    const log: string[] = [];
    const values = new Subject<number>();
    const subscription = values.pipe(sinkOperator(() => loggingWorker(log))).subscribe();
    values.next(1);
    values.next(2);
    subscription.unsubscribe();
    expect(log).toEqual(['write 1', 'interrupt']);
    expect(values.observed).toBe(false);
    // abort runs once the write in flight settled (two macrotasks): wait for it, not for a fixed time
    await vi.waitFor(() => expect(log).toContain('abort'));
    expect(log).toEqual(['write 1', 'interrupt', 'abort']);
  });

  it('errors when the worker cannot start, and lets the worker fail between writes', async () => {
    await expect(lastValueFrom(from([1]).pipe(sinkOperator<number, string>(() => { throw new Error('no start'); })))).rejects.toThrow('no start');
    const log: string[] = [];
    const values = new Subject<number>();
    let failHook: ((e: unknown) => void) | undefined;
    const result = lastValueFrom(values.pipe(sinkOperator((fail) => ((failHook = fail), loggingWorker(log)))));
    values.next(1);
    await new Promise((resolve) => setTimeout(resolve, 10));
    failHook?.(new Error('player died'));
    await expect(result).rejects.toThrow('player died');
    expect(log).toEqual(['write 1', 'interrupt', 'abort']);
  });

  it('a source error while a write is in flight: that write\'s progress is not emitted, only the error', async () => {
    const log: string[] = [];
    const boom = new Error('boom');
    const values = new Subject<number>();
    const seen: string[] = [];
    const errored = new Promise<unknown>((resolve) =>
      values.pipe(sinkOperator(() => loggingWorker(log))).subscribe({ next: (p) => seen.push(p), error: resolve }),
    );
    values.next(1);
    values.error(boom);
    expect(await errored).toBe(boom);
    expect(log).toEqual(['write 1', 'interrupt', 'abort']);
    expect(seen).toEqual([]);
  });

  it('a failure reported while finish is in flight errors the output: no done, no completion', async () => {
    const log: string[] = [];
    let failHook: ((e: unknown) => void) | undefined;
    let finishEntered!: () => void;
    const inFinish = new Promise<void>((resolve) => (finishEntered = resolve));
    let releaseFinish!: () => void;
    const worker: SinkWorker<number, string> = {
      ...loggingWorker(log),
      async finish() {
        log.push('finish');
        finishEntered();
        await new Promise<void>((resolve) => (releaseFinish = resolve));
        return 'done';
      },
    };
    const seen: string[] = [];
    const ended = new Promise<string>((resolve) =>
      from([1]).pipe(sinkOperator((fail) => ((failHook = fail), worker))).subscribe({
        next: (p) => seen.push(p),
        error: (e: Error) => resolve(`error ${e.message}`),
        complete: () => resolve('complete'),
      }),
    );
    await inFinish;
    failHook?.(new Error('player died'));
    releaseFinish();
    expect(await ended).toBe('error player died');
    expect(seen).toEqual(['wrote 1']);
    expect(log).toEqual(['write 1', 'finish', 'interrupt', 'abort']);
  });

  it('a failure reported after completion changes nothing: no interrupt, no abort', async () => {
    const log: string[] = [];
    let failHook: ((e: unknown) => void) | undefined;
    const out = await lastValueFrom(from([1]).pipe(sinkOperator((fail) => ((failHook = fail), loggingWorker(log))), toArray()));
    expect(out).toEqual(['wrote 1', 'done']);
    failHook?.(new Error('too late'));
    // interrupt would be logged at once (the test above shows a failure in time is)
    expect(log).toEqual(['write 1', 'finish']);
  });

  it('batches at most 64 values', async () => {
    const log: string[] = [];
    const values = Array.from({ length: 100 }, (_, i) => i + 1);
    await lastValueFrom(from(values).pipe(sinkOperator(() => loggingWorker(log, { batch: true })), toArray()));
    expect(log.map((line) => line.split(/[ ,]/).length - 1)).toEqual([1, 64, 35, 0]);
    expect(log.at(-1)).toBe('finish');
  });

  it('passes an empty source straight to finish', async () => {
    const log: string[] = [];
    expect(await lastValueFrom(from([] as number[]).pipe(sinkOperator(() => loggingWorker(log)), toArray()))).toEqual(['done']);
    expect(log).toEqual(['finish']);
  });
});
