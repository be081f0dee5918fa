/**
 * Live-session overhead: `client.speak` against a minimal hand-written `ws` client that
 * speaks the same protocol to the same emulator (tone synth, no synthesis delay,
 * 5 ms per word). Sessions alternate ours/peer (and which goes first) to cancel drift;
 * medians over many sessions.
 *
 * - time to first audio: socket creation to the first audio byte (one sentence pushed at
 *   once, then text.done);
 * - per-sentence latency: ping-pong, the next sentence is pushed when the previous one's
 *   `segment.done` arrives; from the push to that sentence's `segment.done` (sentences
 *   2..10 of each session, the first is in the time to first audio). Every sentence ends
 *   in a paragraph break, so it is complete the moment it is sent: no session waits for
 *   the service's `idle_timeout` (the run fails if the median looks like it did);
 * - a 10-sentence session pushed at once: socket creation to the close;
 * - CPU time (user + system, client and emulator together) of those three sessions,
 *   which, unlike wall time, a busy machine does not inflate.
 *
 * Run alone: `npx tsx bench/live-overhead.ts`.
 */
import { createClient } from '../src/index.js';
import { startEmulator } from '../src/emulator/index.js';
import type { BenchRow } from './types.js';
import { QUICK, median, row, sentences } from './util.js';
import { oursSession, peerSession, verifyOrder, type SessionResult } from './sessions.js';

export interface LiveOverheadOptions {
  /** Pairs of sessions (one ours, one peer) per measurement. */
  pairs?: number;
}

export async function run(options: LiveOverheadOptions = {}): Promise<BenchRow[]> {
  const pairs = options.pairs ?? (QUICK ? 31 : 201);
  const emulator = await startEmulator({ synth: 'tone', toneWordSeconds: 0.005, concurrency: 3 });
  const client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.baseUrl });
  try {
    // Each sentence ends in a paragraph break: complete the moment it is sent, so no
    // session here can wait for the service's idle_timeout (a timer this does not measure).
    const texts = sentences(10, 6, 0, '\n\n');
    const first = texts.slice(0, 1);
    const ours = (t: readonly string[], mode: 'burst' | 'pingpong'): Promise<SessionResult> => oursSession(client, t, mode);
    const peer = (t: readonly string[], mode: 'burst' | 'pingpong'): Promise<SessionResult> =>
      peerSession(emulator.wsUrl, emulator.apiKey, t, mode);

    const check = (r: SessionResult, t: readonly string[], who: string): SessionResult => {
      const problem = verifyOrder(r, t);
      if (problem) throw new Error(`live-overhead (${who}): ${problem}`);
      return r;
    };

    // Warm-up: JIT, zod schemas, the emulator's paths.
    for (let i = 0; i < (QUICK ? 5 : 20); i++) {
      await ours(texts, 'pingpong');
      await peer(texts, 'pingpong');
      await ours(texts, 'burst');
      await peer(texts, 'burst');
    }

    const ttfa = { ours: [] as number[], peer: [] as number[] };
    const sentence = { ours: [] as number[], peer: [] as number[] };
    const burst = { ours: [] as number[], peer: [] as number[] };
    /** CPU time (user + system) of the three sessions of each pair, µs. */
    const cpu = { ours: [] as number[], peer: [] as number[] };
    for (let i = 0; i < pairs; i++) {
      const order: ('ours' | 'peer')[] = i % 2 === 0 ? ['ours', 'peer'] : ['peer', 'ours'];
      for (const who of order) {
        const go = who === 'ours' ? ours : peer;
        const c0 = process.cpuUsage();
        const a = check(await go(first, 'burst'), first, who);
        ttfa[who].push(a.ttfaMs);
        const b = check(await go(texts, 'pingpong'), texts, who);
        sentence[who].push(...b.sentenceMs.slice(1));
        const c = check(await go(texts, 'burst'), texts, who);
        burst[who].push(c.totalMs);
        const used = process.cpuUsage(c0);
        cpu[who].push(used.user + used.system);
      }
    }
    // A median near a second would be the service's idle_timeout, not synthesis or protocol.
    if (median(sentence.ours) > 500 || median(sentence.peer) > 500) {
      throw new Error(`live-overhead: ping-pong sentences took ${median(sentence.ours).toFixed(0)} / ${median(sentence.peer).toFixed(0)} ms (ours / peer): a protocol timer, not the work measured`);
    }
    const note = (n: number, extra = ''): string => `median of ${n}, alternating ours/peer; tone synth 5 ms/word, 0 synthesis delay${extra}`;
    return [
      row('live: time to first audio', median(ttfa.ours), median(ttfa.peer), 'ms', note(pairs, '; connect + session.start + 1 sentence'), 'lower'),
      row('live: per-sentence latency', median(sentence.ours), median(sentence.peer), 'ms', note(sentence.ours.length, '; ping-pong text.chunk -> segment.done'), 'lower'),
      row('live: 10-sentence session', median(burst.ours), median(burst.peer), 'ms', note(pairs, '; all text at once, open -> close'), 'lower'),
      row(
        'live: CPU per 3 sessions (21 sentences)',
        median(cpu.ours) / 1000,
        median(cpu.peer) / 1000,
        'ms',
        `median of ${pairs}; process.cpuUsage, client + emulator (same process): the difference is the client's`,
        'lower',
      ),
    ];
  } finally {
    await client.close();
    await emulator.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  run().then((rows) => console.table(rows), (error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
