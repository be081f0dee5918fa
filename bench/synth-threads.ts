/**
 * Synthesis off the event loop: while `clients` live sessions speak long texts at once
 * through an emulator with real speech (espeak), another client makes `GET /list-voices`
 * calls one after the other (20 ms apart) for `seconds`. Measured: that client's p99
 * latency with espeak in worker threads (the default `synthThreads`), and the same with
 * `synthThreads: 0` (synthesis on the event loop, as before). Peer: the same client
 * against the same emulator with no one speaking (the quiet figure). The target is the
 * threads' p99 within 3x of the quiet one.
 *
 * Three processes: the emulator, the speaking clients (each sends its text in 1000-character
 * frames, then `text.done`, and reads every frame), and this one (the HTTP client). A machine shared
 * with other work: read the ratios, not the absolute figures.
 *
 * Run alone: `npx tsx bench/synth-threads.ts`.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startEmulator } from '../src/emulator/index.js';
import type { BenchRow } from './types.js';
import { QUICK, nextMessage, percentile, round, row, runAlone, sentences } from './util.js';
import { listVoicesLatencies, speakersChild } from './sessions.js';

export interface SynthThreadsOptions {
  /** Live sessions speaking at once. */
  clients?: number;
  /** Sentences in each client's text. */
  sentencesPerClient?: number;
  /** How long the other client keeps calling, s. */
  seconds?: number;
}

interface Measured {
  p99: number;
  max: number;
  calls: number;
  segments: number;
  threads: number;
}

const here = fileURLToPath(import.meta.url);
const child = (args: string[]): ChildProcess => fork(here, args, { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });

/** One scenario: an emulator with `synthThreads` (undefined: the default), `clients` speaking (0: quiet). */
async function measure(synthThreads: number | undefined, clients: number, sentencesPerClient: number, seconds: number): Promise<Measured> {
  const emulator = child(['--emulator', JSON.stringify({ synthThreads })]);
  const addresses = await nextMessage<{ baseUrl: string; wsUrl: string; apiKey: string; threads: number }>(emulator, 'addresses');
  const texts = Array.from({ length: clients }, (_, i) => sentences(sentencesPerClient, 12, i).join(''));
  const speakers = clients > 0 ? child(['--speak', JSON.stringify({ ...addresses, texts, chunkChars: 1000 })]) : undefined;
  if (speakers) await nextMessage<boolean>(speakers, 'ready');
  const latencies = await listVoicesLatencies(addresses, seconds);
  let segments = 0;
  if (speakers) {
    speakers.send({ stop: true });
    segments = await nextMessage<number>(speakers, 'done');
  }
  emulator.kill();
  return { p99: percentile(latencies, 99), max: Math.max(...latencies), calls: latencies.length, segments, threads: addresses.threads };
}

export async function run(options: SynthThreadsOptions = {}): Promise<BenchRow[]> {
  const clients = options.clients ?? 20;
  const sentencesPerClient = options.sentencesPerClient ?? 8;
  const seconds = options.seconds ?? (QUICK ? 5 : 12);
  const quiet = await measure(undefined, 0, sentencesPerClient, seconds);
  const threaded = await measure(undefined, clients, sentencesPerClient, seconds);
  const inLoop = await measure(0, clients, sentencesPerClient, seconds);
  const what = `${clients} clients speaking ${sentencesPerClient}-sentence texts at once (espeak)`;
  const note = (m: Measured): string => `peer: no one speaking (p99 ${round(quiet.p99)} ms); max ${round(m.max)} ms over ${m.calls} calls; ${m.segments} segments spoken meanwhile`;
  return [
    row(`synth-threads: other client's GET /list-voices p99, ${what}, synthesis in ${threaded.threads} worker thread(s)`, threaded.p99, quiet.p99, 'ms', `${note(threaded)}; target ratio <= 3`, 'lower'),
    row(`synth-threads: the same with synthThreads: 0 (synthesis on the event loop, as before)`, inLoop.p99, quiet.p99, 'ms', note(inLoop), 'lower'),
  ];
}

async function emulatorChild(args: { synthThreads?: number }): Promise<void> {
  const emulator = await startEmulator({ synth: 'espeak', ...(args.synthThreads === undefined ? {} : { synthThreads: args.synthThreads }) });
  process.on('disconnect', () => void emulator.close().then(() => process.exit(0)));
  process.send?.({ addresses: { baseUrl: emulator.baseUrl, wsUrl: emulator.wsUrl, apiKey: emulator.apiKey, threads: emulator.context.options.synthThreads } });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [mode, json] = process.argv.slice(2);
  if (mode === '--emulator') await emulatorChild(JSON.parse(json ?? '{}') as { synthThreads?: number });
  else if (mode === '--speak') speakersChild(JSON.parse(json ?? '{}') as { wsUrl: string; apiKey: string; texts: string[]; chunkChars: number });
  else runAlone(run);
}
