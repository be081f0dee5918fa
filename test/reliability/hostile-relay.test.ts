/**
 * The relay against hostile peers. A browser flooding padded frames: the relay stops
 * reading it (bytes per second), forwards no padding, and what it buffers stays bounded.
 * A service that stops reading: the browser is not read past `upstreamBufferedBytes`. A
 * service that echoes the key in every form it could (escaped, other case, URL-encoded,
 * base64, hex, split over frames, in binary frames, in a close reason cut mid-key): none
 * of it reaches the browser, while a canary sent the same ways arrives intact (the
 * control). And the scrubber alone, on random keys, forms and splits (fast-check).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocket, type RawData } from 'ws';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import { attachLiveRelay, type LiveRelay, type LiveRelayOptions } from '../../src/relay/index.js';
import { KEY_FRAGMENT, keyScrubber } from '../../src/relay/scrub.js';
import { wsServer } from './helpers.js';

const KEY = 'sk-rxv-Relay-Hostile-7f3a9c21';
const START = JSON.stringify({ type: 'session.start', voice_id: 1, output_format: 'wav' });

/** Every frame the relay writes toward the service (a `ws` subclass, as `WebSocket` option). */
const sentUpstream: string[] = [];
class TrackingWebSocket extends WebSocket {
  constructor(address: string | URL, options?: WebSocket.ClientOptions) {
    super(address, options);
    const send = this.send.bind(this) as (data: unknown, ...rest: unknown[]) => void;
    (this as unknown as { send: (data: unknown, ...rest: unknown[]) => void }).send = (data: unknown, ...rest: unknown[]) => {
      sentUpstream.push(String(data));
      send(data, ...rest);
    };
  }
}

interface Site {
  relay: LiveRelay;
  url: string;
  close(): Promise<void>;
}
async function site(baseUrl: string, options: Partial<LiveRelayOptions> = {}): Promise<Site> {
  const server: Server = createServer((_, res) => res.writeHead(404).end());
  const relay = attachLiveRelay(server, { path: '/speech', apiKey: KEY, baseUrl, WebSocket: TrackingWebSocket, authorize: () => true, warn: () => undefined, ...options });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    relay,
    url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}/speech`,
    close: async () => {
      await relay.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function open(url: string): Promise<WebSocket> {
  const ws = new WebSocket(url);
  ws.on('error', () => undefined);
  return new Promise((resolve) => ws.once('open', () => resolve(ws)));
}

/** Sends `frame` as fast as the socket takes it (keeping `highWater` bytes queued) for `ms`; resolves the bytes handed to the socket. */
async function flood(ws: WebSocket, frame: () => string, ms: number, highWater = 4 * 1024 * 1024): Promise<number> {
  let sent = 0;
  const until = Date.now() + ms;
  while (Date.now() < until && ws.readyState === WebSocket.OPEN) {
    while (ws.bufferedAmount < highWater && Date.now() < until) {
      const data = frame();
      ws.send(data);
      sent += data.length;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return sent;
}

describe('a padded-frame flood from a browser', { timeout: 60_000 }, () => {
  let emulator: Emulator;
  beforeAll(async () => {
    emulator = await startEmulator({ synth: 'tone', toneWordSeconds: 0.02, apiKeys: [KEY] });
  });
  afterAll(() => emulator.close());

  it('is throttled to bytesPerSecond, forwards no padding, and keeps what the relay buffers bounded', async () => {
    const s = await site(emulator.baseUrl, { limits: { bytesPerSecond: 256 * 1024, clientBytesPerSecond: 256 * 1024, charactersPerMinute: 100_000 } });
    const throttled: string[] = [];
    s.relay.events.subscribe((event) => {
      if (event.type === 'throttled') throttled.push(event.cause);
    });
    try {
      const first = sentUpstream.length;
      const ws = await open(s.url);
      ws.send(START);
      const pad = 'p'.repeat(60 * 1024 - 100);
      let n = 0;
      let most = 0;
      const sampler = setInterval(() => {
        most = Math.max(most, s.relay.stats().upstreamBufferedBytes);
      }, 5);
      // every 16th frame carries one word, the rest nothing but padding
      const sent = await flood(ws, () => JSON.stringify({ type: 'text.chunk', text: n++ % 16 === 0 ? 'word ' : '', pad }), 3000);
      clearInterval(sampler);
      // the control: the browser pushed megabytes, most of them still waiting on its side (the relay stopped reading)
      expect(sent).toBeGreaterThan(4 * 1024 * 1024);
      expect(ws.bufferedAmount).toBeGreaterThan(1024 * 1024);
      expect(throttled).toContain('bytesPerSecond');
      expect(s.relay.stats().pausedBrowsers).toBe(1);
      // bounded: the limit toward the service plus one socket read of frames
      expect(most).toBeLessThanOrEqual(256 * 1024 + 128 * 1024);
      const upstream = sentUpstream.slice(first);
      expect(upstream[0]).toBe(START);
      expect(upstream.some((frame) => frame.includes('pad') || frame.includes('ppp'))).toBe(false);
      expect(upstream.slice(1).every((frame) => frame === JSON.stringify({ type: 'text.chunk', text: 'word ' }))).toBe(true);
      // at 256 KiB/s for about 3 s: a few dozen 60 KB frames read, not the megabytes sent
      expect(upstream.length - 1).toBeLessThan(Math.ceil((4 * 256 * 1024) / (60 * 1024) / 16) + 2);
      // gone while not read: the relay notices once it reads again (after the wait its rate asks for)
      ws.terminate();
      await expect.poll(() => s.relay.stats().sessions, { timeout: 15_000 }).toBe(0);
    } finally {
      await s.close();
    }
  });
});

describe('a service that stops reading', { timeout: 60_000 }, () => {
  it('the browser is not read past upstreamBufferedBytes; the relay holds no more than that', async () => {
    const service = await wsServer((socket) => {
      socket.once('message', () => {
        socket.send(JSON.stringify({ type: 'session.ready', session_id: 's', run_id: 1 }));
        (socket as unknown as { _socket: { pause(): void } })._socket.pause(); // reads nothing more
      });
    });
    const s = await site(service.wsUrl.replace('ws:', 'http:'), {
      limits: { upstreamBufferedBytes: 256 * 1024, charactersPerMinute: 100_000_000, textPerSession: 100_000_000, bytesPerSecond: 64 * 1024 * 1024, clientBytesPerSecond: 64 * 1024 * 1024 },
    });
    try {
      const ws = await open(s.url);
      ws.send(START);
      const text = 'Words the service will never read. '.repeat(1500); // about 53 KB a frame
      let most = 0;
      const sampler = setInterval(() => {
        most = Math.max(most, s.relay.stats().upstreamBufferedBytes);
      }, 5);
      const sent = await flood(ws, () => JSON.stringify({ type: 'text.chunk', text }), 4000, 32 * 1024 * 1024);
      await expect.poll(() => s.relay.stats().pausedBrowsers, { timeout: 10_000 }).toBe(1);
      clearInterval(sampler);
      // the control: more was pushed than kernel buffers and the limit together hold
      expect(sent).toBeGreaterThan(16 * 1024 * 1024);
      expect(ws.bufferedAmount).toBeGreaterThan(1024 * 1024);
      expect(most).toBeLessThanOrEqual(256 * 1024 + 128 * 1024);
      ws.terminate();
    } finally {
      await s.close();
      await service.close();
    }
  });
});

/** The forms a service could echo a secret in, each with how to read it back from what the browser got. */
const FORMS: Array<[string, (secret: string) => string]> = [
  ['plain', (k) => k],
  ['upper case', (k) => k.toUpperCase()],
  ['lower case', (k) => k.toLowerCase()],
  ['JSON \\u escapes', (k) => [...k].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')],
  ['URL-encoded', (k) => [...k].map((c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`).join('')],
  ['URL-encoded twice', (k) => [...k].map((c) => `%25${c.charCodeAt(0).toString(16)}`).join('')],
  ['HTML references', (k) => [...k].map((c) => `&#${c.charCodeAt(0)};`).join('')],
  ['hex', (k) => Buffer.from(k).toString('hex')],
  ['base64', (k) => Buffer.from(k).toString('base64')],
  ['base64 after one byte', (k) => Buffer.from(`x${k}`).toString('base64')],
  ['base64url after two bytes', (k) => Buffer.from(`xy${k}`).toString('base64url')],
];

/** Whether `received` holds `secret` (or a run of KEY_FRAGMENT of its characters) in any of FORMS. */
function leaks(received: string, secret: string): string | undefined {
  const folded = received.toLowerCase();
  for (const [name, encode] of FORMS) {
    const encoded = encode(secret);
    const window = name.startsWith('base64') ? Math.ceil((KEY_FRAGMENT * 4) / 3) + 4 : name.startsWith('hex') ? 2 * KEY_FRAGMENT : encoded.length / secret.length * KEY_FRAGMENT;
    for (let i = 0; i + window <= encoded.length; i++) {
      const piece = encoded.slice(i, i + window);
      if (name.startsWith('base64') ? received.includes(piece) : folded.includes(piece.toLowerCase())) return `${name}: ${piece}`;
    }
  }
  return undefined;
}

describe('a service that echoes the key', { timeout: 60_000 }, () => {
  /** What the hostile service says: the secret in every form, in text and binary frames, split, and in the close reason. */
  function echo(socket: WebSocket, secret: string): void {
    socket.once('message', () => {
      socket.send(JSON.stringify({ type: 'session.ready', session_id: 's', run_id: 1 }));
      for (const [name, encode] of FORMS) {
        socket.send(JSON.stringify({ type: 'segment.start', segment_id: 0, text: `${name}: ${encode(secret)}.` }).replace(/\\\\u/g, '\\u'));
        socket.send(Buffer.concat([Buffer.from('RIFF....WAVEdata'), Buffer.from(encode(secret)), Buffer.alloc(64, 7)]));
      }
      // split over two text frames and over two binary frames, in the middle
      const half = Math.floor(secret.length / 2);
      socket.send(JSON.stringify({ type: 'segment.done', segment_id: 0, note: `ends with ${secret.slice(0, half)}` }));
      socket.send(JSON.stringify({ type: 'session.error', error: `${secret.slice(half)} was the rest` }));
      socket.send(Buffer.from(`audio ${secret.slice(0, half)}`));
      socket.send(Buffer.from(`${secret.slice(half)} audio`));
      // a close reason is at most 123 bytes: the service cut it mid-key
      socket.close(4400, `invalid key: ${'x'.repeat(100)} ${secret}`.slice(0, 123 - 0).slice(0, 118));
    });
  }

  async function run(secret: string): Promise<{ text: string; binary: string; reason: string; frames: number }> {
    const service = await wsServer((socket) => echo(socket, secret));
    const s = await site(service.wsUrl.replace('ws:', 'http:'));
    try {
      const ws = await open(s.url);
      const texts: string[] = [];
      const binaries: Buffer[] = [];
      ws.on('message', (data: RawData, isBinary: boolean) => (isBinary ? binaries.push(data as Buffer) : texts.push(String(data))));
      const closed = new Promise<string>((resolve) => ws.once('close', (_: number, reason: Buffer) => resolve(String(reason))));
      ws.send(START);
      const reason = await closed;
      return { text: texts.join('\n'), binary: Buffer.concat(binaries).toString('latin1'), reason, frames: texts.length + binaries.length };
    } finally {
      await s.close();
      await service.close();
    }
  }

  it('no form of the key reaches the browser; a canary sent the same ways arrives intact (control)', async () => {
    const scrubbed = await run(KEY);
    const canary = 'CANARY-not-the-key-4d8e2b';
    const control = await run(canary);
    expect(scrubbed.frames).toBe(control.frames); // every frame was delivered, masked where needed
    // the control: every form of the canary arrived as the service sent it, text and binary
    for (const [, encode] of FORMS) {
      expect(control.text).toContain(encode(canary));
      expect(control.binary).toContain(encode(canary));
    }
    expect(control.reason).toContain(canary.slice(0, 4));
    expect(leaks(scrubbed.text, KEY)).toBeUndefined();
    expect(leaks(scrubbed.binary, KEY)).toBeUndefined();
    expect(leaks(scrubbed.reason, KEY)).toBeUndefined();
    // the close reason cut mid-key: its tail (a prefix of the key) is masked too
    expect(scrubbed.reason).toMatch(/\*\*\*$/);
    expect(scrubbed.reason.toLowerCase()).not.toContain(KEY.slice(0, 4).toLowerCase());
  });
});

describe('keyScrubber on random keys, forms and splits', () => {
  it('leaves no run of KEY_FRAGMENT key characters in any form, whatever the splits into frames; other text passes unchanged', () => {
    const keyChar = fc.constantFrom(...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_');
    const noise = fc.string({ unit: fc.constantFrom(' ', '.', ',', '!', '?', '\n', '"', ':'), maxLength: 30 });
    fc.assert(
      fc.property(
        fc.array(keyChar, { minLength: 16, maxLength: 48 }).map((chars) => chars.join('')),
        fc.integer({ min: 0, max: FORMS.length - 1 }),
        noise,
        noise,
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 3 }),
        (key, formIndex, before, after, cuts) => {
          const scrubber = keyScrubber(key);
          const text = before + FORMS[formIndex]![1](key) + after;
          const points = [...new Set(cuts.map((c) => Math.floor(c * text.length)))].sort((a, b) => a - b);
          const pieces = [0, ...points].map((start, i) => text.slice(start, [...points, text.length][i]));
          // one session's frames, in order: text frames, and the same bytes as binary frames
          const frames = scrubber.stream();
          expect(leaks(pieces.map((piece) => frames.text(piece)).join(''), key)).toBeUndefined();
          const bytes = scrubber.stream();
          expect(leaks(pieces.map((piece) => bytes.binary(Buffer.from(piece, 'latin1')).toString('latin1')).join(''), key)).toBeUndefined();
          // the noise around it is left alone
          expect(scrubber.text(before + after)).toBe(before + after);
        },
      ),
      { numRuns: 300 },
    );
  });
});
