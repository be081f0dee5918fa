/**
 * The engine under every sink: values are handed to an async worker one at a time, in
 * order, each write awaited before the next (values that arrive meanwhile wait in a
 * queue); the output completes only after the worker finished (file closed and renamed,
 * player exited, writable flushed), and errors only after the worker cleaned up.
 */
import { Observable, type OperatorFunction, type Subscription } from 'rxjs';

/** Most values written in one `writeMany`. */
const MAX_BATCH = 64;

export interface SinkWorker<T, P> {
  /** Write one value; resolve with the progress to emit, if any. */
  write(value: T): Promise<P | undefined>;
  /**
   * Write several values that queued up while the previous write was in flight, in one
   * go (e.g. one `writev`), so a sink that fell behind catches up. Optional.
   */
  writeMany?(values: T[]): Promise<P | undefined>;
  /** The source completed and every write finished: make the output durable. */
  finish(): Promise<P | undefined>;
  /** Called at once (synchronously) on error or unsubscribe: stop what must stop now (a player). */
  interrupt?(): void;
  /** Clean up after an error or unsubscribe, once the write in flight settled. Must not throw. */
  abort(): Promise<void>;
}

/**
 * @param start Called on subscribe; creates the worker. `fail` lets the worker report a
 * failure that happens between writes (a player that died): clean up, then error.
 */
export function sinkOperator<T, P>(start: (fail: (error: unknown) => void) => SinkWorker<T, P>): OperatorFunction<T, P> {
  return (source) =>
    new Observable<P>((subscriber) => {
      let worker: SinkWorker<T, P> | undefined;
      const queue: T[] = [];
      let head = 0;
      let sourceDone = false;
      /** stop() was called: error or unsubscribe. */
      let stopping = false;
      let completed = false;
      let busy = false;
      let running: Promise<void> = Promise.resolve();
      let sourceSubscription: Subscription | undefined;

      const stop = (): Promise<void> => {
        if (!worker) return Promise.resolve();
        const active = worker;
        stopping = true;
        queue.length = 0;
        head = 0;
        sourceSubscription?.unsubscribe();
        try {
          active.interrupt?.();
        } catch {
          // interrupt is best effort
        }
        const abort = (): Promise<void> => active.abort().catch(() => undefined);
        return running.then(abort, abort);
      };

      const fail = (error: unknown): void => {
        if (stopping || completed) return;
        void stop().then(() => subscriber.error(error));
      };

      const pump = async (): Promise<void> => {
        busy = true;
        try {
          while (!stopping && head < queue.length) {
            const active = worker as SinkWorker<T, P>;
            const take = active.writeMany ? Math.min(queue.length - head, MAX_BATCH) : 1;
            const values = queue.slice(head, head + take);
            queue.fill(undefined as T, head, head + take);
            head += take;
            if (head === queue.length) {
              queue.length = 0;
              head = 0;
            } else if (head > 1024 && head * 2 > queue.length) {
              queue.splice(0, head);
              head = 0;
            }
            const progress =
              values.length > 1 && active.writeMany ? await active.writeMany(values) : await active.write(values[0] as T);
            if (!stopping && progress !== undefined) subscriber.next(progress);
          }
          if (!stopping && sourceDone && !completed) {
            const progress = await (worker as SinkWorker<T, P>).finish();
            if (stopping) return;
            completed = true;
            if (progress !== undefined) subscriber.next(progress);
            subscriber.complete();
          }
        } finally {
          busy = false;
        }
      };

      const kick = (): void => {
        if (busy || stopping || completed) return;
        running = pump().catch((error: unknown) => {
          // A write or finish failed: clean up (abort), then report.
          if (!stopping) fail(error);
        });
      };

      try {
        worker = start(fail);
      } catch (error) {
        subscriber.error(error);
        return undefined;
      }

      sourceSubscription = source.subscribe({
        next: (value) => {
          if (stopping) return;
          queue.push(value);
          kick();
        },
        error: (error: unknown) => fail(error),
        complete: () => {
          sourceDone = true;
          kick();
        },
      });

      return () => {
        if (!stopping && !completed) void stop();
      };
    });
}
