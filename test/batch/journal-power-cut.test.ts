/**
 * A batch journal and power cuts (issue 28, item 4).
 *
 * 1. Write order: a simulated disk keeps each write in a cache until `datasync`; a power
 *    cut keeps what was synced plus any subset of the writes since (the worst: only the
 *    header's in-place rewrite). At every cut point of a series of commits, the journal
 *    the cut leaves opens without damage. Control: the old order (header rewritten before
 *    the one sync) leaves a header counting records the disk never got: damaged.
 * 2. Repair (`repair: true`, `rxvoice batch --repair`): against the emulator, journals in
 *    states a cut under the old order leaves (header ahead of its records, a torn record)
 *    are refused with a message proposing --repair; repaired, the batch goes on with the
 *    jobs the kept records settle, never creating a job whose records were lost unless
 *    `allowRepay` (control: with it, they are created).
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lastValueFrom, toArray } from 'rxjs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  batch,
  Journal,
  JournalError,
  UnconfirmedTaskError,
  jobsHash,
  validateJobs,
  type BatchEvent,
  type BatchJobInput,
  type BatchProgressEvent,
  type JournalRecord,
} from '../../src/batch/index.js';
import type { JournalFile } from '../../src/batch/journal.js';
import { headerLine, lineOf } from '../../src/batch/journal-records.js';
import type { Emulator } from '../../src/emulator/index.js';
import { clientFor, emulator } from '../client/helpers.js';
import { spawnCli } from './helpers.js';

const translations = (count: number): BatchJobInput[] =>
  Array.from({ length: count }, (_, i) => ({
    kind: 'translation' as const,
    id: `j${i}`,
    request: { texts: [`Sentence number ${i}.`], source_language: 'en-us', target_language: 'de-de' },
  }));

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rxvoice-power-cut-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

// ---------------------------------------------------------------------------
// 1. The order of the writes, on a disk that loses unsynced writes
// ---------------------------------------------------------------------------

/** A write not yet synced. */
interface PendingWrite {
  position: number;
  bytes: Buffer;
}

/** A disk with a write cache: `durable` holds what was synced; each write waits in `pending` until `datasync`. */
class CacheDisk implements JournalFile {
  durable: Buffer = Buffer.alloc(0);
  pending: PendingWrite[] = [];
  /** Every state a power cut could leave, gathered before each operation. */
  cuts: Buffer[] = [];

  async write(bytes: Uint8Array, offset: number, length: number, position: number): Promise<{ bytesWritten: number }> {
    this.noteCuts();
    this.pending.push({ position, bytes: Buffer.from(bytes.subarray(offset, offset + length)) });
    return { bytesWritten: length };
  }
  async truncate(length: number): Promise<void> {
    this.noteCuts();
    this.durable = apply(this.durable, this.pending);
    this.pending = [];
    this.durable = this.durable.subarray(0, length);
  }
  async datasync(): Promise<void> {
    this.noteCuts();
    this.durable = apply(this.durable, this.pending);
    this.pending = [];
  }
  async close(): Promise<void> {
    this.noteCuts();
  }

  /** The states a cut now leaves: the synced bytes plus any one prefix of the pending writes, or only the header's rewrites. */
  private noteCuts(): void {
    for (let k = 0; k <= this.pending.length; k++) this.cuts.push(apply(this.durable, this.pending.slice(0, k)));
    this.cuts.push(apply(this.durable, this.pending.filter((w) => w.position === 0)));
  }
}

function apply(base: Buffer, writes: readonly PendingWrite[]): Buffer {
  let out = Buffer.from(base);
  for (const { position, bytes } of writes) {
    if (out.byteLength < position + bytes.byteLength) out = Buffer.concat([out, Buffer.alloc(position + bytes.byteLength - out.byteLength)]);
    bytes.copy(out, position);
  }
  return out;
}

/** Open each cut state as a journal: what `Journal.read` says of it. */
async function readCuts(cuts: readonly Buffer[]): Promise<{ damaged: number; whole: number }> {
  const path = join(dir, 'cut.jsonl');
  let damaged = 0;
  let whole = 0;
  for (const state of cuts) {
    await writeFile(path, state);
    const outcome = await Journal.read(path).then(
      () => 'whole',
      (error: unknown) => (error instanceof JournalError && error.reason === 'damaged' ? 'damaged' : 'other'),
    );
    if (outcome === 'damaged') damaged++;
    else if (outcome === 'whole') whole++;
    else throw new Error(`a cut state is unreadable: ${outcome}`);
  }
  return { damaged, whole };
}

const HASH = jobsHash(validateJobs(translations(4)));
const RECORDS: JournalRecord[] = [
  { type: 'intent', id: 'j0' },
  { type: 'sent', id: 'j0' },
  { type: 'task', id: 'j0', task_id: 't0' },
  { type: 'intent', id: 'j1' },
  { type: 'sent', id: 'j1' },
  { type: 'done', id: 'j0', task_id: 't0', output: 'j0.json' },
  { type: 'task', id: 'j1', task_id: 't1' },
];

describe('the journal orders its writes: records synced before the header that counts them', () => {
  it('a power cut at any point of a series of commits leaves a journal that opens (no damage)', async () => {
    const disk = new CacheDisk();
    const journal = await Journal.open(join(dir, 'journal.jsonl'), HASH, { openFile: async () => disk });
    for (const record of RECORDS) await journal.append(record);
    await Promise.all([journal.append({ type: 'intent', id: 'j2' }), journal.append({ type: 'intent', id: 'j3' })]);
    await journal.close();
    expect(disk.cuts.length).toBeGreaterThan(30);
    const { damaged, whole } = await readCuts(disk.cuts);
    expect(damaged).toBe(0);
    expect(whole).toBe(disk.cuts.length);
    // and the last state holds every record
    await writeFile(join(dir, 'final.jsonl'), disk.durable);
    expect((await Journal.read(join(dir, 'final.jsonl')))?.records).toHaveLength(RECORDS.length + 2);
  });

  it('an append resolves only once its record is committed: a power cut right after it keeps the record (a `sent` too)', async () => {
    const disk = new CacheDisk();
    const path = join(dir, 'journal.jsonl');
    const journal = await Journal.open(path, HASH, { openFile: async () => disk });
    const durable = join(dir, 'durable.jsonl');
    for (const [i, record] of RECORDS.entries()) {
      await journal.append(record);
      // What a cut now leaves: only the synced bytes.
      await writeFile(durable, disk.durable);
      const content = await Journal.read(durable);
      expect(content?.records).toEqual(RECORDS.slice(0, i + 1));
      expect(content?.tail).toBeUndefined();
    }
    await journal.close();
  });

  it('control: the old order (records and the header rewritten, then one sync) leaves a header ahead of its records', async () => {
    const disk = new CacheDisk();
    // the old #commit: header, then per commit: write records, rewrite the header, one datasync
    let end = (await disk.write(headerLine(HASH, 0), 0, headerLine(HASH, 0).byteLength, 0)).bytesWritten;
    await disk.datasync();
    for (const record of RECORDS) {
      const line = Buffer.from(lineOf(record));
      await disk.write(line, 0, line.byteLength, end);
      end += line.byteLength;
      const header = headerLine(HASH, end);
      await disk.write(header, 0, header.byteLength, 0);
      await disk.datasync();
    }
    const { damaged } = await readCuts(disk.cuts);
    expect(damaged).toBeGreaterThan(0);
  });
});

// ---------------------------------------------------------------------------
// 2. Repair, against the emulator
// ---------------------------------------------------------------------------

describe('a damaged journal: refused with --repair proposed; repaired, nothing it may have sent is paid again', () => {
  const JOBS = translations(8);
  let emu: Emulator;
  beforeEach(async () => {
    emu = await emulator();
  });
  afterEach(async () => {
    await emu.close();
  });

  const creations = (): number => emu.requests.filter((r) => r.method === 'POST' && r.path === '/translation').length;
  const journalPath = (): string => join(dir, '.rxvoice-batch.jsonl');
  const progress = (events: BatchEvent[]): BatchProgressEvent => events.filter((e): e is BatchProgressEvent => e.type === 'progress').at(-1) as BatchProgressEvent;
  const run = async (options: { repair?: boolean; allowRepay?: boolean; trustOutputs?: boolean; concurrency?: number } = {}): Promise<BatchEvent[]> => {
    const client = clientFor(emu);
    try {
      return await lastValueFrom(batch(JOBS, { client, out: dir, concurrency: 2, ...options }).pipe(toArray()));
    } finally {
      await client.close();
    }
  };
  const failure = (promise: Promise<unknown>): Promise<unknown> => promise.then(
    () => undefined,
    (error: unknown) => error,
  );

  /**
   * A run of 8 jobs, then the state a power cut under the old order leaves: the records of
   * j4..j7 (the last jobs in flight) never reached the disk, and their outputs are not there.
   * Returns the byte offset where j4's first record began.
   */
  async function cutAfterFourJobs(): Promise<{ whole: Buffer; lostFrom: number }> {
    // one job at a time: j0..j3's records all come before j4's
    expect(progress(await run({ concurrency: 1 }))).toMatchObject({ done: 8, created: 8 });
    const whole = await readFile(journalPath());
    const lines = whole.toString('utf8').split('\n');
    // the first line that names one of j4..j7
    const index = lines.findIndex((l) => /"id":"j[4-7]"/.test(l));
    const lostFrom = Buffer.byteLength(lines.slice(0, index).join('\n') + '\n');
    for (const id of ['j4', 'j5', 'j6', 'j7']) await rm(join(dir, `${id}.json`));
    return { whole, lostFrom };
  }

  const states: Record<string, (whole: Buffer, lostFrom: number) => Buffer> = {
    // the header was rewritten, the records it counts never written: the file is short
    'header ahead, file short': (whole, lostFrom) => whole.subarray(0, lostFrom),
    // the file's length reached the disk, its new blocks did not: zeros where records were
    'header ahead, zeros': (whole, lostFrom) => Buffer.concat([whole.subarray(0, lostFrom), Buffer.alloc(whole.byteLength - lostFrom)]),
    // a torn record: half a line, then garbage
    'torn record': (whole, lostFrom) => {
      const torn = Buffer.from(whole);
      torn.fill(0x3f, lostFrom + 20, whole.byteLength - 1);
      return torn;
    },
  };

  for (const [name, damage] of Object.entries(states)) {
    it(`${name}: refused, nothing sent, --repair proposed; repaired: the lost jobs refused, the rest done (control: allowRepay creates them)`, async () => {
      const { whole, lostFrom } = await cutAfterFourJobs();
      await writeFile(journalPath(), damage(whole, lostFrom));
      const before = creations();

      const refused = await failure(run());
      expect(refused).toBeInstanceOf(JournalError);
      expect((refused as JournalError).reason).toBe('damaged');
      expect((refused as Error).message).toMatch(/--repair/);
      expect((refused as Error).message).not.toMatch(/move it away/);
      expect(creations()).toBe(before);

      const repaired = await run({ repair: true });
      const event = repaired.find((e) => e.type === 'journal-repaired');
      expect(event).toMatchObject({ type: 'journal-repaired', lostJobs: ['j4', 'j5', 'j6', 'j7'] });
      expect(await readFile(`${journalPath()}.damaged`)).toEqual(damage(whole, lostFrom));
      // j0..j3 settled by their records (skipped); j4..j7 may have been sent: refused, not sent
      expect(progress(repaired)).toMatchObject({ skipped: 4, failed: 4, created: 0 });
      const failed = repaired.flatMap((e) => (e.type === 'failed' ? [e] : []));
      expect(failed.map((e) => e.id).sort()).toEqual(['j4', 'j5', 'j6', 'j7']);
      for (const e of failed) expect(e.error).toBeInstanceOf(UnconfirmedTaskError);
      expect(failed.every((e) => (e.error as UnconfirmedTaskError).lost)).toBe(true);
      expect(creations()).toBe(before);

      // the repaired journal is whole: a plain run opens it, and still refuses the lost jobs
      expect(progress(await run())).toMatchObject({ skipped: 4, failed: 4, created: 0 });
      expect(creations()).toBe(before);

      // control: the user allows paying again: the four are created, once each
      expect(progress(await run({ allowRepay: true }))).toMatchObject({ skipped: 4, done: 4, created: 4 });
      expect(creations()).toBe(before + 4);
    });
  }

  it('a torn record among settled jobs loses nothing that matters: the batch goes on with no job refused', async () => {
    expect(progress(await run())).toMatchObject({ done: 8 });
    const records = (await Journal.read(journalPath()))!.records;
    const text = (await readFile(journalPath())).toString('utf8');
    // garble j2's `task` line (its `done` line still settles it)
    const garbled = text.replace(/(\{"type":"task","id":"j2")/, (m) => m.replace('task', 'tasq'));
    expect(garbled).not.toBe(text);
    await writeFile(journalPath(), garbled);
    expect(((await failure(run())) as JournalError).reason).toBe('damaged');
    const repaired = await run({ repair: true });
    expect(repaired.find((e) => e.type === 'journal-repaired')).toMatchObject({ lostLines: 1, lostJobs: [] });
    expect(progress(repaired)).toMatchObject({ skipped: 8, failed: 0, created: 0 });
    // The repaired journal is committed whole: every record that verified, none of them a tail to drop.
    expect(repaired.some((e) => e.type === 'journal-tail')).toBe(false);
    const read = await Journal.read(journalPath());
    expect(read?.tail).toBeUndefined();
    expect(read?.records).toEqual(records.filter((r) => !(r.type === 'task' && r.id === 'j2')));
  });

  it('repair keeps a job whose last kept record is its task: resumed, never created again, even with allowRepay', async () => {
    const client = clientFor(emu);
    const t0 = await lastValueFrom(client.translation.create(validateJobs(JOBS)[0]!.request as never));
    await client.close();
    const hash = jobsHash(validateJobs(JOBS));
    const journal = await Journal.open(journalPath(), hash);
    for (const record of [
      { type: 'intent', id: 'j0' },
      { type: 'sent', id: 'j0' },
      { type: 'task', id: 'j0', task_id: t0.task_id },
      { type: 'intent', id: 'j1' },
    ] as JournalRecord[]) await journal.append(record);
    await journal.close();
    // garble j1's intent (committed): the journal lost a record
    const text = (await readFile(journalPath())).toString('utf8');
    await writeFile(journalPath(), text.replace('{"type":"intent","id":"j1"}', '{"type":"intent","id":"jX"}'));
    const before = creations();
    const repaired = await run({ repair: true, allowRepay: true });
    const event = repaired.find((e) => e.type === 'journal-repaired');
    expect(event).toMatchObject({ lostLines: 1 });
    expect(event?.type === 'journal-repaired' && event.lostJobs).not.toContain('j0');
    expect(repaired.find((e) => e.type === 'resumed')).toMatchObject({ id: 'j0', task_id: t0.task_id });
    // Control: the seven others (lost, repay allowed, or never sent) are created, once each.
    expect(progress(repaired)).toMatchObject({ done: 8, created: 7, resumed: 1, failed: 0 });
    expect(creations()).toBe(before + 7);
  });

  it('a repaired job marked lost whose output is there: refused without trustOutputs, the batch going on; with it, the whole output settles it', async () => {
    const { whole, lostFrom } = await cutAfterFourJobs();
    await writeFile(journalPath(), whole.subarray(0, lostFrom));
    // j4's output is there (its `done` record was among those lost)
    await writeFile(join(dir, 'j4.json'), '{"texts":["Satz"]}\n');
    const before = creations();
    const repaired = await run({ repair: true });
    expect(repaired.find((e) => e.type === 'journal-repaired')).toMatchObject({ lostJobs: ['j4', 'j5', 'j6', 'j7'] });
    expect(progress(repaired)).toMatchObject({ skipped: 4, failed: 4, created: 0 });
    expect(repaired.find((e) => e.type === 'failed' && e.id === 'j4')).toMatchObject({ error: { name: 'UnconfirmedTaskError' } });
    expect(creations()).toBe(before);
    // with trustOutputs the whole output settles j4; the other three stay refused
    const trusted = await run({ trustOutputs: true });
    expect(trusted.find((e) => e.type === 'done' && e.id === 'j4')).toMatchObject({ skipped: true });
    expect(progress(trusted)).toMatchObject({ skipped: 5, failed: 3, created: 0 });
    expect(creations()).toBe(before);
  });

  it('repair counts as lost only the lines the header committed: garbage past it is an uncommitted tail, not a lost record', async () => {
    const hash = jobsHash(validateJobs(JOBS));
    const journal = await Journal.open(journalPath(), hash);
    for (const record of [
      { type: 'intent', id: 'j0' },
      { type: 'intent', id: 'j1' },
    ] as JournalRecord[]) await journal.append(record);
    await journal.close();
    const text = (await readFile(journalPath())).toString('utf8');
    // one committed line garbled, and a garbled line right at the committed length
    await writeFile(journalPath(), text.replace('{"type":"intent","id":"j1"}', '{"type":"intent","id":"jX"}') + 'garbage past the committed length\n');
    const repaired = await run({ repair: true, allowRepay: true });
    expect(repaired.find((e) => e.type === 'journal-repaired')).toMatchObject({ lostLines: 1, keptRecords: 1 });
    expect(progress(repaired)).toMatchObject({ done: 8, failed: 0 });
  });

  it("repair drops a `sent` record past the committed length as opening does (its last byte never went): the job is created again, not refused", async () => {
    const hash = jobsHash(validateJobs(JOBS));
    // j0's intent, committed but for its newline (damage that loses no record), then j0's `sent` past the count.
    const intent = lineOf({ type: 'intent', id: 'j0' });
    const header = headerLine(hash, 0);
    await writeFile(journalPath(), Buffer.concat([headerLine(hash, header.byteLength + Buffer.byteLength(intent) - 1), Buffer.from(intent + lineOf({ type: 'sent', id: 'j0' }))]));
    expect(((await failure(run())) as JournalError).reason).toBe('damaged');
    const before = creations();
    const repaired = await run({ repair: true });
    expect(repaired.find((e) => e.type === 'journal-repaired')).toMatchObject({ lostLines: 0, missingBytes: 0, lostJobs: [] });
    expect(progress(repaired)).toMatchObject({ done: 8, failed: 0, created: 8 });
    expect(creations()).toBe(before + 8);
  });

  it('repair on a whole journal changes nothing (no event, no copy)', async () => {
    expect(progress(await run())).toMatchObject({ done: 8 });
    const before = await readFile(journalPath());
    const again = await run({ repair: true });
    expect(again.some((e) => e.type === 'journal-repaired')).toBe(false);
    expect(await readFile(journalPath())).toEqual(before);
    await expect(readFile(`${journalPath()}.damaged`)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('rxvoice batch: the damaged message proposes --repair; with --repair the lost jobs are reported, none created', async () => {
    const { whole, lostFrom } = await cutAfterFourJobs();
    await writeFile(journalPath(), whole.subarray(0, lostFrom));
    const jobsFile = join(dir, 'jobs.jsonl');
    await writeFile(jobsFile, JOBS.map((job) => JSON.stringify(job)).join('\n') + '\n');
    const before = creations();
    const refused = spawnCli(['batch', jobsFile, '--out', dir], emu);
    const refusedCode = await refused.exited;
    expect(refusedCode).not.toBe(0);
    expect(refused.stderr.join('')).toMatch(/--repair/);
    expect(refused.stderr.join('')).not.toMatch(/move it away/);
    const repaired = spawnCli(['batch', jobsFile, '--out', dir, '--repair'], emu);
    const code = await repaired.exited;
    const output = repaired.lines.join('\n') + repaired.stderr.join('');
    expect(output).toMatch(/repaired/);
    expect(output).toMatch(/--allow-repay/);
    expect(code).not.toBe(0); // four jobs failed (refused)
    expect(creations()).toBe(before);
  });

});
