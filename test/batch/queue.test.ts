/**
 * Batches on a BullMQ queue: a real redis-server (started here on a free port in a temp
 * dir), the emulator, three `rxvoice worker` processes, one killed with SIGKILL while its
 * job's task is pending. Every job done, no task created twice, no job lost, the key
 * never in the queue. Also: an unreachable Redis, a missing bullmq.
 */
import { spawnCli, type CliProcess } from './helpers.js';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { filter, firstValueFrom, lastValueFrom, toArray } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enqueueBatch, jobsHash, probeRedis, QueueConnectionError, QueueError, QueueUnavailableError, runWorker, validateJobs, type BatchEvent, type BatchProgressEvent, type JobEvent } from '../../src/batch/index.js';
import { clientFor } from '../client/helpers.js';
import { pseudoLocalize, startEmulator, type Emulator } from '../../src/emulator/index.js';
import { loadBullmq } from '../../src/batch/bullmq.js';
import { requireTool } from '../setup/tools.js';
import { freePort, startRedis, type RedisServer } from '../setup/redis.js';

// Missing redis-server: fails under CI, skips with one line otherwise.
const REDIS = requireTool('redis-server', 'the queue tests (test/batch-queue.test.ts)') ?? '';
const JOBS = 24;
const haveRedis = REDIS !== '';

let redis: RedisServer | undefined;
let redisUrl: string;
let emu: Emulator;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rxvoice-batch-queue-'));
  emu = await startEmulator({ synth: 'tone', taskDurationMs: 600 });
  if (!haveRedis) return;
  redis = await startRedis(REDIS, dir);
  redisUrl = redis.url;
});
afterAll(async () => {
  await redis?.stop();
  await emu?.close();
  await rm(dir, { recursive: true, force: true });
});

/** A worker process; `events` are its JSON lines, parsed. */
function startWorker(out: string, onEvent?: (event: Record<string, unknown>) => void): CliProcess & { events: () => Array<Record<string, unknown>> } {
  const worker = spawnCli(['worker', '--queue', redisUrl, '--out', out, '--concurrency', '1', '--lock-ms', '1500', '--json'], emu, (line) =>
    onEvent?.(JSON.parse(line) as Record<string, unknown>),
  );
  return { ...worker, events: () => worker.lines.map((line) => JSON.parse(line) as Record<string, unknown>) };
}

describe.runIf(haveRedis)('queue', () => {
  it('three workers, one killed mid-job: all jobs done, no task created twice, none lost, no key in the queue', async () => {
    const out = join(dir, 'out');
    const jobs = validateJobs(
      Array.from({ length: JOBS }, (_, i) => ({
        kind: 'translation' as const,
        id: `q-${i}`,
        request: { texts: [`Queue line ${i}.`], source_language: 'en-us', target_language: 'it-it' },
      })),
    );
    const before = new Set(emu.context.tasks.keys());
    let victimTask: string | undefined;
    const victim = startWorker(out, (event) => {
      // Killed while its job's task is pending: the task id is already in the job's record.
      if (event['type'] === 'created' && victimTask === undefined) {
        victimTask = event['task_id'] as string;
        victim.child.kill('SIGKILL');
      }
    });
    const others = [startWorker(out), startWorker(out)];
    const events: BatchEvent[] = await lastValueFrom(enqueueBatch(jobs, { queue: redisUrl }).pipe(toArray()));
    expect(await victim.exited).toBe(null);
    for (const worker of others) worker.child.kill('SIGTERM');
    const codes = await Promise.all(others.map((w) => w.exited));
    expect(codes, others.map((w) => w.stderr.join('')).join('\n')).toEqual([0, 0]);

    const progress = events.filter((e): e is BatchProgressEvent => e.type === 'progress').at(-1);
    expect(progress).toMatchObject({ total: JOBS, done: JOBS, failed: 0 });
    for (let i = 0; i < JOBS; i++) {
      const output = JSON.parse(await readFile(join(out, `q-${i}.json`), 'utf8')) as { texts: string[] };
      expect(output.texts).toEqual([pseudoLocalize(`Queue line ${i}.`, 'it-it')]);
    }
    // The victim's task was resumed by another worker, not created again.
    expect(victimTask).toBeDefined();
    const resumed = others.flatMap((w) => w.events()).filter((e) => e['type'] === 'resumed');
    expect(resumed.map((e) => e['task_id'])).toContain(victimTask);
    const created = [...emu.context.tasks.keys()].filter((id) => !before.has(id));
    expect(created).toHaveLength(JOBS);

    // The queue holds descriptions and task ids, never the key.
    const { Queue } = await loadBullmq();
    const queue = new Queue('rxvoice-batch', { connection: { host: '127.0.0.1', port: Number(new URL(redisUrl).port) } });
    const stored = await queue.getJobs(['completed', 'failed', 'active', 'wait']);
    expect(stored).toHaveLength(JOBS);
    expect(stored.every((job) => typeof (job.data as { task_id?: string }).task_id === 'string')).toBe(true);
    expect(JSON.stringify(stored.map((job) => job.asJSON()))).not.toContain(emu.apiKey);
    await queue.close();

    // Enqueuing the same jobs again adds nothing: every job is reported done from the queue.
    const again = await lastValueFrom(enqueueBatch(jobs, { queue: redisUrl }).pipe(toArray()));
    expect(again.filter((e) => e.type === 'progress').at(-1)).toMatchObject({ skipped: JOBS, done: 0 });
    expect([...emu.context.tasks.keys()].filter((id) => !before.has(id))).toHaveLength(JOBS);
  }, 120_000);
});

describe.runIf(haveRedis)('a queue job a dead worker left sent without an answer', () => {
  /** Put one job on queue `name` as a worker that died after its creation call's `sent` mark left it, then run a worker on it. */
  async function runLeftJob(name: string, unconfirmed: 'fail' | 'recreate', marks: { intent: boolean; sent?: boolean } = { intent: true, sent: true }): Promise<{ event: JobEvent; creations: number }> {
    const [job] = validateJobs([{ kind: 'translation', id: name, request: { texts: [`Left by a dead worker (${name}).`], source_language: 'en-us', target_language: 'it-it' } }]);
    const { Queue } = await loadBullmq();
    const queue = new Queue(name, { connection: { host: '127.0.0.1', port: Number(new URL(redisUrl).port) } });
    await queue.add(job!.kind, { job: job!, jobs_hash: jobsHash([job!]), ...marks }, { jobId: job!.id, attempts: 1 });
    await queue.close();
    const count = (): number => emu.requests.filter((r) => r.method === 'POST' && r.path === '/translation').length;
    const before = count();
    const client = clientFor(emu);
    const event = await firstValueFrom(
      runWorker({ queue: redisUrl, name, client, out: join(dir, name), unconfirmed, retries: 0 }).pipe(filter((e) => e.type === 'failed' || e.type === 'done')),
    );
    await client.close();
    return { event, creations: count() - before };
  }

  it('is refused (UnconfirmedTaskError), nothing sent; control: unconfirmed recreate creates it', async () => {
    const refused = await runLeftJob('left-fail', 'fail');
    expect(refused.event).toMatchObject({ type: 'failed', error: { name: 'UnconfirmedTaskError' } });
    expect(refused.creations).toBe(0);
    const recreated = await runLeftJob('left-recreate', 'recreate');
    expect(recreated.event).toMatchObject({ type: 'done' });
    expect(recreated.creations).toBe(1);
  }, 60_000);

  it('left by an older rxvoice (`intent` set, no `sent` field: it meant sent) is refused the same way; control: `intent` with `sent: false` is created', async () => {
    const old = await runLeftJob('left-old', 'fail', { intent: true });
    expect(old.event).toMatchObject({ type: 'failed', error: { name: 'UnconfirmedTaskError' } });
    expect(old.creations).toBe(0);
    const unsent = await runLeftJob('left-unsent', 'fail', { intent: true, sent: false });
    expect(unsent.event).toMatchObject({ type: 'done' });
    expect(unsent.creations).toBe(1);
  }, 60_000);
});

describe('queue errors', () => {
  it('an unreachable Redis is a typed error at start, within the timeout', async () => {
    const port = await freePort();
    await expect(probeRedis(`redis://127.0.0.1:${port}`, 2000)).rejects.toBeInstanceOf(QueueConnectionError);
    const error = await lastValueFrom(enqueueBatch(validateJobs([{ kind: 'sound', id: 's', request: { prompt: 'rain' } }]), { queue: `redis://127.0.0.1:${port}`, connectTimeoutMs: 2000 })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(QueueConnectionError);
    expect((error as Error).message).toMatch(/cannot be reached/);
  });

  it('a missing bullmq or ioredis names the package (a QueueError)', async () => {
    for (const [bullmq, ioredis, missing] of [
      ['bullmq-not-installed-here', 'ioredis', 'bullmq-not-installed-here'],
      ['bullmq', 'ioredis-not-installed-here', 'ioredis-not-installed-here'],
    ] as const) {
      const error = await loadBullmq(bullmq, ioredis).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(QueueUnavailableError);
      expect(error).toBeInstanceOf(QueueError);
      expect((error as QueueUnavailableError).packageName).toBe(missing);
      expect((error as Error).message).toContain(`npm install ${missing}`);
    }
    // control: both installed here, nothing to report
    await expect(loadBullmq()).resolves.toHaveProperty('Worker');
  });
});
