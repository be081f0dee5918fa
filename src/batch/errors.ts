/**
 * Errors of the batch runner: the journal (a journal of other jobs, a write that failed)
 * and the queue (Redis unreachable, BullMQ missing).
 */
import { ConnectionError, RxVoiceError, type RxVoiceErrorOptions } from '../core/errors.js';

/** Why a journal cannot be used; see {@link JournalError}. */
export type JournalErrorReason = 'mismatch' | 'unreadable' | 'damaged' | 'outputs' | 'locked' | 'write';

/**
 * The journal cannot be used, and nothing was sent because of it: it belongs to another
 * jobs file (`reason: 'mismatch'`), cannot be read or is not a journal (`'unreadable'`),
 * holds a record that fails its checksum or schema, or is shorter than what was
 * committed to it (`'damaged'`), is missing or empty while outputs of its jobs exist
 * (`'outputs'`: run with `trustOutputs` / `--trust-outputs` to skip those jobs, or
 * start over), is held by another batch (`'locked'`, a {@link JournalLockedError}), or a
 * write or fsync failed, e.g. the disk is full (`'write'`; records written before the
 * failure stay valid). Not retryable.
 */
export class JournalError extends RxVoiceError {
  override name = 'JournalError';
  readonly path: string;
  readonly reason: JournalErrorReason;
  constructor(path: string, reason: JournalErrorReason, message: string, options: RxVoiceErrorOptions = {}) {
    super('journal', message, options);
    this.path = path;
    this.reason = reason;
  }
}

/**
 * Another batch holds the journal (its lock file `<journal>.lock` names a live process,
 * or a process of another host, which cannot be checked from here). Thrown at once,
 * before anything is sent; `pid` and `host` name the holder (undefined when the lock
 * file cannot be read).
 */
export class JournalLockedError extends JournalError {
  override name = 'JournalLockedError';
  /** The lock file. */
  readonly lockPath: string;
  /** The holder's process id. */
  readonly pid: number | undefined;
  /** The holder's host name. */
  readonly host: string | undefined;
  constructor(journalPath: string, lockPath: string, holder: { pid: number; host: string; since: string } | 'unreadable') {
    const who =
      holder === 'unreadable'
        ? `a lock file that cannot be read (${lockPath})`
        : `process ${holder.pid} on ${holder.host}${holder.since ? ` since ${holder.since}` : ''}`;
    super(
      journalPath,
      'locked',
      `The batch journal ${journalPath} is in use by ${who}: one batch per journal at a time. ` +
        `Wait for it to end; if no such process runs any more (another host, or a reused pid), delete ${lockPath}.`,
    );
    this.lockPath = lockPath;
    this.pid = holder === 'unreadable' ? undefined : holder.pid;
    this.host = holder === 'unreadable' ? undefined : holder.host;
  }
}

/** The queue cannot be used: BullMQ is not installed, or the queue's address is invalid. */
export class QueueError extends RxVoiceError {
  override name = 'QueueError';
  constructor(message: string, options: RxVoiceErrorOptions = {}) {
    super('queue', message, options);
  }
}

/**
 * The queue (`enqueueBatch`, `runWorker`, `rxvoice worker`, `rxvoice batch --queue`) needs
 * the optional peer dependency `packageName` (`bullmq`, or its Redis client `ioredis`),
 * which is not installed: `npm install bullmq ioredis`. Delivered as the queue's error on
 * subscribe, before Redis is contacted. `batch()` and the journal need neither package.
 * A `QueueError` (code `queue`), not retryable.
 */
export class QueueUnavailableError extends QueueError {
  override name = 'QueueUnavailableError';
  /** The package to install. */
  readonly packageName: string;
  /**
   * @param packageName The missing package.
   * @param options `cause`: the failed import.
   */
  constructor(packageName: string, options: RxVoiceErrorOptions = {}) {
    super(`The queue needs the optional package "${packageName}", which is not installed: npm install ${packageName}`, options);
    this.packageName = packageName;
  }
}

/** Redis did not answer within the start timeout (code `connection`, exit code 6 in the CLI). */
export class QueueConnectionError extends ConnectionError {
  override name = 'QueueConnectionError';
  constructor(message: string, options: RxVoiceErrorOptions = {}) {
    super(message, { retryable: false, ...options });
  }
}

/**
 * An earlier run sent this job's creation call (its request was complete on the wire)
 * but died before recording the answer: the task may exist (and be paid), and nothing in
 * the service's contract can find it. Reported instead of creating the job again, unless
 * `unconfirmed: 'recreate'`. A run killed before its request was complete never gets
 * this: the job is created again with no risk.
 *
 * `lost: true`: a repair of the damaged journal could not account for the job (its
 * records may be among those lost); created again only with `allowRepay: true`.
 */
export class UnconfirmedTaskError extends RxVoiceError {
  override name = 'UnconfirmedTaskError';
  readonly jobId: string;
  /** The job was marked lost by a journal repair (rather than sent without an answer). */
  readonly lost: boolean;
  constructor(jobId: string, options: { lost?: boolean } = {}) {
    super(
      'journal',
      options.lost === true
        ? `Job ${jobId}: the damaged journal was repaired, and the records that would tell whether this job was sent are lost, so its task may exist and be paid. ` +
            'Not created again; to create it anyway run with allowRepay: true (rxvoice batch --allow-repay).'
        : `Job ${jobId}: an earlier run sent its creation call but stopped before recording the answer, so its task may exist and be paid. ` +
            "Not created again; to create it anyway run with unconfirmed: 'recreate' (rxvoice batch --unconfirmed recreate).",
    );
    this.jobId = jobId;
    this.lost = options.lost === true;
  }
}
