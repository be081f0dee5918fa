/**
 * rxvoice/relay over real sockets: browsers (ws clients, and `speak()` from rxvoice/live
 * with no key) speak to the relay, the relay to the emulator with the server's key.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { lastValueFrom, of, toArray } from 'rxjs';
import { WebSocket, type RawData } from 'ws';
import { startEmulator, type Emulator } from '../src/emulator/index.js';
import { speak } from '../src/live/index.js';
import { concatSegments } from '../src/operators/index.js';
import { attachLiveRelay, type LiveRelay, type LiveRelayOptions } from '../src/relay/index.js';

const SECRET = 'rxv-relay-SECRET-canary-5521';

/** Every service socket the relay opens, with the frames it sent and how it closed. */
interface Upstream {
  socket: WebSocket;
  sent: string[];
  closed: Promise<number>;
}
const upstreams: Upstream[] = [];
class TrackingWebSocket extends WebSocket {
  constructor(address: string | URL, options?: WebSocket.ClientOptions) {
    super(address, options);
    const sent: string[] = [];
    const closed = new Promise<number>((resolve) => this.once('close', (code: number) => resolve(code)));
    upstreams.push({ socket: this, sent, closed });
    const send = this.send.bind(this) as (data: unknown, ...rest: unknown[]) => void;
    (this as unknown as { send: (data: unknown, ...rest: unknown[]) => void }).send = (data: unknown, ...rest: unknown[]) => {
      sent.push(String(data));
      send(data, ...rest);
    };
  }
}

interface Browser {
  ws: WebSocket;
  frames: Array<string | Buffer>;
  opened: Promise<void>;
  closed: Promise<{ code: number; reason: string }>;
}
/** A WebSocket as a page of the relay's own origin opens it (`Origin` set), unless `headers` says otherwise. */
function browser(url: string, headers: Record<string, string> = {}): Browser {
  const ws = new WebSocket(url, { headers: { origin: new URL(url).origin.replace(/^ws/, 'http'), ...headers } });
  const frames: Array<string | Buffer> = [];
  ws.on('error', () => undefined);
  ws.on('message', (data: RawData, isBinary: boolean) => frames.push(isBinary ? (data as Buffer) : String(data)));
  return {
    ws,
    frames,
    opened: new Promise((resolve) => ws.once('open', () => resolve())),
    closed: new Promise((resolve) => ws.once('close', (code: number, reason: Buffer) => resolve({ code, reason: reason.toString() }))),
  };
}
const json = (frames: Array<string | Buffer>): Array<{ type: string; error?: string }> =>
  frames.filter((f): f is string => typeof f === 'string').map((f) => JSON.parse(f) as { type: string; error?: string });
const upgrades = (emulator: Emulator): number => emulator.requests.filter((r) => r.method === 'UPGRADE').length;
const START = JSON.stringify({ type: 'session.start', voice_id: 1, output_format: 'wav', word_timestamps: true });

interface Harness {
  emulator: Emulator;
  server: Server;
  relay: LiveRelay;
  url: string;
  close(): Promise<void>;
}
async function harness(relayOptions: Partial<LiveRelayOptions> = {}, emulatorOptions: Parameters<typeof startEmulator>[0] = {}): Promise<Harness> {
  const emulator = await startEmulator({ synth: 'tone', toneWordSeconds: 0.05, apiKeys: [SECRET], ...emulatorOptions });
  const server = createServer((_, res) => res.writeHead(404).end());
  const relay = attachLiveRelay(server, {
    path: '/speech',
    apiKey: SECRET,
    baseUrl: emulator.baseUrl,
    WebSocket: TrackingWebSocket,
    clientId: (request) => String(request.headers['x-client'] ?? request.socket.remoteAddress),
    ...relayOptions,
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/speech`;
  return {
    emulator,
    server,
    relay,
    url,
    close: async () => {
      await relay.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await emulator.close();
    },
  };
}

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

describe('rxvoice/relay: origins over plain sockets', () => {
  let h: Harness;
  const asked: string[] = [];
  beforeAll(async () => {
    h = await harness({ clientId: undefined });
  });
  afterAll(() => h.close());

  it('no Origin (a server, a script): the default authorize refuses (4401); an authorize that says yes (or gives an id) serves it', async () => {
    const before = upgrades(h.emulator);
    const script = new WebSocket(h.url); // ws sends no Origin unless told
    const closed = await new Promise<{ code: number; reason: string }>((resolve) =>
      script.once('close', (code: number, reason: Buffer) => resolve({ code, reason: String(reason) })),
    );
    expect(closed.code).toBe(4401);
    expect(closed.reason).toMatch(/no Origin/);
    expect(upgrades(h.emulator)).toBe(before);

    const gated = await harness({ authorize: (request) => (request.headers['x-job'] === 'nightly' ? 'job:nightly' : false) });
    const seen: string[] = [];
    gated.relay.events.subscribe((event) => {
      if (event.type === 'sessionOpened') seen.push(event.client);
    });
    try {
      const job = new WebSocket(gated.url, { headers: { 'x-job': 'nightly' } });
      await new Promise((resolve) => job.once('open', resolve));
      job.send(START);
      job.send(JSON.stringify({ type: 'text.chunk', text: 'Scheduled speech.' }));
      job.send(JSON.stringify({ type: 'text.done' }));
      expect(await new Promise((resolve) => job.once('close', resolve))).toBe(1000);
      expect(seen).toEqual(['job:nightly']); // authorize's id is the client
    } finally {
      await gated.close();
    }
  });

  it('another origin: 4403 before authorize, nothing upstream; publicOrigin is the own origin behind a proxy', async () => {
    const proxied = await harness({
      publicOrigin: 'https://chat.example.com',
      authorize: (request) => {
        asked.push(String(request.headers.origin));
        return true;
      },
    });
    try {
      const before = upgrades(proxied.emulator);
      const evil = browser(proxied.url, { origin: 'https://evil.example' });
      expect(await evil.closed).toEqual({ code: 4403, reason: 'origin not allowed: https://evil.example' });
      // behind the proxy the request's own scheme and host are not the page's
      const direct = browser(proxied.url);
      expect((await direct.closed).code).toBe(4403);
      expect(asked).toEqual([]);
      expect(upgrades(proxied.emulator)).toBe(before);
      // control: the public origin (default port of https written out or not) is served
      for (const origin of ['https://chat.example.com', 'https://CHAT.example.com:443']) {
        const page = browser(proxied.url, { origin });
        await page.opened;
        page.ws.send(START);
        page.ws.send(JSON.stringify({ type: 'text.done' }));
        expect((await page.closed).code).toBe(1000);
      }
      expect(asked).toHaveLength(2);
      expect(upgrades(proxied.emulator)).toBe(before + 2);
      expect(proxied.relay.stats().refused.origin).toBe(2);
    } finally {
      await proxied.close();
    }
  });

  it('speak() from a page of another origin: a non-retryable session_rejected error (4403), not retried even with reconnect', async () => {
    const h2 = await harness();
    try {
      let opened = 0;
      class ForeignPage extends WebSocket {
        constructor(address: string | URL, protocols?: string | string[]) {
          super(address, protocols, { origin: 'https://evil.example' });
          opened += 1;
        }
      }
      const error = await lastValueFrom(
        of('Hello there.').pipe(speak({ wsUrl: h2.url, WebSocket: ForeignPage }, { voice_id: 1, reconnect: { maxAttempts: 3, baseDelayMs: 1 } })),
      ).catch((caught: unknown) => caught);
      expect(error).toMatchObject({ name: 'SessionRejectedError', code: 'session_rejected', closeCode: 4403, retryable: false, unspoken: 'Hello there.' });
      expect(opened).toBe(1);
      expect(upgrades(h2.emulator)).toBe(0);
    } finally {
      await h2.close();
    }
  });

  it('bad origin options throw a ValidationError at once', () => {
    const server = createServer();
    const base = { path: '/s', apiKey: SECRET, baseUrl: 'http://127.0.0.1:1' };
    expect(() => attachLiveRelay(server, { ...base, origins: ['https://app.example.com/page'] })).toThrow(/options.origins.0/);
    expect(() => attachLiveRelay(server, { ...base, publicOrigin: 'chat.example.com' })).toThrow(/publicOrigin/);
    expect(() => attachLiveRelay(server, { ...base, limits: { clientShare: 2 } })).toThrow(/clientShare/);
  });
});

describe('rxvoice/relay: visitor budgets', () => {
  const forUser = (user: string): Record<string, string> => ({ 'x-user': user });
  const authorizeUser = (request: { headers: Record<string, string | string[] | undefined> }): string | false => {
    const user = request.headers['x-user'];
    return typeof user === 'string' ? `user:${user}` : false;
  };

  it('one visitor over its characters per minute is closed 4429 (the chunk not forwarded) while another keeps speaking', async () => {
    const h = await harness({ authorize: authorizeUser, clientId: undefined, limits: { charactersPerMinute: 60 } });
    const events: Array<{ type: string; reason?: string; client?: string }> = [];
    h.relay.events.subscribe((event) => events.push(event));
    try {
      const a = browser(h.url, forUser('a'));
      const b = browser(h.url, forUser('b'));
      await Promise.all([a.opened, b.opened]);
      a.ws.send(START);
      b.ws.send(START);
      const forty = (who: string): string => JSON.stringify({ type: 'text.chunk', text: `${who} says forty characters of text here. `.padEnd(40, '.').slice(0, 40) });
      const first = upstreams.length;
      a.ws.send(forty('A'));
      b.ws.send(forty('B'));
      await expect.poll(() => upstreams.slice(first).filter((u) => u.sent.length >= 2).length).toBe(2);
      const upstreamA = upstreams.slice(first).find((u) => u.sent[1]!.includes('A says'))!;
      a.ws.send(forty('A')); // 80 > 60
      const closed = await a.closed;
      expect(closed.code).toBe(4429);
      expect(closed.reason).toBe('budget: over 60 characters per minute for this client');
      expect(await upstreamA.closed).toBe(1000);
      expect(upstreamA.sent).toHaveLength(2); // the chunk over the budget never reached the service

      // the other visitor goes on: its budget is its own
      b.ws.send(JSON.stringify({ type: 'text.chunk', text: 'Still mine.' }));
      b.ws.send(JSON.stringify({ type: 'text.done' }));
      expect((await b.closed).code).toBe(1000);
      expect(json(b.frames).filter((f) => f.type === 'segment.done').length).toBeGreaterThan(0);

      // the budget is the visitor's, not the session's: a new session of A is refused too
      const again = browser(h.url, forUser('a'));
      await again.opened;
      again.ws.send(START);
      again.ws.send(JSON.stringify({ type: 'text.chunk', text: 'More than the twenty left.' }));
      expect((await again.closed).code).toBe(4429);
      expect(events.filter((e) => e.type === 'refused')).toEqual([
        expect.objectContaining({ reason: 'characters', client: 'user:a' }),
        expect.objectContaining({ reason: 'characters', client: 'user:a' }),
      ]);
      expect(h.relay.stats().refused.characters).toBe(2);
    } finally {
      await h.close();
    }
  });

  it('one client holds at most clientShare of the relay’s sessions, whatever sessionsPerClient says', async () => {
    const h = await harness({ authorize: authorizeUser, clientId: undefined, limits: { sessions: 10, sessionsPerClient: 10 } });
    try {
      const first = browser(h.url, forUser('greedy'));
      await first.opened;
      const second = browser(h.url, forUser('greedy'));
      expect(await second.closed).toEqual({ code: 4429, reason: 'budget: over 1 sessions at once for this client' });
      const other = browser(h.url, forUser('modest'));
      await other.opened;
      other.ws.send(START);
      other.ws.send(JSON.stringify({ type: 'text.done' }));
      expect((await other.closed).code).toBe(1000);
      first.ws.close();
      await first.closed;
      // the slot is free again
      const third = browser(h.url, forUser('greedy'));
      await third.opened;
      third.ws.send(START);
      third.ws.send(JSON.stringify({ type: 'text.done' }));
      expect((await third.closed).code).toBe(1000);
    } finally {
      await h.close();
    }
  });

  it('an idle session is closed 4408 by the relay and its service session closed; a session that keeps talking is not', async () => {
    const h = await harness({ limits: { idleTimeoutMs: 400 } });
    try {
      const idle = browser(h.url, { 'x-client': 'idle' });
      const talker = browser(h.url, { 'x-client': 'talker' });
      await Promise.all([idle.opened, talker.opened]);
      idle.ws.send(START);
      talker.ws.send(START);
      await expect.poll(() => json(idle.frames).length).toBeGreaterThan(0);
      const both = upstreams.slice(-2);
      const started = Date.now();
      const timer = setInterval(() => talker.ws.send(JSON.stringify({ type: 'text.chunk', text: 'and ' })), 150);
      const closed = await idle.closed;
      expect(closed).toEqual({ code: 4408, reason: 'idle: no text and no audio for 0.4 s' });
      expect(Date.now() - started).toBeGreaterThanOrEqual(300);
      // one of the two service sessions (the idle one's) is closed by the relay
      expect(await Promise.race(both.map((u) => u.closed))).toBe(1000);
      await new Promise((resolve) => setTimeout(resolve, 600));
      clearInterval(timer);
      expect(talker.ws.readyState).toBe(WebSocket.OPEN);
      talker.ws.send(JSON.stringify({ type: 'text.done' }));
      expect((await talker.closed).code).toBe(1000);
      expect(h.relay.stats().refused.idle).toBe(1);
    } finally {
      await h.close();
    }
  });

  it('frames wait for a slow service session to open: past upstreamBufferedBytes the browser is not read, then everything goes in order', async () => {
    const h = await harness(
      { limits: { upstreamBufferedBytes: 16 * 1024, frameBytes: 8 * 1024, charactersPerMinute: 1_000_000, textPerSession: 1_000_000 } },
      { latencyMs: 1500 },
    );
    const throttled: string[] = [];
    h.relay.events.subscribe((event) => {
      if (event.type === 'throttled') throttled.push(event.cause);
    });
    try {
      const b = browser(h.url);
      await b.opened;
      b.ws.send(START);
      const chunks = Array.from({ length: 24 }, (_, i) => JSON.stringify({ type: 'text.chunk', text: `Chunk ${i}. ${'word '.repeat(800)}` }));
      for (const chunk of chunks) b.ws.send(chunk); // 24 x 4 KB = 96 KB, before the service session is open
      let most = 0;
      await expect
        .poll(() => {
          most = Math.max(most, h.relay.stats().upstreamBufferedBytes);
          return h.relay.stats().pausedBrowsers;
        })
        .toBe(1);
      expect(throttled).toContain('upstreamBuffered');
      await expect.poll(() => upstreams.at(-1)!.sent.length, { timeout: 20_000, interval: 5 }).toBe(25);
      // bounded the whole time: the limit, plus what one read of the socket can hold
      expect(most).toBeLessThanOrEqual(16 * 1024 + 64 * 1024);
      expect(upstreams.at(-1)!.sent).toEqual([START, ...chunks]);
      b.ws.close();
      await b.closed;
    } finally {
      await h.close();
    }
  });
});

describe('rxvoice/relay: who a client is', () => {
  it('an IPv6 address counts by its /64 (one machine holds a whole /64); IPv4, also mapped, as is', async () => {
    const { addressClient } = await import('../src/relay/origin.js');
    const machine = ['2001:db8:1:2::1', '2001:db8:1:2:ffff:ffff:ffff:fffe', '2001:0DB8:0001:0002:aaaa::9%eth0', '2001:db8:1:2:0:0:10.0.0.1'];
    expect(new Set(machine.map(addressClient))).toEqual(new Set(['2001:db8:1:2::/64']));
    expect(addressClient('2001:db8:1:3::1')).toBe('2001:db8:1:3::/64'); // the next /64 is someone else
    expect(addressClient('::1')).toBe('0:0:0:0::/64');
    expect(addressClient('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(addressClient('203.0.113.7')).not.toBe(addressClient('203.0.113.8'));
    expect(addressClient(undefined)).toBe('unknown');
  });
});
