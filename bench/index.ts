/**
 * `npm run bench`: every benchmark, one table, `bench/results.json`, and the
 * table of bench/README.md regenerated from it (`bench/tools/readme-table.ts`).
 *
 * Each benchmark is a module exporting `run(options?): Promise<BenchRow[]>`; a module that
 * is missing, fails or runs past its time cap is reported as skipped (with the reason)
 * and the others still run. Each prints its own elapsed time; the run prints the total.
 * A full run takes at most 10 minutes on 2 shared cores, a quick one at most 2: the
 * options of each run are below, in one place.
 *
 * Flags:
 * - `--quick` (or `BENCH_QUICK=1`): fewer repetitions and smaller sizes; writes
 *   `bench/results.quick.json` (the CI smoke);
 * - `--only a,b` (or bare names): run only these; writes `bench/results.partial.json`;
 * - `--list`: print the benchmark names;
 * - `--fail-on-error`: exit 1 when a module failed or could not be loaded (not when it
 *   ran past its time cap: no timing is asserted); CI runs `--quick --fail-on-error`.
 * Only a full run writes `bench/results.json` and the table in bench/README.md.
 *
 * `ratio` is ours / peer; whether lower or higher is better is in `better` (and in
 * the table, an arrow after the ratio).
 */
import { writeFile } from 'node:fs/promises';
import { cpus, freemem, loadavg, platform, release, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { BenchResults, BenchRow } from './types.js';

interface Benchmark {
  name: string;
  /** Module path relative to this file. */
  module: string;
  /** Options passed to `run` in a full run (the module's own defaults otherwise). */
  full?: Record<string, unknown>;
  /** Options passed to `run` in quick mode. */
  quick?: Record<string, unknown>;
  /** Its own cap in a full run, s, where it needs more than {@link CAP_SECONDS}'s. */
  fullCapSeconds?: number;
}

/** Longest a module may run, s (past it: reported skipped, the run goes on). */
const CAP_SECONDS = { full: 180, quick: 60 };

const BENCHMARKS: Benchmark[] = [
  { name: 'live-overhead', module: './live-overhead.js', quick: { pairs: 21 } },
  { name: 'live-budget', module: './live-budget.js', full: { pairs: 61 }, quick: { pairs: 11 } },
  { name: 'concurrency', module: './concurrency.js', full: { scale: [2000], scaleBudgetMs: 45_000 }, quick: { sessions: 300, scale: [], repeats: 1 } },
  { name: 'long-stream', module: './long-stream.js', full: { runs: 5 }, quick: { seconds: 300, runs: 2 } },
  { name: 'polling', module: './polling.js', full: { real: 12 }, quick: { real: 0, firstTasks: 500, clients: 20, simulated: 301, medians: [1000, 3000, 30_000] } },
  { name: 'warm', module: './warm.js', quick: { answers: 3 } },
  { name: 'batch', module: './batch.js', full: { jobs: 150 }, quick: { jobs: 20 } },
  { name: 'segmentation', module: './segmentation.js', quick: { chars: 200_000, rounds: 2 } },
  { name: 'golden-rules', module: './golden-rules.js' },
  { name: 'sentence-accuracy', module: './sentence-accuracy.js' },
  { name: 'boundary-wait', module: './boundary-wait.js' },
  { name: 'sse', module: './sse.js', quick: { megabytes: 0.5, rounds: 2 } },
  { name: 'bundle', module: './bundle.js' },
  { name: 'web', module: './web.js', quick: { sentences: 2 } },
  { name: 'fairness', module: './fairness.js', full: { floodChars: 150_000, seconds: 4 }, quick: { floodChars: 50_000, seconds: 2, flooders: [4] } },
  { name: 'emulator-capacity', module: './emulator-capacity.js', quick: { levels: [10, 100, 400], seconds: 7 } },
  // 20 client processes in a full run, the talkers' 20 s each: 165 s in the run of 2026-11-27
  { name: 'session-cost', module: './session-cost.js', full: { sessions: 1000, repeats: 4 }, quick: { sessions: 200, repeats: 1 }, fullCapSeconds: 600 },
  { name: 'plugins', module: './plugins.js', quick: { calls: 30 } },
  { name: 'synth-threads', module: './synth-threads.js', quick: { clients: 8, seconds: 2 } },
];

type Row = BenchRow & { benchmark?: string };
type Skipped = BenchResults['skipped'][number];

function parseArgs(argv: string[]): { quick: boolean; only: string[] | undefined; list: boolean; failOnError: boolean } {
  let quick = process.env['BENCH_QUICK'] === '1' || process.env['BENCH_QUICK'] === 'true';
  let list = false;
  let failOnError = false;
  const only: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--quick') quick = true;
    else if (arg === '--list') list = true;
    else if (arg === '--fail-on-error') failOnError = true;
    else if (arg === '--only') only.push(...(argv[++i] ?? '').split(','));
    else if (arg.startsWith('--only=')) only.push(...arg.slice(7).split(','));
    else if (!arg.startsWith('-')) only.push(...arg.split(','));
  }
  return { quick, only: only.filter(Boolean).length > 0 ? only.filter(Boolean) : undefined, list, failOnError };
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
  /** Modules that failed or could not be loaded (a cap overrun is not one). */
  const broken: string[] = [];
  const timings: Record<string, number> = {};
  const started = performance.now();
  for (const bench of selected) {
    const capSeconds = args.quick ? CAP_SECONDS.quick : (bench.fullCapSeconds ?? CAP_SECONDS.full);
    const t0 = performance.now();
    const elapsed = (): string => `${((performance.now() - t0) / 1000).toFixed(1)} s`;
    const skip = (reason: string, isBroken = true): void => {
      if (isBroken) broken.push(bench.name);
      skipped.push({ benchmark: bench.name, reason });
      timings[bench.name] = Math.round(performance.now() - t0);
      console.error(`  skipped after ${elapsed()}: ${reason}`);
    };
    console.error(`- ${bench.name} ...`);
    let mod: { run?: (options?: Record<string, unknown>) => Promise<BenchRow[]> };
    try {
      mod = (await import(bench.module)) as typeof mod;
    } catch (error) {
      skip(`module could not be loaded: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
      continue;
    }
    if (typeof mod.run !== 'function') {
      skip('module exports no run()');
      continue;
    }
    let timer: NodeJS.Timeout | undefined;
    try {
      const capped = new Promise<'capped'>((resolve) => {
        timer = setTimeout(() => resolve('capped'), capSeconds * 1000);
      });
      const result = await Promise.race([mod.run(args.quick ? bench.quick : bench.full), capped]);
      if (result === 'capped') {
        skip(`did not finish within its ${capSeconds} s cap`, false);
        continue;
      }
      for (const r of result) rows.push({ ...r, better: r.better ?? guessBetter(r.unit), benchmark: bench.name });
      timings[bench.name] = Math.round(performance.now() - t0);
      console.error(`  ${result.length} rows in ${elapsed()}`);
    } catch (error) {
      skip(`failed: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`);
    } finally {
      clearTimeout(timer);
    }
  }

  const total = (performance.now() - started) / 1000;
  const machineLine = `${info['cpu']}, ${info['cores']} cores, ${info['memoryGB']} GB RAM, ${info['os']}, node ${info['node']}, load at start ${(info['loadAverage'] as number[]).join(' ')}, ${info['date']}`;
  console.log(`machine: ${machineLine}`);
  console.log(renderTable(rows));
  for (const s of skipped) console.log(`skipped ${s.benchmark}: ${s.reason}`);
  console.log(`per benchmark: ${Object.entries(timings).map(([name, ms]) => `${name} ${(ms / 1000).toFixed(1)} s`).join(', ')}`);
  console.log(`total ${total.toFixed(1)} s${args.quick ? ' (quick)' : ''}`);

  const output: BenchResults = {
    machine: { ...info, loadAverageAtEnd: loadavg().map((l) => Number(l.toFixed(2))) },
    machineLine,
    date: info['date'] as string,
    quick: args.quick,
    only: args.only ?? null,
    seconds: Math.round(total * 10) / 10,
    timingsMs: timings,
    rows,
    skipped,
  };
  const name = args.only ? './results.partial.json' : args.quick ? './results.quick.json' : './results.json';
  const file = fileURLToPath(new URL(name, import.meta.url));
  // NaN and Infinity are not JSON: written as null.
  await writeFile(file, `${JSON.stringify(output, (_k, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? null : v), 2)}\n`);
  console.error(`wrote ${file}`);
  if (!args.only && !args.quick) {
    const { updateReadme } = await import('./tools/readme-table.js');
    console.error(`${(await updateReadme()) ? 'updated' : 'unchanged'}: the Benchmarks table of bench/README.md`);
  }
  if (args.failOnError && broken.length > 0) {
    console.error(`failed: ${broken.join(', ')}`);
    process.exitCode = 1;
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().then(
    // a module past its cap may still hold timers or sockets: the run is over
    () => process.exit(),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
