/**
 * CPU load for a test file: busy loops (worker threads, one per core by default) that run
 * from the file's `beforeAll` to its `afterAll`, so that the file's tests run the way a
 * loaded CI machine runs them (issue 28: a soak seed that failed only with other work on
 * both cores). Anything that depends on wall-clock timing shows itself here.
 *
 * `RXVOICE_CPU_LOAD` sets the number of loops (`0` turns the load off, e.g. to profile);
 * the default is `os.availableParallelism()`.
 *
 * ```ts
 * import { cpuLoadDuringFile } from '../setup/cpu-load.js';
 * const load = cpuLoadDuringFile();
 * it('holds under load', () => { expect(load.running()).toBe(load.requested); });
 * ```
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll } from 'vitest';

/** Busy loops running until `stop()`. */
export interface CpuLoad {
  /** How many loops were asked for. */
  readonly requested: number;
  /** How many loops are spinning now (online and not stopped). */
  running(): number;
  /** Stop every loop; resolves when all have exited. */
  stop(): Promise<void>;
}

/** The number of loops: `RXVOICE_CPU_LOAD`, else one per core. */
export function cpuLoadCount(env: NodeJS.ProcessEnv = process.env): number {
  const text = env['RXVOICE_CPU_LOAD'];
  if (text === undefined || text.trim() === '') return availableParallelism();
  const count = Number(text);
  if (!Number.isInteger(count) || count < 0 || count > 64) throw new Error(`RXVOICE_CPU_LOAD must be an integer from 0 to 64, got ${JSON.stringify(text)}`);
  return count;
}

/** Start `count` busy loops (worker threads spinning `for (;;) {}`); resolves once each is running. */
export async function startCpuLoad(count = cpuLoadCount()): Promise<CpuLoad> {
  const workers = Array.from({ length: count }, () => new Worker('for (;;) {}', { eval: true }));
  let online = 0;
  await Promise.all(
    workers.map(
      (worker) =>
        new Promise<void>((resolve, reject) => {
          worker.once('online', () => {
            online++;
            resolve();
          });
          worker.once('error', reject);
        }),
    ),
  );
  for (const worker of workers) worker.once('exit', () => online--);
  return {
    requested: count,
    running: () => online,
    stop: async () => {
      await Promise.all(workers.map((worker) => worker.terminate()));
    },
  };
}

/**
 * Keep the CPU busy for the whole test file (registers `beforeAll` / `afterAll`). Returns a
 * handle whose `running()` tells how many loops spin (0 before the file's first hook).
 */
export function cpuLoadDuringFile(count = cpuLoadCount()): Pick<CpuLoad, 'requested' | 'running'> {
  let load: CpuLoad | undefined;
  beforeAll(async () => {
    load = await startCpuLoad(count);
  });
  afterAll(async () => {
    await load?.stop();
    load = undefined;
  });
  return { requested: count, running: () => load?.running() ?? 0 };
}
