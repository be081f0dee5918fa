/**
 * Batch jobs: throughput of short translation jobs through `batch()` (journal fsynced,
 * outputs written atomically) against a plain `mergeMap` loop over `client.translate`
 * that writes each result with `writeFile` (no journal, nothing resumable), at
 * concurrency 1, 8 and 32, and the journal's cost per job (`batch()` with and without
 * its journal).
 *
 * Service: the emulator with 5 to 15 ms one-way latency (`latencyMs`) and tasks pending
 * 20 to 120 ms (`taskDurationMs`), so each job is a creation call, a few status calls
 * and a result call over an emulated network. Texts: the multilingual golden rules
 * sentences (`shared/data/golden-rules.json`, 20+ languages and scripts) when present,
 * generated sentences otherwise. Both sides use the same client, its polling tuned to
 * these short tasks (first status call after 25 ms, at most 100 ms apart, not
 * adaptive). The full run takes about 6 minutes (1,000 jobs one at a time, twice).
 *
 * Run alone: `npx tsx bench/batch.ts` (`BENCH_QUICK=1`: 200 jobs).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { from, lastValueFrom, mergeMap } from 'rxjs';
import { batch, type BatchJobInput } from '../src/batch/index.js';
import { startEmulator } from '../src/emulator/index.js';
import { createClient, taskResult, type RxVoiceClient } from '../src/index.js';
import { loadGoldenRules } from './golden-rules.js';
import type { BenchRow } from './types.js';
import { QUICK, now, row, sentences } from './util.js';

function texts(count: number): { texts: string[]; source: string } {
  const golden = loadGoldenRules()?.map((c) => c.text).filter((t) => t.trim().length > 0);
  const pool = golden && golden.length > 0 ? golden : sentences(count);
  return { texts: Array.from({ length: count }, (_, i) => pool[i % pool.length] as string), source: golden ? 'golden-rules texts' : 'generated sentences' };
}

function jobsOf(list: readonly string[]): BatchJobInput[] {
  return list.map((text, i) => ({ kind: 'translation', id: `t${i}`, request: { texts: [text], source_language: 'en-us', target_language: 'de-de' } }));
}

async function timeBatch(client: RxVoiceClient, jobs: BatchJobInput[], concurrency: number, journal: boolean): Promise<number> {
  const out = await mkdtemp(join(tmpdir(), 'rxvoice-bench-batch-'));
  try {
    const started = now();
    await lastValueFrom(batch(jobs, { client, out, concurrency, ...(journal ? {} : { journal: false }) }));
    return now() - started;
  } finally {
    await rm(out, { recursive: true, force: true });
  }
}

async function timeMergeMap(client: RxVoiceClient, jobs: BatchJobInput[], concurrency: number): Promise<number> {
  const out = await mkdtemp(join(tmpdir(), 'rxvoice-bench-loop-'));
  try {
    const started = now();
    await lastValueFrom(
      from(jobs).pipe(
        mergeMap(
          (job) =>
            client.translate((job as Extract<BatchJobInput, { kind: 'translation' }>).request).pipe(
              taskResult(),
              mergeMap((result) => writeFile(join(out, `${job.id}.json`), JSON.stringify(result))),
            ),
          concurrency,
        ),
      ),
      { defaultValue: undefined },
    );
    return now() - started;
  } finally {
    await rm(out, { recursive: true, force: true });
  }
}

/** The rows: throughput side by side at each concurrency, then the journal's cost per job. */
export async function run(options: { jobs?: number } = {}): Promise<BenchRow[]> {
  const count = options.jobs ?? (QUICK ? 200 : 1000);
  const emulator = await startEmulator({ synth: 'tone', latencyMs: [5, 15], taskDurationMs: [20, 120], credits: 1e9 });
  // Polling tuned to the short tasks (first status call after 25 ms, then at most every
  // 100 ms, not adaptive), the same for both sides.
  const polling = { initialDelayMs: 25, maxDelayMs: 100, adaptive: false };
  const client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.baseUrl, warn: () => undefined, polling });
  const { texts: list, source } = texts(count);
  const jobs = jobsOf(list);
  const rows: BenchRow[] = [];
  const setting = `${count} jobs, ${source}, 5-15 ms one-way latency, tasks 20-120 ms`;
  try {
    const journalCost: Array<{ concurrency: number; on: number; off: number }> = [];
    for (const concurrency of [1, 8, 32]) {
      const ours = await timeBatch(client, jobs, concurrency, true);
      const peer = await timeMergeMap(client, jobs, concurrency);
      rows.push(
        row(`batch: ${count} translation jobs, concurrency ${concurrency}`, (count * 1000) / ours, (count * 1000) / peer, 'jobs/s', `peer: mergeMap + writeFile, no journal; ${setting}`, 'higher'),
      );
      if (concurrency > 1) journalCost.push({ concurrency, on: ours, off: await timeBatch(client, jobs, concurrency, false) });
    }
    for (const { concurrency, on, off } of journalCost) {
      rows.push(
        row(
          `batch: wall time per job with journal vs without, concurrency ${concurrency}`,
          on / count,
          off / count,
          'ms',
          `journal: intent + task + done records per job, each fsynced (group commit); ${setting}`,
          'lower',
        ),
      );
    }
  } finally {
    await client.close();
    await emulator.close();
  }
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const rows = await run();
  console.table(rows);
}
