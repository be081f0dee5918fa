/**
 * The emulator's network (`latencyMs`, `bandwidthBytesPerSecond`): every byte both ways
 * is held for the one-way latency, order kept. Timing checks are lower bounds measured
 * on real sockets (a round trip cannot be faster than twice the one-way latency); no
 * upper bounds.
 */
import { performance } from 'node:perf_hooks';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startEmulator, type Emulator, type EmulatorOptions } from '../../src/emulator/index.js';
import { EmulatorOptionsSchema } from '../../src/emulator/options.js';
import { routes } from '../../src/core/routes.js';
import { ServerFrameSchema, type ServerFrame } from '../../src/live/protocol.js';

const emulators: Emulator[] = [];
const sockets: WebSocket[] = [];
/** Timers may fire up to about a millisecond early against performance.now(). */
const SLACK_MS = 2;

afterEach(async () => {
  for (const ws of sockets.splice(0)) ws.terminate();
  await Promise.all(emulators.splice(0).map((e) => e.close()));
});

async function emulator(options: EmulatorOptions): Promise<Emulator> {
  const started = await startEmulator({ synth: 'tone', taskDurationMs: 0, ...options });
  emulators.push(started);
  return started;
}

/** Open a live session; resolves with timings and a frame log once the socket is open. */
function live(emu: Emulator): {
  ws: WebSocket;
  opened: Promise<number>;
  frames: { at: number; frame: ServerFrame | Buffer }[];
  next: (predicate: (f: ServerFrame | Buffer) => boolean) => Promise<number>;
  closed: Promise<number>;
} {
  const ws = new WebSocket(emu.wsUrl, { headers: { 'x-api-key': emu.apiKey } });
  sockets.push(ws);
  ws.on('error', () => undefined);
  const frames: { at: number; frame: ServerFrame | Buffer }[] = [];
  const waiters: { predicate: (f: ServerFrame | Buffer) => boolean; resolve: (at: number) => void }[] = [];
  ws.on('message', (data: Buffer, isBinary: boolean) => {
    const at = performance.now();
    const frame = isBinary ? Buffer.from(data) : ServerFrameSchema.parse(JSON.parse(data.toString('utf8')));
    frames.push({ at, frame });
    for (const waiter of [...waiters]) {
      if (waiter.predicate(frame)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(at);
      }
    }
  });
  return {
    ws,
    frames,
    opened: new Promise((resolve) => ws.once('open', () => resolve(performance.now()))),
    closed: new Promise((resolve) => ws.once('close', (code: number) => resolve(code))),
    next: (predicate) => new Promise((resolve) => waiters.push({ predicate, resolve })),
  };
}

const isType =
  (type: string) =>
  (f: ServerFrame | Buffer): boolean =>
    !Buffer.isBuffer(f) && f.type === type;

describe('emulator network: latencyMs', () => {
  it('rejects a [min, max] range with min > max, and a non-positive bandwidth', () => {
    expect(() => EmulatorOptionsSchema.parse({ latencyMs: [80, 20] })).toThrow(/min <= max/);
    expect(() => EmulatorOptionsSchema.parse({ bandwidthBytesPerSecond: 0 })).toThrow();
    expect(EmulatorOptionsSchema.parse({}).latencyMs).toBe(0);
  });

  it('an HTTP call on a new connection takes the handshake and the request round trips (>= 4 x one-way)', async () => {
    const latency = 40;
    const emu = await emulator({ latencyMs: latency });
    const started = performance.now();
    const res = await fetch(`${emu.baseUrl}${routes.listVoices}`, { headers: { 'x-api-key': emu.apiKey } });
    await res.json();
    const first = performance.now() - started;
    expect(res.status).toBe(200);
    expect(first).toBeGreaterThanOrEqual(4 * latency - SLACK_MS);
    // On the kept-alive connection: one round trip.
    const again = performance.now();
    await (await fetch(`${emu.baseUrl}${routes.listVoices}`, { headers: { 'x-api-key': emu.apiKey } })).json();
    expect(performance.now() - again).toBeGreaterThanOrEqual(2 * latency - SLACK_MS);
  });

  it('delays the WebSocket upgrade and every live frame both ways', async () => {
    const latency = 30;
    const emu = await emulator({ latencyMs: latency });
    const connectStarted = performance.now();
    const session = live(emu);
    const openedAt = await session.opened;
    // TCP handshake round trip + upgrade round trip.
    expect(openedAt - connectStarted).toBeGreaterThanOrEqual(4 * latency - SLACK_MS);

    const startSent = performance.now();
    const ready = session.next(isType('session.ready'));
    session.ws.send(JSON.stringify({ type: 'session.start', voice_id: 1, output_format: 'wav' }));
    expect((await ready) - startSent).toBeGreaterThanOrEqual(2 * latency - SLACK_MS);

    const textSent = performance.now();
    const firstAudio = session.next((f) => Buffer.isBuffer(f));
    session.ws.send(JSON.stringify({ type: 'text.chunk', text: 'Hello there.' }));
    expect((await firstAudio) - textSent).toBeGreaterThanOrEqual(2 * latency - SLACK_MS);

    const doneSent = performance.now();
    const closed = session.closed;
    session.ws.send(JSON.stringify({ type: 'text.done' }));
    const sessionDone = await session.next(isType('session.done'));
    expect(sessionDone - doneSent).toBeGreaterThanOrEqual(2 * latency - SLACK_MS);
    expect(await closed).toBe(1000);
  });

  it('keeps order both ways when the latency of each chunk is drawn from a range', async () => {
    const emu = await emulator({ latencyMs: [0, 60] });
    const session = live(emu);
    await session.opened;
    const ready = session.next(isType('session.ready'));
    session.ws.send(JSON.stringify({ type: 'session.start', voice_id: 1, output_format: 'wav' }));
    await ready;
    // Many small chunks, sent at once: reordered chunks would garble the sentences.
    const sentences = Array.from({ length: 8 }, (_, i) => `Sentence number ${i + 1} is here.`);
    for (const sentence of sentences) {
      for (const piece of sentence.match(/.{1,4}/g) ?? []) session.ws.send(JSON.stringify({ type: 'text.chunk', text: piece }));
      session.ws.send(JSON.stringify({ type: 'text.chunk', text: ' ' }));
    }
    session.ws.send(JSON.stringify({ type: 'text.done' }));
    await session.next(isType('session.done'));
    const json = session.frames.map((f) => f.frame).filter((f): f is ServerFrame => !Buffer.isBuffer(f));
    const starts = json.filter((f) => f.type === 'segment.start');
    expect(starts.map((f) => (f.type === 'segment.start' ? f.text.trim() : ''))).toEqual(sentences);
    // Server frames in protocol order: start, audio, done per segment, ids rising.
    let open: number | undefined;
    let expectedId = 0;
    for (const { frame } of session.frames) {
      if (Buffer.isBuffer(frame)) expect(open).toBeDefined();
      else if (frame.type === 'segment.start') {
        expect(open).toBeUndefined();
        expect(frame.segment_id).toBe(expectedId++);
        open = frame.segment_id;
      } else if (frame.type === 'segment.done') {
        expect(frame.segment_id).toBe(open);
        open = undefined;
      }
    }
    expect(expectedId).toBe(sentences.length);
  });

  it('caps bandwidth: the audio cannot arrive faster than bytes / bandwidth', async () => {
    const bandwidth = 200_000;
    const emu = await emulator({ bandwidthBytesPerSecond: bandwidth });
    const session = live(emu);
    const started = performance.now();
    await session.opened;
    session.ws.send(JSON.stringify({ type: 'session.start', voice_id: 1, output_format: 'wav' }));
    session.ws.send(JSON.stringify({ type: 'text.chunk', text: 'One two three four five six seven eight nine ten. '.repeat(3) }));
    session.ws.send(JSON.stringify({ type: 'text.done' }));
    const done = await session.next(isType('session.done'));
    const audioBytes = session.frames.reduce((sum, f) => sum + (Buffer.isBuffer(f.frame) ? f.frame.byteLength : 0), 0);
    expect(audioBytes).toBeGreaterThan(100_000);
    expect(done - started).toBeGreaterThanOrEqual((audioBytes / bandwidth) * 1000 - SLACK_MS);
  });

  it('a connection the emulator drops (no close frame) reaches the client as a drop, late', async () => {
    const emu = await emulator({ latencyMs: 5, faults: { dropAfterFrames: 0 } });
    const session = live(emu);
    await session.opened;
    session.ws.send(JSON.stringify({ type: 'session.start', voice_id: 1, output_format: 'wav' }));
    session.ws.send(JSON.stringify({ type: 'text.chunk', text: 'Dropped at the first segment.' }));
    expect(await session.closed).toBe(1006);
    expect(session.frames.some((f) => Buffer.isBuffer(f.frame) || f.frame.type === 'session.done')).toBe(false);
  });

  it('close() ends relayed connections: an open live session sees its socket close', async () => {
    const emu = await emulator({ latencyMs: 5 });
    const session = live(emu);
    await session.opened;
    const closed = session.closed;
    await emu.close();
    expect(await closed).not.toBe(1000);
  });
});
