/**
 * Emulator fairness: while N live sessions flood the emulator with short sentences
 * (each pushes `floodChars` of `"Hi there. "` in 1000-character `text.chunk` frames as
 * fast as it can, reading every frame back at full speed), another client makes
 * `GET /list-voices` calls one after the other (20 ms apart) for `seconds`. Measured:
 * that client's p99 and max latency, and the emulator's peak RSS growth per flooding
 * session. Peer: the same client against the same emulator with no flooding session
 * (the quiet baseline); memory has no peer.
 *
 * Three processes so that no side slows another's measurement: the emulator (tone synth,
 * 0.25 s per word: 22 KB of WAV per two-word sentence), the flooding clients, and this
 * one (the HTTP client). Loopback, a 2-core machine shared with other work: read the
 * ratio, not the absolute figures.
 *
 * Run alone: `npx tsx bench/fairness.ts`.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startEmulator } from '../src/emulator/index.js';
import type { BenchRow } from './types.js';
import { QUICK, MB, nextMessage, percentile, round, row } from './util.js';
import { listVoicesLatencies, speakersChild } from './sessions.js';

export interface FairnessOptions {
  /** Characters each flooding session pushes. */
  floodChars?: number;
  /** How long the other client keeps calling, s. */
  seconds?: number;
  /** Flooding session counts to measure (0, the quiet baseline, is always run). */
  flooders?: number[];
}

interface Scenario {
  flooders: number;
  p99: number;
  max: number;
  calls: number;
  peakRssGrowthMB: number;
  segmentsDone: number;
}

const here = fileURLToPath(import.meta.url);

function child(args: string[]): ChildProcess {
  return fork(here, args, { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
}

async function scenario(flooders: number, floodChars: number, seconds: number): Promise<Scenario> {
  const emulator = child(['--emulator']);
  const addresses = await nextMessage<{ baseUrl: string; wsUrl: string; apiKey: string }>(emulator, 'addresses');
  const baseRss = await (emulator.send({ rss: true }), nextMessage<number>(emulator, 'rss'));
  emulator.send({ resetPeak: true });
  const flood = flooders > 0 ? child(['--flood', JSON.stringify({ ...addresses, sessions: flooders, chars: floodChars })]) : undefined;
  if (flood) await nextMessage<boolean>(flood, 'ready');
  const latencies = await listVoicesLatencies(addresses, seconds);
  const peak = await (emulator.send({ peak: true }), nextMessage<number>(emulator, 'peak'));
  let segmentsDone = 0;
  if (flood) {
    flood.send({ stop: true });
    segmentsDone = await nextMessage<number>(flood, 'done');
  }
  emulator.kill();
  return {
    flooders,
    p99: percentile(latencies, 99),
    max: Math.max(...latencies),
    calls: latencies.length,
    peakRssGrowthMB: (peak - baseRss) / MB,
    segmentsDone,
  };
}

export async function run(options: FairnessOptions = {}): Promise<BenchRow[]> {
  const floodChars = options.floodChars ?? (QUICK ? 100_000 : 500_000);
  const seconds = options.seconds ?? (QUICK ? 3 : 8);
  const counts = options.flooders ?? [1, 4];
  const quiet = await scenario(0, floodChars, seconds);
  const rows: BenchRow[] = [];
  for (const n of counts) {
    const s = await scenario(n, floodChars, seconds);
    const what = `${n} flooding live session${n > 1 ? 's' : ''} (${floodChars / 1000} k chars each)`;
    rows.push(
      row(`fairness: other client's GET /list-voices p99, ${what}`, s.p99, quiet.p99, 'ms',
        `peer: no flooding session; max ${round(s.max)} ms over ${s.calls} calls; ${s.segmentsDone} segments delivered meanwhile`, 'lower'),
      row(`fairness: emulator peak RSS growth per flooding session, ${what}`, s.peakRssGrowthMB / n, Number.NaN, 'MB',
        `over ${seconds} s; with no flooding session the growth was ${round(quiet.peakRssGrowthMB)} MB; no peer`, 'lower'),
    );
  }
  return rows;
}

async function emulatorChild(): Promise<void> {
  const emulator = await startEmulator({ synth: 'tone' });
  let peak = process.memoryUsage().rss;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 50);
  process.on('message', (message: Record<string, unknown>) => {
    const rss = process.memoryUsage().rss;
    if (message['rss']) process.send?.({ rss });
    if (message['resetPeak']) peak = rss;
    if (message['peak']) process.send?.({ peak: Math.max(peak, rss) });
  });
  process.on('disconnect', () => {
    clearInterval(sampler);
    void emulator.close().then(() => process.exit(0));
  });
  process.send?.({ addresses: { baseUrl: emulator.baseUrl, wsUrl: emulator.wsUrl, apiKey: emulator.apiKey } });
}

function floodChild(args: { wsUrl: string; apiKey: string; sessions: number; chars: number }): void {
  const text = 'Hi there. '.repeat(Math.ceil(args.chars / 10));
  speakersChild({ wsUrl: args.wsUrl, apiKey: args.apiKey, texts: new Array<string>(args.sessions).fill(text), chunkChars: 1000 });
}

if (import.meta.url === `file://${process.argv[1]}` && process.argv[2] === '--emulator') {
  await emulatorChild();
} else if (import.meta.url === `file://${process.argv[1]}` && process.argv[2] === '--flood') {
  floodChild(JSON.parse(process.argv[3] ?? '{}') as { wsUrl: string; apiKey: string; sessions: number; chars: number });
} else if (import.meta.url === `file://${process.argv[1]}`) {
  for (const r of await run()) console.log(JSON.stringify(r));
}
