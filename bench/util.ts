/**
 * Shared helpers of the benchmarks: statistics, seeded randomness, test text, memory
 * sampling, child processes. Nothing here loads rxvoice, rxjs or ws: a bench's process that
 * plays a bare client (`session-cost.ts`) carries only what it uses. The live sessions of
 * both sides (our client and the hand-written `ws` peer) are in `sessions.ts`.
 */
import type { ChildProcess } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { BenchRow } from './types.js';

/** True when `BENCH_QUICK=1`: fewer repetitions, smaller sizes. */
export const QUICK = process.env['BENCH_QUICK'] === '1' || process.env['BENCH_QUICK'] === 'true';

export const now = (): number => performance.now();

/** Median of a non-empty list (mean of the two middle values for even counts). */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** The p-th percentile (0..100), nearest rank. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] as number;
}

/** Deterministic PRNG in [0, 1) (mulberry32). */
export { mulberry32 as seeded } from '../src/emulator/random.js';

/**
 * The row of a throughput race on the same input: MB/s from `mb` and each side's best
 * time (one decimal), ratio ours / peer (two decimals).
 */
export function throughputRow(name: string, mb: number, bestOursMs: number, bestPeerMs: number, note: string): BenchRow {
  const ours = mb / (bestOursMs / 1000);
  const peer = mb / (bestPeerMs / 1000);
  return {
    name,
    ours: Math.round(ours * 10) / 10,
    peer: Math.round(peer * 10) / 10,
    unit: 'MB/s',
    ratio: Math.round((ours / peer) * 100) / 100,
    note,
  };
}

/** Round for display: 3 significant digits (integers above 1000 kept whole). */
export function round(value: number): number {
  if (!Number.isFinite(value)) return value;
  if (Math.abs(value) >= 1000) return Math.round(value);
  return Number(value.toPrecision(3));
}

/** A row, ratio = ours / peer (both rounded for display, ratio from the raw values). */
export function row(name: string, ours: number, peer: number, unit: string, note?: string, better?: 'lower' | 'higher'): BenchRow {
  // A zero peer makes the ratio meaningless: NaN (printed n/a, written null).
  const ratio = peer === 0 ? (ours === 0 ? 1 : Number.NaN) : ours / peer;
  const r: BenchRow = { name, ours: round(ours), peer: round(peer), unit, ratio: Number.isFinite(ratio) ? Number(ratio.toFixed(3)) : ratio };
  if (note !== undefined) r.note = note;
  if (better !== undefined) r.better = better;
  return r;
}

const WORDS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet', 'kilo', 'lima'];

/**
 * `count` sentences of `words` words each, ending in `!` plus `end` (a space by default).
 * With `end` a paragraph break (`'\n\n'`) each sentence is certain to be complete the moment
 * it is sent, whatever the service's segmenter makes of a `!` at the end of a chunk: the
 * ping-pong mode uses it, so that it never waits for `idle_timeout`.
 */
export function sentences(count: number, words = 6, salt = 0, end = ' '): string[] {
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const ws: string[] = [];
    for (let w = 0; w < words; w++) ws.push(WORDS[(i * 7 + w * 3 + salt) % WORDS.length] as string);
    const first = ws[0] as string;
    ws[0] = first.charAt(0).toUpperCase() + first.slice(1);
    out.push(`${ws.join(' ')} number ${i}!${end}`);
  }
  return out;
}

let gcFn: (() => void) | undefined;
/** Run a full garbage collection (enables `--expose-gc` at run time when needed). */
export function gc(): void {
  if (!gcFn) {
    const global = globalThis as { gc?: () => void };
    if (typeof global.gc === 'function') gcFn = global.gc;
    else {
      setFlagsFromString('--expose-gc');
      gcFn = runInNewContext('gc') as () => void;
    }
  }
  gcFn();
  gcFn();
}

/** Heap used and resident set size, bytes. */
export function memory(): { heap: number; rss: number } {
  const m = process.memoryUsage();
  return { heap: m.heapUsed, rss: m.rss };
}

export const MB = 1024 * 1024;

/** Yield to the event loop (let sockets and timers run). */
export const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The value under `key` of the next IPC message from a child process that has it. */
export function nextMessage<T>(proc: ChildProcess, key: string): Promise<T> {
  return new Promise((resolve) => {
    const on = (message: unknown): void => {
      const m = message as Record<string, unknown>;
      if (key in m) {
        proc.off('message', on);
        resolve(m[key] as T);
      }
    };
    proc.on('message', on);
  });
}

/** Run one benchmark module on its own (`npx tsx bench/x.ts`): print its rows, or the error with exit code 1. */
export function runAlone(run: () => Promise<BenchRow[]>): void {
  run().then(
    (rows) => console.table(rows),
    (error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    },
  );
}
