/**
 * What a batch reports: one event per step of each job, and overall progress after
 * every job that ends.
 */
import type { RxVoiceError } from '../core/errors.js';
import type { BatchJobKind } from './jobs.js';

/** Fields every job event carries. */
export interface JobEventBase {
  /** The job's `id`. */
  id: string;
  kind: BatchJobKind;
}

/** The creation call answered and its `task_id` is recorded (journal or queue). */
export interface JobCreatedEvent extends JobEventBase {
  type: 'created';
  task_id: string;
  /** 0 for the first try; retries of the job count up. */
  attempt: number;
  /**
   * True when an earlier run sent a creation call for this job but died before its
   * answer was recorded: that task may exist too (and be paid), see the README.
   */
  recreated: boolean;
}

/** A task recorded by an earlier run (or another worker) is being resumed, not created again. */
export interface JobResumedEvent extends JobEventBase {
  type: 'resumed';
  task_id: string;
}

/** A status call answered PENDING. */
export interface JobPendingEvent extends JobEventBase {
  type: 'pending';
  task_id: string;
  polls: number;
  elapsedMs: number;
}

/** The result is in its output file (written atomically). */
export interface JobDoneEvent extends JobEventBase {
  type: 'done';
  /** The task; undefined when the job was skipped on its output's word alone (`trustOutputs`). */
  task_id: string | undefined;
  /** Absolute path of the output file. */
  output: string;
  /** True when an earlier run had already finished the job (nothing was sent). */
  skipped: boolean;
}

/** A retryable failure; the job is tried again after `delayMs`. */
export interface JobRetryingEvent extends JobEventBase {
  type: 'retrying';
  /** The try that failed (0-based). */
  attempt: number;
  delayMs: number;
  error: RxVoiceError;
  /** The task that will be resumed, when the failure was not the task's own end. */
  task_id: string | undefined;
}

/** The job failed for good (a failure that is not retryable, or retries used up). */
export interface JobFailedEvent extends JobEventBase {
  type: 'failed';
  error: RxVoiceError;
  task_id: string | undefined;
}

/** Any event of one job. */
export type JobEvent = JobCreatedEvent | JobResumedEvent | JobPendingEvent | JobDoneEvent | JobRetryingEvent | JobFailedEvent;

/** Counts by kind of job. */
export interface KindCounts {
  total: number;
  done: number;
  failed: number;
  skipped: number;
}

/**
 * Overall progress, after each job that ends (and once at the start). Credits are not
 * part of it: the task endpoints of the service do not report what a task cost.
 */
export interface BatchProgressEvent {
  type: 'progress';
  total: number;
  /** Jobs finished in this run. */
  done: number;
  failed: number;
  /** Jobs an earlier run had finished. */
  skipped: number;
  /** Tasks created in this run. */
  created: number;
  /** Tasks of earlier runs resumed. */
  resumed: number;
  /** Jobs created again after an unconfirmed creation of an earlier run. */
  recreated: number;
  /** Since the batch started, ms. */
  elapsedMs: number;
  /** Jobs finished in this run per second. */
  jobsPerSecond: number;
  /** Estimated time to the end, ms (undefined until a job finished). */
  etaMs: number | undefined;
  byKind: Partial<Record<BatchJobKind, KindCounts>>;
}

/**
 * The journal was opened after a run that died while writing it (the normal trace of
 * `kill -9`): what it held past its committed length was dropped (see `JournalTail`).
 * Emitted once, first, when it happens; nothing dropped had been relied on.
 */
export interface JournalTailEvent {
  type: 'journal-tail';
  /** The journal file. */
  path: string;
  /** Bytes dropped. */
  droppedBytes: number;
  /** Whole records dropped (`intent` and `sent` records of calls whose last byte never went). */
  droppedRecords: Array<{ type: string; id: string }>;
  /** Whether a torn record was dropped. */
  torn: boolean;
}

/**
 * The damaged journal was repaired (`repair: true`): what was kept, what was lost, and
 * the jobs marked lost (they fail with `UnconfirmedTaskError` unless `allowRepay`).
 * Emitted once, first.
 */
export interface JournalRepairedEvent {
  type: 'journal-repaired';
  /** The journal file (now repaired). */
  path: string;
  /** Where the damaged bytes were kept. */
  damagedCopy: string;
  /** Records that verified and were kept. */
  keptRecords: number;
  /** Committed lines that failed their checksum or schema. */
  lostLines: number;
  /** Committed bytes missing from the file. */
  missingBytes: number;
  /** Jobs whose records may be lost: they may have been sent. */
  lostJobs: string[];
}

/** An output `trustOutputs` did not take as a finished job, and why. */
export interface UntrustedOutput {
  id: string;
  /** The output path, relative to `out`. */
  output: string;
  /** What is wrong with it (`is empty`, `is an HTML page`, `is cut short (...)`, ...). */
  problem: string;
}

/**
 * `trustOutputs` found outputs that are not whole (half-written, empty, an HTML page):
 * their jobs were not skipped. Emitted once, first.
 */
export interface OutputsUntrustedEvent {
  type: 'outputs-untrusted';
  outputs: UntrustedOutput[];
}

/** Everything `batch()` emits. */
export type BatchEvent = JobEvent | BatchProgressEvent | JournalTailEvent | JournalRepairedEvent | OutputsUntrustedEvent;
