/**
 * rxvoice/relay over real sockets: browsers (ws clients, and `speak()` from rxvoice/live
 * with no key) speak to the relay, the relay to the emulator with the server's key: what is
 * relayed, what is refused mid-session, back-pressure, bad options. Origins are in
 * origin.test.ts, visitor budgets in budgets.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer } from 'node:http';
import { lastValueFrom, of, toArray } from 'rxjs';
import { WebSocket, type RawData } from 'ws';
import { speak } from '../../src/live/index.js';
import { concatSegments } from '../../src/operators/index.js';
import { attachLiveRelay } from '../../src/relay/index.js';
import { SECRET, START, browser, harness, json, upgrades, upstreams, type Harness } from './helpers.js';

describe('rxvoice/relay', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await harness({ limits: { sessionsPerClient: 3, textPerSession: 2000, frameBytes: 8 * 1024 } });
  });
  afterAll(() => h.close());

  it('relays speak() from rxvoice/live with no key: whole segments in order, the key in no frame', async () => {
    const seen: Array<string | Buffer> = [];
    class BrowserSocket extends WebSocket {
      constructor(address: string | URL, protocols?: string | string[]) {
        // as a page of the relay's own origin: a browser sets Origin itself
        super(address, protocols, { origin: new URL(String(address)).origin.replace(/^ws/, 'http') });
        this.on('message', (data: RawData, isBinary: boolean) => seen.push(isBinary ? (data as Buffer) : String(data)));
      }
    }
    const before = upgrades(h.emulator);
    const segments = await lastValueFrom(
      of('Hello there. ', 'General Kenobi! ', 'You are a bold one.').pipe(
        // a browser-style constructor (two parameters): no header, and no key to send
        speak({ wsUrl: h.url, WebSocket: BrowserSocket }, { voice_id: 1, word_timestamps: true }),
        concatSegments(),
        toArray(),
      ),
    );
    expect(segments.map((s) => s.text.trim())).toEqual(['Hello there.', 'General Kenobi!', 'You are a bold one.']);
    for (const segment of segments) {
      expect(new TextDecoder().decode(segment.audio.subarray(0, 4))).toBe('RIFF');
      expect(segment.word_timestamps.length).toBeGreaterThan(0);
    }
    expect(upgrades(h.emulator)).toBe(before + 1);
    expect(seen.length).toBeGreaterThan(5);
    expect(seen.some((f) => Buffer.from(f).includes(SECRET))).toBe(false);
  });

  it('answers at path itself too, and passes session.done and the clean close through', async () => {
    const b = browser(h.url);
    await b.opened;
    b.ws.send(START);
    b.ws.send(JSON.stringify({ type: 'text.chunk', text: 'One sentence.' }));
    b.ws.send(JSON.stringify({ type: 'text.done' }));
    expect(await b.closed).toEqual({ code: 1000, reason: 'session done' });
    expect(json(b.frames).map((f) => f.type)).toEqual(['session.ready', 'segment.start', 'segment.done', 'session.done']);
    expect(b.frames.some((f) => Buffer.isBuffer(f))).toBe(true);
  });

  it('authorize false: close 4401 and no service session; true: served', async () => {
    const gated = await harness({ authorize: async (request) => request.headers['x-token'] === 'ok' });
    try {
      const denied = browser(`${gated.url}/live-tts/ws`);
      expect((await denied.closed).code).toBe(4401);
      const allowed = browser(`${gated.url}/live-tts/ws`, { 'x-token': 'ok' });
      await allowed.opened;
      allowed.ws.send(START);
      allowed.ws.send(JSON.stringify({ type: 'text.done' }));
      expect((await allowed.closed).code).toBe(1000);
      // only the allowed browser reached the service (the control shows a session is seen)
      expect(upgrades(gated.emulator)).toBe(1);
    } finally {
      await gated.close();
    }
  });

  it.each([
    ['not JSON', '{"type":"session.start",'],
    ['not a frame', JSON.stringify({ type: 'nonsense' })],
    ['text before session.start', JSON.stringify({ type: 'text.chunk', text: 'hi' })],
    ['a bad session.start', JSON.stringify({ type: 'session.start', voice_id: 'one' })],
  ])('garbage (%s): session.error, 4400, nothing sent to the service', async (_, frame) => {
    const before = upstreams.length;
    const b = browser(h.url);
    await b.opened;
    b.ws.send(frame);
    expect((await b.closed).code).toBe(4400);
    expect(json(b.frames)[0]?.type).toBe('session.error');
    expect(upstreams.length).toBe(before);
  });

  it('forwards the keys the protocol knows only: unknown keys a page adds never reach the service', async () => {
    const b = browser(h.url);
    await b.opened;
    b.ws.send(JSON.stringify({ type: 'session.start', voice_id: 1, output_format: 'wav', x_debug: { trace: true } }));
    b.ws.send(JSON.stringify({ type: 'text.chunk', text: 'Hi there.', x_debug: 'chunk' }));
    b.ws.send(JSON.stringify({ type: 'text.done', x_debug: 1 }));
    expect((await b.closed).code).toBe(1000);
    expect(upstreams.at(-1)!.sent.map((frame) => JSON.parse(frame) as unknown)).toEqual([
      { type: 'session.start', voice_id: 1, output_format: 'wav' },
      { type: 'text.chunk', text: 'Hi there.' },
      { type: 'text.done' },
    ]);
  });

  it('a binary frame or a second session.start mid-session: 4400, the service session closed, the frame not forwarded', async () => {
    for (const bad of [Buffer.from([1, 2, 3]), START]) {
      const b = browser(h.url);
      await b.opened;
      b.ws.send(START);
      await expect.poll(() => json(b.frames).length).toBeGreaterThan(0); // session.ready: the service session is open
      const upstream = upstreams.at(-1)!;
      b.ws.send(bad);
      expect((await b.closed).code).toBe(4400);
      expect(await upstream.closed).toBe(1000);
      expect(upstream.sent).toEqual([START]);
    }
  });

  it('a giant chunk closes 1009 before reaching the service; text over the session limit closes 4400', async () => {
    const before = upstreams.length;
    const giant = browser(h.url);
    await giant.opened;
    giant.ws.send(JSON.stringify({ type: 'text.chunk', text: 'x'.repeat(20_000) }));
    expect((await giant.closed).code).toBe(1009);
    expect(upstreams.length).toBe(before);

    const wordy = browser(h.url);
    await wordy.opened;
    wordy.ws.send(START);
    await expect.poll(() => json(wordy.frames).length).toBeGreaterThan(0); // session.ready
    const chunk = JSON.stringify({ type: 'text.chunk', text: 'word '.repeat(300) }); // 1500 characters
    wordy.ws.send(chunk);
    wordy.ws.send(chunk); // 3000 > 2000
    const closed = await wordy.closed;
    expect(closed.code).toBe(4400);
    expect(closed.reason).toMatch(/text over 2000/);
    const upstream = upstreams.at(-1)!;
    await upstream.closed;
    expect(upstream.sent).toEqual([START, chunk]);
  });

  it('hundreds of sessions from one client: all but the limit closed 4429 (budget); another client is served meanwhile', async () => {
    const before = upgrades(h.emulator);
    const crowd = Array.from({ length: 200 }, () => browser(h.url, { 'x-client': 'crowd' }));
    await Promise.all(crowd.map((b) => b.opened.catch(() => undefined)));
    const other = browser(h.url, { 'x-client': 'someone-else' });
    await other.opened;
    other.ws.send(START);
    other.ws.send(JSON.stringify({ type: 'text.chunk', text: 'Still served.' }));
    other.ws.send(JSON.stringify({ type: 'text.done' }));
    expect((await other.closed).code).toBe(1000);
    const refused = crowd.filter((b) => b.ws.readyState !== WebSocket.OPEN);
    await Promise.all(refused.map((b) => b.closed));
    const codes = await Promise.all(refused.map((b) => b.closed.then((c) => c.code)));
    expect(codes.length).toBe(197);
    expect(new Set(codes)).toEqual(new Set([4429]));
    expect(h.relay.stats().sessions).toBe(3);
    for (const b of crowd) b.ws.close();
    await Promise.all(crowd.map((b) => b.closed));
    await expect.poll(() => h.relay.stats().sessions).toBe(0);
    // only the other client's session reached the service
    expect(upgrades(h.emulator)).toBe(before + 1);
  });

  it('a browser that goes away closes its service session at once', async () => {
    const b = browser(h.url);
    await b.opened;
    b.ws.send(START);
    b.ws.send(JSON.stringify({ type: 'text.chunk', text: 'This goes on and on. '.repeat(20) }));
    await expect.poll(() => b.frames.some((f) => Buffer.isBuffer(f))).toBe(true);
    const upstream = upstreams.at(-1)!;
    expect(upstream.socket.readyState).toBe(WebSocket.OPEN);
    b.ws.terminate(); // no close frame: the TCP connection just ends
    expect(await upstream.closed).toBe(1000);
    await expect.poll(() => h.relay.stats().upstreams).toBe(0);
  });

  it('the service’s session.error and close code pass through (4400 forbidden voice, 4402 credits)', async () => {
    const b = browser(h.url);
    await b.opened;
    b.ws.send(JSON.stringify({ type: 'session.start', voice_id: 987654 }));
    const closed = await b.closed;
    expect(closed.code).toBe(4400);
    expect(json(b.frames)).toEqual([{ type: 'session.error', error: expect.any(String) }]);
    expect(upstreams.at(-1)!.sent).toHaveLength(1); // it did reach the service: the service rejected it

    const poor = await harness({}, { credits: 1 });
    try {
      const p = browser(poor.url);
      await p.opened;
      p.ws.send(START);
      p.ws.send(JSON.stringify({ type: 'text.chunk', text: 'One. Two. Three.' }));
      expect((await p.closed).code).toBe(4402);
      expect(json(p.frames).filter((f) => f.type === 'session.error')).toHaveLength(1);
    } finally {
      await poor.close();
    }
  });

  it('a browser that never reads: the relay stops reading its service session, memory stays bounded, others go on', async () => {
    const slow = await harness({ limits: { bufferedBytes: 64 * 1024 } }, { toneWordSeconds: 0.5 });
    try {
      const reader = browser(slow.url, { 'x-client': 'slow' });
      await reader.opened;
      reader.ws.send(JSON.stringify({ type: 'session.start', voice_id: 1, output_format: 'wav', sample_rate: 48000 }));
      const words = Array.from({ length: 20 }, (_, i) => `Word${i}`).join(' ');
      const text = Array.from({ length: 16 }, () => `${words}.`).join(' ');
      reader.ws.send(JSON.stringify({ type: 'text.chunk', text }));
      reader.ws.send(JSON.stringify({ type: 'text.done' }));
      reader.ws.pause(); // stops reading its TCP socket
      await expect.poll(() => slow.relay.stats().pausedUpstreams, { timeout: 20_000 }).toBe(1);
      // bounded: the limit plus at most one frame in flight
      expect(slow.relay.stats().bufferedBytes).toBeLessThanOrEqual(64 * 1024 + 64 * 1024 + 1024);

      const other = browser(slow.url, { 'x-client': 'fast' });
      await other.opened;
      other.ws.send(START);
      other.ws.send(JSON.stringify({ type: 'text.chunk', text: 'I am not held up.' }));
      other.ws.send(JSON.stringify({ type: 'text.done' }));
      expect((await other.closed).code).toBe(1000);
      expect(slow.relay.stats().pausedUpstreams).toBe(1);

      // when it reads again, nothing was lost
      reader.ws.resume();
      expect((await reader.closed).code).toBe(1000);
      const frames = json(reader.frames);
      expect(frames.filter((f) => f.type === 'segment.done')).toHaveLength(16);
      expect(frames.at(-1)?.type).toBe('session.done');
    } finally {
      await slow.close();
    }
  });

  it('bad options throw at once, naming the field, never the key', () => {
    const server = createServer();
    expect(() => attachLiveRelay(server, { path: 'speech', apiKey: SECRET, baseUrl: 'http://127.0.0.1:1' })).toThrow(/path/);
    expect(() => attachLiveRelay(server, { path: '/s', apiKey: SECRET, baseUrl: 'http://127.0.0.1:1', limits: { frameBytes: -1 } })).toThrow(
      /limits.frameBytes/,
    );
    const messageOf = (make: () => unknown): string => {
      try {
        make();
      } catch (error) {
        return (error as Error).message;
      }
      return '';
    };
    // no key anywhere: named with its variable; a base address without a scheme: shown, the key not
    expect(messageOf(() => attachLiveRelay(server, { path: '/s', env: {} }))).toMatch(/CAMB_API_KEY/);
    const noScheme = messageOf(() => attachLiveRelay(server, { path: '/s', apiKey: SECRET, baseUrl: 'client.camb.ai/apis', env: {} }));
    expect(noScheme).toMatch(/base address "client\.camb\.ai\/apis" has no scheme/);
    expect(noScheme).not.toContain(SECRET);
    expect(server.listenerCount('upgrade')).toBe(0);
  });
});

