/**
 * In-situ timing of the live session's per-frame path (what a CPU profile smears on a
 * busy machine): median time of each WebSocket message handler by frame type, for
 * `client.speak` and for the hand-written peer on the same traced `ws` class, plus the
 * pieces of our path (zod parse of server frames, SpeechLedger, JSON, ws.send),
 * measured by wrapping them. Ping-pong sessions of 10 sentences on the emulator.
 *
 * `npx tsx bench/tools/trace-live.ts [sessions]`
 */
import { WebSocket } from 'ws';
import { startEmulator } from '../../src/emulator/index.js';
import { createClient } from '../../src/index.js';
import { SpeechLedger } from '../../src/live/ledger.js';
import { ServerFrameSchema } from '../../src/live/protocol.js';
import { median, sentences } from '../util.js';
import { oursSession } from '../sessions.js';

const sessions = Number(process.argv[2] ?? 300);
let times: Record<string, number[]> = {};
let recording = true;
const record = (key: string, ms: number): void => {
  if (recording) (times[key] ??= []).push(ms);
};

/** Replace `object[name]` with a timed wrapper; `key` may depend on the first argument. */
function timeMethod(object: object, name: string, key: string | ((arg: unknown) => string)): void {
  const target = object as Record<string, (...args: unknown[]) => unknown>;
  const original = target[name];
  if (typeof original !== 'function') throw new Error(`${name} is not a method`);
  target[name] = function timed(this: unknown, ...args: unknown[]): unknown {
    const t = performance.now();
    try {
      return original.apply(this, args);
    } finally {
      record(typeof key === 'string' ? key : key(args[0]), performance.now() - t);
    }
  };
}

function frameType(data: unknown): string {
  if (typeof data !== 'string') return 'binary';
  const match = /"type":"([^"]+)"/.exec(data);
  return match?.[1] ?? 'other';
}

type Listener = (event: { data: unknown }) => void;

/** `ws` with every message handler and send timed. */
class Traced extends WebSocket {
  constructor(...args: ConstructorParameters<typeof WebSocket>) {
    super(...args);
    const add = this.addEventListener.bind(this) as (type: string, listener: Listener, options?: object) => void;
    // An own property shadows the prototype's method: message listeners are timed.
    (this as unknown as { addEventListener: typeof add }).addEventListener = (type, listener, options) => {
      if (type !== 'message') return add(type, listener, options);
      add(
        'message',
        (event) => {
          const t = performance.now();
          listener(event);
          record(`handler ${frameType(event.data)}`, performance.now() - t);
        },
        options,
      );
    };
    const send = this.send.bind(this) as (data: unknown) => void;
    (this as unknown as { send: typeof send }).send = (data) => {
      const t = performance.now();
      send(data);
      record('ws.send', performance.now() - t);
    };
  }
}

function report(title: string): void {
  console.log(`\n${title} (median, µs)`);
  for (const [key, values] of Object.entries(times).sort()) {
    console.log(`  ${key.padEnd(28)} ${(median(values) * 1000).toFixed(2).padStart(8)}  n=${values.length}`);
  }
}

const emulator = await startEmulator({ synth: 'tone', toneWordSeconds: 0.005 });
try {
  const texts = sentences(10, 6);

  // The peer on the traced class (WHATWG listeners, like ours).
  const peer = (): Promise<void> =>
    new Promise((resolve) => {
      let next = 0;
      const socket = new Traced(emulator.wsUrl, undefined, { headers: { 'x-api-key': emulator.apiKey } });
      const send = (frame: object): void => socket.send(JSON.stringify(frame));
      socket.addEventListener('open', () => send({ type: 'session.start', voice_id: 1, language: 'en-us', output_format: 'wav' }));
      socket.addEventListener('message', (event) => {
        if (typeof event.data !== 'string') return;
        const frame = JSON.parse(event.data) as { type: string };
        if (frame.type === 'session.ready' || frame.type === 'segment.done') {
          if (next < texts.length) send({ type: 'text.chunk', text: texts[next++] });
          else if (frame.type === 'segment.done') send({ type: 'text.done' });
        }
      });
      socket.addEventListener('close', () => resolve());
    });
  for (let i = 0; i < sessions; i++) {
    recording = i >= sessions / 10;
    const t = performance.now();
    const session = peer();
    record('session setup (synchronous)', performance.now() - t);
    await session;
  }
  report('peer: message handlers');

  times = {};
  const client = createClient({
    apiKey: emulator.apiKey,
    baseUrl: emulator.baseUrl,
    WebSocket: Traced as unknown as NonNullable<Parameters<typeof createClient>[0]>['WebSocket'],
  });
  // Since the segment fast path, only frames other than segment.start/done reach zod.
  timeMethod(ServerFrameSchema, 'safeParse', (json) => `zod safeParse ${(json as { type?: string } | null)?.type ?? '?'}`);
  timeMethod(SpeechLedger.prototype, 'segmentStarted', 'ledger.segmentStarted');
  timeMethod(SpeechLedger.prototype, 'segmentDelivered', 'ledger.segmentDelivered');
  timeMethod(SpeechLedger.prototype, 'push', 'ledger.push');
  for (let i = 0; i < sessions; i++) {
    recording = i >= sessions / 10;
    const t = performance.now();
    const session = oursSession(client, texts, 'pingpong');
    record('session setup (synchronous)', performance.now() - t);
    await session;
  }
  report('client.speak: message handlers and pieces');
  await client.close();
} finally {
  await emulator.close();
}
