/**
 * What one open live session costs the client: heap per open session and CPU per extra
 * sentence, `client.speak` (ours) against a bare `ws` client doing the same protocol
 * (peer: JSON frames, no validation, no ledger), each in a fresh process of its own, the
 * emulator (tone synth) in a third.
 *
 * Per side: open `sessions` sessions, each speaks one sentence and stays open; after a
 * forced GC, heap per session = (heap now - heap before the first socket) / sessions.
 * Then every session speaks `sentences` more, one at a time (the next once the last one's
 * `segment.done` arrived): CPU of the client process over that phase / sentences spoken.
 * Then as many sentences again, measured apart (the second CPU row): the first round also
 * pays V8 optimizing again the code it threw away at the heap measure's forced GC.
 * Medians of `repeats` fresh process pairs. Targets: heap ratio <= 1.5, CPU ratio <= 1.3.
 *
 * Every sentence of the bench ends in an undecided stop with no next token, so ours holds
 * it `boundaryHoldMs` (250 ms) before sending, and the bare client does not: four more rows
 * (each round) take that apart, ours with `clientBoundaries: false` against the bare
 * client, and ours against a bare client that waits 250 ms before each send as ours does
 * (docs/performance.md, rounds 6 and 13).
 *
 * `process.cpuUsage()` counts every thread of the process. Where Linux counts each thread
 * (`/proc/self/task/<tid>/schedstat`), two more rows give the main (event-loop) thread's
 * share of both rounds: the rest is V8's helper threads, its optimizing compiler and
 * concurrent GC marking (docs/performance.md, round 7).
 *
 * Talkers (two more rows, since 2026-11-27): each sentence said as word tokens, one every
 * 333 ms (3 words/s, as `emulator-capacity`'s talkers and an LLM read aloud), the sessions at
 * phases spread evenly over the beat; ours releases each word at once (no stop after it) and
 * holds the last one's stop, the bare client sends every token as it comes. CPU per sentence
 * of the two rounds, the idle waits between tokens included on both sides.
 *
 * Longer rounds (two more rows, since 2026-11-28): both rounds again at 10 sentences a session
 * instead of 3, whole sentences as above. The first round's extra over the second is V8's first
 * optimization of the code run once a sentence, paid once a process: the more sentences it
 * spreads over, the nearer the first round comes to the second.
 *
 * Each process loads only what it runs (since 2026-11-27): the bare client's has Node and
 * `ws`, not rxvoice, rxjs or the emulator, as a bare client's process would; ours has rxvoice
 * (and its rxjs and ws), not the emulator. Before, both client processes loaded all of it
 * (about 13 MB of heap a process, which the whole-heap collections mark on both sides).
 *
 * Run alone: `npx tsx bench/session-cost.ts [sessions]`.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { writeHeapSnapshot } from 'node:v8';
import type { Observer, Subject } from 'rxjs';
import { WebSocket } from 'ws';
import type { createClient } from '../src/index.js';
import type { LiveSpeechEvent } from '../src/live/index.js';
import type { BenchRow } from './types.js';
import { QUICK, gc, median, nextMessage, round, row, runAlone, sentences } from './util.js';

export interface SessionCostOptions {
  /** Open sessions per process. */
  sessions?: number;
  /** Sentences each session speaks after the first (the CPU phase). */
  sentences?: number;
  /** Fresh process pairs per side. */
  repeats?: number;
  /** Fresh process pairs of talkers (word tokens at 3 words/s); 0: no talker rows. */
  talkerRepeats?: number;
  /** Sentences each talker speaks a round. */
  talkerSentences?: number;
  /** Sentences a session a round in the longer pairs (whole sentences, as the main rows); 0: no such rows. */
  longSentences?: number;
  /** Fresh process pairs of the longer rounds. */
  longRepeats?: number;
}

interface Cost {
  heapPerSessionKB: number;
  /** The first `sentences` a session after the forced GC of the heap measure. */
  cpuPerSentenceUs: number;
  /** As many sentences again, right after: the code V8 threw away at that GC is optimized again. */
  cpuPerSentenceSecondUs: number;
  /** Of `cpuPerSentenceUs`, the main (event-loop) thread's; the rest ran on V8's helper threads (optimizing compiler, concurrent GC). NaN where Linux's per-thread counters are missing. */
  mainThreadPerSentenceUs: number;
  /** The same, of the second round. */
  mainThreadPerSentenceSecondUs: number;
}

const here = fileURLToPath(import.meta.url);
// evidence: SESSION_COST_CLIENT_FLAGS='--trace-deopt --trace-opt' gives V8 flags to the client
// processes alone (not the emulator's); the client then prints a line at each end of its
// sentence phase, so what V8 did in the measured phase can be cut out of the output
const clientFlags = process.env['SESSION_COST_CLIENT_FLAGS']?.split(' ').filter(Boolean) ?? [];
// evidence: SESSION_COST_TOKENS=1 has both sides say each sentence as word tokens (split before
// its spaces), each sent as it comes, as an LLM's stream is (docs/performance.md, round 9)
const asTokens = process.env['SESSION_COST_TOKENS'] === '1';
/** How a client process's sessions say their sentences: whole at once, or as a talker (word tokens at 3 words/s). */
type Pace = 'whole' | 'talker';
/** A talker's beat: one word every 333 ms. */
const TALKER_BEAT_MS = 333;
/** The pace of this client process (set once, when it starts). */
let pace: Pace = 'whole';
/** A sentence as it is said: whole, or as word tokens (split before their spaces). */
const said = (text: string): readonly string[] => (asTokens || pace === 'talker' ? (text.match(/\s*\S+\s*$|\s*\S+/g) ?? [text]) : [text]);
/**
 * Say `text`'s tokens through `send`: all at once, or (a talker, `paced`) the first now and
 * each next one a beat later.
 */
function sayTokens(text: string, paced: boolean, send: (token: string) => void): void {
  const tokens = said(text);
  if (!paced) for (const token of tokens) send(token);
  else tokens.forEach((token, i) => (i === 0 ? send(token) : setTimeout(() => send(token), i * TALKER_BEAT_MS)));
}
/** Who runs in a client process: ours (with client boundaries, or without), the bare client (sending at once, or 250 ms later). */
type Who = 'ours' | 'ours-no-boundaries' | 'peer' | 'peer-holding';
/** The bare client's wait in `peer-holding`: ours's default `boundaryHoldMs`. */
const PEER_HOLD_MS = 250;

const child = (args: string[]): ChildProcess =>
  fork(here, args, {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    execArgv: [...process.execArgv, '--expose-gc', ...(args[0] === '--client' ? clientFlags : [])],
  });

async function measure(who: Who, sessions: number, extra: number, pace: Pace = 'whole'): Promise<Cost> {
  const emulator = child(['--emulator']);
  try {
    const addresses = await nextMessage<{ baseUrl: string; wsUrl: string; apiKey: string }>(emulator, 'addresses');
    const client = child(['--client', JSON.stringify({ ...addresses, who, sessions, extra, pace })]);
    try {
      return await nextMessage<Cost>(client, 'cost');
    } finally {
      client.kill();
    }
  } finally {
    emulator.kill();
  }
}

export async function run(options: SessionCostOptions = {}): Promise<BenchRow[]> {
  const sessions = options.sessions ?? (QUICK ? 200 : 1000);
  const extra = options.sentences ?? 3;
  const repeats = options.repeats ?? (QUICK ? 1 : 3);
  const ours: Cost[] = [];
  const peer: Cost[] = [];
  const oursPlain: Cost[] = [];
  const peerHolding: Cost[] = [];
  for (let i = 0; i < repeats; i++) {
    ours.push(await measure('ours', sessions, extra));
    peer.push(await measure('peer', sessions, extra));
    oursPlain.push(await measure('ours-no-boundaries', sessions, extra));
    peerHolding.push(await measure('peer-holding', sessions, extra));
  }
  const talkerRepeats = options.talkerRepeats ?? (QUICK ? 1 : 2);
  const talkerSentences = options.talkerSentences ?? (QUICK ? 1 : 3); // quick: well inside its 60 s cap on a busy machine
  const oursTalking: Cost[] = [];
  const peerTalking: Cost[] = [];
  for (let i = 0; i < talkerRepeats; i++) {
    oursTalking.push(await measure('ours', sessions, talkerSentences, 'talker'));
    peerTalking.push(await measure('peer', sessions, talkerSentences, 'talker'));
  }
  // the same rounds with more sentences a session: what a process pays once (V8's first
  // optimization of the code run once a sentence) spread over more of them
  const longSentences = options.longSentences ?? (QUICK ? 0 : 10);
  const longRepeats = longSentences > 0 ? (options.longRepeats ?? 2) : 0;
  const oursLong: Cost[] = [];
  const peerLong: Cost[] = [];
  for (let i = 0; i < longRepeats; i++) {
    oursLong.push(await measure('ours', sessions, longSentences));
    peerLong.push(await measure('peer', sessions, longSentences));
  }
  const m = (costs: Cost[], k: keyof Cost): number => median(costs.map((c) => c[k]));
  const note = `${sessions} sessions, medians of ${repeats} fresh process pairs; peer: a bare ws client with the same protocol in its own process`;
  return [
    row(`session-cost: client heap per open live session, ${sessions} sessions`, m(ours, 'heapPerSessionKB'), m(peer, 'heapPerSessionKB'), 'KB', `${note}; target ratio <= 1.5`, 'lower'),
    row(`session-cost: client CPU per extra sentence, ${sessions} sessions`, m(ours, 'cpuPerSentenceUs'), m(peer, 'cpuPerSentenceUs'), 'us', `${note}; ${extra} sentences a session, one at a time; target ratio <= 1.3`, 'lower'),
    row(
      `session-cost: client CPU per extra sentence, second round, ${sessions} sessions`,
      m(ours, 'cpuPerSentenceSecondUs'),
      m(peer, 'cpuPerSentenceSecondUs'),
      'us',
      `${note}; the next ${extra} sentences a session, after the row above: the round above is the process's warm-up, V8 first optimizing the code run once a sentence (docs/performance.md, round 10)`,
      'lower',
    ),
    row(
      `session-cost: client CPU per extra sentence, ours with clientBoundaries false, ${sessions} sessions`,
      m(oursPlain, 'cpuPerSentenceUs'),
      m(peer, 'cpuPerSentenceUs'),
      'us',
      `${note}; the first round's control: ours sending each sentence at once (nothing held; the ledger's sentence engine reads it, as with the boundaries, where it takes the gate's), against the same bare client`,
      'lower',
    ),
    row(
      `session-cost: client CPU per extra sentence, peer waiting ${PEER_HOLD_MS} ms as ours holds, ${sessions} sessions`,
      m(ours, 'cpuPerSentenceUs'),
      m(peerHolding, 'cpuPerSentenceUs'),
      'us',
      `${note}; the first round's other control: the bare client sending each sentence ${PEER_HOLD_MS} ms after it is said, as ours holds each sentence's undecided last stop for boundaryHoldMs (the wait costs a client CPU of its own: its timers, and what lives through it)`,
      'lower',
    ),
    row(
      `session-cost: client CPU per extra sentence, second round, ours with clientBoundaries false, ${sessions} sessions`,
      m(oursPlain, 'cpuPerSentenceSecondUs'),
      m(peer, 'cpuPerSentenceSecondUs'),
      'us',
      `${note}; as the row above, ours sending each sentence at once (nothing held): what the bench's hold of every sentence's last stop costs, against the same bare client`,
      'lower',
    ),
    row(
      `session-cost: client CPU per extra sentence, second round, peer waiting ${PEER_HOLD_MS} ms as ours holds, ${sessions} sessions`,
      m(ours, 'cpuPerSentenceSecondUs'),
      m(peerHolding, 'cpuPerSentenceSecondUs'),
      'us',
      `${note}; as the second-round row, the bare client sending each sentence ${PEER_HOLD_MS} ms after it is said (a timer of its own), as ours holds each sentence's undecided last stop for boundaryHoldMs: the same wait on both sides`,
      'lower',
    ),
    ...mainThreadRows(ours, peer, sessions, note),
    ...talkerRows(oursTalking, peerTalking, sessions, talkerSentences),
    ...longRows(oursLong, peerLong, sessions, longSentences),
  ];
}

/**
 * The first and second rounds again with `sentencesEach` sentences a session (none when no
 * such pairs ran): the first round's extra over the second is work a process does once, so
 * it weighs less on each sentence the more sentences a round has (docs/performance.md, round 17).
 */
function longRows(ours: Cost[], peer: Cost[], sessions: number, sentencesEach: number): BenchRow[] {
  if (ours.length === 0) return [];
  const m = (costs: Cost[], k: 'cpuPerSentenceUs' | 'cpuPerSentenceSecondUs'): number => median(costs.map((c) => c[k]));
  const note =
    `${sessions} sessions, medians of ${ours.length} fresh process pairs; whole sentences as in the rows above, ${sentencesEach} a session a round instead of 3: ` +
    `what the first round pays once a process (V8 first optimizing the code run once a sentence) spread over ${sentencesEach * sessions} sentences`;
  return [
    row(`session-cost: client CPU per extra sentence, ${sentencesEach} sentences a session, ${sessions} sessions`, m(ours, 'cpuPerSentenceUs'), m(peer, 'cpuPerSentenceUs'), 'us', note, 'lower'),
    row(
      `session-cost: client CPU per extra sentence, second round, ${sentencesEach} sentences a session, ${sessions} sessions`,
      m(ours, 'cpuPerSentenceSecondUs'),
      m(peer, 'cpuPerSentenceSecondUs'),
      'us',
      `${note}; the round after the row above`,
      'lower',
    ),
  ];
}

/** The talkers' two rows (none when no talker pairs ran). */
function talkerRows(ours: Cost[], peer: Cost[], sessions: number, sentencesEach: number): BenchRow[] {
  if (ours.length === 0) return [];
  const m = (costs: Cost[], k: 'cpuPerSentenceUs' | 'cpuPerSentenceSecondUs'): number => median(costs.map((c) => c[k]));
  const note =
    `${sessions} sessions, medians of ${ours.length} fresh process pairs; each sentence said as word tokens, one every ${TALKER_BEAT_MS} ms (3 words/s), the sessions' beats spread evenly; ` +
    `ours releases each word at once and holds the last one's stop, the bare ws client sends every token as it comes; ${sentencesEach} sentences a session a round, the waits between tokens included`;
  return [
    row(`session-cost: client CPU per sentence, ${sessions} talkers (word tokens at 3 words/s)`, m(ours, 'cpuPerSentenceUs'), m(peer, 'cpuPerSentenceUs'), 'us', `${note}; target ratio <= 1.3`, 'lower'),
    row(
      `session-cost: client CPU per sentence, second round, ${sessions} talkers (word tokens at 3 words/s)`,
      m(ours, 'cpuPerSentenceSecondUs'),
      m(peer, 'cpuPerSentenceSecondUs'),
      'us',
      `${note}; the round after the row above`,
      'lower',
    ),
  ];
}

/**
 * The two CPU rows' main (event-loop) thread alone, where Linux counts each thread
 * (`/proc/self/task/<tid>/schedstat`): what the sessions cost the event loop, apart from V8's
 * helper threads (the optimizing compiler's first optimization of the hot path, concurrent GC
 * marking), which run beside it on another core. No rows elsewhere.
 */
function mainThreadRows(ours: Cost[], peer: Cost[], sessions: number, note: string): BenchRow[] {
  // NaN (no counter) arrives over IPC as null
  if (![...ours, ...peer].every((c) => Number.isFinite(c.mainThreadPerSentenceUs) && Number.isFinite(c.mainThreadPerSentenceSecondUs))) return [];
  const m = (costs: Cost[], k: 'mainThreadPerSentenceUs' | 'mainThreadPerSentenceSecondUs'): number => median(costs.map((c) => c[k]));
  const what = "of the client process's CPU in the CPU row, its main (event-loop) thread's alone; the rest ran on V8's helper threads (optimizing compiler, concurrent GC), on another core";
  return [
    row(`session-cost: client main-thread CPU per extra sentence, ${sessions} sessions`, m(ours, 'mainThreadPerSentenceUs'), m(peer, 'mainThreadPerSentenceUs'), 'us', `${note}; ${what}`, 'lower'),
    row(`session-cost: client main-thread CPU per extra sentence, second round, ${sessions} sessions`, m(ours, 'mainThreadPerSentenceSecondUs'), m(peer, 'mainThreadPerSentenceSecondUs'), 'us', `${note}; ${what}, of the second round`, 'lower'),
  ];
}

// ---------------------------------------------------------------------------
// Child processes
// ---------------------------------------------------------------------------

async function emulatorChild(): Promise<void> {
  const { startEmulator } = await import('../src/emulator/index.js');
  const emulator = await startEmulator({ synth: 'tone', liveSessionsPerKey: 100_000, toneWordSeconds: 0.01, log: false });
  process.on('disconnect', () => void emulator.close().then(() => process.exit(0)));
  process.send?.({ addresses: { baseUrl: emulator.baseUrl, wsUrl: emulator.wsUrl, apiKey: emulator.apiKey } });
}

/** One open session: `say(text)` resolves at that sentence's `segment.done`; `paced`: as a talker. */
interface OpenSession {
  say(text: string, paced?: boolean): Promise<void>;
}

function peerOpen(wsUrl: string, apiKey: string, holdMs: number): Promise<OpenSession> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(wsUrl, { headers: { 'x-api-key': apiKey } });
    let done: (() => void) | undefined;
    socket.on('error', reject);
    socket.on('open', () => socket.send(JSON.stringify({ type: 'session.start', voice_id: 1, language: 'en-us', output_format: 'wav' })));
    socket.on('message', (data, isBinary) => {
      if (isBinary) return;
      const frame = JSON.parse(String(data)) as { type: string };
      if (frame.type === 'session.ready') {
        resolve({
          say: (text, paced = false) =>
            new Promise<void>((r) => {
              done = r;
              const send = (): void => sayTokens(text, paced, (token) => socket.send(JSON.stringify({ type: 'text.chunk', text: token })));
              if (holdMs > 0) setTimeout(send, holdMs);
              else send();
            }),
        });
      } else if (frame.type === 'segment.done') done?.();
    });
  });
}

/**
 * Ours: a `client.speak` subscription. The harness's observer is this object (prototype
 * methods): an object literal of `next` and `error` arrows would add two named closures a
 * session under tsx (esbuild keepNames gives each a 256-byte property array), 0.5 KB of the
 * harness's own that the bare client's harness does not pay.
 */
class OursSession implements OpenSession, Observer<LiveSpeechEvent> {
  private done: (() => void) | undefined;

  constructor(
    private readonly text$: Subject<string>,
    client: ReturnType<typeof createClient>,
    clientBoundaries: boolean,
  ) {
    this.text$.pipe(client.speak({ voice_id: 1, language: 'en-us', output_format: 'wav', clientBoundaries })).subscribe(this);
  }

  say(text: string, paced = false): Promise<void> {
    return new Promise<void>((r) => {
      this.done = r;
      sayTokens(text, paced, (token) => this.text$.next(token));
    });
  }

  next(event: LiveSpeechEvent): void {
    if (event.type === 'segmentDone') this.done?.();
  }

  error(error: unknown): void {
    console.error(error);
  }

  complete(): void {}
}

/** Ours's process loads rxvoice (and rxjs) here, the bare client's never: the maker of one session. */
async function oursOpener(apiKey: string, baseUrl: string, clientBoundaries: boolean): Promise<() => OpenSession> {
  const [{ createClient }, { Subject }] = await Promise.all([import('../src/index.js'), import('rxjs')]);
  const client = createClient({ apiKey, baseUrl });
  return () => new OursSession(new Subject<string>(), client, clientBoundaries);
}

async function clientChild(args: { baseUrl: string; wsUrl: string; apiKey: string; who: Who; sessions: number; extra: number; pace: Pace }): Promise<void> {
  pace = args.pace;
  const texts = sentences(2 * args.extra + 1, 6, 7);
  const newOurs = args.who.startsWith('ours') ? await oursOpener(args.apiKey, args.baseUrl, args.who === 'ours') : undefined;
  // evidence: SESSION_COST_PEER_LOADS=1 has the bare client's process load rxvoice and rxjs too,
  // unused, so its heap holds the same modules as ours's (docs/performance.md, round 14)
  if (!newOurs && process.env['SESSION_COST_PEER_LOADS'] === '1') await Promise.all([import('../src/index.js'), import('rxjs')]);
  gc();
  const heapBefore = process.memoryUsage().heapUsed;
  const open: OpenSession[] = [];
  // open in batches of 100 (the emulator's accept queue is never overrun), each speaks its first sentence
  for (let at = 0; at < args.sessions; at += 100) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(100, args.sessions - at) }, async () => {
        const session = newOurs ? newOurs() : await peerOpen(args.wsUrl, args.apiKey, args.who === 'peer-holding' ? PEER_HOLD_MS : 0);
        await session.say(texts[0] as string);
        return session;
      }),
    );
    open.push(...batch);
  }
  gc();
  const heapPerSessionKB = (process.memoryUsage().heapUsed - heapBefore) / args.sessions / 1024;
  // evidence: SESSION_COST_SNAPSHOT=dir writes a heap snapshot of the open sessions (read it
  // with `npx tsx bench/tools/heap-by-constructor.ts <ours> <peer>`)
  const snapshotDir = process.env['SESSION_COST_SNAPSHOT'];
  if (snapshotDir) writeHeapSnapshot(`${snapshotDir}/session-cost-${args.who}.heapsnapshot`);
  // evidence: SESSION_COST_PROFILE=dir writes a CPU profile of the sentence phase alone (read it
  // with `npx tsx bench/tools/summarize-profile.ts <file>`)
  const profileDir = process.env['SESSION_COST_PROFILE'];
  const inspector = profileDir ? new Session() : undefined;
  if (inspector) {
    inspector.connect();
    await inspector.post('Profiler.enable');
    await inspector.post('Profiler.setSamplingInterval', { interval: 50 });
    await inspector.post('Profiler.start');
  }
  if (clientFlags.length > 0) console.log(`--- session-cost: sentence phase starts (${args.who})`);
  const cpu = await cpuOfRound(open, texts.slice(1, args.extra + 1));
  if (clientFlags.length > 0) console.log(`--- session-cost: sentence phase ends (${args.who})`);
  if (inspector) {
    const { profile } = await inspector.post('Profiler.stop');
    writeFileSync(`${profileDir}/session-cost-${args.who}.cpuprofile`, JSON.stringify(profile));
  }
  if (inspector) await inspector.post('Profiler.start'); // the second round's profile: session-cost-<who>-second.cpuprofile
  // evidence: SESSION_COST_ALLOC=dir samples what the second round allocates, garbage included
  // (read it with `npx tsx bench/tools/summarize-allocations.ts <file>`)
  const allocDir = process.env['SESSION_COST_ALLOC'];
  const sampler = allocDir ? new Session() : undefined;
  if (sampler) {
    sampler.connect();
    // the two `include...` flags (garbage too) are newer than @types/node's protocol types
    const sampling = { samplingInterval: 1024, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true };
    await sampler.post('HeapProfiler.startSampling', sampling as { samplingInterval: number });
  }
  const second = await cpuOfRound(open, texts.slice(args.extra + 1));
  if (sampler) {
    const { profile } = await sampler.post('HeapProfiler.stopSampling');
    writeFileSync(`${allocDir}/session-cost-${args.who}.heapprofile`, JSON.stringify(profile));
    sampler.disconnect();
  }
  if (inspector) {
    const { profile } = await inspector.post('Profiler.stop');
    writeFileSync(`${profileDir}/session-cost-${args.who}-second.cpuprofile`, JSON.stringify(profile));
    inspector.disconnect();
  }
  if (clientFlags.length > 0) console.log(`--- session-cost: second round ends (${args.who})`);
  const perSentence = (us: number): number => round(us / (args.sessions * args.extra));
  const cost: Cost = {
    heapPerSessionKB: round(heapPerSessionKB),
    cpuPerSentenceUs: perSentence(cpu.all),
    cpuPerSentenceSecondUs: perSentence(second.all),
    mainThreadPerSentenceUs: perSentence(cpu.main),
    mainThreadPerSentenceSecondUs: perSentence(second.main),
  };
  process.send?.({ cost });
}

/**
 * CPU of this process (all threads, us) and of its main thread alone while every session
 * speaks `texts`, one sentence at a time; talkers start at phases spread evenly over a beat.
 */
async function cpuOfRound(open: OpenSession[], texts: string[]): Promise<{ all: number; main: number }> {
  const main0 = mainThreadCpuUs();
  const cpu0 = process.cpuUsage();
  const talker = pace === 'talker';
  await Promise.all(
    open.map(async (session, i) => {
      if (talker) await new Promise((r) => setTimeout(r, (i * TALKER_BEAT_MS) / open.length));
      for (const text of texts) await session.say(text, talker);
    }),
  );
  const cpu = process.cpuUsage(cpu0);
  return { all: cpu.user + cpu.system, main: mainThreadCpuUs() - main0 };
}

/**
 * CPU time of the main thread, in us: Linux's per-thread scheduler counter (ns on the CPU);
 * NaN elsewhere. `process.cpuUsage()` counts every thread, V8's helper threads included.
 */
function mainThreadCpuUs(): number {
  try {
    return Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ')[0]) / 1000;
  } catch {
    return NaN;
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [mode, json] = process.argv.slice(2);
  if (mode === '--emulator') await emulatorChild();
  else if (mode === '--client') await clientChild(JSON.parse(json ?? '{}') as Parameters<typeof clientChild>[0]);
  else {
    const sessions = Number(mode);
    runAlone(() => run(sessions > 0 ? { sessions } : {}));
  }
}
