/**
 * Polling of tasks: status calls per task and delay (from the moment the task really
 * completed on the service to the Observable's `result` event, result download
 * included) of the client's task Observables, side by side with a plain loop of
 * `setTimeout(1000)` + status call (then the same result download), and with the best
 * schedule possible on the mix's own distribution (`polling-optimal.ts`, the frontier).
 *
 * Simulated rows, in virtual time (the client's own `nextPollDelay()` and duration model,
 * default `PollingOptions`, seeded jitter), 50 ms one-way latency and 3 ms of service time
 * per call (a call sent at t sees the task done when t + 101.5 ms >= its duration; the
 * result is in hand two round trips later):
 * - equal requests whose size says nothing, durations log-normal (sigma 0.8, medians 1,
 *   3, 10, 30 and 60 s, cut at the 10 min deadline, not whole seconds): the first task
 *   of a family (nothing learned) against the loop, on the same durations; and tasks 21
 *   to 30 of a family (20 seen) against the frontier at the same mean number of calls;
 * - a realistic sized mix (three families, sizes log-uniform, duration growing with
 *   size times log-normal noise sigma 0.3, 0.5..60 s), tasks one after another so the
 *   client learns as it goes, with the size given and hidden.
 *
 * Real rows: the short end of the sized mix (tasks up to 8 s, for time) against the
 * emulator at 50 ms one-way latency (`latencyMs: 50`), `client.translate` and
 * `client.textToSound` against the fixed loop over `fetch`, waves of tasks at once.
 *
 * Run alone: `npx tsx bench/polling.ts`.
 */
import { lastValueFrom, tap, type Observable } from 'rxjs';
import { PollingOptionsSchema } from '../src/client/config.js';
import { createTaskDurationModel, nextPollDelay, type TaskDurationModel } from '../src/client/polling.js';
import { routes } from '../src/core/routes.js';
import { startEmulator, type Emulator } from '../src/emulator/index.js';
import { createClient, type RxVoiceClient, type TaskEvent } from '../src/index.js';
import { frontier, latenessAt, logNormal, shifted } from './polling-optimal.js';
import type { BenchRow } from './types.js';
import { QUICK, row, seeded, sleep, runAlone } from './util.js';

/** One task of the mix. */
export interface MixTask {
  family: 'text-to-sound' | 'translation' | 'tts';
  /** Seconds of audio asked for (text-to-sound), or characters. */
  size: number;
  /** How long the service takes, ms. */
  durationMs: number;
}

/** What one side did for one task. */
export interface TaskOutcome {
  calls: number;
  latenessMs: number;
}

const FAMILIES: readonly { family: MixTask['family']; perUnitMs: number; exponent: number; sizes: [number, number] }[] = [
  { family: 'text-to-sound', perUnitMs: 1300, exponent: 1, sizes: [1, 10] },
  { family: 'translation', perUnitMs: 9, exponent: 0.85, sizes: [100, 30_000] },
  { family: 'tts', perUnitMs: 60, exponent: 0.85, sizes: [20, 3000] },
];
/** Log-space spread of a duration around what its size predicts. */
const NOISE_SIGMA = 0.3;
/** Service time of one HTTP call in the simulation, ms. */
export const SERVICE_MS = 3;

/** `count` tasks of the realistic mix, every random choice from `random`. */
export function realisticMix(count: number, random: () => number): MixTask[] {
  const gauss = (): number => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  return Array.from({ length: count }, () => {
    const spec = FAMILIES[Math.floor(random() * FAMILIES.length)] ?? FAMILIES[0]!;
    const [low, high] = spec.sizes;
    const size = Math.round(low * (high / low) ** random() * 10) / 10;
    const durationMs = spec.perUnitMs * size ** spec.exponent * Math.exp(NOISE_SIGMA * gauss());
    return { family: spec.family, size, durationMs: Math.min(60_000, Math.max(500, durationMs)) };
  });
}

const POLICY = PollingOptionsSchema.parse({});

/**
 * Time line of one task, client clock: the creation answer arrives at 0 (the service
 * created the task `oneWayMs` earlier); a status call sent at `t` reads the service at
 * `t + oneWayMs` (task done if `t + 2 * oneWayMs + SERVICE_MS/2 >= duration`), its answer is
 * back at `t + 2 * oneWayMs + SERVICE_MS`, and the result download takes one more
 * round trip. Lateness: result event minus the real completion.
 */
function outcome(calls: number, lastSentMs: number, durationMs: number, oneWayMs: number): TaskOutcome {
  const resultAt = lastSentMs + 2 * (2 * oneWayMs + SERVICE_MS);
  return { calls, latenessMs: resultAt - (durationMs - oneWayMs) };
}

const doneAt = (sentMs: number, durationMs: number, oneWayMs: number): boolean => sentMs + seenShiftMs(oneWayMs) >= durationMs;

/** What the client sees: a call sent at t finds the task done when t >= duration - this. */
const seenShiftMs = (oneWayMs: number): number => 2 * oneWayMs + SERVICE_MS / 2;
/**
 * Lateness no schedule avoids, ms: from a call sent the moment it can see the task done
 * (completion + one way, less the shift) to the result in hand (two round trips).
 */
const fixedLatenessMs = (oneWayMs: number): number => 2 * (2 * oneWayMs + SERVICE_MS) + oneWayMs - seenShiftMs(oneWayMs);

/**
 * The client's schedule on a sequence of tasks, in virtual time, with one duration
 * model across them (as one client keeps): `nextPollDelay` and the model from
 * src/client/polling.ts, the default policy, jitter from `random`.
 */
export function simulateOurs(
  tasks: readonly MixTask[],
  oneWayMs: number,
  random: () => number,
  withSize = true,
  model: TaskDurationModel = createTaskDurationModel(),
): TaskOutcome[] {
  const roundTrip = 2 * oneWayMs + SERVICE_MS;
  return tasks.map((task) => {
    const size = withSize ? task.size : undefined;
    const prediction = model.predict(task.family, size);
    let now = 0;
    let lastSent = 0;
    for (let n = 0; ; n++) {
      now += Math.min(nextPollDelay(prediction, n, lastSent, now, POLICY, random), POLICY.deadlineMs - now);
      const sent = now;
      if (doneAt(sent, task.durationMs, oneWayMs)) {
        model.record(task.family, size, lastSent, sent);
        return outcome(n + 1, sent, task.durationMs, oneWayMs);
      }
      lastSent = sent;
      now += roundTrip;
    }
  });
}

/** `setTimeout(1000)` then a status call, in a loop, in virtual time. */
export function simulatePeer(task: MixTask, oneWayMs: number): TaskOutcome {
  let now = 0;
  for (let k = 1; ; k++) {
    now += 1000;
    if (doneAt(now, task.durationMs, oneWayMs)) return outcome(k, now, task.durationMs, oneWayMs);
    now += 2 * oneWayMs + SERVICE_MS;
  }
}

const mean = (values: readonly number[]): number => values.reduce((a, b) => a + b, 0) / values.length;
const round1 = (value: number): number => Math.round(value * 10) / 10;

/** The emulator's record of a task; its duration is set to the mix's right after creation. */
function setDuration(emulator: Emulator, taskId: string, durationMs: number): number {
  const task = emulator.context.tasks.get(taskId);
  if (!task) throw new Error(`polling: task ${taskId} unknown to the emulator`);
  task.durationMs = durationMs;
  return task.createdAt + durationMs;
}

function statusCalls(emulator: Emulator, path: string): number {
  return emulator.requests.filter((r) => r.method === 'GET' && r.path === path).length;
}

/** `size` characters of text to translate. */
const textOf = (size: number): string => 'Good morning. '.repeat(Math.ceil(size / 14)).slice(0, Math.max(1, Math.round(size)));

/** Request of a mix task: a translation of `size` characters or `size` seconds of sound. */
function task$(client: RxVoiceClient, task: MixTask): Observable<TaskEvent<unknown>> {
  if (task.family === 'text-to-sound') return client.textToSound({ prompt: 'rain on a tin roof', duration: Math.min(10, task.size) });
  return client.translate({ texts: [textOf(task.size)], source_language: 'en-us', target_language: 'de-de' });
}

async function oursReal(emulator: Emulator, client: RxVoiceClient, task: MixTask): Promise<TaskOutcome> {
  let completedAt = 0;
  let statusPath = '';
  const last = await lastValueFrom(
    task$(client, task).pipe(
      tap((event) => {
        if (event.type !== 'created') return;
        completedAt = setDuration(emulator, event.task_id, task.durationMs);
        statusPath = task.family === 'text-to-sound' ? routes.textToSoundStatus(event.task_id) : routes.translationStatus(event.task_id);
      }),
    ),
  );
  const at = Date.now();
  if (last.type !== 'result') throw new Error('polling: no result');
  return { calls: statusCalls(emulator, statusPath), latenessMs: at - completedAt };
}

async function peerReal(emulator: Emulator, task: MixTask): Promise<TaskOutcome> {
  const headers = { 'x-api-key': emulator.apiKey, 'content-type': 'application/json' };
  const sound = task.family === 'text-to-sound';
  const created = await fetch(`${emulator.baseUrl}${sound ? routes.textToSound : routes.translation}`, {
    method: 'POST',
    headers,
    body: JSON.stringify(
      sound
        ? { prompt: 'rain on a tin roof', duration: Math.min(10, task.size) }
        : { texts: [textOf(task.size)], source_language: 'en-us', target_language: 'de-de' },
    ),
  });
  const { task_id } = (await created.json()) as { task_id: string };
  const completedAt = setDuration(emulator, task_id, task.durationMs);
  const statusPath = sound ? routes.textToSoundStatus(task_id) : routes.translationStatus(task_id);
  for (;;) {
    await sleep(1000);
    const status = (await (await fetch(`${emulator.baseUrl}${statusPath}`, { headers })).json()) as { status: string; run_id: number | null };
    if (status.status === 'PENDING') continue;
    if (status.status !== 'SUCCESS' || status.run_id === null) throw new Error(`polling peer: ${status.status}`);
    const result = await fetch(`${emulator.baseUrl}${sound ? routes.textToSoundResult(status.run_id) : routes.translationResult(status.run_id)}`, { headers });
    await result.arrayBuffer();
    return { calls: statusCalls(emulator, statusPath), latenessMs: Date.now() - completedAt };
  }
}

/** Log-space spread of the equal-request families. */
export const FAMILY_SIGMA = 0.8;
/** The client's deadline (default `deadlineMs`): durations are cut there. */
const CAP_MS = POLICY.deadlineMs;

/**
 * `count` equal requests of one family whose durations are log-normal around `medianMs`
 * (sigma {@link FAMILY_SIGMA}), cut at the deadline: request size says nothing.
 */
export function familyMix(count: number, medianMs: number, random: () => number): MixTask[] {
  const gauss = (): number => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  const tasks: MixTask[] = [];
  while (tasks.length < count) {
    const durationMs = medianMs * Math.exp(FAMILY_SIGMA * gauss());
    if (durationMs < CAP_MS) tasks.push({ family: 'text-to-sound', size: 5, durationMs });
  }
  return tasks;
}

/** Mean calls and delay of outcomes, and the standard error of the mean delay. */
function summary(outcomes: readonly TaskOutcome[]): { calls: number; delay: number; delayError: number } {
  const delay = mean(outcomes.map((o) => o.latenessMs));
  const variance = mean(outcomes.map((o) => (o.latenessMs - delay) ** 2));
  return { calls: mean(outcomes.map((o) => o.calls)), delay, delayError: Math.sqrt(variance / outcomes.length) };
}

/**
 * One family of equal requests at `medianMs`: the first task (nothing learned) against
 * the loop on the same durations, and tasks 21..30 (20 seen) against the frontier.
 */
export function familyRows(medianMs: number, oneWayMs: number, counts: { first: number; clients: number }): BenchRow[] {
  const label = `polling, equal requests, median ${medianMs / 1000} s`;
  const curve = frontier(shifted(logNormal(medianMs, FAMILY_SIGMA, CAP_MS), seenShiftMs(oneWayMs)));
  const best = (calls: number): number => latenessAt(curve, calls) + fixedLatenessMs(oneWayMs);
  // the first task of a family: a fresh model for each
  const first = familyMix(counts.first, medianMs, seeded(medianMs));
  const jitter = seeded(medianMs + 1);
  const ours = summary(first.flatMap((task) => simulateOurs([task], oneWayMs, jitter, true)));
  const loop = summary(first.map((task) => simulatePeer(task, oneWayMs)));
  // tasks 21..30 of a family, over many clients
  const learnedOutcomes: TaskOutcome[] = [];
  const learnedLoop: TaskOutcome[] = [];
  const draw = seeded(medianMs + 2);
  for (let c = 0; c < counts.clients; c++) {
    const tasks = familyMix(30, medianMs, draw);
    const model = createTaskDurationModel();
    simulateOurs(tasks.slice(0, 20), oneWayMs, jitter, true, model);
    learnedOutcomes.push(...simulateOurs(tasks.slice(20), oneWayMs, jitter, true, model));
    learnedLoop.push(...tasks.slice(20).map((task) => simulatePeer(task, oneWayMs)));
  }
  const learned = summary(learnedOutcomes);
  const learnedPeer = summary(learnedLoop);
  const ms = (v: number): string => `${Math.round(v)} ms`;
  const where = `log-normal sigma ${FAMILY_SIGMA}, ${oneWayMs} ms one-way, virtual time`;
  return [
    row(
      `${label}, first task: delay`,
      ours.delay,
      loop.delay,
      'ms',
      `mean of ${counts.first} first tasks (nothing learned) vs the 1 s loop on the same durations; ${where}; frontier (best possible at the loop's ${loop.calls.toFixed(2)} calls): ${ms(best(loop.calls))}`,
      'lower',
    ),
    row(`${label}, first task: status calls`, ours.calls, loop.calls, 'calls', `mean per task, same ${counts.first} tasks`, 'lower'),
    row(
      `${label}, after 20 tasks: delay vs best schedule`,
      learned.delay,
      best(learned.calls),
      'ms',
      `peer = the frontier: least mean delay any schedule knowing the distribution gets at our ${learned.calls.toFixed(2)} calls; tasks 21-30 of ${counts.clients} clients (${learnedOutcomes.length}, ours +-${ms(learned.delayError)} standard error); ` +
        `the 1 s loop on them: ${learnedPeer.calls.toFixed(2)} calls, ${ms(learnedPeer.delay)}; at half our calls the frontier is ${ms(best(learned.calls / 2))}; every delay includes ${ms(fixedLatenessMs(oneWayMs))} no schedule avoids`,
      'lower',
    ),
  ];
}

export interface PollingOptions {
  /** Tasks of the simulated sized mix. */
  simulated?: number;
  /** First tasks per equal-request family. */
  firstTasks?: number;
  /** Clients per equal-request family (each sees 20 tasks, then 10 are measured). */
  clients?: number;
  /** Medians of the equal-request families, ms. */
  medians?: readonly number[];
  /** Real tasks per side on the emulator (0: none). */
  real?: number;
  /** Real tasks run at once per wave. */
  wave?: number;
}

/** One-way latency of the simulated rows, ms. */
const ONE_WAY_MS = 50;

export async function run(options: PollingOptions = {}): Promise<BenchRow[]> {
  const simulated = options.simulated ?? (QUICK ? 501 : 2001);
  const firstTasks = options.firstTasks ?? (QUICK ? 1000 : 4000);
  const clients = options.clients ?? (QUICK ? 50 : 200);
  const medians = options.medians ?? [1000, 3000, 10_000, 30_000, 60_000];
  const real = options.real ?? (QUICK ? 12 : 36);
  const wave = options.wave ?? 12;
  const rows: BenchRow[] = [];
  for (const medianMs of medians) rows.push(...familyRows(medianMs, ONE_WAY_MS, { first: firstTasks, clients }));

  const mix = realisticMix(simulated, seeded(14));
  const note = `${simulated} tasks of the sized mix (log-normal-like 0.5..60 s) one after another, ${ONE_WAY_MS} ms one-way, virtual time`;
  for (const { label, withSize } of [
    { label: '', withSize: true },
    { label: ', size hidden', withSize: false },
  ]) {
    const ours = simulateOurs(mix, ONE_WAY_MS, seeded(ONE_WAY_MS + 1), withSize);
    const peer = mix.map((task) => simulatePeer(task, ONE_WAY_MS));
    const name = `polling, sized mix${label}`;
    rows.push(
      row(`${name}: status calls`, round1(mean(ours.map((o) => o.calls))), round1(mean(peer.map((o) => o.calls))), 'calls', `mean per task; ${note}`, 'lower'),
      row(`${name}: delay`, Math.round(mean(ours.map((o) => o.latenessMs))), Math.round(mean(peer.map((o) => o.latenessMs))), 'ms', `mean, completion -> result event (download included), vs the 1 s loop`, 'lower'),
    );
  }

  if (real > 0) {
    const emulator = await startEmulator({ synth: 'tone', latencyMs: 50 });
    const client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.baseUrl });
    try {
      const short = realisticMix(real * 8, seeded(41)).filter((task) => task.durationMs <= 8000 && task.family !== 'tts');
      // A warm-up wave the client learns from (not counted): a client in use has seen tasks.
      await Promise.all(short.slice(real, real + wave).map((task) => oursReal(emulator, client, task)));
      const tasks = short.slice(0, real);
      const ours: TaskOutcome[] = [];
      const peer: TaskOutcome[] = [];
      for (let i = 0; i < tasks.length; i += wave) {
        const batch = tasks.slice(i, i + wave);
        const [o, p] = await Promise.all([
          Promise.all(batch.map((task) => oursReal(emulator, client, task))),
          Promise.all(batch.map((task) => peerReal(emulator, task))),
        ]);
        ours.push(...o);
        peer.push(...p);
      }
      const name = `polling mix up to 8 s, 50 ms one-way (real emulator)`;
      const real$ = `${tasks.length} tasks per side in waves of ${wave} after a warm-up wave of ours, emulator latencyMs 50`;
      rows.push(
        row(`${name}: status calls`, round1(mean(ours.map((o) => o.calls))), round1(mean(peer.map((o) => o.calls))), 'calls', `mean per task; ${real$}`, 'lower'),
        row(`${name}: lateness`, Math.round(mean(ours.map((o) => o.latenessMs))), Math.round(mean(peer.map((o) => o.latenessMs))), 'ms', 'mean, completion -> result event (download included)', 'lower'),
      );
    } finally {
      await client.close();
      await emulator.close();
    }
  }
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) runAlone(run);
