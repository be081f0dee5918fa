/**
 * `batch(jobs, options)`: many task jobs, resumable, with progress events.
 */
import { mkdir } from 'node:fs/promises';
import { join, posix, resolve } from 'node:path';
import { asyncScheduler, catchError, concat, defer, EMPTY, finalize, ignoreElements, throwError, from, lastValueFrom, mergeMap, Observable, of, switchMap, tap, timer, type SchedulerLike } from 'rxjs';
import { z } from 'zod';
import type { RxVoiceClient } from '../client/client.js';
import { withSignal } from '../client/request.js';
import { AbortError, ValidationError } from '../core/errors.js';
import { toValidationIssues } from '../core/validation.js';
import type { BatchEvent, BatchProgressEvent, JobEvent, KindCounts, UntrustedOutput } from './events.js';
import { JournalError } from './errors.js';
import { BatchJobSchema, jobsHash, outputPathOf, type BatchJob, type BatchJobInput } from './jobs.js';
import { Journal } from './journal.js';
import { exists, runJob, type JobContext, type JobLedger } from './run-job.js';
import { outputProblem } from './output-check.js';

/** Name of the journal file inside the output directory, by default. */
export const DEFAULT_JOURNAL_NAME = '.rxvoice-batch.jsonl';

/** Options of {@link batch} (validated when `batch` is called). */
export const BatchOptionsSchema = z.object({
  /** The client whose key the jobs run under. */
  client: z.custom<RxVoiceClient>((v) => v !== null && typeof v === 'object' && typeof (v as RxVoiceClient).tasks === 'object', 'must be a client from createClient()'),
  /** Output directory (created when missing). */
  out: z.string().min(1),
  /** Journal path; default `<out>/.rxvoice-batch.jsonl`; `false`: no journal (nothing resumable). */
  journal: z.union([z.string().min(1), z.literal(false)]).optional(),
  /** Jobs running at once. Default 4. */
  concurrency: z.int().positive().default(4),
  /** Most creation calls per second for this client's key. Default: no limit. */
  ratePerSecond: z.number().positive().optional(),
  /** Retries of a job after a retryable failure. Default 2. */
  retries: z.int().nonnegative().default(2),
  /** Delay before the first retry, ms, doubling each retry. Default 1000. */
  retryDelayMs: z.number().nonnegative().default(1000),
  /**
   * A job whose creation call an earlier run sent but died before recording the answer
   * (the task may exist and be paid; the contract has no idempotency key to find it):
   * `'fail'` (default: report it failed with `UnconfirmedTaskError`, send nothing) or
   * `'recreate'` (create it again, accepting that the earlier task may be paid too).
   */
  unconfirmed: z.enum(['recreate', 'fail']).default('fail'),
  /**
   * When the journal is missing, empty, or holds no record of a job whose output file
   * exists: `false` (default) stops the batch with a `JournalError` (`reason:
   * 'outputs'`) before any call; `true` skips every such job (its output is taken as
   * done, and recorded so).
   */
  trustOutputs: z.boolean().default(false),
  /**
   * A damaged journal (`JournalError`, reason `'damaged'`): `false` (default) stops the batch
   * before any call; `true` repairs it (every record that verifies is kept; the jobs it can
   * no longer account for are marked lost: they may have been sent, and fail with
   * `UnconfirmedTaskError` unless `allowRepay`) and goes on with the rest. A
   * `journal-repaired` event tells what was kept and lost.
   */
  repair: z.boolean().default(false),
  /**
   * Create again the jobs a repair marked lost, accepting that each may be paid twice.
   * Default `false`: they fail with `UnconfirmedTaskError` and nothing is sent for them.
   */
  allowRepay: z.boolean().default(false),
  /** Scheduler of the retry and rate-limit timers and of the clock. Default `asyncScheduler`. */
  scheduler: z.custom<SchedulerLike>((v) => v !== null && typeof v === 'object' && typeof (v as SchedulerLike).schedule === 'function').optional(),
});
/** Options of {@link batch}; see {@link BatchOptionsSchema} for each default. */
export type BatchOptions = z.input<typeof BatchOptionsSchema>;

/**
 * Run many jobs (translation, speech, sound, transcription, subtitles, dubbing) against
 * the service, `concurrency` at a time, with progress events, and resumable: each
 * job's `task_id` is fsynced into a journal (default `<out>/.rxvoice-batch.jsonl`)
 * before the job waits on its task, so running the same jobs again resumes every
 * recorded task with `client.tasks.resume`, skips the jobs whose output exists, and
 * creates only the jobs that never got a task. Outputs are written atomically under
 * `out` (default name `<id>.json`, `.wav`, `.srt` or `.vtt` by kind).
 *
 * ```
 * jobs ─┬─ created(a) ─ pending(a) ─ done(a) ─ progress ─ … ─ progress|
 * ```
 *
 * A job that fails emits `failed` (with a typed error) and the batch goes on; retryable
 * failures (connection, timeouts of a call, 429) are retried up to `retries` times, never
 * PAYMENT_REQUIRED, validation, a task ERROR or a task that ended TIMEOUT (the contract asks
 * for a smaller request then). The Observable
 * completes after the last job; it errors (stopping every job) only when the journal
 * cannot be written (`JournalError`, e.g. disk full; what it holds stays valid), belongs
 * to other jobs (`JournalError` with `reason: 'mismatch'`), or the key is refused.
 * Unsubscribing aborts the jobs in flight; their tasks stay recorded.
 *
 * ## Example
 * ```ts
 * import { createClient } from 'rxvoice';
 * import { batch } from 'rxvoice/batch';
 *
 * const client = createClient();
 * batch(
 *   [{ kind: 'translation', id: 'hello-de', request: { texts: ['Hello'], source_language: 'en-us', target_language: 'de-de' } }],
 *   { client, out: 'out', concurrency: 8 },
 * ).subscribe((event) => {
 *   if (event.type === 'progress') console.log(`${event.done + event.skipped}/${event.total}`);
 * });
 * ```
 *
 * @param jobs The jobs (validated now: a bad job throws `ValidationError` at once, nothing sent).
 * @param options See {@link BatchOptionsSchema}; bad options throw `ValidationError` at once.
 * @returns A cold Observable of job events and progress; each subscription runs the batch.
 */
export function batch(jobs: Iterable<BatchJobInput>, options: BatchOptions): Observable<BatchEvent> {
  const valid = validateJobs(jobs);
  const parsed = BatchOptionsSchema.safeParse(options);
  if (!parsed.success) throw new ValidationError(toValidationIssues(parsed.error, options, ['options']), { source: 'local', endpoint: 'batch()' });
  const settings = parsed.data;
  const scheduler = settings.scheduler ?? asyncScheduler;
  const out = resolve(settings.out);
  const journalPath = settings.journal === false ? undefined : resolve(settings.journal ?? join(out, DEFAULT_JOURNAL_NAME));

  return defer(() => {
    let journal: Journal | undefined;
    let untrusted: UntrustedOutput[] = [];
    let ended = false;
    const closeJournal = (): Observable<never> => defer(async () => journal?.close()).pipe(ignoreElements());
    const opened = (async () => {
      await mkdir(out, { recursive: true });
      if (journalPath === undefined) return undefined;
      const open = await Journal.open(journalPath, jobsHash(valid), settings.repair ? { repair: { jobIds: valid.map((job) => job.id) } } : {});
      if (ended) {
        await open.close();
        throw new AbortError();
      }
      journal = open;
      untrusted = await checkOutputs(open, valid, out, settings.trustOutputs);
      return open;
    })();
    return from(opened).pipe(
      switchMap((opened) => {
        const tracker = progressTracker(valid, scheduler);
        const context: Omit<JobContext, 'signal' | 'emit'> = {
          client: settings.client,
          outDir: out,
          ledger: opened ? journalLedger(opened) : memoryLedger,
          retries: settings.retries,
          retryDelayMs: settings.retryDelayMs,
          unconfirmed: settings.unconfirmed,
          allowRepay: settings.allowRepay,
          scheduler,
          beforeCreate: rateLimiter(settings.ratePerSecond, scheduler),
        };
        const jobs$ = from(valid).pipe(
          mergeMap((job) => jobEvents(job, context), settings.concurrency),
          tap((event) => tracker.count(event)),
          mergeMap((event): BatchEvent[] => (event.type === 'done' || event.type === 'failed' ? [event, tracker.snapshot()] : [event])),
        );
        return concat(journalEvents(opened, untrusted), of(tracker.snapshot()), jobs$);
      }),
      // Completion and errors are delivered once the journal is closed and its lock released.
      (events$) =>
        concat(
          events$.pipe(catchError((error: unknown) => concat(closeJournal(), throwError(() => error)))),
          closeJournal(),
        ),
      finalize(() => {
        ended = true;
        void journal?.close();
      }),
    );
  });
}

/** What the journal's opening found, as events: a dropped tail, a repair, outputs not trusted. */
function journalEvents(journal: Journal | undefined, untrusted: UntrustedOutput[]): Observable<BatchEvent> {
  if (!journal) return EMPTY;
  const events: BatchEvent[] = [];
  const { tail, repaired } = journal;
  if (tail) events.push({ type: 'journal-tail', path: journal.path, droppedBytes: tail.droppedBytes, droppedRecords: tail.droppedRecords, torn: tail.torn });
  if (repaired) events.push({ type: 'journal-repaired', path: journal.path, ...repaired });
  if (untrusted.length > 0) events.push({ type: 'outputs-untrusted', outputs: untrusted });
  return from(events);
}

/**
 * Jobs whose output exists but of which the journal knows nothing (the journal was
 * missing, emptied, or cut), or that a repair marked lost: never run again silently.
 * With `trustOutputs` each such output is checked (`outputProblem`: a WAV whole by its
 * header, JSON that parses, nothing empty, no HTML page); a whole one is recorded as done
 * (without a task id) and skipped, one that is not is returned (the job runs again, or, if
 * lost, stays lost). Without `trustOutputs`, outputs of unrecorded jobs stop the batch with
 * a `JournalError` (`'outputs'`) before any call, naming the choice.
 */
async function checkOutputs(journal: Journal, jobs: readonly BatchJob[], out: string, trustOutputs: boolean): Promise<UntrustedOutput[]> {
  const unrecorded: Array<{ id: string; output: string }> = [];
  for (const job of jobs) {
    const recorded = journal.recall(job.id);
    if (recorded.taskId !== undefined || recorded.output !== undefined) continue;
    // unconfirmed (sent, answer lost) stays so; lost to a repair may be settled by a whole output
    if (recorded.unconfirmed && !(recorded.lost === true && trustOutputs)) continue;
    const output = outputPathOf(job);
    if (await exists(resolve(out, output))) unrecorded.push({ id: job.id, output });
  }
  if (unrecorded.length === 0) return [];
  if (trustOutputs) {
    const untrusted: UntrustedOutput[] = [];
    for (const { id, output } of unrecorded) {
      const problem = await outputProblem(resolve(out, output));
      if (problem === undefined) await journal.append({ type: 'done', id, output });
      else untrusted.push({ id, output, problem });
    }
    return untrusted;
  }
  const fresh = journal.fresh;
  await journal.discard();
  const shown = unrecorded
    .slice(0, 3)
    .map((u) => u.output)
    .join(', ');
  throw new JournalError(
    journal.path,
    'outputs',
    `${unrecorded.length} job(s) have an output in ${out} (${shown}${unrecorded.length > 3 ? ', …' : ''}) but ` +
      (fresh ? `the journal ${journal.path} is missing or empty` : `the journal ${journal.path} holds no record of them`) +
      ', so nothing tells whether they are finished or what they cost; running them again could pay twice. Nothing was sent. ' +
      'Either trust the outputs: run with trustOutputs: true (rxvoice batch --trust-outputs) to skip every job whose output exists ' +
      '(a job that was in flight when the journal was lost may then be paid again), or start over: move those outputs (or the output directory) away.',
  );
}

/** Validate `jobs` (ids unique); throws `ValidationError` with the index of the bad job. */
export function validateJobs(jobs: Iterable<BatchJobInput>): BatchJob[] {
  const list = [...jobs];
  const seen = new Set<string>();
  const valid = list.map((job, index) => {
    const parsed = BatchJobSchema.safeParse(job);
    if (!parsed.success) throw new ValidationError(toValidationIssues(parsed.error, job, ['jobs', index]), { source: 'local', endpoint: 'batch()' });
    if (seen.has(parsed.data.id)) {
      throw new ValidationError([{ loc: ['jobs', index, 'id'], msg: `id ${JSON.stringify(parsed.data.id)} is used twice`, type: 'value_error' }], {
        source: 'local',
        endpoint: 'batch()',
      });
    }
    seen.add(parsed.data.id);
    return parsed.data;
  });
  checkOutputsApart(valid);
  return valid;
}

/**
 * Two jobs writing the same output (`a` and `b` with `output: "a.json"`), or one writing
 * inside another's (`x` and `x/a.json`), would overwrite a paid result or fail after paying:
 * a {@link ValidationError} before anything is sent.
 */
function checkOutputsApart(jobs: readonly BatchJob[]): void {
  const owner = new Map<string, number>();
  const paths = jobs.map((job, index) => {
    const path = posix.normalize(outputPathOf(job).replaceAll('\\', '/')).replace(/\/+$/, '');
    const first = owner.get(path);
    if (first !== undefined) throw outputClash(index, `${JSON.stringify(path)} is also the output of job ${JSON.stringify(jobs[first]!.id)}`);
    owner.set(path, index);
    return path;
  });
  paths.forEach((path, index) => {
    for (let cut = path.lastIndexOf('/'); cut > 0; cut = path.lastIndexOf('/', cut - 1)) {
      const first = owner.get(path.slice(0, cut));
      if (first !== undefined) throw outputClash(index, `${JSON.stringify(path)} is inside ${JSON.stringify(path.slice(0, cut))}, the output of job ${JSON.stringify(jobs[first]!.id)}`);
    }
  });
}

function outputClash(index: number, msg: string): ValidationError {
  return new ValidationError([{ loc: ['jobs', index, 'output'], msg, type: 'value_error' }], { source: 'local', endpoint: 'batch()' });
}

/** One job as an Observable of its events; unsubscribing aborts it. */
export function jobEvents(job: BatchJob, context: Omit<JobContext, 'signal' | 'emit'>): Observable<JobEvent> {
  return new Observable<JobEvent>((subscriber) => {
    const controller = new AbortController();
    runJob(job, { ...context, signal: controller.signal, emit: (event) => subscriber.next(event) }).then(
      () => subscriber.complete(),
      (error: unknown) => subscriber.error(error),
    );
    return () => controller.abort();
  });
}

/** Creation calls spaced `1000 / ratePerSecond` ms apart on `scheduler` (none: no wait). */
export function rateLimiter(ratePerSecond: number | undefined, scheduler: SchedulerLike): (signal: AbortSignal) => Promise<void> {
  if (ratePerSecond === undefined) return async () => undefined;
  const interval = 1000 / ratePerSecond;
  let next = -Infinity;
  return async (signal) => {
    const now = scheduler.now();
    const at = Math.max(now, next);
    next = at + interval;
    if (at > now) await lastValueFrom(withSignal(timer(at - now, scheduler), signal));
  };
}

/** The journal as a job ledger. */
function journalLedger(journal: Journal): JobLedger {
  return {
    recall: (id) => journal.recall(id),
    intent: (id) => journal.append({ type: 'intent', id }),
    sent: (id) => journal.append({ type: 'sent', id }),
    answered: (id, code) => journal.append({ type: 'answered', id, code }),
    task: (id, taskId) => journal.append({ type: 'task', id, task_id: taskId }),
    abandoned: (id, taskId, code) => journal.append({ type: 'abandoned', id, task_id: taskId, code }),
    done: (id, taskId, output) => journal.append({ type: 'done', id, task_id: taskId, output }),
  };
}

/** No journal: nothing is recalled or recorded. */
const memoryLedger: JobLedger = {
  recall: () => ({ unconfirmed: false, known: false }),
  intent: async () => undefined,
  sent: async () => undefined,
  answered: async () => undefined,
  task: async () => undefined,
  abandoned: async () => undefined,
  done: async () => undefined,
};

/** Counts job events into progress snapshots. */
export function progressTracker(jobs: readonly BatchJob[], scheduler: SchedulerLike): { count(event: JobEvent): void; snapshot(): BatchProgressEvent } {
  const started = scheduler.now();
  const byKind: Partial<Record<BatchJob['kind'], KindCounts>> = {};
  for (const job of jobs) (byKind[job.kind] ??= { total: 0, done: 0, failed: 0, skipped: 0 }).total++;
  const totals = { done: 0, failed: 0, skipped: 0, created: 0, resumed: 0, recreated: 0 };
  return {
    count(event) {
      const kind = byKind[event.kind] as KindCounts;
      if (event.type === 'created') {
        totals.created++;
        if (event.recreated) totals.recreated++;
      } else if (event.type === 'resumed') totals.resumed++;
      else if (event.type === 'failed') {
        totals.failed++;
        kind.failed++;
      } else if (event.type === 'done') {
        if (event.skipped) {
          totals.skipped++;
          kind.skipped++;
        } else {
          totals.done++;
          kind.done++;
        }
      }
    },
    snapshot() {
      const elapsedMs = scheduler.now() - started;
      const jobsPerSecond = elapsedMs > 0 ? (totals.done * 1000) / elapsedMs : 0;
      const remaining = jobs.length - totals.done - totals.failed - totals.skipped;
      return {
        type: 'progress',
        total: jobs.length,
        ...totals,
        elapsedMs,
        jobsPerSecond,
        etaMs: jobsPerSecond > 0 ? (remaining / jobsPerSecond) * 1000 : remaining === 0 ? 0 : undefined,
        byKind: structuredClone(byKind),
      };
    },
  };
}
