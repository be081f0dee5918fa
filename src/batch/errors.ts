/**
 * Errors of the batch runner: the journal (a journal of other jobs, a write that failed)
 * and the queue (Redis unreachable, BullMQ missing).
 */
import { ConnectionError, RxVoiceError, type RxVoiceErrorOptions } from '../core/errors.js';

/**
 * The journal cannot be used: it belongs to another jobs file (`reason: 'mismatch'`),
 * cannot be read (`'unreadable'`), or a write or fsync failed, e.g. the disk is full
 * (`'write'`). Records written before the failure stay valid. Not retryable.
 */
export class JournalError extends RxVoiceError {
  override name = 'JournalError';
  readonly path: string;
  readonly reason: 'mismatch' | 'unreadable' | 'write';
  constructor(path: string, reason: 'mismatch' | 'unreadable' | 'write', message: string, options: RxVoiceErrorOptions = {}) {
    super('journal', message, options);
    this.path = path;
    this.reason = reason;
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
 * An earlier run sent this job's creation call but died before recording the answer:
 * the task may exist (and be paid), and nothing in the service's contract can find it.
 * Reported instead of creating the job again, unless `unconfirmed: 'recreate'`.
 */
export class UnconfirmedTaskError extends RxVoiceError {
  override name = 'UnconfirmedTaskError';
  readonly jobId: string;
  constructor(jobId: string) {
    super(
      'journal',
      `Job ${jobId}: an earlier run sent its creation call but stopped before recording the answer, so its task may exist and be paid. ` +
        "Not created again; to create it anyway run with unconfirmed: 'recreate' (rxvoice batch --unconfirmed recreate).",
    );
    this.jobId = jobId;
  }
}
