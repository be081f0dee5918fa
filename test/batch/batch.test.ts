/**
 * batch(): jobs against the emulator over real sockets, the journal, retries, bad input.
 */
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lastValueFrom, toArray } from 'rxjs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { batch, Journal, JournalError, jobsHash, parseJobLines, validateJobs, type BatchEvent, type BatchJobInput, type BatchProgressEvent } from '../../src/batch/index.js';
import { pseudoLocalize, type Emulator } from '../../src/emulator/index.js';
import { ValidationError } from '../../src/core/errors.js';
import { clientFor, emulator } from '../client/helpers.js';

const translations = (count: number, prefix = 'j'): BatchJobInput[] =>
  Array.from({ length: count }, (_, i) => ({
    kind: 'translation' as const,
    id: `${prefix}${i}`,
    request: { texts: [`Sentence number ${i}.`], source_language: 'en-us', target_language: 'de-de' },
  }));

const creations = (emu: Emulator, path = '/translation'): number => emu.requests.filter((r) => r.method === 'POST' && r.path === path).length;
const last = (events: BatchEvent[]): BatchProgressEvent => events.filter((e): e is BatchProgressEvent => e.type === 'progress').at(-1) as BatchProgressEvent;

let dir: string;
let emu: Emulator;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rxvoice-batch-'));
});
afterEach(async () => {
  await emu?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('batch', () => {
  it('runs every job once, writes outputs atomically, and a second run resumes nothing and creates nothing', async () => {
    emu = await emulator();
    const client = clientFor(emu);
    const jobs = translations(12);
    const first = await lastValueFrom(batch(jobs, { client, out: dir, concurrency: 4 }).pipe(toArray()));
    expect(last(first)).toMatchObject({ total: 12, done: 12, failed: 0, skipped: 0, created: 12 });
    expect(creations(emu)).toBe(12);
    for (let i = 0; i < 12; i++) {
      const output = JSON.parse(await readFile(join(dir, `j${i}.json`), 'utf8')) as { texts: string[] };
      expect(output.texts).toEqual([pseudoLocalize(`Sentence number ${i}.`, 'de-de')]);
    }
    // No temporary file is left behind.
    expect((await readdir(dir)).filter((name) => name.endsWith('.tmp'))).toEqual([]);
    const created = first.filter((e) => e.type === 'created').map((e) => (e as { task_id: string }).task_id);
    expect(new Set(created).size).toBe(12);

    const second = await lastValueFrom(batch(jobs, { client, out: dir, concurrency: 4 }).pipe(toArray()));
    expect(last(second)).toMatchObject({ total: 12, done: 0, skipped: 12, created: 0 });
    expect(creations(emu)).toBe(12);
    await client.close();
  });

  it('a refused key stops the whole batch at its first job (AuthenticationError), with one creation call tried (control: the right key runs them all)', async () => {
    emu = await emulator();
    const jobs = translations(6);
    const refused = clientFor({ baseUrl: emu.baseUrl, apiKey: 'not-the-key' });
    const error = await lastValueFrom(batch(jobs, { client: refused, out: dir, concurrency: 1 }).pipe(toArray())).then(
      () => undefined,
      (e: unknown) => e,
    );
    await refused.close();
    expect(error).toMatchObject({ name: 'AuthenticationError' });
    expect(creations(emu)).toBe(1);
    const client = clientFor(emu);
    expect(last(await lastValueFrom(batch(jobs, { client, out: dir }).pipe(toArray())))).toMatchObject({ done: 6, failed: 0 });
    await client.close();
  });

  it('resumes a recorded task instead of creating it; an unconfirmed creation is reported, or created again when asked', async () => {
    emu = await emulator();
    const client = clientFor(emu);
    const jobs = translations(3);
    const valid = validateJobs(jobs);
    // An earlier run: j0 got a task (created here for real), j1 sent its creation call and died.
    const created = await lastValueFrom(client.translation.create(valid[0]!.request as never));
    const journal = await Journal.open(join(dir, '.rxvoice-batch.jsonl'), jobsHash(valid));
    await journal.append({ type: 'intent', id: 'j0' });
    await journal.append({ type: 'sent', id: 'j0' });
    await journal.append({ type: 'task', id: 'j0', task_id: created.task_id });
    await journal.append({ type: 'intent', id: 'j1' });
    await journal.append({ type: 'sent', id: 'j1' });
    await journal.close();
    expect(creations(emu)).toBe(1);

    const events = await lastValueFrom(batch(jobs, { client, out: dir, unconfirmed: 'recreate' }).pipe(toArray()));
    expect(events.find((e) => e.type === 'resumed')).toMatchObject({ id: 'j0', task_id: created.task_id });
    expect(events.find((e) => e.type === 'created' && e.id === 'j1')).toMatchObject({ recreated: true });
    expect(last(events)).toMatchObject({ done: 3, created: 2, resumed: 1, recreated: 1 });
    expect(creations(emu)).toBe(3);

    // By default (unconfirmed: 'fail') nothing is sent for such a job.
    const other = await mkdtemp(join(tmpdir(), 'rxvoice-batch-'));
    const journal2 = await Journal.open(join(other, '.rxvoice-batch.jsonl'), jobsHash(valid));
    await journal2.append({ type: 'intent', id: 'j2' });
    await journal2.append({ type: 'sent', id: 'j2' });
    await journal2.close();
    const failed = await lastValueFrom(batch(jobs, { client, out: other }).pipe(toArray()));
    expect(failed.find((e) => e.type === 'failed')).toMatchObject({ id: 'j2', error: { name: 'UnconfirmedTaskError' } });
    expect(creations(emu)).toBe(5);
    await rm(other, { recursive: true, force: true });
    await client.close();
  });

  it('records each task id before waiting on it: the journal holds intent, sent, task, done, in that order, per job', async () => {
    emu = await emulator();
    const client = clientFor(emu);
    const events = await lastValueFrom(batch(translations(3), { client, out: dir }).pipe(toArray()));
    expect(last(events)).toMatchObject({ done: 3, created: 3 });
    const records = (await Journal.read(join(dir, '.rxvoice-batch.jsonl')))?.records ?? [];
    for (const created of events.flatMap((e) => (e.type === 'created' ? [e] : []))) {
      const own = records.filter((r) => r.id === created.id);
      expect(own).toEqual([
        { type: 'intent', id: created.id },
        { type: 'sent', id: created.id },
        { type: 'task', id: created.id, task_id: created.task_id },
        { type: 'done', id: created.id, task_id: created.task_id, output: `${created.id}.json` },
      ]);
    }
    await client.close();
  });

  it('a job marked done whose output was removed is resumed and its output written again; the others are skipped, nothing created', async () => {
    emu = await emulator();
    const client = clientFor(emu);
    const jobs = translations(3);
    expect(last(await lastValueFrom(batch(jobs, { client, out: dir }).pipe(toArray())))).toMatchObject({ done: 3 });
    const output = join(dir, 'j1.json');
    const before = await readFile(output, 'utf8');
    await rm(output);
    const events = await lastValueFrom(batch(jobs, { client, out: dir }).pipe(toArray()));
    expect(events.find((e) => e.type === 'resumed')).toMatchObject({ id: 'j1' });
    expect(last(events)).toMatchObject({ done: 1, skipped: 2, created: 0, resumed: 1 });
    expect(await readFile(output, 'utf8')).toBe(before);
    expect(creations(emu)).toBe(3);
    await client.close();
  });

  it('refuses a journal of a different jobs file, before sending anything', async () => {
    emu = await emulator();
    const client = clientFor(emu);
    await lastValueFrom(batch(translations(2), { client, out: dir }));
    const before = emu.requests.length;
    const error = await lastValueFrom(batch(translations(3), { client, out: dir })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JournalError);
    expect((error as JournalError).reason).toBe('mismatch');
    expect((error as Error).message).toMatch(/belongs to a different jobs file/);
    expect(emu.requests.length).toBe(before);
    await client.close();
  });

  it('never retries PAYMENT_REQUIRED nor a task that ended TIMEOUT (a new task would be paid again); retries a 429, a bounded number of times', async () => {
    emu = await emulator({ faults: { taskOutcome: { translation: 'PAYMENT_REQUIRED' } } });
    const client = clientFor(emu);
    const paid = await lastValueFrom(batch(translations(3), { client, out: dir, retries: 3, retryDelayMs: 1 }).pipe(toArray()));
    expect(last(paid)).toMatchObject({ failed: 3, done: 0 });
    expect(paid.filter((e) => e.type === 'failed').map((e) => (e as { error: { code: string } }).error.code)).toEqual(Array(3).fill('payment_required'));
    expect(paid.some((e) => e.type === 'retrying')).toBe(false);
    expect(creations(emu)).toBe(3);
    await client.close();
    await emu.close();

    // TIMEOUT: the service asks for smaller requests; one task a job, none created again
    emu = await emulator({ faults: { taskOutcome: { translation: 'TIMEOUT' } } });
    const client2 = clientFor(emu);
    const out2 = join(dir, 'timeout');
    const timedOut = await lastValueFrom(batch(translations(2), { client: client2, out: out2, retries: 2, retryDelayMs: 1 }).pipe(toArray()));
    expect(last(timedOut)).toMatchObject({ failed: 2 });
    expect(timedOut.filter((e) => e.type === 'failed').map((e) => (e as { error: { code: string } }).error.code)).toEqual(['task_timeout', 'task_timeout']);
    expect(timedOut.some((e) => e.type === 'retrying')).toBe(false);
    expect(creations(emu)).toBe(2);
    // The dead tasks are recorded as abandoned: a new run creates new tasks rather than resuming them.
    const journal = await readFile(join(out2, '.rxvoice-batch.jsonl'), 'utf8');
    expect(journal.split('\n').filter((l) => l.includes('"abandoned"'))).toHaveLength(2);
    await client2.close();
    await emu.close();

    // Control: a 429 at creation is retried (so a retry would have been seen), a bounded number of times
    emu = await emulator({ faults: { httpErrors: { status: 429, count: 100 } } });
    const client3 = clientFor(emu, { maxRetries: 0 });
    const limited = await lastValueFrom(batch(translations(1), { client: client3, out: join(dir, 'limited'), retries: 2, retryDelayMs: 1 }).pipe(toArray()));
    expect(limited.filter((e) => e.type === 'retrying')).toHaveLength(2);
    expect(last(limited)).toMatchObject({ failed: 1 });
    await client3.close();
  });

  it('throws synchronously on a bad job or bad options', async () => {
    emu = await emulator();
    const client = clientFor(emu);
    expect(() => batch([{ kind: 'translation', id: 'a b', request: { texts: [], source_language: 'en-us', target_language: 'de-de' } }], { client, out: dir })).toThrow(ValidationError);
    expect(() => batch(translations(1), { client, out: dir, concurrency: 0 })).toThrow(ValidationError);
    expect(() => batch([...translations(1), ...translations(1)], { client, out: dir })).toThrow(/used twice/);
    expect(emu.requests.length).toBe(0);
    await client.close();
  });

  it('refuses jobs whose outputs clash (the same file, or one inside another) before anything is paid', async () => {
    emu = await emulator();
    const client = clientFor(emu);
    const [a, b] = translations(2);
    const clashes: Array<[BatchJobInput[], RegExp]> = [
      [[a!, { ...b!, output: 'j0.json' }], /"j0.json" is also the output of job "j0"/],
      [[a!, { ...b!, output: './j0.json' }], /is also the output of job "j0"/],
      [[{ ...a!, output: 'x/a.json' }, { ...b!, output: 'x' }], /"x\/a.json" is inside "x", the output of job "j1"/],
      [[{ ...a!, output: 'x' }, { ...b!, output: 'x/deeper/a.json' }], /inside "x"/],
    ];
    for (const [jobs, message] of clashes) {
      let error: unknown;
      try {
        batch(jobs, { client, out: dir });
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).message).toMatch(message);
    }
    expect(emu.requests.length).toBe(0);
    // control: outputs side by side in one folder run, one task each
    const events = await lastValueFrom(batch([{ ...a!, output: 'x/a.json' }, { ...b!, output: 'x/b.json' }], { client, out: join(dir, 'apart') }).pipe(toArray()));
    expect(last(events)).toMatchObject({ done: 2, failed: 0 });
    expect(creations(emu)).toBe(2);
    await client.close();
  });
});

describe('parseJobLines', () => {
  it('reports bad lines by number and keeps the good ones', () => {
    const good = JSON.stringify(translations(1)[0]);
    const text = [good, '', '# a comment', '{not json', JSON.stringify({ kind: 'sound', id: 's', request: { prompt: 'rain', duration: 99 } }), good].join('\n');
    const { jobs, errors } = parseJobLines(text);
    expect(jobs.map((j) => j.id)).toEqual(['j0']);
    expect(errors.map((e) => e.line)).toEqual([4, 5, 6]);
    expect(errors[1]?.message).toMatch(/duration/);
    expect(errors[2]?.message).toMatch(/repeats line 1/);
  });
});

describe('Journal', () => {
  it('stops on a failed write (disk full), keeping every record written before it', async () => {
    const path = join(dir, 'journal.jsonl');
    let budget = 1500;
    const journal = await Journal.open(path, 'a'.repeat(64), {
      openFile: async (p) => {
        const { open } = await import('node:fs/promises');
        const handle = await open(p, 'w+');
        return {
          write: async (bytes: Uint8Array, offset: number, length: number, position: number) => {
            if (budget <= 0) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
            const part = Math.min(length, budget);
            budget -= part;
            return handle.write(bytes, offset, part, position);
          },
          truncate: (length: number) => handle.truncate(length),
          datasync: () => handle.datasync(),
          close: () => handle.close(),
        };
      },
    });
    const written: string[] = [];
    let failure: unknown;
    for (let i = 0; i < 20 && failure === undefined; i++) {
      await journal.append({ type: 'task', id: `j${i}`, task_id: `t${i}` }).then(
        () => written.push(`j${i}`),
        (error: unknown) => (failure = error),
      );
    }
    expect(failure).toBeInstanceOf(JournalError);
    expect((failure as Error).message).toMatch(/disk full/);
    await expect(journal.append({ type: 'intent', id: 'x' })).rejects.toBe(failure);
    await journal.close();
    expect(written.length).toBeGreaterThan(0);
    // The torn last line is dropped; everything acknowledged is there.
    const reopened = await Journal.open(path, 'a'.repeat(64));
    for (const id of written) expect(reopened.recall(id).taskId).toBe(`t${id.slice(1)}`);
    await reopened.append({ type: 'done', id: 'j0', task_id: 't0', output: 'j0.json' });
    await reopened.close();
    const content = await Journal.read(path);
    expect(content?.tail).toBeUndefined();
    expect(content?.records.at(-1)).toEqual({ type: 'done', id: 'j0', task_id: 't0', output: 'j0.json' });
  });
});
