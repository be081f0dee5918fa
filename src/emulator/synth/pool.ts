/**
 * Synthesis off the event loop: a small pool of worker threads, each running a
 * synthesizer (espeak-worker.ts), so that one client's speech (0.3-0.5 s of CPU a segment
 * with espeak) never holds up the emulator's other clients.
 *
 * Threads start on demand (one at once with `warm`), up to `threads`, and each
 * synthesizes one request at a time;
 * more requests wait in a queue, in order. A thread that dies (an uncaught error, an
 * exit, an out-of-memory) fails only the request it held, as a failed synthesis (the live
 * session retries it, then skips the segment); the next request starts a new thread.
 * `close()` terminates every thread and fails what still waits.
 */
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { SynthRequest, SynthResult, Synthesizer } from '../types.js';

/** What a synthesis thread answers to `{ id, request }`. */
export type WorkerAnswer = { id: number; result: SynthResult } | { id: number; error: string };

/** How to start a worker script that sits next to this file (`name` without extension). */
export interface WorkerEntry {
  script: string | URL;
  /** `script` is code (a bootstrap), not a file. */
  eval: boolean;
}

/**
 * The entry of a worker script next to this module: the built `.js` from `dist/`, or,
 * when this module runs from source (tsx, vitest), the `.ts` loaded through tsx.
 */
export function workerEntry(name: string): WorkerEntry {
  const here = import.meta.url;
  if (!here.endsWith('.ts')) return { script: new URL(`./${name}.js`, here), eval: false };
  const target = new URL(`./${name}.ts`, here).href;
  // tsx's ESM API (its CommonJS twin does not load inside a worker)
  const api = pathToFileURL(createRequire(here).resolve('tsx/esm/api').replace(/\.cjs$/, '.mjs')).href;
  return { script: `import(${JSON.stringify(api)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(target)}); })`, eval: true };
}

export interface SynthPoolOptions {
  name: Synthesizer['name'];
  /** Most threads at once (at least 1). */
  threads: number;
  entry: WorkerEntry;
  /** Handed to every thread (e.g. a compiled WebAssembly module). */
  workerData?: unknown;
  supportsLanguage(language: string): boolean;
  /** Start one thread at once, so that its start-up (loading the engine) overlaps with other work. */
  warm?: boolean;
}

interface Job {
  id: number;
  request: SynthRequest;
  resolve(result: SynthResult): void;
  reject(error: Error): void;
}

interface Thread {
  worker: Worker;
  job: Job | undefined;
}

/** A synthesizer whose requests run in worker threads; `close()` ends them. */
export interface SynthPool extends Synthesizer {
  close(): Promise<void>;
  /** Threads running now (for tests and benchmarks). */
  threadCount(): number;
}

/** Create a pool of synthesis threads (none start before the first request). */
export function createSynthPool(options: SynthPoolOptions): SynthPool {
  const threads = new Set<Thread>();
  const queue: Job[] = [];
  let nextId = 0;
  let closed = false;

  function spawn(): Thread {
    const worker = new Worker(options.entry.script, { eval: options.entry.eval, workerData: options.workerData });
    const thread: Thread = { worker, job: undefined };
    threads.add(thread);
    worker.on('message', (answer: WorkerAnswer) => {
      const job = thread.job;
      if (!job || job.id !== answer.id) return;
      thread.job = undefined;
      worker.unref(); // an idle thread keeps no process alive
      if ('error' in answer) job.reject(new Error(answer.error));
      else job.resolve(answer.result);
      dispatch();
    });
    const lost = (why: string): void => {
      if (!threads.delete(thread)) return;
      thread.job?.reject(new Error(`the ${options.name} synthesis thread stopped (${why})`));
      thread.job = undefined;
      dispatch();
    };
    worker.on('error', (error) => lost(error.message));
    worker.on('exit', (code) => lost(`exit code ${code}`));
    return thread;
  }

  function dispatch(): void {
    while (!closed && queue.length > 0) {
      let idle: Thread | undefined;
      for (const thread of threads) if (thread.job === undefined) idle = thread;
      if (!idle && threads.size < options.threads) idle = spawn();
      if (!idle) return;
      const job = queue.shift() as Job;
      idle.job = job;
      idle.worker.ref();
      idle.worker.postMessage({ id: job.id, request: job.request });
    }
  }

  if (options.warm) spawn().worker.unref();
  return {
    name: options.name,
    supportsLanguage: options.supportsLanguage,
    synthesize(request) {
      if (closed) return Promise.reject(new Error(`the ${options.name} synthesizer is closed`));
      return new Promise<SynthResult>((resolve, reject) => {
        queue.push({ id: nextId++, request, resolve, reject });
        dispatch();
      });
    },
    async close() {
      closed = true;
      for (const job of queue.splice(0)) job.reject(new Error(`the ${options.name} synthesizer is closed`));
      await Promise.all([...threads].map((thread) => thread.worker.terminate()));
    },
    threadCount: () => threads.size,
  };
}
