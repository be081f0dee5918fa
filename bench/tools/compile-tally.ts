/**
 * What V8's optimizing compiler did in each phase of the session-cost clients: the jobs that
 * finished in the open phase, the first round and the second, their summed compile times (wall
 * time on the compiler's threads: an upper bound on a busy machine), largest first, and whether
 * each job was the function's first optimization in its process or a repeat.
 *
 * `SESSION_COST_CLIENT_FLAGS=--trace-opt npx tsx bench/session-cost.ts 1000 > trace.log`, then
 * `npx tsx bench/tools/compile-tally.ts trace.log [rows]`. The clients run one after the other
 * and each prints a marker at each end of its rounds (its open phase is what comes before its
 * first marker, after the previous client's last).
 */
import { readFileSync } from 'node:fs';

interface Job {
  name: string;
  ms: number;
  first: boolean;
}

const [file, rowsArg] = process.argv.slice(2);
if (!file) throw new Error('usage: compile-tally.ts trace.log [rows]');
const rows = Number(rowsArg ?? 15);

const MARKER = /^--- session-cost: (sentence phase starts|sentence phase ends|second round ends) \((.+)\)$/;
const COMPILED = /^\[completed compiling 0x[0-9a-f]+ <JSFunction ?(\S*) \(sfi = (0x[0-9a-f]+)\)> \(target TURBOFAN\) - took ([\d.]+), ([\d.]+), ([\d.]+) ms\]$/;
/** The phase each marker closes. */
const CLOSES: Record<string, string> = { 'sentence phase starts': 'open phase', 'sentence phase ends': 'first round', 'second round ends': 'second round' };

const report: { title: string; jobs: Job[] }[] = [];
let jobs: Job[] = []; // the phase being read
let optimized = new Set<string>(); // functions (by their shared info) optimized so far in this process
for (const line of readFileSync(file, 'utf8').split('\n')) {
  const marker = MARKER.exec(line);
  if (marker) {
    const [, what = '', who = ''] = marker;
    report.push({ title: `${who}: ${CLOSES[what] ?? what}`, jobs });
    jobs = [];
    if (what === 'second round ends') optimized = new Set(); // what follows is the next process's
    continue;
  }
  const compiled = COMPILED.exec(line);
  if (!compiled) continue;
  const [, name = '', sfi = '', a = '0', b = '0', c = '0'] = compiled;
  jobs.push({ name: name || '(anonymous)', ms: Number(a) + Number(b) + Number(c), first: !optimized.has(sfi) });
  optimized.add(sfi);
}

for (const { title, jobs: phaseJobs } of report) {
  const sum = (list: Job[]): string => list.reduce((total, job) => total + job.ms, 0).toFixed(1);
  const firsts = phaseJobs.filter((job) => job.first);
  console.log(`${title}: ${phaseJobs.length} jobs, ${sum(phaseJobs)} ms; ${firsts.length} first optimizations, ${sum(firsts)} ms`);
  for (const job of [...phaseJobs].sort((x, y) => y.ms - x.ms).slice(0, rows)) {
    console.log(`  ${job.ms.toFixed(2).padStart(8)} ms  ${job.first ? 'first ' : 'repeat'}  ${job.name}`);
  }
}
