/**
 * Fault soak: a few hundred live sessions against one emulator, each with its own API key
 * and its own randomly drawn faults (seeded), run 20 at a time. Per session the
 * no-text-lost invariant holds: every sentence pushed ends exactly once as delivered audio
 * (segmentStart, audio, segmentDone), as a final skip carrying its text, or in the error's
 * `unspoken`; delivered segments keep input order (a resubmitted skip comes back later);
 * and at the end no socket or timer is left behind.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { concatMap, delay, from, of, tap } from 'rxjs';
import { createClient } from '../../src/index.js';
import { startEmulator, type Emulator, type Faults } from '../../src/emulator/index.js';
import { resubmitSkipped } from '../../src/operators/resubmitSkipped.js';
import { ConnectionError, CreditsExhaustedError, RxVoiceError } from '../../src/client/errors.js';
import type { LiveSpeechEvent } from '../../src/live/events.js';
import { activeResources, leftovers, mapLimit, randomInt, seededRandom } from './helpers.js';

const SEED = Number(process.env['RXVOICE_SOAK_SEED'] ?? 20261122);
const SESSIONS = Number(process.env['RXVOICE_SOAK_SESSIONS'] ?? 240);
const PARALLEL = 20;
const SESSION_DEADLINE_MS = 20_000;

const WORDS = ['amber', 'river', 'stone', 'quiet', 'lantern', 'meadow', 'copper', 'violet', 'harbor', 'willow', 'ember'];

interface Plan {
  index: number;
  key: string;
  sentences: string[];
  faults: Faults;
  reconnect: boolean;
  resubmit: boolean;
  /** Push each sentence whole, or as small tokens like an LLM stream. */
  tokens: boolean;
  paced: boolean;
}

function planSession(index: number, random: () => number): Plan {
  const count = randomInt(random, 2, 8);
  const sentences = Array.from({ length: count }, (_, j) => {
    const words = Array.from({ length: randomInt(random, 1, 4) }, () => WORDS[randomInt(random, 0, WORDS.length - 1)]);
    const stop = ['.', '!', '?'][randomInt(random, 0, 2)];
    return `Item q${j} ${words.join(' ')}${stop}`;
  });
  const faults: Faults = {};
  if (random() < 0.3) faults.dropAfterFrames = randomInt(random, random() < 0.1 ? 0 : 1, 4);
  if (random() < 0.35) {
    const ids = Array.from({ length: count + 2 }, (_, id) => id).filter(() => random() < 0.35);
    faults.failSynthesis = { segments: ids, times: random() < 0.7 ? 4 : randomInt(random, 1, 3) };
  }
  if (random() < 0.3) faults.synthesisLatencyMs = [0, randomInt(random, 5, 40)];
  if (random() < 0.2) faults.creditsAfterSegments = randomInt(random, 0, count);
  return {
    index,
    key: `sk-soak-${index}-${Math.floor(random() * 1e9).toString(36)}`,
    sentences,
    faults,
    reconnect: faults.dropAfterFrames !== undefined || random() < 0.3,
    resubmit: random() < 0.7,
    tokens: random() < 0.4,
    paced: random() < 0.2,
  };
}

const squash = (text: string): string => text.replace(/\s+/g, '');
const tagsIn = (text: string): number[] => [...text.matchAll(/\bq(\d+)\b/g)].map((m) => Number(m[1]));

function tokensOf(text: string): string[] {
  const out: string[] = [];
  for (let i = 0, n = 0; i < text.length; n++) {
    const len = 2 + (n % 5);
    out.push(text.slice(i, i + len));
    i += len;
  }
  return out;
}

interface Outcome {
  plan: Plan;
  events: LiveSpeechEvent[];
  error: unknown;
  ms: number;
}

// The events of a failed session are lost with toArray(); collect them as they come instead.
async function runSessionKeepingEvents(emu: Emulator, plan: Plan): Promise<Outcome> {
  const client = createClient({ apiKey: plan.key, baseUrl: emu.baseUrl });
  const pieces = plan.sentences.flatMap((s, j) => {
    const text = j === 0 ? s : ` ${s}`;
    return plan.tokens ? tokensOf(text) : [text];
  });
  const text$ = plan.paced ? from(pieces).pipe(concatMap((p) => of(p).pipe(delay(1)))) : from(pieces);
  const speak = client.speak({
    voice_id: 1,
    idle_timeout: 0.05,
    ...(plan.reconnect ? { reconnect: { maxAttempts: 4, baseDelayMs: 1, maxDelayMs: 8 } } : {}),
  });
  const operator = plan.resubmit ? resubmitSkipped(speak, { maxAttempts: 2 }) : speak;
  const events: LiveSpeechEvent[] = [];
  const started = Date.now();
  const error = await new Promise<unknown>((resolve) => {
    const deadline = setTimeout(() => {
      subscription.unsubscribe();
      resolve(new Error(`session ${plan.index} hung`));
    }, SESSION_DEADLINE_MS);
    const subscription = text$.pipe(operator).subscribe({
      next: (event) => events.push(event),
      error: (caught: unknown) => {
        clearTimeout(deadline);
        resolve(caught);
      },
      complete: () => {
        clearTimeout(deadline);
        resolve(undefined);
      },
    });
  });
  await client.close();
  return { plan, events, error, ms: Date.now() - started };
}

/** Check the invariant of one session; returns a list of violations (empty when it holds). */
function violations(outcome: Outcome): string[] {
  const { plan, events, error } = outcome;
  const problems: string[] = [];
  const delivered: { text: string; at: number }[] = [];
  const finalSkips: { text: string; at: number }[] = [];
  const resubmittedTags = new Map<number, number>();
  let current: { id: number; text: string; audio: number } | undefined;
  let lastId = -1;
  events.forEach((event, at) => {
    switch (event.type) {
      case 'segmentStart':
        // a segment abandoned by a reconnect (no segmentDone) is simply dropped
        if (event.segment_id <= lastId) problems.push(`segment id ${event.segment_id} after ${lastId}`);
        lastId = event.segment_id;
        current = { id: event.segment_id, text: event.text, audio: 0 };
        break;
      case 'audio':
        if (!current || current.id !== event.segment_id) problems.push(`audio for ${event.segment_id} outside its segment`);
        else current.audio += event.bytes.byteLength;
        break;
      case 'segmentDone':
        if (!current || current.id !== event.segment_id) problems.push(`segmentDone ${event.segment_id} without its start`);
        else if (current.audio === 0) problems.push(`segment ${event.segment_id} done without audio`);
        else delivered.push({ text: current.text, at });
        current = undefined;
        break;
      case 'reconnected':
        current = undefined;
        break;
      case 'segmentSkipped':
        if (event.segment_id <= lastId) problems.push(`skipped id ${event.segment_id} after ${lastId}`);
        lastId = event.segment_id;
        current = undefined;
        if (event.final === false) for (const tag of tagsIn(event.text)) resubmittedTags.set(tag, at);
        else finalSkips.push({ text: event.text, at });
        break;
      default:
        break;
    }
  });

  let unspoken = '';
  if (error !== undefined) {
    if (!(error instanceof RxVoiceError)) return [`untyped error: ${String(error)}`];
    const allowed =
      (error instanceof CreditsExhaustedError && plan.faults.creditsAfterSegments !== undefined) ||
      (error instanceof ConnectionError && plan.faults.dropAfterFrames !== undefined);
    if (!allowed) problems.push(`unexpected ${error.name}: ${error.message}`);
    if (typeof error.unspoken !== 'string') problems.push(`${error.name} without unspoken`);
    unspoken = error.unspoken ?? '';
  }

  // Each piece is whole sentences, verbatim (ignoring whitespace).
  const pieces = [...delivered.map((d) => d.text), ...finalSkips.map((s) => s.text), ...(unspoken ? [unspoken] : [])];
  for (const piece of pieces) {
    const expected = tagsIn(piece).map((tag) => plan.sentences[tag] ?? `<no sentence ${tag}>`).join('');
    if (squash(piece) !== squash(expected)) problems.push(`piece ${JSON.stringify(piece)} is not whole sentences`);
  }
  // Exactly once.
  const all = pieces.flatMap(tagsIn).sort((a, b) => a - b);
  const want = plan.sentences.map((_, j) => j);
  if (JSON.stringify(all) !== JSON.stringify(want)) problems.push(`accounted ${JSON.stringify(all)}, pushed ${JSON.stringify(want)}`);
  // Order: delivered/final-skipped sentences in input order, except resubmitted ones,
  // which come after their skip.
  const inPlace = [...delivered, ...finalSkips]
    .sort((a, b) => a.at - b.at)
    .flatMap((d) => tagsIn(d.text).map((tag) => ({ tag, at: d.at })))
    .filter(({ tag }) => !resubmittedTags.has(tag));
  for (let k = 1; k < inPlace.length; k++) {
    if ((inPlace[k]?.tag ?? 0) < (inPlace[k - 1]?.tag ?? 0)) problems.push(`order broken: ${inPlace.map((d) => d.tag).join(',')}`);
  }
  for (const d of delivered) {
    for (const tag of tagsIn(d.text)) {
      const skippedAt = resubmittedTags.get(tag);
      if (skippedAt !== undefined && d.at < skippedAt) problems.push(`sentence ${tag} delivered before its skip`);
    }
  }
  return problems;
}

describe('fault soak: live sessions with random faults', () => {
  let emu: Emulator;
  const random = seededRandom(SEED);
  const plans = Array.from({ length: SESSIONS }, (_, i) => planSession(i, random));

  beforeAll(async () => {
    emu = await startEmulator({
      synth: 'tone',
      toneWordSeconds: 0.01,
      retryBaseMs: 1,
      apiKeys: plans.map((p) => p.key),
      faultsByKey: Object.fromEntries(plans.map((p) => [p.key, p.faults])),
    });
  });
  afterAll(async () => {
    await emu?.close();
  });

  it(`${SESSIONS} sessions (seed ${SEED}): every sentence exactly once, in order, nothing left behind`, async () => {
    // Warm up once (module loading, first-socket costs) before taking the baseline.
    await runSessionKeepingEvents(emu, { ...plans[0]!, faults: {} });
    await new Promise<void>((resolve) => setTimeout(resolve, 50));
    const baseline = activeResources();
    const started = Date.now();
    const outcomes = await mapLimit(plans, PARALLEL, (plan) => runSessionKeepingEvents(emu, plan));
    const elapsed = Date.now() - started;

    const failures = outcomes.flatMap((o) => violations(o).map((v) => `session ${o.plan.index} ${JSON.stringify(o.plan.faults)}: ${v}`));
    expect(failures.slice(0, 10)).toEqual([]);

    const stats = {
      sessions: outcomes.length,
      elapsedMs: elapsed,
      slowestMs: Math.max(...outcomes.map((o) => o.ms)),
      completed: outcomes.filter((o) => o.error === undefined).length,
      creditsExhausted: outcomes.filter((o) => o.error instanceof CreditsExhaustedError).length,
      connectionErrors: outcomes.filter((o) => o.error instanceof ConnectionError).length,
      reconnects: outcomes.reduce((n, o) => n + o.events.filter((e) => e.type === 'reconnected').length, 0),
      skips: outcomes.reduce((n, o) => n + o.events.filter((e) => e.type === 'segmentSkipped').length, 0),
      delivered: outcomes.reduce((n, o) => n + o.events.filter((e) => e.type === 'segmentDone').length, 0),
      upgrades: emu.requests.filter((r) => r.method === 'UPGRADE').length,
    };
    console.info(`[soak] ${JSON.stringify(stats)}`);
    // The faults really happened.
    expect(stats.reconnects).toBeGreaterThan(10);
    expect(stats.skips).toBeGreaterThan(10);
    expect(stats.creditsExhausted).toBeGreaterThan(5);

    // Nothing left behind: every client socket and timer is gone (the emulator's
    // server sockets close with their peers).
    expect(await leftovers(baseline)).toEqual({});
  });
});
