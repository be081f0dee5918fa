/**
 * One job, from start to output, the same on one machine (journal) and on a queue
 * worker (the job's record in the queue): create the task unless one is recorded,
 * record its `task_id` before waiting, resume it, write the output atomically, record
 * that it is done. Failures are retried only when retrying cannot pay twice.
 *
 * A creation call is recorded three times: `intent` before it, `sent` while its request
 * waits for its last byte (the transport holds it until the record is on disk, see
 * `RequestSpec.lastByteGate`), and `task` (or `answered`, when the service refused it with a
 * 4xx) once answered. So a run killed before `sent` was never received and is created
 * again with no risk; only `sent` without an answer is unconfirmed.
 */
import { access, mkdir } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { filter, first, lastValueFrom, map, tap, timer, type Observable, type SchedulerLike } from 'rxjs';
import type { RxVoiceClient } from '../client/client.js';
import { withSignal, type GatedCallOptions } from '../client/request.js';
import { shouldRetry } from '../client/retry-policy.js';
import type { TaskEvent } from '../client/tasks.js';
import { AbortError, ApiError, AuthenticationError, RateLimitError, RedirectError, RxVoiceError, TaskError, ValidationError } from '../core/errors.js';
import { AtomicFile } from '../sinks/atomicFile.js';
import { toSinkError } from '../sinks/errors.js';
import { JournalError, UnconfirmedTaskError } from './errors.js';
import type { JobEvent } from './events.js';
import { outputPathOf, type BatchJob } from './jobs.js';
import type { RecordedJob } from './journal.js';

/** Where a job's progress is recorded durably: the journal, or the job's record in the queue. */
export interface JobLedger {
  recall(id: string): RecordedJob | Promise<RecordedJob>;
  /** The creation call is about to be sent (not sent yet: a kill now risks nothing). */
  intent(id: string): Promise<void>;
  /** The creation call's request is complete but for its last byte, held until this resolves. */
  sent(id: string): Promise<void>;
  /** The service answered the creation call with an error (4xx): no task exists. */
  answered(id: string, code: string): Promise<void>;
  task(id: string, taskId: string): Promise<void>;
  abandoned(id: string, taskId: string, code: string): Promise<void>;
  done(id: string, taskId: string, output: string): Promise<void>;
}

/** What a job runs with. */
export interface JobContext {
  client: RxVoiceClient;
  outDir: string;
  ledger: JobLedger;
  /** Retries after the first try. */
  retries: number;
  /** Delay before the first retry, ms; doubles each retry. */
  retryDelayMs: number;
  /** What to do with a job whose earlier creation call is unconfirmed. */
  unconfirmed: 'recreate' | 'fail';
  /** Whether a job a journal repair marked lost is created again (it may be paid twice). */
  allowRepay?: boolean;
  scheduler: SchedulerLike;
  /** Waits for the rate limiter before a creation call (rejects with `AbortError` on abort). */
  beforeCreate: (signal: AbortSignal) => Promise<void>;
  signal: AbortSignal;
  emit: (event: JobEvent) => void;
}

/** How a job ended. */
export type JobOutcome = 'done' | 'skipped' | 'failed';

/**
 * Run `job` to its end. Resolves with the outcome (failures of the job are events);
 * rejects only with errors that stop the whole batch: the journal failed, the key was
 * refused, or the run was aborted.
 */
export async function runJob(job: BatchJob, context: JobContext): Promise<JobOutcome> {
  const { client, ledger, signal, emit } = context;
  const base = { id: job.id, kind: job.kind };
  const relative = outputPathOf(job);
  const output = resolve(context.outDir, relative);
  const recorded = await ledger.recall(job.id);
  // The output exists and this ledger made it (the rename is atomic, so it is complete):
  // either marked done, or the process died between the rename and the record.
  if ((recorded.output !== undefined || recorded.taskId !== undefined) && (await exists(output))) {
    const taskId = recorded.taskId;
    if (recorded.output === undefined && taskId !== undefined) await ledger.done(job.id, taskId, relative);
    emit({ type: 'done', ...base, task_id: taskId, output, skipped: true });
    return 'skipped';
  }
  let taskId = recorded.taskId;
  let recreated = recorded.unconfirmed;
  // Lost to a journal repair: only `allowRepay` creates it again; sent without an answer: `unconfirmed`.
  const refuse = recorded.lost === true ? !context.allowRepay : context.unconfirmed === 'fail';
  if (taskId === undefined && recreated && refuse) {
    emit({ type: 'failed', ...base, error: new UnconfirmedTaskError(job.id, { lost: recorded.lost === true }), task_id: undefined });
    return 'failed';
  }
  if (taskId !== undefined) emit({ type: 'resumed', ...base, task_id: taskId });
  for (let attempt = 0; ; attempt++) {
    let phase: 'create' | 'task' = 'task';
    try {
      if (taskId === undefined) {
        phase = 'create';
        await context.beforeCreate(signal);
        const created = await createTask(client, job, ledger, signal);
        await ledger.task(job.id, created);
        taskId = created;
        phase = 'task';
        emit({ type: 'created', ...base, task_id: created, attempt, recreated });
        recreated = false;
      }
      const id = taskId;
      const result = await lastValueFrom(
        client.tasks.resume(job.kind, id, { signal }).pipe(
          tap((event) => {
            if (event.type === 'pending') emit({ type: 'pending', ...base, task_id: id, polls: event.polls, elapsedMs: event.elapsedMs });
          }),
          filter((event) => event.type === 'result'),
          map((event) => event.result),
        ),
      );
      await writeOutput(output, job, result);
      await ledger.done(job.id, id, relative);
      emit({ type: 'done', ...base, task_id: id, output, skipped: false });
      return 'done';
    } catch (thrown) {
      const error = asRxVoiceError(thrown, output);
      if (error instanceof JournalError || error instanceof AuthenticationError || error instanceof AbortError || signal.aborted) throw error;
      if (error instanceof TaskError && taskId !== undefined) {
        // The task ended (ERROR, TIMEOUT, PAYMENT_REQUIRED): never resume it again.
        await ledger.abandoned(job.id, taskId, error.code);
        taskId = undefined;
      }
      if (attempt < context.retries && isRetryable(error, phase)) {
        const delayMs = context.retryDelayMs * 2 ** attempt;
        emit({ type: 'retrying', ...base, attempt, delayMs, error, task_id: taskId });
        await lastValueFrom(withSignal(timer(delayMs, context.scheduler), signal));
        continue;
      }
      emit({ type: 'failed', ...base, error, task_id: taskId ?? (error instanceof TaskError ? error.taskId : undefined) });
      return 'failed';
    }
  }
}

/**
 * Whether a failure may be tried again: the client's retry policy (`shouldRetry`, one for
 * the client and the batch). A task's polling is idempotent: connection failures,
 * timeouts (the polling deadline too: the same task is resumed), 429 and 5xx; and a task
 * that ended TIMEOUT (a new task). A creation call: only when it surely created nothing
 * (429, or a request never sent). Never: validation, PAYMENT_REQUIRED, ERROR.
 */
export function isRetryable(error: RxVoiceError, phase: 'create' | 'task'): boolean {
  if (phase === 'create') return shouldRetry(error, { kind: 'creation' });
  // A task that ended TIMEOUT is not: the service asks for smaller requests, and the same
  // one again would be created, and paid, again.
  return shouldRetry(error, { kind: 'idempotent' });
}

function asRxVoiceError(error: unknown, output: string): RxVoiceError {
  if (error instanceof RxVoiceError) return error;
  return toSinkError(error, `Writing ${output}`);
}

/**
 * Send the creation call of `job` and resolve with its `task_id` (polling is not
 * started), recording `intent` before it, `sent` before its last byte goes, and
 * `answered` when the service refused it after `sent`. A failed `sent` record (the
 * journal cannot be written) rejects with that `JournalError`: the request was never
 * whole.
 */
async function createTask(client: RxVoiceClient, job: BatchJob, ledger: JobLedger, signal: AbortSignal): Promise<string> {
  await ledger.intent(job.id);
  let sent: Promise<void> | undefined;
  let gateFailure: unknown;
  // The creation call's last byte waits for the `sent` record (on disk once it resolves).
  const lastByteGate = (): Promise<void> =>
    (sent ??= ledger.sent(job.id).catch((error: unknown) => {
      gateFailure = error;
      throw error;
    }));
  try {
    return await createdTaskId(client, job, { signal, lastByteGate });
  } catch (error) {
    if (gateFailure !== undefined) throw gateFailure;
    if (sent !== undefined && refusedByService(error)) await ledger.answered(job.id, (error as RxVoiceError).code);
    throw error;
  }
}

/** The service answered the creation call with a 3xx or 4xx: it created no task. */
function refusedByService(error: unknown): boolean {
  if (error instanceof ApiError) return error.status >= 400 && error.status < 500;
  if (error instanceof ValidationError) return error.source === 'server';
  return error instanceof RateLimitError || error instanceof AuthenticationError || error instanceof RedirectError;
}

function createdTaskId(client: RxVoiceClient, job: BatchJob, options: GatedCallOptions): Promise<string> {
  let events$: Observable<TaskEvent<unknown>>;
  switch (job.kind) {
    case 'translation':
      events$ = client.translate(job.request, options);
      break;
    case 'speech':
      events$ = client.ttsTask.task(job.request, options);
      break;
    case 'sound':
      events$ = client.textToSound(job.request, options);
      break;
    case 'transcription':
      events$ = client.transcribe(job.request, options);
      break;
    case 'subtitles':
      events$ = client.subtitle(job.request, options);
      break;
    case 'dubbing':
      events$ = client.endToEndDubbing(job.request, options);
      break;
  }
  // `first` unsubscribes after the creation answer: polling starts only once it is recorded.
  return lastValueFrom(events$.pipe(first((event) => event.type === 'created'), map((event) => event.task_id)));
}

/** The bytes of a job's output file. */
function outputBytes(job: BatchJob, result: unknown): Uint8Array {
  switch (job.kind) {
    case 'speech':
    case 'sound':
      return result as Uint8Array;
    case 'subtitles':
      return Buffer.from((result as { subtitles: string }).subtitles);
    default:
      return Buffer.from(`${JSON.stringify(result, null, 2)}\n`);
  }
}

async function writeOutput(path: string, job: BatchJob, result: unknown): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await AtomicFile.write(path, outputBytes(job, result));
}

/** Whether a file (an output) is there. */
export async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}
