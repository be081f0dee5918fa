/**
 * The batch process killed with SIGKILL at random points, three times, then run to the
 * end: every job done exactly once, and no task created twice. The kill points are
 * drawn by fast-check (its seed is printed on failure).
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { pseudoLocalize, startEmulator, type Emulator } from '../src/emulator/index.js';
import type { JournalRecord } from '../src/batch/index.js';
import { spawnCli, type CliProcess } from './batch-helpers.js';

const JOBS = 200;

let emu: Emulator;
let dir: string;
beforeAll(async () => {
  emu = await startEmulator({ synth: 'tone', taskDurationMs: 30 });
  dir = await mkdtemp(join(tmpdir(), 'rxvoice-batch-kill-'));
});
afterAll(async () => {
  await emu?.close();
  await rm(dir, { recursive: true, force: true });
});

function startBatch(out: string, jobsFile: string, onLine?: (count: number) => void, extra: string[] = []): CliProcess {
  return spawnCli(['batch', jobsFile, '--out', out, '--concurrency', '16', '--json', ...extra], emu, (_line, count) => onLine?.(count), dir);
}

it('survives three SIGKILLs at random points: every job done exactly once, no task created twice', async () => {
  const jobsFile = join(dir, 'jobs.jsonl');
  const texts = Array.from({ length: JOBS }, (_, i) => `Line ${i}: the quick brown fox, number ${i}.`);
  await writeFile(
    jobsFile,
    texts.map((text, i) => JSON.stringify({ kind: 'translation', id: `job-${i}`, request: { texts: [text], source_language: 'en-us', target_language: 'fr-fr' } })).join('\n'),
  );
  const killPoints = fc.tuple(fc.integer({ min: 1, max: 400 }), fc.integer({ min: 0, max: 15 }));
  await fc.assert(
    fc.asyncProperty(fc.tuple(killPoints, killPoints, killPoints), async (kills) => {
      const out = join(dir, `out-${Date.now()}`);
      const before = new Set(emu.context.tasks.keys());
      let killedRuns = 0;
      for (const [afterLines, extraMs] of kills) {
        let killed = false;
        const run = startBatch(out, jobsFile, (count) => {
          if (count === afterLines && !killed) {
            killed = true;
            setTimeout(() => run.child.kill('SIGKILL'), extraMs);
          }
        });
        if ((await run.exited) === null) killedRuns++;
      }
      // Control: the kills did land (a run that finished first proves nothing).
      expect(killedRuns).toBeGreaterThan(0);
      // A plain rerun resumes everything; a job whose creation a kill cut off (sent, answer
      // not recorded) is reported, not created again (exit 1). Then the user's choice:
      // --unconfirmed recreate.
      const final = startBatch(out, jobsFile);
      const code = await final.exited;
      const reported = final.lines.filter((line) => line.includes('UnconfirmedTaskError')).length;
      expect(code, final.stderr.join('')).toBe(reported === 0 ? 0 : 1);
      // Without consent nothing is paid twice: at most one creation call per job so far.
      expect([...emu.context.tasks.keys()].filter((id) => !before.has(id)).length).toBeLessThanOrEqual(JOBS);
      if (reported > 0) {
        const recreate = startBatch(out, jobsFile, undefined, ['--unconfirmed', 'recreate']);
        expect(await recreate.exited, recreate.stderr.join('')).toBe(0);
      }

      // Every output is there, with its translation.
      for (let i = 0; i < JOBS; i++) {
        const output = JSON.parse(await readFile(join(out, `job-${i}.json`), 'utf8')) as { texts: string[] };
        expect(output.texts).toEqual([pseudoLocalize(texts[i] as string, 'fr-fr')]);
      }
      const records = (await readFile(join(out, '.rxvoice-batch.jsonl'), 'utf8'))
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as JournalRecord);
      // Done exactly once: one done record per job, one recorded task per job.
      const done = records.filter((r) => r.type === 'done');
      expect(done).toHaveLength(JOBS);
      expect(new Set(done.map((r) => r.id)).size).toBe(JOBS);
      const recorded = records.filter((r): r is Extract<JournalRecord, { type: 'task' }> => r.type === 'task');
      expect(recorded).toHaveLength(JOBS);
      expect(new Set(recorded.map((r) => r.task_id)).size).toBe(JOBS);

      // Tasks the service created for this batch: every recorded one, plus at most one per
      // creation call a kill cut off between sending it and recording its answer (an
      // intent with no task after it). The contract has no idempotency key, so such a
      // call cannot be recognised; it is the one way a task can be paid twice.
      const created = [...emu.context.tasks.keys()].filter((id) => !before.has(id));
      const unconfirmed = unconfirmedIntents(records);
      const extra = created.filter((id) => !recorded.some((r) => r.task_id === id));
      console.log(`kills ${JSON.stringify(kills)} (${killedRuns} landed): ${created.length} creation calls for ${JOBS} jobs; ${unconfirmed} unconfirmed creations (${reported} reported, then recreated)`);
      expect(created.length).toBe(JOBS + extra.length);
      expect(extra.length).toBeLessThanOrEqual(unconfirmed);
      if (unconfirmed === 0) expect(created.length).toBe(JOBS);
    }),
    { numRuns: 1 },
  );
}, 120_000);

/** Intent records not followed by a task record of the same job (before its next intent). */
function unconfirmedIntents(records: JournalRecord[]): number {
  const open = new Set<string>();
  let count = 0;
  for (const record of records) {
    if (record.type === 'intent') {
      if (open.has(record.id)) count++;
      open.add(record.id);
    } else if (record.type === 'task') open.delete(record.id);
  }
  return count + open.size;
}
