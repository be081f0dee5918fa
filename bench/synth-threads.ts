/**
 * Synthesis off the event loop: while `clients` live sessions speak long texts at once
 * through an emulator with real speech (espeak), another client makes `GET /list-voices`
 * calls one after the other (20 ms apart) for `seconds`. Measured: that client's p99
 * latency with espeak in worker threads (the default `synthThreads`), and the same with
 * `synthThreads: 0` (synthesis on the event loop, as before). Peer: the same client
 * against the same emulator with no one speaking (the quiet figure). The target is the
 * threads' p99 within 3x of the quiet one.
 *
 * Three processes: the emulator, the speaking clients (each sends its whole text, then
 * `text.done`, and reads every frame), and this one (the HTTP client). A machine shared
 * with other work: read the ratios, not the absolute figures.
 *
 * Run alone: `npx tsx bench/synth-threads.ts`.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { lastValueFrom } from 'rxjs';
import { WebSocket } from 'ws';
import { createClient } from '../src/index.js';
import { startEmulator } from '../src/emulator/index.js';
import type { BenchRow } from './types.js';
import { QUICK, nextMessage, now, percentile, round, row, runAlone, sentences, sleep } from './util.js';

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
  const speakers = clients > 0 ? child(['--speak', JSON.stringify({ ...addresses, clients, sentencesPerClient })]) : undefined;
  if (speakers) await nextMessage<boolean>(speakers, 'speaking');
  const client = createClient({ apiKey: addresses.apiKey, baseUrl: addresses.baseUrl, maxRetries: 0 });
  const latencies: number[] = [];
  const end = now() + seconds * 1000;
  try {
    while (now() < end) {
      const started = now();
      await lastValueFrom(client.voices.list());
      latencies.push(now() - started);
      await sleep(20);
    }
  } finally {
    await client.close();
  }
  let segments = 0;
  if (speakers) {
    speakers.send({ stop: true });
    segments = await nextMessage<number>(speakers, 'segments');
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

function speakChild(args: { wsUrl: string; apiKey: string; clients: number; sentencesPerClient: number }): void {
  let ready = 0;
  let segments = 0;
  const sockets: WebSocket[] = [];
  for (let i = 0; i < args.clients; i++) {
    const text = sentences(args.sentencesPerClient, 12, i).join('');
    const ws = new WebSocket(args.wsUrl, { headers: { 'x-api-key': args.apiKey } });
    sockets.push(ws);
    ws.on('error', () => undefined);
    ws.on('open', () => ws.send(JSON.stringify({ type: 'session.start', voice_id: 1, output_format: 'wav' })));
    ws.on('message', (data, isBinary) => {
      if (isBinary) return;
      const frame = JSON.parse(String(data)) as { type: string };
      if (frame.type === 'segment.done') segments += 1;
      else if (frame.type === 'session.ready') {
        ws.send(JSON.stringify({ type: 'text.chunk', text }));
        ws.send(JSON.stringify({ type: 'text.done' }));
        ready += 1;
        if (ready === args.clients) process.send?.({ speaking: true });
      }
    });
  }
  process.on('message', (message: Record<string, unknown>) => {
    if (!message['stop']) return;
    for (const ws of sockets) ws.terminate();
    process.send?.({ segments }, () => process.exit(0));
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [mode, json] = process.argv.slice(2);
  if (mode === '--emulator') await emulatorChild(JSON.parse(json ?? '{}') as { synthThreads?: number });
  else if (mode === '--speak') speakChild(JSON.parse(json ?? '{}') as { wsUrl: string; apiKey: string; clients: number; sentencesPerClient: number });
  else runAlone(run);
}
