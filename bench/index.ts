/**
 * `npm run bench`: every benchmark, one table, and `bench/results.json`.
 *
 * Each benchmark is a module exporting `run(): Promise<BenchRow[]>`; a module that is
 * missing or fails is reported as skipped (with the reason) and the others still run.
 *
 * Flags:
 * - `--quick` (or `BENCH_QUICK=1`): fewer repetitions and smaller sizes (about a minute);
 * - `--only a,b` (or bare names): run only these (`live-overhead`, `live-budget`, `concurrency`,
 *   `long-stream`, `polling`, `warm`, `batch`, `segmentation`, `golden-rules`, `sentence-accuracy`, `boundary-wait`, `sse`, `bundle`, `web`, `fairness`); a partial run writes
 *   `bench/results.partial.json` instead of `bench/results.json` (a quick run:
 *   `bench/results.quick.json`);
 * - `--list`: print the benchmark names.
 *
 * `ratio` is ours / peer; whether lower or higher is better is in `better` (and in
 * the table, an arrow after the ratio).
 */
import { writeFile } from 'node:fs/promises';
import { cpus, freemem, loadavg, platform, release, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { BenchRow } from './types.js';

interface Benchmark {
  name: string;
  /** Module path relative to this file. */
  module: string;
  /** Options passed to `run` in quick mode. */
  quick?: Record<string, unknown>;
}

const BENCHMARKS: Benchmark[] = [
  { name: 'live-overhead', module: './live-overhead.js' },
  { name: 'live-budget', module: './live-budget.js' },
  { name: 'concurrency', module: './concurrency.js' },
  { name: 'long-stream', module: './long-stream.js' },
  { name: 'polling', module: './polling.js' },
  { name: 'warm', module: './warm.js', quick: { answers: 4 } },
  { name: 'batch', module: './batch.js', quick: { jobs: 200 } },
  { name: 'segmentation', module: './segmentation.js', quick: { chars: 500_000, rounds: 3 } },
  { name: 'golden-rules', module: './golden-rules.js' },
  { name: 'sentence-accuracy', module: './sentence-accuracy.js' },
  { name: 'boundary-wait', module: './boundary-wait.js' },
  { name: 'sse', module: './sse.js', quick: { megabytes: 5, rounds: 5 } },
  { name: 'bundle', module: './bundle.js' },
  { name: 'web', module: './web.js' },
  { name: 'fairness', module: './fairness.js', quick: { floodChars: 100_000, seconds: 3 } },
  { name: 'synth-threads', module: './synth-threads.js' },
];

type Row = BenchRow & { benchmark?: string };

interface Skipped {
  benchmark: string;
  reason: string;
}

function parseArgs(argv: string[]): { quick: boolean; only: string[] | undefined; list: boolean } {
  let quick = process.env['BENCH_QUICK'] === '1' || process.env['BENCH_QUICK'] === 'true';
  let list = false;
  const only: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--quick') quick = true;
    else if (arg === '--list') list = true;
    else if (arg === '--only') only.push(...(argv[++i] ?? '').split(','));
    else if (arg.startsWith('--only=')) only.push(...arg.slice(7).split(','));
    else if (!arg.startsWith('-')) only.push(...arg.split(','));
  }
  return { quick, only: only.filter(Boolean).length > 0 ? only.filter(Boolean) : undefined, list };
}

/** For rows that do not say: rates and percentages are better higher. */
function guessBetter(unit: string): 'lower' | 'higher' | undefined {
  if (/\/s\b|%|x realtime/.test(unit)) return 'higher';
  if (/^(ms|s|us|ns|MB|KB|bytes)$/.test(unit)) return 'lower';
  return undefined;
}

function format(value: number): string {
  if (!Number.isFinite(value)) return Number.isNaN(value) ? 'n/a' : value > 0 ? 'inf' : '-inf';
  return String(value);
}

/** The one table: name | ours | peer | unit | ratio | note. */
export function renderTable(rows: readonly Row[]): string {
  const header = ['name', 'ours', 'peer', 'unit', 'ratio', 'note'];
  const cells = rows.map((r) => [
    r.name,
    format(r.ours),
    format(r.peer),
    r.unit,
    `${format(r.ratio)}${r.better === 'lower' ? ' (lower better)' : r.better === 'higher' ? ' (higher better)' : ''}`,
    r.note ?? '',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => (i === 5 ? 0 : (c[i] as string).length))));
  const line = (c: string[]): string =>
    c
      .map((v, i) => (i === 5 ? v : i === 1 || i === 2 || i === 4 ? v.padStart(widths[i] as number) : v.padEnd(widths[i] as number)))
      .join(' | ');
  return [line(header), widths.map((w, i) => (i === 5 ? '----' : '-'.repeat(w))).join('-|-'), ...cells.map(line)].join('\n');
}

function machine(): Record<string, unknown> {
  const cpu = cpus();
  return {
    cpu: cpu[0]?.model ?? 'unknown',
    cores: cpu.length,
    memoryGB: Number((totalmem() / 1024 ** 3).toFixed(1)),
    freeMemoryGB: Number((freemem() / 1024 ** 3).toFixed(1)),
    node: process.version,
    os: `${platform()} ${release()}`,
    loadAverage: loadavg().map((l) => Number(l.toFixed(2))),
    date: new Date().toISOString(),
  };
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  if (args.list) {
    console.log(BENCHMARKS.map((b) => b.name).join('\n'));
    return;
  }
  // Modules read BENCH_QUICK when they load.
  if (args.quick) process.env['BENCH_QUICK'] = '1';
  const unknown = (args.only ?? []).filter((n) => !BENCHMARKS.some((b) => b.name === n));
  if (unknown.length > 0) {
    console.error(`unknown benchmark(s): ${unknown.join(', ')}; known: ${BENCHMARKS.map((b) => b.name).join(', ')}`);
    process.exitCode = 2;
    return;
  }
  const selected = BENCHMARKS.filter((b) => !args.only || args.only.includes(b.name));
  const info = machine();
  console.error(`rxvoice bench${args.quick ? ' (quick)' : ''}: ${info['cpu']}, ${info['cores']} cores, ${info['memoryGB']} GB, node ${info['node']}, load ${(info['loadAverage'] as number[]).join(' ')}`);

  const rows: Row[] = [];
  const skipped: Skipped[] = [];
  const timings: Record<string, number> = {};
  const started = performance.now();
  for (const bench of selected) {
    const t0 = performance.now();
    console.error(`- ${bench.name} ...`);
    let mod: { run?: (options?: Record<string, unknown>) => Promise<BenchRow[]> };
    try {
      mod = (await import(bench.module)) as typeof mod;
    } catch (error) {
      const reason = `module could not be loaded: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`;
      skipped.push({ benchmark: bench.name, reason });
      console.error(`  skipped: ${reason}`);
      continue;
    }
    if (typeof mod.run !== 'function') {
      skipped.push({ benchmark: bench.name, reason: 'module exports no run()' });
      console.error('  skipped: module exports no run()');
      continue;
    }
    try {
      const result = await mod.run(args.quick ? bench.quick : undefined);
      for (const r of result) rows.push({ ...r, better: r.better ?? guessBetter(r.unit), benchmark: bench.name });
      timings[bench.name] = Math.round(performance.now() - t0);
      console.error(`  ${result.length} rows in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    } catch (error) {
      const reason = `failed: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`;
      skipped.push({ benchmark: bench.name, reason });
      console.error(`  ${reason}`);
    }
  }

  const machineLine = `machine: ${info['cpu']}, ${info['cores']} cores, ${info['memoryGB']} GB RAM, ${info['os']}, node ${info['node']}, load at start ${(info['loadAverage'] as number[]).join(' ')}, ${info['date']}`;
  console.log(machineLine);
  console.log(renderTable(rows));
  for (const s of skipped) console.log(`skipped ${s.benchmark}: ${s.reason}`);
  console.log(`total ${((performance.now() - started) / 1000).toFixed(1)} s${args.quick ? ' (quick)' : ''}`);

  const output = {
    machine: { ...info, loadAverageAtEnd: loadavg().map((l) => Number(l.toFixed(2))) },
    quick: args.quick,
    only: args.only ?? null,
    seconds: Math.round((performance.now() - started) / 100) / 10,
    timingsMs: timings,
    rows,
    skipped,
  };
  const name = args.only ? './results.partial.json' : args.quick ? './results.quick.json' : './results.json';
  const file = fileURLToPath(new URL(name, import.meta.url));
  // NaN and Infinity are not JSON: written as null.
  await writeFile(file, `${JSON.stringify(output, (_k, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? null : v), 2)}\n`);
  console.error(`wrote ${file}`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
