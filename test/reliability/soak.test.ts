/**
 * Fault soak: a few hundred live sessions against one emulator, each with its own API key
 * and its own randomly drawn faults, run 20 at a time. The plans are drawn from the run's
 * seed (fresh each run, named in the test's title and the closing line; replay a run with
 * `RXVOICE_SEED=<seed>`). Per session the no-text-lost invariant holds: every sentence
 * pushed ends exactly once as delivered audio (segmentStart, audio, segmentDone), as a
 * final skip carrying its text, or in the error's `unspoken`; delivered segments keep input order (a resubmitted skip comes back later);
 * and at the end no socket or timer is left behind.
 *
 * The file runs with every core busy (`cpuLoadDuringFile`, busy loops in worker threads):
 * the soak must not depend on wall-clock timing (issue 28: seed 587146974 failed only on a
 * loaded machine). It soaks `SOAK_SEEDS` seeds: the run's seed, then seeds drawn from it;
 * each test's title names its seed, and `RXVOICE_SEED=<that seed>` replays it first.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Subject, concatMap, delay, from, lastValueFrom, of, tap, toArray } from 'rxjs';
import { createClient } from '../../src/index.js';
import { startEmulator, type Emulator, type Faults } from '../../src/emulator/index.js';
import { resubmitSkipped } from '../../src/operators/resubmitSkipped.js';
import { CreditsExhaustedError, LiveSessionError } from '../../src/core/errors.js';
import type { LiveSpeechEvent } from '../../src/live/events.js';
import { activeResources, leftovers, mapLimit, randomInt, seededRandom } from './helpers.js';
import { SEED } from '../setup/seed.js';
import { cpuLoadDuringFile } from '../setup/cpu-load.js';

const SESSIONS = Number(process.env['RXVOICE_SOAK_SESSIONS'] ?? 300);
const PARALLEL = 20;
/** A session still running after this long hangs (generous: the file runs under CPU load). */
const SESSION_DEADLINE_MS = 60_000;
const SOAK_SEEDS = Number(process.env['RXVOICE_SOAK_SEEDS'] ?? 3);

const load = cpuLoadDuringFile();

/** The run's seed, then `count - 1` seeds drawn from it. */
function soakSeeds(seed: number, count: number): number[] {
  const random = seededRandom(seed);
  return [seed, ...Array.from({ length: count - 1 }, () => Math.floor(random() * 0x7fffffff))];
}

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
  /** Unsubscribe (barge-in) after this many events, if set. */
  bargeInAfter: number | undefined;
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
    bargeInAfter: random() < 0.1 ? randomInt(random, 1, 12) : undefined,
  };
}

const squash = (text: string): string => text.replace(/\s+/g, '');

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
  /** The text the source actually pushed (a source cut short by an error pushed less). */
  pushed: string;
  /** The consumer unsubscribed (barge-in) before the end. */
  bargedIn: boolean;
}

/** Run one session; keeps the events of a failed session too, and what the source pushed. */
async function runSession(emu: Emulator, plan: Plan): Promise<Outcome> {
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
  const pushed: string[] = [];
  const started = Date.now();
  let bargedIn = false;
  const error = await new Promise<unknown>((resolve) => {
    const deadline = setTimeout(() => {
      subscription.unsubscribe();
      resolve(new Error(`session ${plan.index} hung`));
    }, SESSION_DEADLINE_MS);
    const subscription = text$.pipe(tap((text) => pushed.push(text)), operator).subscribe({
      next: (event) => {
        events.push(event);
        if (plan.bargeInAfter !== undefined && events.length >= plan.bargeInAfter && !bargedIn) {
          bargedIn = true;
          clearTimeout(deadline);
          // after this synchronous emission: unsubscribe tears the session down
          queueMicrotask(() => subscription.unsubscribe());
          resolve(undefined);
        }
      },
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
  return { plan, events, error, ms: Date.now() - started, pushed: pushed.join(''), bargedIn };
}

/**
 * Can `u` be split into an interleaving of `a` and `b` (both wholly used, each in order)?
 * (The unspoken text holds the original text not yet spoken and resubmitted copies.)
 */
function isInterleaving(u: string, a: string, b: string): boolean {
  if (u.length !== a.length + b.length) return false;
  // reachable[j]: a[0..i-j) and b[0..j) can make u[0..i)
  let reachable = new Array<boolean>(b.length + 1).fill(false);
  reachable[0] = true;
  for (let j = 1; j <= b.length; j++) reachable[j] = reachable[j - 1]! && b[j - 1] === u[j - 1];
  for (let i = 1; i <= a.length; i++) {
    const next = new Array<boolean>(b.length + 1).fill(false);
    next[0] = reachable[0]! && a[i - 1] === u[i - 1];
    for (let j = 1; j <= b.length; j++) {
      next[j] = (reachable[j]! && a[i - 1] === u[i + j - 1]) || (next[j - 1]! && b[j - 1] === u[i + j - 1]);
    }
    reachable = next;
  }
  return reachable[b.length] ?? false;
}

/**
 * Check the invariant of one session; returns the violations (empty when it holds).
 *
 * The pushed text (whitespace removed) is walked with a cursor: every delivered segment,
 * skip and final skip must continue it exactly where the previous one ended (order kept,
 * nothing twice, nothing lost), except resubmitted text: a skip that is resubmitted
 * (`final: false`) owes its text, which must come back later (delivered, finally
 * skipped, or in `unspoken`). The error's `unspoken` must hold exactly the rest of the
 * pushed text and whatever is still owed.
 */
function violations(outcome: Outcome): string[] {
  const { plan, events, error } = outcome;
  const problems: string[] = [];
  const full = squash(outcome.pushed);
  let cursor = 0;
  let owed = '';
  let current: { id: number; text: string; audio: number; riff: boolean } | undefined;
  let lastId = -1;

  /** Account for `piece` (a delivered or skipped text); false when it fits nowhere. */
  const account = (piece: string, resubmitted: boolean): boolean => {
    const p = squash(piece);
    if (p === '') return true;
    // original text, then (or else) owed text, in either order, split anywhere
    for (let k = p.length; k >= 0; k--) {
      const head = p.slice(0, k);
      const tail = p.slice(k);
      if (full.startsWith(head, cursor) && owed.startsWith(tail)) {
        cursor += head.length;
        owed = owed.slice(tail.length);
        if (resubmitted) owed += p;
        return true;
      }
      if (owed.startsWith(head) && full.startsWith(tail, cursor)) {
        owed = owed.slice(head.length);
        cursor += tail.length;
        if (resubmitted) owed += p;
        return true;
      }
    }
    return false;
  };

  for (const event of events) {
    switch (event.type) {
      case 'segmentStart':
        // a segment abandoned by a reconnect (no segmentDone) is dropped: no account
        if (event.segment_id <= lastId) problems.push(`segment id ${event.segment_id} after ${lastId}`);
        lastId = event.segment_id;
        current = { id: event.segment_id, text: event.text, audio: 0, riff: false };
        break;
      case 'audio':
        if (!current || current.id !== event.segment_id) problems.push(`audio for ${event.segment_id} outside its segment`);
        else {
          // the segment's audio is one playable WAV file: it starts with its header
          if (current.audio === 0) current.riff = Buffer.from(event.bytes.subarray(0, 4)).toString('latin1') === 'RIFF';
          current.audio += event.bytes.byteLength;
        }
        break;
      case 'segmentDone':
        if (!current || current.id !== event.segment_id) problems.push(`segmentDone ${event.segment_id} without its start`);
        else if (current.audio <= 44 || !current.riff) problems.push(`segment ${event.segment_id} done without WAV audio`);
        else if (!account(current.text, false)) problems.push(`delivered ${JSON.stringify(current.text)} out of place`);
        current = undefined;
        break;
      case 'reconnected':
        current = undefined;
        break;
      case 'segmentSkipped':
        if (event.segment_id <= lastId) problems.push(`skipped id ${event.segment_id} after ${lastId}`);
        lastId = event.segment_id;
        current = undefined;
        if (!account(event.text, event.final === false)) problems.push(`skipped ${JSON.stringify(event.text)} out of place`);
        break;
      default:
        break;
    }
  }

  // A consumer that left early got a prefix: in order, nothing twice (checked above).
  if (outcome.bargedIn) return problems;
  let unspoken = '';
  if (error !== undefined) {
    if (!(error instanceof LiveSessionError)) return [`untyped error: ${String(error)}`];
    const allowed =
      (error instanceof CreditsExhaustedError && plan.faults.creditsAfterSegments !== undefined) ||
      (error.code === 'connection' && plan.faults.dropAfterFrames !== undefined);
    if (!allowed) problems.push(`unexpected ${error.name}: ${error.message}`);
    if (typeof error.unspoken !== 'string') problems.push(`${error.name} without unspoken`);
    unspoken = error.unspoken;
  } else if (outcome.pushed !== plan.sentences.join(' ')) {
    problems.push('completed without pushing the whole text');
  }
  if (!isInterleaving(squash(unspoken), full.slice(cursor), owed)) {
    problems.push(`unspoken ${JSON.stringify(unspoken)} is not the rest ${JSON.stringify(full.slice(cursor))} + owed ${JSON.stringify(owed)}`);
  }
  return problems;
}

describe.each(soakSeeds(SEED, SOAK_SEEDS))('fault soak under CPU load: live sessions with random faults (seed %i)', (seed) => {
  let emu: Emulator;
  const random = seededRandom(seed);
  // the run's own seed soaks SESSIONS sessions, the seeds drawn from it a third as many each
  const sessions = seed === SEED ? SESSIONS : Math.ceil(SESSIONS / 3);
  const plans = Array.from({ length: sessions }, (_, i) => planSession(i, random));

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

  it(`${sessions} sessions (seed ${seed}, replay with RXVOICE_SEED=${seed}): every sentence exactly once, in order, nothing left behind`, async () => {
    // the load really runs (one busy loop per core, unless RXVOICE_CPU_LOAD says otherwise)
    expect(load.running()).toBe(load.requested);
    // Warm up once (module loading, first-socket costs) before taking the baseline.
    await runSession(emu, { ...plans[0]!, faults: {} });
    await new Promise<void>((resolve) => setTimeout(resolve, 50));
    const baseline = activeResources();
    const started = Date.now();
    const outcomes = await mapLimit(plans, PARALLEL, (plan) => runSession(emu, plan));
    const elapsed = Date.now() - started;

    const failures = outcomes.flatMap((o) => violations(o).map((v) => `session ${o.plan.index} ${JSON.stringify(o.plan.faults)}: ${v}`));
    expect(failures.slice(0, 10)).toEqual([]);

    const stats = {
      sessions: outcomes.length,
      elapsedMs: elapsed,
      slowestMs: Math.max(...outcomes.map((o) => o.ms)),
      completed: outcomes.filter((o) => o.error === undefined && !o.bargedIn).length,
      bargedIn: outcomes.filter((o) => o.bargedIn).length,
      creditsExhausted: outcomes.filter((o) => o.error instanceof CreditsExhaustedError).length,
      connectionErrors: outcomes.filter((o) => o.error instanceof LiveSessionError && o.error.code === 'connection').length,
      reconnects: outcomes.reduce((n, o) => n + o.events.filter((e) => e.type === 'reconnected').length, 0),
      skips: outcomes.reduce((n, o) => n + o.events.filter((e) => e.type === 'segmentSkipped').length, 0),
      delivered: outcomes.reduce((n, o) => n + o.events.filter((e) => e.type === 'segmentDone').length, 0),
      upgrades: emu.requests.filter((r) => r.method === 'UPGRADE').length,
    };
    console.info(`[soak] seed ${seed}, ${load.running()} busy loops: ${JSON.stringify(stats)}`);
    // The faults really happened.
    expect(stats.reconnects).toBeGreaterThan(sessions / 30);
    expect(stats.skips).toBeGreaterThan(sessions / 30);
    expect(stats.creditsExhausted).toBeGreaterThan(sessions / 60);

    // Nothing left behind: every client socket and timer is gone (the emulator's
    // server sockets close with their peers).
    expect(await leftovers(baseline)).toEqual({});
  }, 240_000);
});

describe('soak regressions', () => {
  it('resubmitSkipped: a skip held for resubmission is in unspoken when the session then fails (4402)', async () => {
    // Found by the soak (seed 20261122, session 124): the skipped text was reported with
    // `final: false` and held until a sentence boundary, then credits ran out and the
    // error's `unspoken` lacked it: the text was lost.
    const emu = await startEmulator({
      synth: 'tone',
      toneWordSeconds: 0.01,
      retryBaseMs: 1,
      faults: { failSynthesis: { segments: [0], times: 4 }, creditsAfterSegments: 1 },
    });
    try {
      const client = createClient({ apiKey: emu.apiKey, baseUrl: emu.baseUrl });
      const text$ = new Subject<string>();
      const events: LiveSpeechEvent[] = [];
      const done = lastValueFrom(
        text$.pipe(resubmitSkipped(client.speak({ voice_id: 1, idle_timeout: 0.05 }), { maxAttempts: 2 }), tap((e) => events.push(e)), toArray()),
      ).then(
        () => undefined,
        (error: unknown) => error,
      );
      // "Second one" has no boundary yet: the skipped text is held until it has one.
      text$.next('First one here! Second one');
      const error = await done;
      expect(error).toBeInstanceOf(CreditsExhaustedError);
      expect(events.filter((e) => e.type === 'segmentSkipped')).toMatchObject([{ text: 'First one here!', final: false }]);
      const unspoken = (error as CreditsExhaustedError).unspoken;
      expect(squash(unspoken).length).toBe(squash('First one here! Second one').length);
      expect(unspoken).toContain('Second one');
      expect(unspoken).toContain('First one here!');
      await client.close();
    } finally {
      await emu.close();
    }
  });
});
