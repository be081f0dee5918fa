/**
 * Polling of tasks: status calls per task and completion delay (from the moment the
 * task really completed, `createdAt + taskDurationMs` in the emulator, to the
 * Observable's `result` event, result download included) of `client.textToSound()`
 * with its default policy (0.5 s, x1.5, capped at 5 s, +-20 % jitter) against a plain
 * loop of `setTimeout(1000)` + `fetch` (then the same result download).
 *
 * Real rows: the emulator with `taskDurationMs` 1 s and 3 s, several tasks of each
 * side at once. Simulated rows: the same schedule in virtual time, computed with the
 * client's own `pollDelay()` and resolved default `PollingOptions` (5 ms per HTTP
 * call, seeded jitter, median over 201 draws); the peer polls at k x 1000 ms. Task
 * durations that are whole seconds favour the fixed 1 s loop (its polls land right on
 * the completion), so a last simulated row draws durations uniformly in 1..60 s.
 *
 * Run alone: `npx tsx bench/polling.ts`.
 */
import { lastValueFrom, tap } from 'rxjs';
import { PollingOptionsSchema } from '../src/client/config.js';
import { routes } from '../src/core/routes.js';
import { pollDelay } from '../src/client/tasks.js';
import { startEmulator, type Emulator } from '../src/emulator/index.js';
import { createClient } from '../src/index.js';
import type { BenchRow } from './types.js';
import { QUICK, median, row, seeded, sleep } from './util.js';

interface TaskOutcome {
  calls: number;
  delayMs: number;
}

function statusCalls(emulator: Emulator, taskId: string): number {
  const path = routes.textToSoundStatus(taskId);
  return emulator.requests.filter((r) => r.method === 'GET' && r.path === path).length;
}

function completedAt(emulator: Emulator, taskId: string, durationMs: number): number {
  const task = emulator.context.tasks.get(taskId);
  if (!task) throw new Error(`polling: task ${taskId} unknown to the emulator`);
  return task.createdAt + durationMs;
}

async function oursTask(emulator: Emulator, durationMs: number): Promise<TaskOutcome> {
  const client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.baseUrl });
  try {
    let taskId = '';
    const last = await lastValueFrom(
      client.textToSound({ prompt: 'rain on a tin roof', duration: 1 }).pipe(
        tap((event) => {
          if (event.type === 'created') taskId = event.task_id;
        }),
      ),
    );
    const at = Date.now();
    if (last.type !== 'result' || last.result.byteLength === 0) throw new Error('polling: no result');
    return { calls: statusCalls(emulator, taskId), delayMs: at - completedAt(emulator, taskId, durationMs) };
  } finally {
    await client.close();
  }
}

async function peerTask(emulator: Emulator, durationMs: number): Promise<TaskOutcome> {
  const headers = { 'x-api-key': emulator.apiKey, 'content-type': 'application/json' };
  const created = await fetch(`${emulator.baseUrl}${routes.textToSound}`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ prompt: 'rain on a tin roof', duration: 1 }),
  });
  const { task_id } = (await created.json()) as { task_id: string };
  for (;;) {
    await sleep(1000);
    const res = await fetch(`${emulator.baseUrl}${routes.textToSoundStatus(task_id)}`, { headers });
    const status = (await res.json()) as { status: string; run_id: number | null };
    if (status.status === 'PENDING') continue;
    if (status.status !== 'SUCCESS' || status.run_id === null) throw new Error(`polling peer: ${status.status}`);
    const result = await fetch(`${emulator.baseUrl}${routes.textToSoundResult(status.run_id)}`, { headers });
    const bytes = new Uint8Array(await result.arrayBuffer());
    const at = Date.now();
    if (bytes.byteLength === 0) throw new Error('polling peer: no result');
    return { calls: statusCalls(emulator, task_id), delayMs: at - completedAt(emulator, task_id, durationMs) };
  }
}

const POLICY = PollingOptionsSchema.parse({});

/**
 * Round trip of one HTTP call in the simulation, ms (loopback calls measure a few ms;
 * it also keeps the fixed loop from landing exactly on whole-second completions).
 */
export const SIMULATED_CALL_MS = 5;

/**
 * The client's schedule in virtual time: status calls and delay for a task of
 * `durationMs`. As in `pollTask`, the next delay starts once the status answer is in.
 */
export function simulateOurs(durationMs: number, random: () => number, callMs = SIMULATED_CALL_MS): TaskOutcome {
  let t = 0;
  for (let n = 0; ; n++) {
    t += pollDelay(n, POLICY, random);
    // The status is read half-way through the call.
    if (t + callMs / 2 >= durationMs) return { calls: n + 1, delayMs: t + callMs + callMs - durationMs };
    t += callMs;
    if (t > POLICY.deadlineMs) return { calls: n + 1, delayMs: Number.NaN };
  }
}

/** `setTimeout(1000)` then a status call, in a loop, in virtual time. */
export function simulatePeer(durationMs: number, callMs = SIMULATED_CALL_MS): TaskOutcome {
  let t = 0;
  for (let k = 1; ; k++) {
    t += 1000;
    if (t + callMs / 2 >= durationMs) return { calls: k, delayMs: t + callMs + callMs - durationMs };
    t += callMs;
  }
}

export interface PollingOptions {
  /** Task durations run for real against the emulator, ms. */
  real?: number[];
  /** Tasks of each side per real duration, run at once. */
  tasks?: number;
  /** Task durations simulated, ms. */
  simulated?: number[];
}

export async function run(options: PollingOptions = {}): Promise<BenchRow[]> {
  const real = options.real ?? [1000, 3000];
  const tasks = options.tasks ?? (QUICK ? 3 : 7);
  const simulated = options.simulated ?? [10_000, 30_000, 60_000];
  const rows: BenchRow[] = [];
  const simulateMedian = (durationMs: number): TaskOutcome => {
    const random = seeded(durationMs);
    const draws = Array.from({ length: 201 }, () => simulateOurs(durationMs, random));
    return { calls: median(draws.map((d) => d.calls)), delayMs: median(draws.map((d) => d.delayMs)) };
  };

  for (const durationMs of real) {
    const emulator = await startEmulator({ synth: 'tone', taskDurationMs: durationMs });
    try {
      const [ours, peer] = await Promise.all([
        Promise.all(Array.from({ length: tasks }, () => oursTask(emulator, durationMs))),
        Promise.all(Array.from({ length: tasks }, () => peerTask(emulator, durationMs))),
      ]);
      const sim = simulateMedian(durationMs);
      const s = `${durationMs / 1000} s`;
      rows.push(
        row(
          `polling ${s} task (real): status calls`,
          median(ours.map((o) => o.calls)),
          median(peer.map((o) => o.calls)),
          'calls',
          `median of ${tasks} tasks each, run at once on the emulator; simulated: ${sim.calls}`,
          'lower',
        ),
        row(
          `polling ${s} task (real): completion delay`,
          median(ours.map((o) => o.delayMs)),
          median(peer.map((o) => o.delayMs)),
          'ms',
          `real completion -> result event (download included); simulated: ${sim.delayMs} ms vs ${simulatePeer(durationMs).delayMs} ms`,
          'lower',
        ),
      );
    } finally {
      await emulator.close();
    }
  }

  for (const durationMs of simulated) {
    const sim = simulateMedian(durationMs);
    const peer = simulatePeer(durationMs);
    const s = `${durationMs / 1000} s`;
    rows.push(
      row(`polling ${s} task (simulated): status calls`, sim.calls, peer.calls, 'calls', 'virtual time, client pollDelay() + default policy, median of 201 jitter draws', 'lower'),
      row(
        `polling ${s} task (simulated): completion delay`,
        sim.delayMs,
        peer.delayMs,
        'ms',
        `virtual time, ${SIMULATED_CALL_MS} ms per call; a whole-second duration is near the fixed loop's best case`,
        'lower',
      ),
    );
  }

  // Durations drawn uniformly in 1..60 s: the average case.
  const random = seeded(7);
  const durations = Array.from({ length: 2001 }, () => 1000 + random() * 59_000);
  const ours = durations.map((d) => simulateOurs(d, random));
  const peer = durations.map((d) => simulatePeer(d));
  const mean = (list: number[]): number => list.reduce((a, b) => a + b, 0) / list.length;
  rows.push(
    row(
      'polling 1-60 s tasks (simulated): status calls',
      mean(ours.map((o) => o.calls)),
      mean(peer.map((o) => o.calls)),
      'calls',
      'mean over 2,001 durations uniform in 1..60 s, virtual time',
      'lower',
    ),
    row(
      'polling 1-60 s tasks (simulated): completion delay',
      mean(ours.map((o) => o.delayMs)),
      mean(peer.map((o) => o.delayMs)),
      'ms',
      `mean over the same durations, ${SIMULATED_CALL_MS} ms per call`,
      'lower',
    ),
  );
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  run().then((rows) => console.table(rows), (error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
