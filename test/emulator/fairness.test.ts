/**
 * The emulator stays fair under a flooding live session: other clients' HTTP requests
 * are served while it floods, a client pushing text faster than it is spoken meets
 * backpressure (bounded text held per session, nothing lost), idle sessions are closed
 * (4408) and each key holds a limited number of sessions (4429).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import { lastValueFrom } from 'rxjs';
import { startEmulator, type Emulator, type EmulatorOptions } from '../../src/emulator/index.js';
import { liveSessionStats } from '../../src/emulator/live.js';
import { CloseCodes, ServerFrameSchema, type ServerFrame } from '../../src/live/protocol.js';
import { createClient } from '../../src/index.js';
import { until } from '../client/helpers.js';

/** Everything a test opened, closed after it: sockets first, then emulators. */
const opened: { sockets: WebSocket[]; emulators: Emulator[] } = { sockets: [], emulators: [] };
afterEach(async () => {
  opened.sockets.splice(0).forEach((ws) => ws.terminate());
  await Promise.all(opened.emulators.splice(0).map((e) => e.close()));
});

/** A tone emulator with tiny words (so floods are cheap), closed after the test. */
const emulator = async (options: EmulatorOptions = {}): Promise<Emulator> => {
  const started = await startEmulator({ synth: 'tone', toneWordSeconds: 0.01, ...options });
  opened.emulators.push(started);
  return started;
};


interface RawSession {
  ws: WebSocket;
  frames: ServerFrame[];
  audioBytes: () => number;
  closed: Promise<{ code: number; reason: string }>;
  ready: Promise<void>;
}

function open(em: Emulator, start: object = { type: 'session.start', voice_id: 1, output_format: 'wav' }): RawSession {
  const ws = new WebSocket(em.wsUrl, { headers: { 'x-api-key': em.apiKey } });
  opened.sockets.push(ws);
  const frames: ServerFrame[] = [];
  let audio = 0;
  let readyResolve: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => (readyResolve = resolve));
  ws.on('message', (data: Buffer, isBinary: boolean) => {
    if (isBinary) {
      audio += data.byteLength;
      return;
    }
    const frame = ServerFrameSchema.parse(JSON.parse(data.toString('utf8')));
    frames.push(frame);
    if (frame.type === 'session.ready') readyResolve();
  });
  ws.on('error', () => undefined);
  ws.once('open', () => ws.send(JSON.stringify(start)));
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on('close', (code: number, reason: Buffer) => resolve({ code, reason: reason.toString() })),
  );
  return { ws, frames, audioBytes: () => audio, closed, ready };
}

const spokenText = (frames: ServerFrame[]): string =>
  frames.flatMap((f) => (f.type === 'segment.start' || f.type === 'segment.skipped' ? [f.text] : [])).join('');

describe('emulator fairness', () => {
  it('a client pushing text faster than it is spoken meets backpressure: text held per session stays bounded, nothing is lost', async () => {
    const limit = 2_000;
    const em = await emulator({ livePendingTextChars: limit });
    const session = open(em);
    await session.ready;
    session.ws.pause(); // the client reads nothing for now: audio backs up, then text must
    const sentence = 'Hi there, friend. ';
    const chunk = sentence.repeat(20); // 360 characters per frame
    let sent = '';
    let highest = 0;
    // Push 40 times the limit, a few frames per turn of the event loop (frames sent in one
    // burst may be read by the emulator in one go, before it can pause reading).
    for (let i = 0; sent.length < 40 * limit; i++) {
      session.ws.send(JSON.stringify({ type: 'text.chunk', text: chunk }));
      sent += chunk;
      if (i % 5 === 4) {
        await new Promise((r) => setImmediate(r));
        const [stats] = liveSessionStats(em.context);
        highest = Math.max(highest, stats?.pendingTextChars ?? 0);
      }
    }
    expect(await until(() => liveSessionStats(em.context)[0]?.readingPaused === true)).toBe(true);
    // While paused, the text held stays near the limit however much the client sent.
    for (const stats of liveSessionStats(em.context)) highest = Math.max(highest, stats.pendingTextChars);
    expect(highest).toBeLessThan(limit + 64 * 1024);
    expect(sent.length).toBeGreaterThan(highest * 4);
    // Reading again, the client gets every piece of text spoken, in order.
    session.ws.send(JSON.stringify({ type: 'text.done' }));
    session.ws.resume();
    const closed = await session.closed;
    expect(closed.code).toBe(1000);
    // (compared as a boolean: a failure must not print megabytes of text)
    const spoken = spokenText(session.frames).trimEnd();
    expect({ length: spoken.length, same: spoken === sent.trimEnd() }).toEqual({ length: sent.trimEnd().length, same: true });
  });

  it("another client's HTTP request is answered while a live client in another process floods", async () => {
    const em = await emulator({ toneWordSeconds: 0.25 });
    const flood = fork(fileURLToPath(new URL('../fixtures/flood-client.mjs', import.meta.url)), [
      JSON.stringify({ wsUrl: em.wsUrl, apiKey: em.apiKey, chars: 200_000 }),
    ]);
    const exited = new Promise<void>((resolve) => flood.once('exit', () => resolve()));
    try {
      await new Promise<void>((resolve) => flood.on('message', (m: { ready?: boolean }) => m.ready && resolve()));
      // Wait until the flood is under way: segments are going out.
      expect(await until(() => (liveSessionStats(em.context)[0]?.sent ?? 0) > 20)).toBe(true);
      const other = createClient({ apiKey: em.apiKey, baseUrl: em.baseUrl });
      try {
        await lastValueFrom(other.voices.list());
      } finally {
        await other.close();
      }
      // Answered while the flooding session still had most of its 20 000 segments to send.
      const [stats] = liveSessionStats(em.context);
      expect(stats).toBeDefined();
      expect(stats!.sent).toBeLessThan(10_000);
    } finally {
      flood.kill();
      await exited;
    }
  });

  it('an idle session is closed with session.error and 4408 after liveIdleTimeoutMs; an active one is not', async () => {
    const em = await emulator({ liveIdleTimeoutMs: 1_000 });
    const idle = open(em);
    const active = open(em);
    await Promise.all([idle.ready, active.ready]);
    // The active session keeps sending text (a frame every 20 ms) until the idle one is closed.
    let ticks = 0;
    const tick = setInterval(() => {
      ticks += 1;
      active.ws.send(JSON.stringify({ type: 'text.chunk', text: 'la ' }));
    }, 20);
    const closed = await idle.closed;
    clearInterval(tick);
    expect(closed.code).toBe(CloseCodes.idleTimeout);
    expect(idle.frames.at(-1)).toMatchObject({ type: 'session.error' });
    expect(ticks).toBeGreaterThan(3);
    expect(active.ws.readyState).toBe(WebSocket.OPEN);
    // and the active one, once quiet, is closed the same way
    expect((await active.closed).code).toBe(CloseCodes.idleTimeout);
  });

  it('frames going out count as activity: a delivery that outlasts liveIdleTimeoutMs after the last frame in is not cut', async () => {
    // 10 segments of at least 100 ms each: about 1 s of frames out after text.done, the
    // last frame in; at most ~100 ms between two of them. (The test above is the control:
    // a session with no frame either way is cut after liveIdleTimeoutMs.)
    const em = await emulator({ liveIdleTimeoutMs: 500, concurrency: 1, faults: { synthesisLatencyMs: 100 } });
    const session = open(em);
    await session.ready;
    const text = Array.from({ length: 10 }, (_, i) => `Sentence ${i}.`).join(' ');
    session.ws.send(JSON.stringify({ type: 'text.chunk', text }));
    session.ws.send(JSON.stringify({ type: 'text.done' }));
    expect((await session.closed).code).toBe(1000);
    expect(spokenText(session.frames)).toBe(text);
  });

  it('each key holds at most liveSessionsPerKey sessions: one more gets session.error and 4429; a closed one frees its place', async () => {
    const em = await emulator({ liveSessionsPerKey: 2 });
    const a = open(em);
    const b = open(em);
    await Promise.all([a.ready, b.ready]);
    const c = open(em);
    const refused = await c.closed;
    expect(refused.code).toBe(CloseCodes.tooManySessions);
    expect(c.frames).toEqual([{ type: 'session.error', error: 'too many live sessions open for this API key (at most 2)' }]);
    a.ws.close(1000);
    await a.closed;
    expect(await until(() => liveSessionStats(em.context).length === 1)).toBe(true);
    const d = open(em);
    await d.ready;
    expect(d.frames[0]).toMatchObject({ type: 'session.ready' });
  });
});
