/**
 * rxvoice/batch: resumable batch jobs against the service's task endpoints, on one
 * machine (a journal file beside the outputs) or on many (a BullMQ queue on Redis).
 * BullMQ and ioredis are optional peer dependencies, loaded only when a queue is used:
 * `batch()` and the journal work without them, and the queue without them errors with
 * a `QueueUnavailableError` naming the package to install.
 *
 * @example
 * const events$ = batch(jobs, { client: createClient(), out: 'out' });
 */
export { batch, BatchOptionsSchema, DEFAULT_JOURNAL_NAME, validateJobs, type BatchOptions } from './batch.js';
export {
  BatchJobSchema,
  DubbingJobSchema,
  JobIdSchema,
  SoundJobSchema,
  SpeechJobSchema,
  SubtitlesJobSchema,
  TranscriptionJobSchema,
  TranslationJobSchema,
  jobsHash,
  outputPathOf,
  parseJobLines,
  type BatchJob,
  type BatchJobInput,
  type BatchJobKind,
  type JobLineError,
  type ParsedJobs,
} from './jobs.js';
export type {
  BatchEvent,
  BatchProgressEvent,
  JobEvent,
  JobEventBase,
  JobCreatedEvent,
  JobResumedEvent,
  JobPendingEvent,
  JobDoneEvent,
  JobRetryingEvent,
  JobFailedEvent,
  JournalTailEvent,
  JournalRepairedEvent,
  OutputsUntrustedEvent,
  UntrustedOutput,
  KindCounts,
} from './events.js';
export { JournalError, JournalLockedError, QueueConnectionError, QueueError, QueueUnavailableError, UnconfirmedTaskError } from './errors.js';
export { Journal, JournalRecordSchema, JOURNAL_VERSION, type JournalContent, type JournalOpenOptions, type JournalRecord, type JournalTail, type RecordedJob } from './journal.js';
export type { JournalRepair } from './journal-repair.js';
export type { JournalErrorReason } from './errors.js';
export { isRetryable } from './run-job.js';
export {
  DEFAULT_CONNECT_TIMEOUT_MS,
  DEFAULT_QUEUE_NAME,
  enqueueBatch,
  probeRedis,
  redisConnection,
  runWorker,
  type QueueJobData,
  type QueueOptions,
  type WorkerOptions,
} from './queue.js';
