/**
 * The journal of a batch: an append-only JSON Lines file, fsynced before each job goes
 * on, so that a restarted batch resumes every task it created and pays for none twice.
 *
 * Records (one JSON object a line):
 * - `{"type":"batch","version":1,"jobs_hash":H}`: the first line; ties the journal to its jobs;
 * - `{"type":"intent","id":J}`: the creation call of job J is about to be sent;
 * - `{"type":"task","id":J,"task_id":T}`: the service answered the creation call with T;
 * - `{"type":"abandoned","id":J,"task_id":T,"code":C}`: T ended in a failed status, so a
 *   later run creates a new task instead of resuming T;
 * - `{"type":"done","id":J,"task_id":T,"output":P}`: the result is in the output file P.
 *
 * Concurrent records are written together (one write, one fsync: group commit). A line
 * torn by a crash or a full disk is dropped when the journal is opened again; the
 * records before it are intact, since each was fsynced before anyone relied on it.
 */
import { open, readFile, truncate, type FileHandle } from 'node:fs/promises';
import { JournalError } from './errors.js';

/** One record of the journal. */
export type JournalRecord =
  | { type: 'batch'; version: 1; jobs_hash: string }
  | { type: 'intent'; id: string }
  | { type: 'task'; id: string; task_id: string }
  | { type: 'abandoned'; id: string; task_id: string; code: string }
  | { type: 'done'; id: string; task_id: string; output: string };

/** What earlier runs recorded of one job. */
export interface RecordedJob {
  /** The live task to resume (none when never created, or abandoned). */
  taskId?: string;
  /** The output written, when the job finished. */
  output?: string;
  /**
   * A creation call was sent but its answer never recorded (the process died in
   * between): the task may exist on the service, and nothing can tell.
   */
  unconfirmed: boolean;
}

/** The file operations the journal needs (a `FileHandle` opened for appending). */
export interface JournalFile {
  write(bytes: Uint8Array): Promise<{ bytesWritten: number }>;
  datasync(): Promise<void>;
  close(): Promise<void>;
}

/** Options of {@link Journal.open}. */
export interface JournalOpenOptions {
  /** Opens the file for appending (default: `fs.promises.open(path, 'a')`); tests inject faults here. */
  openFile?: (path: string) => Promise<JournalFile>;
}

/** An open journal. */
export class Journal {
  readonly path: string;
  readonly #file: JournalFile;
  readonly #jobs: Map<string, RecordedJob>;
  #queue: Array<{ line: string; resolve: () => void; reject: (error: unknown) => void }> = [];
  #flushing = false;
  #failure: JournalError | undefined;
  #closed = false;

  private constructor(path: string, file: JournalFile, jobs: Map<string, RecordedJob>) {
    this.path = path;
    this.#file = file;
    this.#jobs = jobs;
  }

  /**
   * Open (or create) the journal at `path` for the jobs whose hash is `jobsHash`.
   * Rejects with `JournalError` (`reason: 'mismatch'`) when it belongs to other jobs.
   */
  static async open(path: string, jobsHash: string, options: JournalOpenOptions = {}): Promise<Journal> {
    let text: string | undefined;
    try {
      text = await readFile(path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
        throw new JournalError(path, 'unreadable', `Cannot read the batch journal ${path}: ${(error as Error).message}`, { cause: error });
      }
    }
    const jobs = new Map<string, RecordedJob>();
    let fresh = text === undefined || text.trim() === '';
    if (!fresh && text !== undefined) {
      const complete = text.lastIndexOf('\n') + 1;
      // A torn last line (crash or full disk mid-write) was never relied on: drop it.
      if (complete < text.length) await truncate(path, Buffer.byteLength(text.slice(0, complete)));
      const records = text.slice(0, complete).split('\n').filter((line) => line !== '').map((line, i) => parseRecord(path, line, i + 1));
      const header = records[0];
      if (header === undefined) fresh = true;
      else if (header.type !== 'batch') {
        throw new JournalError(path, 'unreadable', `${path} is not a batch journal (its first line is not a batch record)`);
      } else if (header.jobs_hash !== jobsHash) {
        throw new JournalError(
          path,
          'mismatch',
          `The journal ${path} belongs to a different jobs file (jobs hash ${header.jobs_hash.slice(0, 12)}…, these jobs ${jobsHash.slice(0, 12)}…). ` +
            'Use the jobs file it was made for, or another output directory / journal path; delete it only if its tasks may be paid again.',
        );
      }
      for (const record of records.slice(1)) apply(jobs, record);
    }
    const file = await (options.openFile ?? ((p: string) => open(p, 'a') as Promise<FileHandle>))(path).catch((error: unknown) => {
      throw new JournalError(path, 'unreadable', `Cannot open the batch journal ${path}: ${(error as Error).message}`, { cause: error });
    });
    const journal = new Journal(path, file, jobs);
    if (fresh) await journal.append({ type: 'batch', version: 1, jobs_hash: jobsHash });
    return journal;
  }

  /** What earlier runs recorded of job `id`. */
  recall(id: string): RecordedJob {
    return this.#jobs.get(id) ?? { unconfirmed: false };
  }

  /**
   * Append `record` and fsync. Resolves once it is on disk; rejects with `JournalError`
   * (`reason: 'write'`) when the write or fsync fails, and from then on every append
   * rejects the same way.
   */
  append(record: JournalRecord): Promise<void> {
    if (this.#failure) return Promise.reject(this.#failure);
    if (this.#closed) return Promise.reject(new JournalError(this.path, 'write', `The batch journal ${this.path} is closed`));
    if (record.type !== 'batch') apply(this.#jobs, record);
    return new Promise<void>((resolve, reject) => {
      this.#queue.push({ line: `${JSON.stringify(record)}\n`, resolve, reject });
      if (!this.#flushing) void this.#flush();
    });
  }

  async #flush(): Promise<void> {
    this.#flushing = true;
    while (this.#queue.length > 0) {
      const group = this.#queue;
      this.#queue = [];
      try {
        if (this.#failure) throw this.#failure;
        const bytes = Buffer.from(group.map((entry) => entry.line).join(''));
        let offset = 0;
        while (offset < bytes.byteLength) offset += (await this.#file.write(bytes.subarray(offset))).bytesWritten;
        await this.#file.datasync();
        for (const entry of group) entry.resolve();
      } catch (error) {
        this.#failure ??=
          error instanceof JournalError
            ? error
            : new JournalError(
                this.path,
                'write',
                `Writing the batch journal ${this.path} failed${(error as NodeJS.ErrnoException).code === 'ENOSPC' ? ' (disk full)' : ''}: ${(error as Error).message}. ` +
                  'The batch stopped; the records written before are intact, and running it again resumes from them.',
                { cause: error },
              );
        for (const entry of group) entry.reject(this.#failure);
      }
    }
    this.#flushing = false;
  }

  /** Wait for pending records, then close the file. Safe to call twice. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    while (this.#flushing) await new Promise((resolve) => setImmediate(resolve));
    await this.#file.close().catch(() => undefined);
  }
}

function parseRecord(path: string, line: string, number: number): JournalRecord {
  try {
    const value = JSON.parse(line) as JournalRecord;
    if (value && typeof value === 'object' && typeof value.type === 'string') return value;
  } catch {
    // reported below
  }
  throw new JournalError(path, 'unreadable', `${path} line ${number} is not a journal record`);
}

function apply(jobs: Map<string, RecordedJob>, record: JournalRecord): void {
  if (record.type === 'batch') return;
  switch (record.type) {
    case 'intent':
      jobs.set(record.id, { unconfirmed: true });
      break;
    case 'task':
      jobs.set(record.id, { taskId: record.task_id, unconfirmed: false });
      break;
    case 'abandoned':
      jobs.set(record.id, { unconfirmed: false });
      break;
    case 'done':
      jobs.set(record.id, { taskId: record.task_id, output: record.output, unconfirmed: false });
      break;
  }
}
