/**
 * The batch journal trusted only when whole, one batch per journal, and the `sent` mark
 * taken while the creation call's last byte is held back. Against the emulator over
 * real sockets; every "nothing was sent" has a control run that does send.
 */
import { spawn } from 'node:child_process';
import { appendFile, mkdtemp, readFile, rm, stat, symlink, truncate, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { asyncScheduler, firstValueFrom, lastValueFrom, toArray } from 'rxjs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  batch,
  Journal,
  JournalError,
  JournalLockedError,
  jobsHash,
  validateJobs,
  type BatchEvent,
  type BatchJobInput,
  type BatchProgressEvent,
} from '../../src/batch/index.js';
import type { GatedCallOptions } from '../../src/client/request.js';
import { runJob, type JobContext } from '../../src/batch/run-job.js';
import { headerLine } from '../../src/batch/journal-records.js';
import type { Emulator } from '../../src/emulator/index.js';
import { clientFor, emulator } from '../client/helpers.js';
import { spawnCli } from './helpers.js';

const translations = (count: number): BatchJobInput[] =>
  Array.from({ length: count }, (_, i) => ({
    kind: 'translation' as const,
    id: `j${i}`,
    request: { texts: [`Sentence number ${i}.`], source_language: 'en-us', target_language: 'de-de' },
  }));
const JOBS = translations(4);
const HASH = jobsHash(validateJobs(JOBS));

let dir: string;
let emu: Emulator;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rxvoice-journal-'));
  emu = await emulator();
});
afterEach(async () => {
  await emu.close();
  await rm(dir, { recursive: true, force: true });
});

const creations = (): number => emu.requests.filter((r) => r.method === 'POST' && r.path === '/translation').length;
const journalPath = (): string => join(dir, '.rxvoice-batch.jsonl');
const last = (events: BatchEvent[]): BatchProgressEvent => events.filter((e): e is BatchProgressEvent => e.type === 'progress').at(-1) as BatchProgressEvent;
const run = async (options: { trustOutputs?: boolean } = {}): Promise<BatchEvent[]> => {
  const client = clientFor(emu);
  try {
    return await lastValueFrom(batch(JOBS, { client, out: dir, ...options }).pipe(toArray()));
  } finally {
    await client.close();
  }
};
const failure = (promise: Promise<unknown>): Promise<unknown> => promise.then(
  () => undefined,
  (error: unknown) => error,
);
/** A whole first run: 4 jobs done, 4 creation calls. */
async function finishedRun(): Promise<void> {
  expect(last(await run())).toMatchObject({ done: 4 });
  expect(creations()).toBe(4);
}
/** A journal line as the library writes it. */
const line = (record: object): string => {
  const json = JSON.stringify(record);
  return `${json} ${createHash('sha256').update(json).digest('hex').slice(0, 8)}\n`;
};
/** The task id of job `index` made at the service, as a run before this one made it (one creation call). */
async function taskOf(index: number): Promise<string> {
  const client = clientFor(emu);
  try {
    return (await lastValueFrom(client.translation.create(validateJobs(JOBS)[index]!.request as never))).task_id;
  } finally {
    await client.close();
  }
}
/** A journal holding `records`, each committed as a run commits it. */
async function journalOf(...records: Array<Parameters<Journal['append']>[0]>): Promise<void> {
  const journal = await Journal.open(journalPath(), HASH);
  for (const record of records) await journal.append(record);
  await journal.close();
}

describe('a journal trusted only when whole', () => {
  it('a missing journal beside existing outputs stops before any call, naming the choice; --trust-outputs skips them (control: a fresh folder runs)', async () => {
    await finishedRun();
    await rm(journalPath());
    const error = await failure(run());
    expect(error).toBeInstanceOf(JournalError);
    expect((error as JournalError).reason).toBe('outputs');
    expect((error as Error).message).toMatch(/missing or empty.*trust-outputs.*start over/s);
    expect(creations()).toBe(4);
    // The refused run leaves no journal behind (it would otherwise look like a whole, empty one).
    await expect(stat(journalPath())).rejects.toMatchObject({ code: 'ENOENT' });
    const trusted = await run({ trustOutputs: true });
    expect(last(trusted)).toMatchObject({ skipped: 4, created: 0 });
    expect(trusted.filter((e) => e.type === 'done').every((e) => e.type === 'done' && e.task_id === undefined && e.skipped)).toBe(true);
    expect(creations()).toBe(4);
    // Recorded as done: a plain run now skips them too.
    expect(last(await run())).toMatchObject({ skipped: 4, created: 0 });
  });

  it('an emptied journal (0 bytes, or whitespace) beside outputs stops before any call', async () => {
    await finishedRun();
    for (const content of ['', '  \n\n ']) {
      await writeFile(journalPath(), content);
      const error = await failure(run());
      expect((error as JournalError).reason).toBe('outputs');
      expect(creations()).toBe(4);
    }
  });

  it('a blank journal with no outputs is a fresh start, and the library never leaves one it would refuse', async () => {
    await writeFile(journalPath(), ' \n');
    expect(last(await run())).toMatchObject({ done: 4, created: 4 });
    // A journal opened and closed with nothing in it is read back as whole.
    const other = join(dir, 'other.jsonl');
    await (await Journal.open(other, HASH)).close();
    expect(await Journal.read(other)).toMatchObject({ records: [], tail: undefined });
    await (await Journal.open(other, HASH)).close();
  });

  it('a journal cut at a line boundary or mid-line (below what was committed) stops before any call', async () => {
    await finishedRun();
    const whole = await readFile(journalPath());
    const lines = whole.toString('utf8').split('\n');
    const cuts = [
      ['at a line', Buffer.byteLength(lines.slice(0, 6).join('\n') + '\n')],
      ['mid-line', Buffer.byteLength(lines.slice(0, 6).join('\n')) - 7],
      ['one byte short (the last newline)', whole.byteLength - 1],
    ] as const;
    for (const [, length] of cuts) {
      await writeFile(journalPath(), whole);
      await truncate(journalPath(), length);
      const error = await failure(run());
      expect(error).toBeInstanceOf(JournalError);
      expect((error as JournalError).reason).toBe('damaged');
      expect((error as Error).message).toMatch(/was cut/);
      expect(creations()).toBe(4);
    }
    // Control: the whole journal runs (and sends nothing: everything is done).
    await writeFile(journalPath(), whole);
    expect(last(await run())).toMatchObject({ skipped: 4 });
  });

  it('a record without its task id, or one that fails its checksum, is damage, not "no record"', async () => {
    await finishedRun();
    const whole = (await readFile(journalPath(), 'utf8')).split('\n');
    const at = whole.findIndex((l) => l.startsWith('{"type":"task"'));
    // Without the task id, with a checksum that matches (written by hand on purpose), padded
    // with JSON whitespace to its old length so that the committed length still matches.
    const original = whole[at]!;
    const { task_id: _dropped, ...rest } = JSON.parse(original.slice(0, original.lastIndexOf(' '))) as Record<string, unknown>;
    const json = JSON.stringify(rest);
    const padded = `${json.slice(0, -1)}${' '.repeat(original.length - json.length - 9)}}`;
    const edited = [...whole];
    edited[at] = `${padded} ${createHash('sha256').update(padded).digest('hex').slice(0, 8)}`;
    expect(edited[at]!.length).toBe(original.length);
    await writeFile(journalPath(), edited.join('\n'));
    let error = await failure(run());
    expect((error as JournalError).reason).toBe('damaged');
    expect((error as Error).message).toMatch(/line \d+ fails its checksum or is not a journal record/);
    // A flipped character: the checksum fails.
    const flipped = [...whole];
    flipped[at] = flipped[at]!.replace('"task"', '"tAsk"');
    await writeFile(journalPath(), flipped.join('\n'));
    error = await failure(run());
    expect((error as JournalError).reason).toBe('damaged');
    expect((error as Error).message).toMatch(/line \d+ fails its checksum/);
    expect(creations()).toBe(4);
  });

  it('a torn tail past the committed length (a writer killed mid-record) is dropped and reported; the batch resumes, paying nothing twice', async () => {
    // An earlier run: j0 done, j1 task recorded, j2's `intent` committed, then a kill mid-write.
    const t1 = await taskOf(1);
    await journalOf({ type: 'intent', id: 'j1' }, { type: 'sent', id: 'j1' }, { type: 'task', id: 'j1', task_id: t1 }, { type: 'intent', id: 'j2' });
    // Past the committed length: a whole `sent` (its last byte was never released), and a torn record.
    await appendFile(journalPath(), line({ type: 'sent', id: 'j2' }) + '{"type":"task","id":"j2","ta');
    const read = await Journal.read(journalPath());
    expect(read?.tail).toMatchObject({ torn: true, droppedRecords: [{ type: 'sent', id: 'j2' }], kept: 0 });
    expect(creations()).toBe(1);

    const events = await run();
    expect(events[0]).toMatchObject({ type: 'journal-tail', torn: true, droppedRecords: [{ type: 'sent', id: 'j2' }] });
    expect(events.find((e) => e.type === 'resumed')).toMatchObject({ id: 'j1', task_id: t1 });
    // j2 (intent only: never received) is created with no UnconfirmedTaskError; j0, j3 are new.
    expect(last(events)).toMatchObject({ done: 4, failed: 0, created: 3, resumed: 1, recreated: 0 });
    expect(creations()).toBe(4);
    // The journal is whole again.
    expect((await Journal.read(journalPath()))?.tail).toBeUndefined();
  });

  it('a task record past the committed length is kept (it names a real task): resumed, not unconfirmed', async () => {
    const t0 = await taskOf(0);
    await journalOf({ type: 'intent', id: 'j0' }, { type: 'sent', id: 'j0' });
    await appendFile(journalPath(), line({ type: 'task', id: 'j0', task_id: t0 }));
    const events = await run();
    expect(events.find((e) => e.type === 'resumed')).toMatchObject({ id: 'j0', task_id: t0 });
    expect(last(events)).toMatchObject({ done: 4, failed: 0, created: 3 });
    expect(creations()).toBe(4);
  });

  it('opening a journal with an uncommitted tail cuts it and commits the kept records, even when the run then appends nothing', async () => {
    await journalOf({ type: 'intent', id: 'j0' }, { type: 'sent', id: 'j0' });
    // Past the committed length: j0's task (kept), j1's `sent` (dropped) and a torn record.
    await appendFile(journalPath(), line({ type: 'task', id: 'j0', task_id: 't0' }) + line({ type: 'sent', id: 'j1' }) + '{"type":"task","id":"j1","ta');
    // Control: the tail is there to be handled.
    expect((await Journal.read(journalPath()))?.tail).toMatchObject({ kept: 1, torn: true, droppedRecords: [{ type: 'sent', id: 'j1' }] });
    const reopened = await Journal.open(journalPath(), HASH);
    expect(reopened.recall('j0')).toMatchObject({ taskId: 't0', unconfirmed: false });
    await reopened.close();
    // A run killed now (nothing appended since the open) leaves a whole journal that still names j0's task.
    const read = await Journal.read(journalPath());
    expect(read?.tail).toBeUndefined();
    expect(read?.records).toEqual([
      { type: 'intent', id: 'j0' },
      { type: 'sent', id: 'j0' },
      { type: 'task', id: 'j0', task_id: 't0' },
    ]);
    expect((await readFile(journalPath())).byteLength).toBe(read?.committed);
  });

  it('a committed record whose task id was changed (still a valid record) fails its checksum: damage, nothing sent', async () => {
    await finishedRun();
    const whole = await readFile(journalPath(), 'utf8');
    const taskLine = whole.split('\n').find((l) => l.startsWith('{"type":"task"'))!;
    const taskId = (JSON.parse(taskLine.slice(0, taskLine.lastIndexOf(' '))) as { task_id: string }).task_id;
    // One character of the task id changed, same length: JSON and schema still hold, only the checksum tells.
    const changed = taskId.slice(0, -1) + (taskId.endsWith('0') ? '1' : '0');
    await writeFile(journalPath(), whole.replace(taskLine, taskLine.replace(taskId, changed)));
    const error = await failure(run());
    expect(error).toBeInstanceOf(JournalError);
    expect((error as JournalError).reason).toBe('damaged');
    expect(creations()).toBe(4);
    // Control: the journal as written opens, and the run sends nothing.
    await writeFile(journalPath(), whole);
    expect(last(await run())).toMatchObject({ skipped: 4 });
    expect(creations()).toBe(4);
  });

  it('a task recorded with its output written but no `done` record (killed between the rename and the record) is skipped, not refused or created', async () => {
    const t0 = await taskOf(0);
    await journalOf({ type: 'intent', id: 'j0' }, { type: 'sent', id: 'j0' }, { type: 'task', id: 'j0', task_id: t0 });
    await writeFile(join(dir, 'j0.json'), '{"texts":["Satz"]}\n');
    const events = await run();
    expect(events.find((e) => e.type === 'done' && e.id === 'j0')).toMatchObject({ skipped: true, task_id: t0 });
    // Control: the three other jobs are created (a creation of j0 would have been counted).
    expect(last(events)).toMatchObject({ skipped: 1, done: 3, created: 3, failed: 0 });
    expect(creations()).toBe(4);
    expect((await Journal.read(journalPath()))?.records).toContainEqual({ type: 'done', id: 'j0', task_id: t0, output: 'j0.json' });
  });

  it('a header counting a record up to, but not including, its newline is damage (control: the exact count reads whole)', async () => {
    await journalOf({ type: 'intent', id: 'j0' }, { type: 'sent', id: 'j0' });
    const whole = await readFile(journalPath());
    const header = headerLine(HASH, whole.byteLength);
    // Control: the header as written counts the whole file.
    expect(whole.subarray(0, header.byteLength)).toEqual(header);
    expect(await Journal.read(journalPath())).toMatchObject({ committed: whole.byteLength, tail: undefined });
    // One byte short: the last committed record's newline is past the count.
    await writeFile(journalPath(), Buffer.concat([headerLine(HASH, whole.byteLength - 1), whole.subarray(header.byteLength)]));
    const error = await failure(Journal.read(journalPath()));
    expect(error).toBeInstanceOf(JournalError);
    expect((error as JournalError).reason).toBe('damaged');
    expect((error as Error).message).toMatch(/line 3 crosses the committed length/);
  });

  it("a run killed in the journal's first commit (its header still counting 0) commits the header alone: only the records past it are the dropped tail", async () => {
    const record = line({ type: 'intent', id: 'j0' });
    const header = headerLine(HASH, 0);
    await writeFile(journalPath(), Buffer.concat([header, Buffer.from(record)]));
    const read = await Journal.read(journalPath());
    expect(read).toMatchObject({ committed: header.byteLength, records: [] });
    expect(read?.tail).toEqual({ droppedBytes: Buffer.byteLength(record), droppedRecords: [{ type: 'intent', id: 'j0' }], torn: false, kept: 0 });
    // The batch runs on it, creating each job once.
    expect(last(await run())).toMatchObject({ done: 4, failed: 0, created: 4 });
    expect(creations()).toBe(4);
  });

  it('a journal of the older format is refused with a clear error, before any call', async () => {
    await writeFile(journalPath(), `${JSON.stringify({ type: 'batch', version: 1, jobs_hash: HASH })}\n`);
    const error = await failure(run());
    expect((error as JournalError).reason).toBe('unreadable');
    expect((error as Error).message).toMatch(/older rxvoice/);
    // --repair does not apply to it (it is not damaged): the same refusal, and no copy made
    const client = clientFor(emu);
    const repairing = await failure(lastValueFrom(batch(JOBS, { client, out: dir, repair: true })));
    await client.close();
    expect((repairing as JournalError).reason).toBe('unreadable');
    expect((repairing as Error).message).toMatch(/older rxvoice/);
    await expect(stat(`${journalPath()}.damaged`)).rejects.toMatchObject({ code: 'ENOENT' });
    expect(creations()).toBe(0);
  });

  it('an output of a job the journal does not know is not run again silently (a journal cut by an editor, a stray file)', async () => {
    await finishedRun();
    // A journal that is whole but knows nothing of the jobs whose outputs exist:
    await rm(journalPath());
    await (await Journal.open(journalPath(), HASH)).close();
    const error = await failure(run());
    expect((error as JournalError).reason).toBe('outputs');
    expect((error as Error).message).toMatch(/holds no record of them/);
    expect(creations()).toBe(4);
  });

  it('refused for outputs it does not know, a journal holding records is kept as it was (only a journal this run started is removed)', async () => {
    await finishedRun();
    // A journal that knows j0 only: the outputs of j1..j3 are strangers to it.
    const j0 = (await Journal.read(journalPath()))!.records.filter((record) => record.id === 'j0');
    await rm(journalPath());
    await journalOf(...j0);
    const kept = await readFile(journalPath());
    expect(((await failure(run())) as JournalError).reason).toBe('outputs');
    expect(await readFile(journalPath())).toEqual(kept);
    expect(creations()).toBe(4);
    // Control: a journal this run started (it was missing) is removed on the same refusal.
    await rm(journalPath());
    expect(((await failure(run())) as JournalError).reason).toBe('outputs');
    await expect(stat(journalPath())).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('one batch per journal', () => {
  it('a second batch on the same folder refuses at once with the holder\'s pid; nothing is paid twice', async () => {
    const client = clientFor(emu);
    const first = lastValueFrom(batch(JOBS, { client, out: dir }).pipe(toArray()));
    // Wait until the first holds the lock.
    while (!(await stat(`${journalPath()}.lock`).then(() => true, () => false))) await new Promise((r) => setTimeout(r, 5));
    const error = await failure(lastValueFrom(batch(JOBS, { client, out: dir })));
    expect(error).toBeInstanceOf(JournalLockedError);
    expect((error as JournalLockedError).pid).toBe(process.pid);
    expect((error as Error).message).toContain(`process ${process.pid} on ${hostname()}`);
    expect(last(await first)).toMatchObject({ done: 4 });
    expect(creations()).toBe(4);
    // Released on completion: a third run takes it (and sends nothing).
    expect(last(await lastValueFrom(batch(JOBS, { client, out: dir }).pipe(toArray())))).toMatchObject({ skipped: 4 });
    await expect(stat(`${journalPath()}.lock`)).rejects.toMatchObject({ code: 'ENOENT' });
    await client.close();
  });

  it('a second batch naming the same journal through a symlink refuses too (the lock is of the file, not of its name)', async () => {
    const client = clientFor(emu);
    const first = lastValueFrom(batch(JOBS, { client, out: dir }).pipe(toArray()));
    while (!(await stat(`${journalPath()}.lock`).then(() => true, () => false))) await new Promise((r) => setTimeout(r, 5));
    const link = join(dir, '..', `${dir.split('/').pop()}-journal-link.jsonl`);
    await symlink(journalPath(), link);
    try {
      const error = await failure(lastValueFrom(batch(JOBS, { client, out: join(dir, 'second'), journal: link })));
      expect(error).toBeInstanceOf(JournalLockedError);
      expect(last(await first)).toMatchObject({ done: 4 });
      expect(creations()).toBe(4);
      // control: once released, the link's run takes the lock and pays nothing again (every job is in the journal)
      const again = await lastValueFrom(batch(JOBS, { client, out: join(dir, 'second'), journal: link }).pipe(toArray()));
      expect(last(again)).toMatchObject({ failed: 0 });
      expect(creations()).toBe(4);
    } finally {
      await rm(link, { force: true });
    }
    await client.close();
  });

  it('released on error and on unsubscribe', async () => {
    const client = clientFor(emu);
    // Error: a journal of other jobs.
    await writeFile(journalPath(), line({ type: 'batch', version: 2, jobs_hash: 'b'.repeat(64), committed: '0'.repeat(16) }));
    expect(await failure(lastValueFrom(batch(JOBS, { client, out: dir })))).toMatchObject({ reason: 'mismatch' });
    await expect(stat(`${journalPath()}.lock`)).rejects.toMatchObject({ code: 'ENOENT' });
    await rm(journalPath());
    // Unsubscribe after the first event.
    await firstValueFrom(batch(JOBS, { client, out: dir }));
    for (let i = 0; i < 100 && (await stat(`${journalPath()}.lock`).then(() => true, () => false)); i++) await new Promise((r) => setTimeout(r, 10));
    await expect(stat(`${journalPath()}.lock`)).rejects.toMatchObject({ code: 'ENOENT' });
    await client.close();
  });

  it('released by a process that exits without closing the journal (process.exit); control: it held the lock just before', async () => {
    const lockModule = join(import.meta.dirname, '../../src/batch/lock.ts');
    const script = `
      import { existsSync } from 'node:fs';
      const { lockJournal } = await import(${JSON.stringify(lockModule)});
      await lockJournal(process.argv[1]);
      console.log(existsSync(process.argv[1] + '.lock') ? 'held' : 'missing');
      process.exit(3);`;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script, journalPath()], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    expect(await new Promise((resolve) => child.on('exit', resolve))).toBe(3);
    expect(out.trim()).toBe('held');
    await expect(stat(`${journalPath()}.lock`)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('closing leaves alone a lock file that is no longer ours (taken over meanwhile)', async () => {
    const lockPath = `${journalPath()}.lock`;
    // Control: a close removes its own lock.
    await (await Journal.open(journalPath(), HASH)).close();
    await expect(stat(lockPath)).rejects.toMatchObject({ code: 'ENOENT' });
    const journal = await Journal.open(journalPath(), HASH);
    const other = JSON.stringify({ pid: process.ppid, host: hostname(), since: '2026-01-01T00:00:00Z', token: 'other' });
    await writeFile(lockPath, other);
    await journal.close();
    expect(await readFile(lockPath, 'utf8')).toBe(other);
  });

  it('a lock left by a dead process of this host is taken over; a live one, or one of another host, is refused', async () => {
    const dead = spawn(process.execPath, ['-e', '']);
    await new Promise((resolve) => dead.on('exit', resolve));
    const lock = (pid: number, host: string): string => JSON.stringify({ pid, host, since: '2026-01-01T00:00:00Z', token: 'x' });
    // Control first: a live process (this one's parent, which outlives the test) is refused.
    await writeFile(`${journalPath()}.lock`, lock(process.ppid, hostname()));
    expect(await failure(run())).toMatchObject({ name: 'JournalLockedError', pid: process.ppid });
    await writeFile(`${journalPath()}.lock`, lock(dead.pid!, 'another-host.example'));
    expect(await failure(run())).toMatchObject({ name: 'JournalLockedError', host: 'another-host.example' });
    expect(creations()).toBe(0);
    await writeFile(`${journalPath()}.lock`, lock(dead.pid!, hostname()));
    expect(last(await run())).toMatchObject({ done: 4 });
    await expect(stat(`${journalPath()}.lock`)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('two rxvoice batch processes on one folder', () => {
  it('started together: one runs, the other refuses at once naming its pid (exit 1); 0 jobs paid twice', async () => {
    const slow = await emulator({ taskDurationMs: 5000 });
    const jobsFile = join(dir, 'jobs.jsonl');
    await writeFile(jobsFile, JOBS.map((job) => JSON.stringify(job)).join('\n'));
    const out = join(dir, 'cli-out');
    const runs = [spawnCli(['batch', jobsFile, '--out', out, '--json'], slow), spawnCli(['batch', jobsFile, '--out', out, '--json'], slow)];
    const refused = await Promise.race(runs.map((run, i) => run.exited.then((code) => ({ code, i }))));
    const [loser, winner] = refused.i === 0 ? [runs[0]!, runs[1]!] : [runs[1]!, runs[0]!];
    expect(refused.code, loser.stderr.join('')).toBe(1);
    const stderr = loser.stderr.join('');
    expect(stderr).toContain('JournalLockedError');
    expect(stderr).toContain(`in use by process ${winner.child.pid} on ${hostname()}`);
    expect(winner.child.exitCode).toBe(null); // refused while the other still ran
    expect(await winner.exited, winner.stderr.join('')).toBe(0);
    expect(slow.requests.filter((r) => r.method === 'POST' && r.path === '/translation')).toHaveLength(4);
    expect(slow.context.tasks.size).toBe(4);
    await slow.close();
  }, 60_000);
});

describe('a creation call the service answered with an error', () => {
  it('is recorded as answered (or never sent), so the next run creates it with no UnconfirmedTaskError', async () => {
    await emu.close();
    emu = await emulator({ faults: { httpErrors: { status: 429, count: 2 } } });
    const client = clientFor(emu, { maxRetries: 0 });
    const events = await lastValueFrom(batch(JOBS, { client, out: dir, concurrency: 1, retries: 0 }).pipe(toArray()));
    expect(last(events)).toMatchObject({ failed: 2, done: 2 });
    const states = new Map<string, string>();
    for (const record of (await Journal.read(journalPath()))?.records ?? []) states.set(record.id, record.type);
    for (const id of ['j0', 'j1']) expect(['answered', 'intent']).toContain(states.get(id));
    const again = await lastValueFrom(batch(JOBS, { client, out: dir }).pipe(toArray()));
    expect(last(again)).toMatchObject({ failed: 0, created: 2, skipped: 2 });
    expect(emu.context.tasks.size).toBe(4);
    await client.close();
  });
});

describe('a creation call answered with a 5xx', () => {
  it('stays unconfirmed (the service may have created the task): the next run refuses it; control: unconfirmed recreate creates it', async () => {
    await emu.close();
    emu = await emulator({ faults: { httpErrors: { status: 500, count: 1 } } });
    const client = clientFor(emu, { maxRetries: 0 });
    const jobs = JOBS.slice(0, 1);
    const events = await lastValueFrom(batch(jobs, { client, out: dir, retries: 0 }).pipe(toArray()));
    expect(last(events)).toMatchObject({ failed: 1 });
    expect(creations()).toBe(1);
    expect((await Journal.read(journalPath()))?.records.at(-1)).toEqual({ type: 'sent', id: 'j0' });
    const again = await lastValueFrom(batch(jobs, { client, out: dir }).pipe(toArray()));
    expect(again.find((e) => e.type === 'failed')).toMatchObject({ id: 'j0', error: { name: 'UnconfirmedTaskError' } });
    expect(creations()).toBe(1);
    // Control: when asked to, the job is created again (so a creation would have been counted).
    expect(last(await lastValueFrom(batch(jobs, { client, out: dir, unconfirmed: 'recreate' }).pipe(toArray())))).toMatchObject({ done: 1, recreated: 1 });
    expect(creations()).toBe(2);
    await client.close();
  });
});

describe('the sent mark: the last byte of a creation call waits for it', () => {
  it('the service has no task until the gate opens, and the whole request arrives after it (content-length kept)', async () => {
    const client = clientFor(emu);
    const signal = new AbortController().signal;
    let open!: () => void;
    const opened = new Promise<void>((resolve) => (open = resolve));
    let reached!: () => void;
    const gateReached = new Promise<void>((resolve) => (reached = resolve));
    const gated: GatedCallOptions = {
      signal,
      lastByteGate: async () => {
        reached();
        await opened;
      },
    };
    const created = lastValueFrom(client.translation.create({ texts: ['Held back.'], source_language: 'en-us', target_language: 'de-de' }, gated));
    await gateReached;
    // The request is on the wire but for its last byte: the service has not created anything.
    await new Promise((resolve) => setImmediate(resolve));
    expect(emu.context.tasks.size).toBe(0);
    open();
    const { task_id } = await created;
    expect(emu.context.tasks.has(task_id)).toBe(true);
    // Control: without a gate the same call creates at once.
    await lastValueFrom(client.translation.create({ texts: ['Not held.'], source_language: 'en-us', target_language: 'de-de' }));
    expect(emu.context.tasks.size).toBe(2);
    await client.close();
  });

  it('a batch job\'s creation call waits on its `sent` record: when that record fails, the service gets no whole request (control: a written record lets it create)', async () => {
    const client = clientFor(emu);
    const [job] = validateJobs(JOBS);
    const context = (sent: () => Promise<void>): JobContext => ({
      client,
      outDir: dir,
      ledger: {
        recall: () => ({ unconfirmed: false, known: false }),
        intent: async () => undefined,
        sent,
        answered: async () => undefined,
        task: async () => undefined,
        abandoned: async () => undefined,
        done: async () => undefined,
      },
      retries: 0,
      retryDelayMs: 0,
      unconfirmed: 'fail',
      scheduler: asyncScheduler,
      beforeCreate: async () => undefined,
      signal: new AbortController().signal,
      emit: () => undefined,
    });
    const diskFull = new JournalError(journalPath(), 'write', 'disk full');
    expect(await failure(runJob(job!, context(() => Promise.reject(diskFull))))).toBe(diskFull);
    expect(emu.context.tasks.size).toBe(0);
    // Control: the same job with its record written is created.
    expect(await runJob(job!, context(async () => undefined))).toBe('done');
    expect(emu.context.tasks.size).toBe(1);
    await client.close();
  });

  it('a failing gate (the journal cannot be written) abandons the request before its last byte: nothing is created', async () => {
    const client = clientFor(emu);
    const signal = new AbortController().signal;
    const gated: GatedCallOptions = { signal, lastByteGate: () => Promise.reject(new Error('disk full')) };
    const error = await failure(lastValueFrom(client.translation.create({ texts: ['Never whole.'], source_language: 'en-us', target_language: 'de-de' }, gated)));
    expect(error).toBeDefined();
    expect(emu.context.tasks.size).toBe(0);
    await client.close();
  });
});
