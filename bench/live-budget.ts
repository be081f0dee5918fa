/**
 * The live session's budget, absolute, on this machine: the CPU time `client.speak`
 * spends beyond a bare `ws` client speaking the same protocol to the same emulator on
 * loopback. The emulator runs in a child process (`rxvoice emulator --synth tone`), so
 * `process.cpuUsage()` here counts the clients only; sessions alternate ours/peer.
 *
 * - set-up: a session with one sentence (connect, `session.start`, `session.ready`, one
 *   segment, `text.done`, close): ours minus peer, per pair, less the per-sentence
 *   figure; budget 0.3 ms;
 * - per sentence: (a ten-sentence session minus a one-sentence session) / 9, ours minus
 *   peer, per pair; budget 30 µs; and the same with `clientBoundaries: false`, which shows
 *   the share of client-side sentence boundaries (on by default).
 *
 * Medians of the per-pair differences. Run alone: `npx tsx bench/live-budget.ts`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { createClient } from '../src/index.js';
import type { BenchRow } from './types.js';
import { QUICK, median, row, sentences } from './util.js';
import { oursSession, peerSession, verifyOrder, type SessionResult } from './sessions.js';

/** Client work per session set-up the library may add over a bare `ws` client, ms. */
export const SETUP_BUDGET_MS = 0.3;
/** Client work per sentence the library may add over a bare `ws` client, µs. */
export const SENTENCE_BUDGET_US = 30;

interface EmulatorProcess {
  baseUrl: string;
  wsUrl: string;
  apiKey: string;
  child: ChildProcess;
}

/** The emulator in its own process (its CPU is not ours). */
async function emulatorProcess(): Promise<EmulatorProcess> {
  const bin = fileURLToPath(new URL('../bin/rxvoice.js', import.meta.url));
  const child = spawn(process.execPath, [bin, 'emulator', '--synth', 'tone', '--json'], {
    env: { ...process.env, RXVOICE_FROM_SOURCE: '1' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! });
  const first = await new Promise<string>((resolve, reject) => {
    lines.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`the emulator exited (${code}) before it listened`)));
  });
  const info = JSON.parse(first) as { baseUrl: string; wsUrl: string; apiKey: string };
  return { ...info, child };
}

/** CPU time (user + system) of `work`, µs. */
async function cpuOf(work: () => Promise<SessionResult>, texts: readonly string[], who: string): Promise<number> {
  const c0 = process.cpuUsage();
  const result = await work();
  const used = process.cpuUsage(c0);
  const problem = verifyOrder(result, texts);
  if (problem) throw new Error(`live-budget (${who}): ${problem}`);
  return used.user + used.system;
}

/** Medians over `pairs` alternating pairs: client CPU beyond the bare client per set-up (ms) and per sentence (µs). */
async function measure(
  ours: (texts: readonly string[]) => () => Promise<SessionResult>,
  peer: (texts: readonly string[]) => () => Promise<SessionResult>,
  pairs: number,
): Promise<{ setupMs: number; sentenceUs: number; oursMs: number; peerMs: number }> {
  const go = { ours, peer };
  const ten = sentences(10, 6);
  const one = ten.slice(0, 1);
  for (let i = 0; i < (QUICK ? 5 : 20); i++) {
    for (const who of ['ours', 'peer'] as const) {
      await cpuOf(go[who](ten), ten, who);
      await cpuOf(go[who](one), one, who);
    }
  }
  const single = { ours: [] as number[], peer: [] as number[] };
  const setup: number[] = [];
  const perSentence: number[] = [];
  for (let i = 0; i < pairs; i++) {
    const order = i % 2 === 0 ? (['ours', 'peer'] as const) : (['peer', 'ours'] as const);
    const cpu = { ours: { one: 0, ten: 0 }, peer: { one: 0, ten: 0 } };
    for (const who of order) {
      cpu[who].one = await cpuOf(go[who](one), one, who);
      cpu[who].ten = await cpuOf(go[who](ten), ten, who);
      single[who].push(cpu[who].one);
    }
    setup.push(cpu.ours.one - cpu.peer.one);
    perSentence.push((cpu.ours.ten - cpu.ours.one - (cpu.peer.ten - cpu.peer.one)) / 9);
  }
  const sentenceUs = median(perSentence);
  // the one-sentence session less its sentence
  return { setupMs: (median(setup) - sentenceUs) / 1000, sentenceUs, oursMs: median(single.ours) / 1000, peerMs: median(single.peer) / 1000 };
}

export async function run(options: { pairs?: number } = {}): Promise<BenchRow[]> {
  const pairs = options.pairs ?? (QUICK ? 21 : 151);
  const emulator = await emulatorProcess();
  const client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.baseUrl });
  try {
    const peer = (t: readonly string[]) => () => peerSession(emulator.wsUrl, emulator.apiKey, t, 'burst');
    const ours = await measure((t) => () => oursSession(client, t, 'burst'), peer, pairs);
    // the same without client-side sentence boundaries (`clientBoundaries: false`), to show their share
    const plain = await measure((t) => () => oursSession(client, t, 'burst', {}, { clientBoundaries: false }), peer, pairs);
    const verdict = (value: number, budget: number): string => (value <= budget ? 'within budget' : 'OVER BUDGET');
    return [
      row(
        'live budget: client CPU per session set-up (ours - bare ws)',
        ours.setupMs,
        SETUP_BUDGET_MS,
        'ms',
        `${verdict(ours.setupMs, SETUP_BUDGET_MS)} (peer column = the budget); median of ${pairs} per-pair differences of a 1-sentence session, less the per-sentence row; ` +
          `whole session: ours ${ours.oursMs.toFixed(3)} ms, bare ws ${ours.peerMs.toFixed(3)} ms CPU; emulator in its own process; ` +
          `with clientBoundaries: false ${plain.setupMs.toFixed(3)} ms`,
        'lower',
      ),
      row(
        'live budget: client CPU per sentence (ours - bare ws)',
        ours.sentenceUs,
        SENTENCE_BUDGET_US,
        'us',
        `${verdict(ours.sentenceUs, SENTENCE_BUDGET_US)} (peer column = the budget); median of ${pairs} per-pair (10-sentence - 1-sentence session) / 9; tone synth WAV segments`,
        'lower',
      ),
      row(
        'live budget: client CPU per sentence, clientBoundaries: false (ours - bare ws)',
        plain.sentenceUs,
        SENTENCE_BUDGET_US,
        'us',
        `${verdict(plain.sentenceUs, SENTENCE_BUDGET_US)} (peer column = the budget); the share of client-side boundaries (on by default): the end of each sentence goes as its own text.chunk`,
        'lower',
      ),
    ];
  } finally {
    await client.close();
    emulator.child.kill('SIGTERM');
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  run().then(
    (rows) => console.table(rows),
    (error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    },
  );
}
