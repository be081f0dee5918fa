/**
 * The journal of a batch: an append-only file of checksummed records, fsynced before
 * each job goes on, so that a restarted batch resumes every task it created, creates
 * again only what the service never received, and pays for nothing twice.
 *
 * ## Format (version 2)
 * One record a line: `<json> <sum>\n`, where `<sum>` is the first 8 hex digits of the
 * SHA-256 of `<json>`. Records:
 * - `{"type":"batch","version":2,"jobs_hash":H,"committed":N}`: the first line (the
 *   header), of a fixed length; ties the journal to its jobs, and `N` (16 digits) is the
 *   length of the file up to the last record fsynced. The header is rewritten in place
 *   only after the records it counts are fsynced, then fsynced itself: a power cut can
 *   leave records past the header's count (uncommitted, handled below), never a header
 *   counting records the disk does not hold;
 * - `{"type":"intent","id":J}`: the creation call of job J is about to be sent;
 * - `{"type":"sent","id":J}`: the creation call's request is about to be complete on the
 *   wire: this record is fsynced while the request's last byte is held back, and the
 *   byte goes only once it is on disk;
 * - `{"type":"answered","id":J,"code":C}`: the service refused the creation call (3xx or
 *   4xx, error code C): it created no task;
 * - `{"type":"task","id":J,"task_id":T}`: the service answered the creation call with T;
 * - `{"type":"abandoned","id":J,"task_id":T,"code":C}`: T ended in a failed status, so a
 *   later run creates a new task instead of resuming T;
 * - `{"type":"done","id":J,"task_id":T,"output":P}`: the result is in the output file P
 *   (`task_id` is absent when the job was skipped on its output's word: `trustOutputs`);
 * - `{"type":"lost","id":J}`: written by a repair (`repair: true`, see ./journal-repair.ts):
 *   the damaged journal lost records that may have been J's, so J may have been sent and
 *   paid: it is created again only with `allowRepay`.
 *
 * ## What is trusted
 * Everything up to `committed` must be whole: a record there that fails its checksum or
 * schema, or a file shorter than `committed` (cut by hand, a restore), is damage, and
 * the journal is refused (`JournalError`, reason `'damaged'`) before anything is sent;
 * `repair: true` (`rxvoice batch --repair`) keeps every record that verifies and marks the
 * jobs it cannot account for `lost` (./journal-repair.ts).
 * Bytes past `committed` were written by a run that died before their fsync (the normal
 * trace of `kill -9`): nothing relied on them, so a torn record there is dropped, as is
 * a `sent` record (its request's last byte was never released: the service cannot have
 * the whole request); whole `answered`, `task`, `abandoned` and `done` records there are
 * kept (they state what the service told us). What was dropped is reported in {@link Journal.tail}.
 * `intent` without `sent` means "not sent": the job is created again with no risk.
 * `sent` without `task` means the answer was lost: `UnconfirmedTaskError`.
 *
 * Concurrent records are written together (one write and fsync, then one header update
 * and fsync: group commit). Opening a journal takes its lock (`<journal>.lock`, see ./lock.ts);
 * `close` releases it.
 */
import { open, readFile, unlink, type FileHandle } from 'node:fs/promises';
import { JournalError } from './errors.js';
import { lockJournal, type JournalLock } from './lock.js';
import { repairJournal, type JournalRepair } from './journal-repair.js';
import { JournalHeaderSchema, JournalRecordSchema, applyRecord, headerLine, lineOf, recordedJobs, verified, type JournalRecord, type RecordedJob } from './journal-records.js';

export { JOURNAL_VERSION, JournalRecordSchema, type JournalRecord, type RecordedJob } from './journal-records.js';


/** What was dropped from a journal's uncommitted tail when it was opened. */
export interface JournalTail {
  /** Bytes past the committed length that were dropped. */
  droppedBytes: number;
  /** Whole records dropped (`sent` records: their request's last byte never went). */
  droppedRecords: Array<{ type: JournalRecord['type']; id: string }>;
  /** Whether a torn (incomplete or garbled) record was among them. */
  torn: boolean;
  /** Whole records past the committed length that were kept (`answered`, `task`, `abandoned`, `done`). */
  kept: number;
}

/** The file operations the journal needs (a `FileHandle` opened for reading and writing). */
export interface JournalFile {
  write(bytes: Uint8Array, offset: number, length: number, position: number): Promise<{ bytesWritten: number }>;
  truncate(length: number): Promise<void>;
  datasync(): Promise<void>;
  close(): Promise<void>;
}

/** Options of {@link Journal.open}. */
export interface JournalOpenOptions {
  /** Opens the file for writing (default: `fs.promises.open(path, 'r+')`); tests inject faults here. */
  openFile?: (path: string) => Promise<JournalFile>;
  /**
   * Repair a damaged journal instead of refusing it (see ./journal-repair.ts): the ids of
   * all the jobs, so that those it cannot account for are marked `lost`.
   */
  repair?: { jobIds: readonly string[] } | undefined;
}

/** A journal read whole, without opening it for writing (see {@link Journal.read}). */
export interface JournalContent {
  jobsHash: string;
  /** Committed records, then the kept ones of the tail, in order. */
  records: JournalRecord[];
  /** Length of the file up to the last committed record. */
  committed: number;
  tail: JournalTail | undefined;
}

/** An open journal. */
export class Journal {
  readonly path: string;
  /** True when the file was missing or empty (this run starts it). */
  readonly fresh: boolean;
  /** What was dropped past the committed length (a run killed mid-write), if anything. */
  readonly tail: JournalTail | undefined;
  /** What a repair of the damaged journal kept and lost, when this open repaired it. */
  readonly repaired: JournalRepair | undefined;
  readonly #file: JournalFile;
  readonly #lock: JournalLock;
  readonly #jobsHash: string;
  readonly #jobs: Map<string, RecordedJob>;
  #end: number;
  #queue: Array<{ line: string; resolve: () => void; reject: (error: unknown) => void }> = [];
  #flushing: Promise<void> | undefined;
  #failure: JournalError | undefined;
  #closed = false;

  private constructor(
    path: string,
    parts: { file: JournalFile; lock: JournalLock; jobsHash: string; jobs: Map<string, RecordedJob>; end: number; fresh: boolean; tail: JournalTail | undefined; repaired: JournalRepair | undefined },
  ) {
    this.path = path;
    this.#file = parts.file;
    this.#lock = parts.lock;
    this.#jobsHash = parts.jobsHash;
    this.#jobs = parts.jobs;
    this.#end = parts.end;
    this.fresh = parts.fresh;
    this.tail = parts.tail;
    this.repaired = parts.repaired;
  }

  /**
   * Read the journal at `path` without locking or changing it. Resolves with `undefined`
   * when the file is missing, empty, or holds only a torn first write (nothing was ever
   * committed); rejects with `JournalError` when it is damaged or not a journal.
   */
  static async read(path: string): Promise<JournalContent | undefined> {
    let bytes: Buffer;
    try {
      bytes = await readFile(path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw new JournalError(path, 'unreadable', `Cannot read the batch journal ${path}: ${(error as Error).message}`, { cause: error });
    }
    return parse(path, bytes);
  }

  /**
   * Take the journal's lock, then open (or create) it for the jobs whose hash is
   * `jobsHash`. Rejects with `JournalLockedError` when another batch holds it, and with
   * `JournalError` when it belongs to other jobs (`'mismatch'`), is damaged or is not a
   * journal; the lock is released again then. With `options.repair`, a damaged journal is
   * repaired first (see {@link Journal.repaired}).
   */
  static async open(path: string, jobsHash: string, options: JournalOpenOptions = {}): Promise<Journal> {
    const lock = await lockJournal(path).catch((error: unknown) => {
      if (error instanceof JournalError) throw error;
      throw new JournalError(path, 'unreadable', `Cannot lock the batch journal ${path}: ${(error as Error).message}`, { cause: error });
    });
    try {
      let repaired: JournalRepair | undefined;
      const content = await Journal.read(path).catch(async (error: unknown) => {
        if (!(error instanceof JournalError && error.reason === 'damaged' && options.repair)) throw error;
        repaired = await repairJournal(path, jobsHash, options.repair.jobIds);
        return Journal.read(path);
      });
      if (content && content.jobsHash !== jobsHash) {
        throw new JournalError(
          path,
          'mismatch',
          `The journal ${path} belongs to a different jobs file (jobs hash ${content.jobsHash.slice(0, 12)}…, these jobs ${jobsHash.slice(0, 12)}…). ` +
            'Use the jobs file it was made for, or another output directory / journal path; delete it only if its tasks may be paid again.',
        );
      }
      const jobs = recordedJobs(content?.records ?? []);
      const file = await (options.openFile ?? openForWriting)(path).catch((error: unknown) => {
        throw new JournalError(path, 'unreadable', `Cannot open the batch journal ${path}: ${(error as Error).message}`, { cause: error });
      });
      const journal = new Journal(path, { file, lock, jobsHash, jobs, end: content ? content.committed : 0, fresh: content === undefined, tail: content?.tail, repaired });
      if (content === undefined) {
        // A new journal (or a blank one, or a torn first write): the header alone, committed.
        await file
          .truncate(0)
          .then(() => journal.#commit([], 0))
          .catch((error: unknown) => journal.#fail(error));
      } else if (content.tail) {
        // Cut the uncommitted tail, and commit the records of it that were kept.
        const kept = content.records.slice(content.records.length - content.tail.kept).map(lineOf);
        await file
          .truncate(content.committed)
          .then(() => journal.#commit(kept, content.committed))
          .catch((error: unknown) => journal.#fail(error));
      }
      if (journal.#failure) {
        await journal.close();
        throw journal.#failure;
      }
      return journal;
    } catch (error) {
      await lock.release();
      throw error;
    }
  }

  /** What earlier runs recorded of job `id`. */
  recall(id: string): RecordedJob {
    return this.#jobs.get(id) ?? { unconfirmed: false, known: false };
  }

  /**
   * Append `record` and fsync. Resolves once it is on disk (and counted in the header's
   * committed length); rejects with `JournalError` (`reason: 'write'`) when the write or
   * fsync fails, and from then on every append rejects the same way.
   */
  append(record: JournalRecord): Promise<void> {
    if (this.#failure) return Promise.reject(this.#failure);
    if (this.#closed) return Promise.reject(new JournalError(this.path, 'write', `The batch journal ${this.path} is closed`));
    applyRecord(this.#jobs, record);
    return new Promise<void>((resolve, reject) => {
      this.#queue.push({ line: lineOf(record), resolve, reject });
      this.#flushing ??= this.#flush();
    });
  }

  async #flush(): Promise<void> {
    while (this.#queue.length > 0) {
      const group = this.#queue;
      this.#queue = [];
      try {
        if (this.#failure) throw this.#failure;
        await this.#commit(
          group.map((entry) => entry.line),
          this.#end,
        );
        for (const entry of group) entry.resolve();
      } catch (error) {
        this.#fail(error);
        for (const entry of group) entry.reject(this.#failure);
      }
    }
    this.#flushing = undefined;
  }

  /**
   * Write `lines` at `at` and fsync them, then the header with the new committed length,
   * and fsync it. The order is the point: a power cut between the two syncs leaves records
   * past the old committed length (an uncommitted tail, as after `kill -9`), never a header
   * that counts records the disk did not get.
   */
  async #commit(lines: string[], at: number): Promise<void> {
    let position = at;
    if (at === 0) {
      // The first write of a new file: the header, then the lines.
      position = await this.#writeAll(headerLine(this.#jobsHash, 0), 0);
    }
    const bytes = Buffer.from(lines.join(''));
    const end = await this.#writeAll(bytes, position);
    await this.#file.datasync();
    await this.#writeAll(headerLine(this.#jobsHash, end), 0);
    await this.#file.datasync();
    this.#end = end;
  }

  async #writeAll(bytes: Uint8Array, position: number): Promise<number> {
    let offset = 0;
    while (offset < bytes.byteLength) {
      offset += (await this.#file.write(bytes, offset, bytes.byteLength - offset, position + offset)).bytesWritten;
    }
    return position + bytes.byteLength;
  }

  #fail(error: unknown): void {
    this.#failure ??=
      error instanceof JournalError
        ? error
        : new JournalError(
            this.path,
            'write',
            `Writing the batch journal ${this.path} failed${(error as NodeJS.ErrnoException).code === 'ENOSPC' ? ' (disk full)' : ''}: ${(error as Error).message}. ` +
              'The batch stopped; the records committed before are intact, and running it again resumes from them.',
            { cause: error },
          );
  }

  /** Wait for pending records, close the file and release the lock. Safe to call twice. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    while (this.#flushing) await this.#flushing;
    await this.#file.close().catch(() => undefined);
    await this.#lock.release();
  }

  /**
   * Close the journal and remove its file: only for a journal this run created and
   * that holds nothing but its header (a run refused before any job).
   */
  async discard(): Promise<void> {
    const empty = this.fresh && this.#jobs.size === 0;
    const path = this.path;
    await this.close();
    if (empty) await unlink(path).catch(() => undefined);
  }
}

async function openForWriting(path: string): Promise<JournalFile> {
  try {
    return await open(path, 'r+');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    return open(path, 'w+') as Promise<FileHandle>;
  }
}


function damaged(path: string, why: string): JournalError {
  return new JournalError(
    path,
    'damaged',
    `The batch journal ${path} is damaged: ${why}. Nothing was sent. ` +
      'Run again with repair: true (rxvoice batch --repair): it keeps every record that verifies, reports the jobs whose records may be lost as unconfirmed ' +
      '(never created again unless you allow it with allowRepay: true / --allow-repay), and goes on with the rest. Keep the journal where it is: without it, jobs it sent could be paid again.',
  );
}

function parse(path: string, bytes: Buffer): JournalContent | undefined {
  const text = bytes.toString('utf8');
  if (text.trim() === '') return undefined;
  const firstEnd = bytes.indexOf(0x0a);
  // No whole first line: the header (the first write ever) was torn; nothing was committed.
  if (firstEnd < 0) return undefined;
  const headerValue = verified(bytes.subarray(0, firstEnd).toString('utf8'));
  const header = JournalHeaderSchema.safeParse(headerValue);
  if (!header.success) {
    const old = /^\{"type":"batch","version":1\b/.test(text);
    throw new JournalError(
      path,
      'unreadable',
      old
        ? `${path} is a journal of an older rxvoice (format 1, without checksums); finish that batch with the version that wrote it, or move the journal away.`
        : `${path} is not a batch journal, or its header is damaged (its first line is not a batch record with a valid checksum)`,
    );
  }
  // Never less than the header itself (a header is committed with the file's first fsync).
  const committed = Math.max(Number(header.data.committed), firstEnd + 1);
  if (bytes.byteLength < committed) {
    throw damaged(path, `it holds ${bytes.byteLength} bytes, but ${committed} were committed to it (it was cut)`);
  }
  const records: JournalRecord[] = [];
  let position = firstEnd + 1;
  let line = 2;
  while (position < committed) {
    const end = bytes.indexOf(0x0a, position);
    if (end < 0 || end >= committed) throw damaged(path, `line ${line} crosses the committed length ${committed}`);
    const parsed = JournalRecordSchema.safeParse(verified(bytes.subarray(position, end).toString('utf8')));
    if (!parsed.success) throw damaged(path, `line ${line} fails its checksum or is not a journal record`);
    records.push(parsed.data);
    position = end + 1;
    line++;
  }
  // The uncommitted tail: records of a run killed before their fsync.
  let tail: JournalTail | undefined;
  if (bytes.byteLength > committed) {
    tail = { droppedBytes: 0, droppedRecords: [], torn: false, kept: 0 };
    let keptBytes = 0;
    while (position < bytes.byteLength) {
      const end = bytes.indexOf(0x0a, position);
      const parsed = end < 0 ? undefined : JournalRecordSchema.safeParse(verified(bytes.subarray(position, end).toString('utf8')));
      if (!parsed?.success) {
        tail.torn = true;
        break;
      }
      const record = parsed.data;
      if (record.type !== 'intent' && record.type !== 'sent') {
        records.push(record);
        tail.kept++;
        keptBytes += end + 1 - position;
      } else tail.droppedRecords.push({ type: record.type, id: record.id });
      position = end + 1;
    }
    tail.droppedBytes = bytes.byteLength - committed - keptBytes;
  }
  return { jobsHash: header.data.jobs_hash, records, committed, tail };
}
