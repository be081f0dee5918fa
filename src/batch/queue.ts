/**
 * Batches on many machines: the jobs on a BullMQ queue in Redis, processed by any
 * number of workers. A job's record in the queue holds its `task_id` from the moment
 * the service answers the creation call (`job.updateData`), so when a worker dies
 * mid-job, the job stalls, BullMQ hands it to another worker, and that worker resumes
 * the task instead of creating it again. The API key stays on the workers: the queue
 * holds job descriptions and task ids only.
 *
 * BullMQ and ioredis are optional peer dependencies, loaded (./bullmq.ts) when a queue
 * Observable is subscribed; no declaration here names a BullMQ type.
 */
import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { asyncScheduler, Observable, type SchedulerLike } from 'rxjs';
import type { RxVoiceClient } from '../client/client.js';
import { RxVoiceError } from '../core/errors.js';
import { progressTracker, rateLimiter } from './batch.js';
import { loadBullmq, type BullMq } from './bullmq.js';
import { QueueConnectionError, QueueError } from './errors.js';
import type { BatchEvent, JobEvent } from './events.js';
import { jobsHash, type BatchJob } from './jobs.js';
import { runJob, type JobLedger } from './run-job.js';
import { resolve } from 'node:path';

/** Name of the queue when none is given. */
export const DEFAULT_QUEUE_NAME = 'rxvoice-batch';
/** How long to wait for Redis to answer at start, ms, by default. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 5000;

/** What the queue holds for one job: its description and, once created, its task id. Never a key. */
export interface QueueJobData {
  job: BatchJob;
  jobs_hash: string;
  /** The task, recorded as soon as the creation call answered. */
  task_id?: string | undefined;
  /** A creation call is about to be sent (not sent yet: a worker dying now risks nothing). */
  intent?: boolean;
  /**
   * The creation call's request went whole (recorded while its last byte was held back)
   * and its answer is not recorded yet: the task may exist.
   */
  sent?: boolean;
}

/** A job event as carried through the queue (the error as plain fields). */
type WireJobEvent = Exclude<JobEvent, { error: RxVoiceError }> | (Omit<Extract<JobEvent, { error: RxVoiceError }>, 'error'> & { error: { name: string; code: string; message: string } });

/** Options shared by {@link enqueueBatch} and {@link runWorker}. */
export interface QueueOptions {
  /** Redis address, `redis://[user:password@]host[:port][/db]` or `rediss://` for TLS. */
  queue: string;
  /** Queue name. Default `rxvoice-batch`. */
  name?: string;
  /** Wait for Redis at start, ms; past it: `QueueConnectionError`. Default 5000. */
  connectTimeoutMs?: number;
}

/** Options of {@link runWorker}. */
export interface WorkerOptions extends QueueOptions {
  /** The client (and so the key) the worker runs the jobs with. */
  client: RxVoiceClient;
  /** Output directory of this worker (a shared file system, or one per machine). */
  out: string;
  /** Jobs this worker runs at once. Default 4. */
  concurrency?: number;
  /** Most jobs started per second across all workers of the queue (BullMQ's limiter). Default: no limit. */
  ratePerSecond?: number;
  /** Retries of a retryable failure. Default 2. */
  retries?: number;
  /** Delay before the first retry, ms, doubling. Default 1000. */
  retryDelayMs?: number;
  /** A job a dead worker left after sending its creation call unanswered: `'fail'` (default) or `'recreate'`. */
  unconfirmed?: 'fail' | 'recreate';
  /** How long a job stays locked by a silent worker before another takes it, ms. Default 30 000. */
  lockDurationMs?: number;
  /** Scheduler of retry timers. Default `asyncScheduler`. */
  scheduler?: SchedulerLike;
}

/** Connection options for BullMQ (ioredis) from a `redis://` address; throws `QueueError` when invalid. */
export function redisConnection(address: string): { host: string; port: number; username?: string; password?: string; db?: number; tls?: object } {
  let url: URL;
  try {
    url = new URL(address);
  } catch {
    throw new QueueError(`The queue address must be a redis:// or rediss:// URL, not ${JSON.stringify(address.replace(/\/\/[^@/]*@/, '//***@'))}`);
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') throw new QueueError(`The queue address must start with redis:// or rediss://, not ${url.protocol}//`);
  const db = url.pathname.length > 1 ? Number(url.pathname.slice(1)) : undefined;
  if (db !== undefined && !Number.isInteger(db)) throw new QueueError(`The database of the queue address must be a number, not ${url.pathname.slice(1)}`);
  return {
    host: url.hostname.replace(/^\[|\]$/g, '') || '127.0.0.1',
    port: url.port ? Number(url.port) : 6379,
    ...(url.username ? { username: decodeURIComponent(url.username) } : {}),
    ...(url.password ? { password: decodeURIComponent(url.password) } : {}),
    ...(db !== undefined ? { db } : {}),
    ...(url.protocol === 'rediss:' ? { tls: {} } : {}),
  };
}

/**
 * Check that Redis answers at `address` within `timeoutMs` (a PING; an answer asking for
 * a password counts as reachable). Rejects with `QueueConnectionError` otherwise.
 */
export function probeRedis(address: string, timeoutMs = DEFAULT_CONNECT_TIMEOUT_MS): Promise<void> {
  const { host, port, tls } = redisConnection(address);
  return new Promise<void>((resolvePromise, reject) => {
    const where = `${host}:${port}`;
    const socket: Socket = tls ? tlsConnect({ host, port, servername: host }) : netConnect({ host, port });
    const fail = (why: string, cause?: unknown): void => {
      socket.destroy();
      clearTimeout(timer);
      reject(new QueueConnectionError(`Redis at ${where} ${why}; the queue cannot start.`, cause === undefined ? {} : { cause }));
    };
    const timer = setTimeout(() => fail(`did not answer within ${timeoutMs} ms`), timeoutMs);
    socket.once(tls ? 'secureConnect' : 'connect', () => socket.write('PING\r\n'));
    socket.once('data', (data: Buffer) => {
      clearTimeout(timer);
      socket.destroy();
      const reply = data.toString('utf8');
      if (reply.startsWith('+PONG') || /NOAUTH|Authentication required/i.test(reply)) resolvePromise();
      else reject(new QueueConnectionError(`Redis at ${where} answered PING with ${JSON.stringify(reply.trim().slice(0, 80))}`));
    });
    socket.once('error', (error) => fail(`cannot be reached (${error.message})`, error));
  });
}

/** BullMQ's job id of a job: the jobs' hash prefix and the job id, so a rerun adds nothing twice. */
function queueJobId(hash: string, job: BatchJob): string {
  return `${hash.slice(0, 16)}-${job.id}`;
}

/**
 * Put `jobs` on the queue (a job already there, from an earlier run of the same jobs,
 * is not added again) and follow them until every one has ended, emitting the events
 * the workers report and progress. Completes when all jobs ended; errors with
 * `QueueUnavailableError` when bullmq or ioredis is not installed, and with
 * `QueueConnectionError` when Redis does not answer within `connectTimeoutMs`.
 * Unsubscribing stops following; the jobs stay queued for the workers.
 *
 * ## Example
 * ```ts
 * import { enqueueBatch, validateJobs } from 'rxvoice/batch';
 *
 * const jobs = validateJobs([{ kind: 'sound', id: 'rain', request: { prompt: 'rain on a tin roof' } }]);
 * enqueueBatch(jobs, { queue: 'redis://127.0.0.1:6379' }).subscribe((event) => console.log(event.type));
 * ```
 * @param jobs Validated jobs (see `validateJobs` / `parseJobLines`).
 * @param options The queue's address and name.
 * @returns Job events as the workers report them, and progress.
 */
export function enqueueBatch(jobs: readonly BatchJob[], options: QueueOptions): Observable<BatchEvent> {
  const connection = redisConnection(options.queue);
  const name = options.name ?? DEFAULT_QUEUE_NAME;
  const hash = jobsHash(jobs);
  const byQueueId = new Map(jobs.map((job) => [queueJobId(hash, job), job]));
  return new Observable<BatchEvent>((subscriber) => {
    let closed = false;
    const closers: Array<() => Promise<void>> = [];
    const tracker = progressTracker(jobs, asyncScheduler);
    const ended = new Set<string>();
    const emit = (queueId: string, wire: WireJobEvent): void => {
      if (closed || !byQueueId.has(queueId)) return;
      const event = fromWire(wire);
      if (event.type === 'done' || event.type === 'failed') {
        if (ended.has(queueId)) return;
        ended.add(queueId);
      }
      tracker.count(event);
      subscriber.next(event);
      if (event.type === 'done' || event.type === 'failed') {
        subscriber.next(tracker.snapshot());
        if (ended.size === jobs.length) subscriber.complete();
      }
    };
    (async () => {
      const { Queue, QueueEvents } = await loadBullmq();
      await probeRedis(options.queue, options.connectTimeoutMs);
      const events = new QueueEvents(name, { connection });
      closers.push(() => events.close());
      const queue = new Queue(name, { connection });
      closers.push(() => queue.close());
      await events.waitUntilReady();
      if (closed) return;
      subscriber.next(tracker.snapshot());
      events.on('progress', ({ jobId, data }) => emit(jobId, data as unknown as WireJobEvent));
      events.on('failed', ({ jobId, failedReason }) => {
        const job = byQueueId.get(jobId);
        if (job) emit(jobId, { type: 'failed', id: job.id, kind: job.kind, task_id: undefined, error: { name: 'RxVoiceError', code: 'api', message: failedReason } });
      });
      await queue.addBulk(
        jobs.map((job) => ({
          name: job.kind,
          data: { job, jobs_hash: hash } satisfies QueueJobData,
          opts: { jobId: queueJobId(hash, job), attempts: 1, removeOnComplete: false, removeOnFail: false },
        })),
      );
      // Jobs an earlier run already finished (or that finished before we listened).
      for (const [queueId, job] of byQueueId) {
        if (closed) return;
        const stored = await queue.getJob(queueId);
        const state = await stored?.getState();
        if (state === 'completed') {
          const value = stored?.returnvalue as { task_id: string; output: string } | undefined;
          emit(queueId, { type: 'done', id: job.id, kind: job.kind, task_id: value?.task_id ?? '', output: value?.output ?? '', skipped: true });
        } else if (state === 'failed') {
          emit(queueId, { type: 'failed', id: job.id, kind: job.kind, task_id: undefined, error: { name: 'RxVoiceError', code: 'api', message: stored?.failedReason ?? 'failed' } });
        }
      }
    })().catch((error: unknown) => subscriber.error(error));
    return () => {
      closed = true;
      for (const close of closers) void close().catch(() => undefined);
    };
  });
}

/**
 * Process jobs from the queue until unsubscribed, emitting the events of the jobs this
 * worker runs. Each job: its recorded task resumed, or created and its `task_id`
 * written into the job's record before the worker waits on it; the output written
 * atomically under `out`. A job that fails for good is marked failed (never retried by
 * BullMQ: the retry rules of `batch()` apply inside the job). Errors with
 * `QueueUnavailableError` when bullmq or ioredis is not installed, and with
 * `QueueConnectionError` when Redis does not answer at start. Unsubscribing closes the
 * worker at once; its jobs in flight stall and another worker resumes their tasks.
 *
 * ## Example
 * ```ts
 * import { createClient } from 'rxvoice';
 * import { runWorker } from 'rxvoice/batch';
 *
 * runWorker({ queue: 'redis://127.0.0.1:6379', client: createClient(), out: 'out' }).subscribe((event) => console.log(event.id, event.type));
 * ```
 * @param options The queue, the client (the key stays here), the output directory.
 * @returns The events of the jobs this worker runs; never completes by itself.
 */
export function runWorker(options: WorkerOptions): Observable<JobEvent> {
  const connection = redisConnection(options.queue);
  const name = options.name ?? DEFAULT_QUEUE_NAME;
  const scheduler = options.scheduler ?? asyncScheduler;
  const out = resolve(options.out);
  return new Observable<JobEvent>((subscriber) => {
    let closed = false;
    let worker: InstanceType<BullMq['Worker']> | undefined;
    const controller = new AbortController();
    (async () => {
      const { Worker, UnrecoverableError } = await loadBullmq();
      await probeRedis(options.queue, options.connectTimeoutMs);
      if (closed) return;
      worker = new Worker(
        name,
        async (job) => {
          const data = job.data as QueueJobData;
          let current: QueueJobData = { ...data };
          const update = async (next: QueueJobData): Promise<void> => {
            current = next;
            await job.updateData(next);
          };
          const ledger: JobLedger = {
            // A record of an older rxvoice (intent set, no `sent` field) meant "sent": unconfirmed.
            recall: () => {
              const sent = current.sent ?? current.intent === true;
              return { ...(current.task_id ? { taskId: current.task_id } : {}), unconfirmed: sent && !current.task_id, known: current.task_id !== undefined || sent };
            },
            intent: () => update({ ...current, intent: true, sent: false }),
            sent: () => update({ ...current, sent: true }),
            answered: () => update({ ...current, intent: false, sent: false }),
            task: (_id, taskId) => update({ ...current, task_id: taskId, intent: false, sent: false }),
            abandoned: () => update({ ...current, task_id: undefined, intent: false, sent: false }),
            done: async () => undefined,
          };
          let result: { task_id: string | undefined; output: string } | undefined;
          let failure: RxVoiceError | undefined;
          const outcome = await runJob(data.job, {
            client: options.client,
            outDir: out,
            ledger,
            retries: options.retries ?? 2,
            retryDelayMs: options.retryDelayMs ?? 1000,
            unconfirmed: options.unconfirmed ?? 'fail',
            scheduler,
            beforeCreate: rateLimiter(undefined, scheduler),
            signal: controller.signal,
            emit: (event) => {
              if (event.type === 'done') result = { task_id: event.task_id, output: event.output };
              if (event.type === 'failed') failure = event.error;
              subscriber.next(event);
              if (event.type !== 'pending') void job.updateProgress(toWire(event) as object).catch(() => undefined);
            },
          });
          if (outcome === 'failed') throw new UnrecoverableError(`${failure?.name ?? 'Error'}: ${failure?.message ?? 'failed'}`);
          return result;
        },
        {
          connection: { ...connection, maxRetriesPerRequest: null },
          concurrency: options.concurrency ?? 4,
          lockDuration: options.lockDurationMs ?? 30_000,
          stalledInterval: options.lockDurationMs ?? 30_000,
          maxStalledCount: 3,
          ...(options.ratePerSecond !== undefined ? { limiter: { max: 1, duration: Math.max(1, Math.round(1000 / options.ratePerSecond)) } } : {}),
        },
      );
      worker.on('error', () => undefined);
      await worker.waitUntilReady();
    })().catch((error: unknown) => subscriber.error(error));
    return () => {
      closed = true;
      void worker?.close(true).finally(() => controller.abort());
    };
  });
}

function toWire(event: JobEvent): WireJobEvent {
  if (!('error' in event)) return event;
  return { ...event, error: { name: event.error.name, code: event.error.code, message: event.error.message } };
}

function fromWire(event: WireJobEvent): JobEvent {
  if (!('error' in event) || event.error instanceof RxVoiceError) return event as JobEvent;
  const error = new RxVoiceError(event.error.code as RxVoiceError['code'], event.error.message);
  error.name = event.error.name;
  return { ...event, error } as JobEvent;
}
