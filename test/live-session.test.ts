import { afterEach, describe, expect, it } from 'vitest';
import { TestScheduler } from 'rxjs/testing';
import { EMPTY, Subject, concat, from, interval, lastValueFrom, map, of, take, takeUntil, throwError, timer, toArray } from 'rxjs';
import { WebSocket as NodeWebSocket, WebSocketServer, type RawData } from 'ws';
import type { AddressInfo } from 'node:net';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { IncomingMessage } from 'node:http';
import { startEmulator, type Emulator } from '../src/emulator/index.js';
import type { EmulatorOptions } from '../src/emulator/options.js';
import { speak, type WebSocketConstructorLike } from '../src/live/session.js';
import { SpeechLedger } from '../src/live/ledger.js';
import type { LiveSpeechEvent, SpokenSegment } from '../src/live/events.js';
import { concatSegments } from '../src/operators/concatSegments.js';
import { resubmitSkipped } from '../src/operators/resubmitSkipped.js';
import { wordTimeline } from '../src/operators/wordTimeline.js';
import {
  CreditsExhaustedError,
  LiveSessionError,
  SessionRejectedError,
  ValidationError,
  type LiveSessionErrorCode,
} from '../src/core/errors.js';
import { waitFor } from './fixtures/sinkFixtures.js';

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

const emulators: Emulator[] = [];
const servers: WebSocketServer[] = [];

async function emulator(options: EmulatorOptions = {}): Promise<Emulator> {
  const emu = await startEmulator({ synth: 'tone', toneWordSeconds: 0.02, ...options });
  emulators.push(emu);
  return emu;
}

afterEach(async () => {
  await Promise.all(emulators.splice(0).map((e) => e.close()));
  await Promise.all(
    servers.splice(0).map(
      (s) =>
        new Promise<void>((resolve) => {
          for (const client of s.clients) client.terminate();
          s.close(() => resolve());
        }),
    ),
  );
});

/** A scripted WebSocket server on port 0 (a hostile or minimal peer). */
async function scriptedServer(
  onConnection: (socket: NodeWebSocket, request: IncomingMessage, received: string[]) => void,
): Promise<{ wsUrl: string; connections: IncomingMessage[]; received: string[][]; closes: number[] }> {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  servers.push(wss);
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  const state = { connections: [] as IncomingMessage[], received: [] as string[][], closes: [] as number[] };
  wss.on('connection', (socket, request) => {
    const received: string[] = [];
    state.connections.push(request);
    state.received.push(received);
    socket.on('message', (data: RawData) => received.push(data.toString()));
    socket.on('close', (code) => state.closes.push(code));
    onConnection(socket, request, received);
  });
  const { port } = wss.address() as AddressInfo;
  return { wsUrl: `ws://127.0.0.1:${port}`, ...state };
}

const upgrades = (emu: Emulator) => emu.requests.filter((r) => r.method === 'UPGRADE').length;
const squash = (text: string) => text.replace(/\s+/g, '');
const segmentsOf = (events: LiveSpeechEvent[]) =>
  events.filter((e): e is Extract<LiveSpeechEvent, { type: 'segmentStart' }> => e.type === 'segmentStart');

async function failure(promise: Promise<unknown>): Promise<LiveSessionError> {
  try {
    await promise;
  } catch (error) {
    return error as LiveSessionError;
  }
  throw new Error('expected an error');
}

/** The ValidationError that `make` throws. */
function thrown(make: () => unknown): ValidationError {
  try {
    make();
  } catch (error) {
    return error as ValidationError;
  }
  throw new Error('expected a ValidationError to be thrown');
}

/** The error of a live session, with this code. */
function expectLiveError(error: unknown, code: LiveSessionErrorCode): void {
  expect(error).toBeInstanceOf(LiveSessionError);
  expect((error as LiveSessionError).code).toBe(code);
}

/** Matches a live session's error of this code (inside marble expectations). */
const liveError = (code: LiveSessionErrorCode): unknown => expect.objectContaining({ name: 'LiveSessionError', code });

const TEXT =
  'The quick brown fox jumps over the lazy dog. Pack my box with five dozen liquor jugs! ' +
  'How vexingly quick daft zebras jump? Sphinx of black quartz, judge my vow. ' +
  'Bright vixens jump and dozy fowl quack. Waltz, bad nymph, for quick jigs vex.';
const SENTENCES = TEXT.match(/[^.!?]+[.!?]/g)!.map((s) => s.trim());

/** Split text into small tokens like an LLM stream (2-5 characters). */
function tokens(text: string): string[] {
  const out: string[] = [];
  let i = 0;
  let n = 0;
  while (i < text.length) {
    const len = 2 + (n++ % 4);
    out.push(text.slice(i, i + len));
    i += len;
  }
  return out;
}

// ---------------------------------------------------------------------------
// The ledger (pure)
// ---------------------------------------------------------------------------

describe('SpeechLedger', () => {
  it('maps segments onto the pushed text, ignoring whitespace differences', () => {
    const ledger = new SpeechLedger();
    for (const t of tokens('Hello there.  How are you?\n\nFine, thanks. Bye')) ledger.push(t);
    expect(ledger.unspoken()).toBe('Hello there.  How are you?\n\nFine, thanks. Bye');
    ledger.segmentStarted(0, 'Hello there.');
    expect(ledger.unspoken()).toBe('Hello there.  How are you?\n\nFine, thanks. Bye');
    ledger.segmentDelivered(0);
    expect(ledger.unspoken()).toBe('How are you?\n\nFine, thanks. Bye');
    ledger.segmentStarted(1, ' How are you?');
    ledger.segmentDelivered(1);
    expect(ledger.unspoken()).toBe('Fine, thanks. Bye');
    ledger.segmentSkipped(2, 'Fine,   thanks.');
    expect(ledger.unspoken()).toBe('Bye');
    ledger.segmentStarted(3, 'Bye');
    ledger.segmentDelivered(3);
    expect(ledger.unspoken()).toBe('');
    expect(ledger.stats()).toMatchObject({ delivered: 3, skipped: 1, mismatches: 0 });
  });

  it('abortInProgress rewinds to the last completed segment', () => {
    const ledger = new SpeechLedger();
    ledger.push('One. Two. Three.');
    ledger.segmentStarted(0, 'One.');
    ledger.segmentDelivered(0);
    ledger.segmentStarted(1, 'Two.');
    expect(ledger.segmentInProgress).toEqual({ segment_id: 1, text: 'Two.' });
    expect(ledger.abortInProgress()?.segment_id).toBe(1);
    expect(ledger.unspoken()).toBe('Two. Three.');
    // the new session segments the resent text again, from the start
    ledger.segmentStarted(0, 'Two.');
    ledger.segmentDelivered(0);
    expect(ledger.unspoken()).toBe('Three.');
  });

  it('ignores a done for a segment that is not in progress, and counts mismatches', () => {
    const ledger = new SpeechLedger();
    ledger.push('abc def');
    ledger.segmentDelivered(7);
    expect(ledger.unspoken()).toBe('abc def');
    // no sentence end: the only place the service could have ended it is the chunk's end
    expect(ledger.segmentStarted(0, 'xyz')).toEqual({ sent: 'abc def', matches: false });
    ledger.segmentDelivered(0);
    expect(ledger.stats().mismatches).toBe(1);
    expect(ledger.unspoken()).toBe('');
  });

  it('handles surrogate pairs and drops text already spoken (bounded memory)', () => {
    const ledger = new SpeechLedger();
    for (let i = 0; i < 1000; i++) ledger.push(`Sentence 😀 ${i}. `);
    for (let i = 0; i < 999; i++) {
      ledger.segmentStarted(i, `Sentence 😀 ${i}.`);
      ledger.segmentDelivered(i);
    }
    expect(ledger.unspoken()).toBe('Sentence 😀 999. ');
    expect(ledger.stats().mismatches).toBe(0);
    expect((ledger as unknown as { chunks: string[] }).chunks.length).toBeLessThanOrEqual(2);
  });
});

// ---------------------------------------------------------------------------
// Local validation, keys, transport
// ---------------------------------------------------------------------------

describe('speak: validation and connection', () => {
  it('rejects bad options locally: ValidationError, no connection', async () => {
    const emu = await emulator();
    const bad = [
      { voice_id: -1 },
      { voice_id: 1, idle_timeout: 0 },
      { voice_id: 1, output_format: 'ogg' as never },
      { voice_id: 1, language: 'EN_US' },
      { voice_id: 1, reconnect: { maxAttempts: -1 } },
      { voice_id: 1, readyTimeoutMs: 0 },
    ];
    for (const options of bad) {
      const error = thrown(() => speak(emu, options));
      expect(error).toBeInstanceOf(ValidationError);
      expect(error.source).toBe('local');
      expect(error.message).not.toContain(emu.apiKey);
    }
    const error = thrown(() => speak({ ...emu, wsUrl: 'not a url' }, { voice_id: 1 }));
    expect(error.issues[0]?.loc).toEqual(['connection', 'wsUrl']);
    // No sleep before the check: a valid session after them (the control) is the one and
    // only upgrade the emulator saw.
    await lastValueFrom(of('Hi.').pipe(speak(emu, { voice_id: 1 })));
    expect(upgrades(emu)).toBe(1);
  });

  it('reports the field of a bad option in the service shape', () => {
    const error = thrown(() => speak({ wsUrl: 'ws://127.0.0.1:1', apiKey: 'k' }, { voice_id: 1, speaking_rate: 9 }));
    expect(error.issues).toEqual([expect.objectContaining({ loc: ['session.start', 'speaking_rate'] })]);
  });

  it('sends the key in the x-api-key header by default, never in the URL', async () => {
    const server = await scriptedServer((socket) => socket.close(4401));
    await failure(lastValueFrom(of('Hi.').pipe(speak({ wsUrl: server.wsUrl, apiKey: 'k&y=1' }, { voice_id: 1 }))));
    const request = server.connections[0]!;
    expect(request.headers['x-api-key']).toBe('k&y=1');
    expect(request.url).toBe('/live-tts/ws');
  });

  it('sends the key as ?api_key= (URL-encoded) for a browser-style WebSocket', async () => {
    class BrowserStyle extends NodeWebSocket {
      constructor(url: string, protocols?: string | string[]) {
        super(url, protocols);
      }
    }
    const server = await scriptedServer((socket) => socket.close(4401));
    const Ctor = BrowserStyle as unknown as WebSocketConstructorLike;
    const error = await failure(lastValueFrom(of('Hi.').pipe(speak({ wsUrl: server.wsUrl, apiKey: 'k&y=1 /' , WebSocket: Ctor }, { voice_id: 1 }))));
    expectLiveError(error, 'authentication');
    expect(error.message).not.toContain('k&y');
    const request = server.connections[0]!;
    expect(request.headers['x-api-key']).toBeUndefined();
    expect(new URL(request.url!, 'http://x').searchParams.get('api_key')).toBe('k&y=1 /');
    expect(request.url).toContain('api_key=k%26y%3D1');
  });

  it('a browser-style WebSocket speaks with the emulator through the query key', async () => {
    const emu = await emulator();
    const events = await lastValueFrom(
      of('Hello there. ').pipe(speak({ ...emu, WebSocket: NodeWebSocket as unknown as WebSocketConstructorLike, headersSupported: false }, { voice_id: 1 }), toArray()),
    );
    expect(events.map((e) => e.type)).toEqual(['ready', 'segmentStart', 'audio', 'segmentDone', 'done']);
  });

  it("a WHATWG WebSocket (undici's, as in a browser) runs a whole session with the key in api_key", async () => {
    const { WebSocket: WhatwgWebSocket } = await import('undici');
    const live = await import('../src/live/index.js'); // the browser entry
    const emu = await emulator();
    const seen: string[] = [];
    class Spy extends WhatwgWebSocket {
      constructor(url: string | URL, protocols?: string | string[]) {
        super(url, protocols);
        seen.push(String(url));
      }
    }
    const segments = await lastValueFrom(
      of('Hello there. ', 'General Kenobi.').pipe(
        live.speak({ wsUrl: emu.wsUrl, apiKey: emu.apiKey, WebSocket: Spy as unknown as WebSocketConstructorLike }, { voice_id: 1 }),
        concatSegments(),
        toArray(),
      ),
    );
    expect(segments.map((s) => s.text.trim())).toEqual(['Hello there.', 'General Kenobi.']);
    expect(new TextDecoder().decode(segments[0]!.audio.subarray(0, 4))).toBe('RIFF');
    expect(new URL(seen[0]!).searchParams.get('api_key')).toBe(emu.apiKey);
  });

  it('accepts the WHATWG WebSocket type and the ws constructor', async () => {
    const fromWs: WebSocketConstructorLike = NodeWebSocket;
    // compile-time: a DOM WebSocket constructor fits the injectable type
    const fromDom: WebSocketConstructorLike | undefined = (globalThis as { WebSocket?: typeof WebSocket }).WebSocket;
    expect(fromDom === undefined || typeof fromDom === 'function').toBe(true);
    // the ws constructor, given as the injectable type, really speaks to the service
    const emu = await emulator();
    const events = await lastValueFrom(of('Hello there.').pipe(speak({ ...emu, WebSocket: fromWs }, { voice_id: 1 }), toArray()));
    expect(events.filter((e) => e.type === 'segmentDone')).toHaveLength(1);
    expect(events.at(-1)?.type).toBe('done');
  });

  it('buffers text pushed before session.ready and sends it after, in order, skipping empty strings', async () => {
    const server = await scriptedServer((socket, _request, received) => {
      socket.on('message', () => {
        if (received.length === 1) {
          setTimeout(() => socket.send(JSON.stringify({ type: 'session.ready', session_id: 's', run_id: 7 })), 40);
        }
        if (received.some((r) => r.includes('text.done'))) {
          // the text is spoken before session.done (a session.done with text unspoken is a ProtocolError)
          socket.send(JSON.stringify({ type: 'segment.start', segment_id: 0, text: 'Hello world.' }));
          socket.send(Buffer.from([1, 2]));
          socket.send(JSON.stringify({ type: 'segment.done', segment_id: 0 }));
          socket.send(JSON.stringify({ type: 'session.done' }));
          socket.close(1000);
        }
      });
    });
    const events = await lastValueFrom(
      from(['Hel', '', 'lo ', 'world.']).pipe(speak({ wsUrl: server.wsUrl, apiKey: 'k' }, { voice_id: 3, language: 'de-de' }), toArray()),
    );
    const frames = server.received[0]!.map((f) => JSON.parse(f) as Record<string, unknown>);
    expect(frames[0]).toMatchObject({ type: 'session.start', voice_id: 3, language: 'de-de', output_format: 'wav' });
    // client-side boundaries (the default): the stop at the end is undecided until the text ends
    expect(frames.slice(1)).toEqual([
      { type: 'text.chunk', text: 'Hel' },
      { type: 'text.chunk', text: 'lo ' },
      { type: 'text.chunk', text: 'world' },
      { type: 'text.chunk', text: '.' },
      { type: 'text.done' },
    ]);
    expect(events).toEqual([
      { type: 'ready', session_id: 's', run_id: 7, config: expect.objectContaining({ output_format: 'wav', voice_id: 3 }) },
      { type: 'segmentStart', segment_id: 0, text: 'Hello world.' },
      { type: 'audio', segment_id: 0, bytes: expect.any(Uint8Array) },
      { type: 'segmentDone', segment_id: 0 },
      { type: 'done' },
    ]);
  });

  it('times out without session.ready (TimeoutError, socket closed)', async () => {
    const server = await scriptedServer(() => undefined);
    const error = await failure(lastValueFrom(of('Hi.').pipe(speak({ wsUrl: server.wsUrl, apiKey: 'k' }, { voice_id: 1, readyTimeoutMs: 50 }))));
    expectLiveError(error, 'timeout');
    expect(error.unspoken).toBe('Hi.');
    await waitFor(() => server.closes.length > 0, 5000, 'the socket to close');
    expect(server.closes).toEqual([1000]);
  });

  it('a connection refused is a retryable ConnectionError carrying the text', async () => {
    const server = await scriptedServer(() => undefined);
    const url = server.wsUrl;
    await new Promise<void>((resolve) => servers.pop()!.close(() => resolve()));
    const error = await failure(lastValueFrom(of('Hi there.').pipe(speak({ wsUrl: url, apiKey: 'k' }, { voice_id: 1 }))));
    expectLiveError(error, 'connection');
    expect(error.retryable).toBe(true);
    expect(error.closeCode).toBe(1006);
    expect(error.unspoken).toBe('Hi there.');
  });
});

// ---------------------------------------------------------------------------
// With the emulator
// ---------------------------------------------------------------------------

describe('speak: the browser path', () => {
  /** Bare modules loaded at run time (type-only imports are erased) from `entry` on. */
  async function runtimeImports(entry: string): Promise<Set<string>> {
    const { readFile } = await import('node:fs/promises');
    const bare = new Set<string>();
    const seen = new Set<string>();
    const visit = async (url: URL): Promise<void> => {
      if (seen.has(url.href)) return;
      seen.add(url.href);
      const source = await readFile(url, 'utf8');
      for (const m of source.matchAll(/^(?:import|export)\s+(type\s+)?(?:[^'";]*?\sfrom\s+)?'([^']+)'/gm)) {
        if (m[1]) continue;
        const spec = m[2]!;
        if (spec.startsWith('.')) await visit(new URL(spec.replace(/\.js$/, '.ts'), url));
        else bare.add(spec);
      }
    };
    await visit(new URL(entry, import.meta.url));
    return bare;
  }

  it('speak, rxvoice/operators and rxvoice/sources load no Node built-in and not the full zod: only rxjs, zod/mini and ws (the default constructor)', async () => {
    expect([...(await runtimeImports('../src/live/session.ts'))].sort()).toEqual(['rxjs', 'ws', 'zod/mini']);
    // src/live/index.ts: the browser entry (speak, events, errors)
    expect([...(await runtimeImports('../src/live/index.ts'))].sort()).toEqual(['rxjs', 'ws', 'zod/mini']);
    // the emulator's graph does load the full zod (HTTP schemas): the scan sees it
    expect(await runtimeImports('../src/emulator/index.ts')).toContain('zod');
    // while the main entry is Node-only (undici, uploads from files)
    expect([...(await runtimeImports('../src/index.ts'))].some((spec) => spec.startsWith('node:'))).toBe(true);
    // the whole rxvoice/operators barrel (parseSse included: eventsource-parser and a
    // TextDecoder) loads in a browser
    const bare = await runtimeImports('../src/operators/index.ts');
    expect(bare).toContain('eventsource-parser');
    expect([...bare].filter((spec) => spec.startsWith('node:') || !['rxjs', 'zod/mini', 'eventsource-parser'].includes(spec))).toEqual([]);
    // rxvoice/sources loads too (fromTokens for fetch streams; fromFile/fromStdin need Node
    // only when subscribed)
    const sources = await runtimeImports('../src/sources/index.ts');
    expect([...sources].filter((spec) => spec.startsWith('node:') || spec !== 'rxjs')).toEqual([]);
    // the scan does see Node built-ins: uploads from files are Node-only
    expect(await runtimeImports('../src/client/upload.ts')).toContain('node:fs');
  });
});

describe('speak: a connection without a key (through rxvoice/relay)', () => {
  /** Connects once with `connection` and returns what the server saw of the upgrade. */
  async function upgradeSeen(connection: Omit<Parameters<typeof speak>[0], 'wsUrl'>): Promise<{ header: string | undefined; query: string | null }> {
    const server = await scriptedServer((socket) => socket.close(1000));
    const sub = of('Hello.').pipe(speak({ wsUrl: server.wsUrl, ...connection }, { voice_id: 1 })).subscribe({ error: () => {} });
    await waitFor(() => server.connections.length === 1);
    sub.unsubscribe();
    const request = server.connections[0]!;
    return {
      header: request.headers['x-api-key'] as string | undefined,
      query: new URL(request.url ?? '', 'ws://x').searchParams.get('api_key'),
    };
  }
  class BrowserSocket extends NodeWebSocket {
    constructor(address: string | URL, protocols?: string | string[]) {
      super(address, protocols);
    }
  }

  it('sends no x-api-key header and no api_key query when apiKey is left out or empty', async () => {
    // controls: with a key, the header (ws) and the query (a browser-style constructor) carry it
    expect(await upgradeSeen({ apiKey: 'control-key-123' })).toEqual({ header: 'control-key-123', query: null });
    expect(await upgradeSeen({ apiKey: 'control-key-123', WebSocket: BrowserSocket })).toEqual({ header: undefined, query: 'control-key-123' });
    expect(await upgradeSeen({})).toEqual({ header: undefined, query: null });
    expect(await upgradeSeen({ WebSocket: BrowserSocket })).toEqual({ header: undefined, query: null });
    expect(await upgradeSeen({ apiKey: '' })).toEqual({ header: undefined, query: null });
    expect(await upgradeSeen({ apiKey: '', WebSocket: BrowserSocket })).toEqual({ header: undefined, query: null });
  });
});

describe('speak: readable option errors where only rxvoice/live is loaded (a page)', () => {
  it('names each bad option in plain words, without the full zod and its English messages', async () => {
    const root = fileURLToPath(new URL('..', import.meta.url));
    const program =
      `import * as z from 'zod/mini';` +
      `import { speak } from './src/live/index.ts';` +
      `const control = z.safeParse(z.int(), 'x').error?.issues[0]?.message;` +
      `let message = 'no error';` +
      `try { speak({ wsUrl: 'ws://127.0.0.1:9' }, { voice_id: -1, speaking_rate: 9, language: 'EN', readyTimeoutMs: 0, reconnect: { maxAttempts: 1.5 } }); } catch (e) { message = e.name + ': ' + e.message; }` +
      `process.stdout.write(JSON.stringify({ control, message }));`;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', program], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    expect(await new Promise<number | null>((r) => child.on('close', r))).toBe(0);
    const { control, message } = JSON.parse(out) as { control: string; message: string };
    // control: in this process a schema without its own message says only "Invalid input"
    // (the full zod, which installs English messages, was not loaded)
    expect(control).toBe('Invalid input');
    expect(message).toMatch(/^ValidationError: Invalid request for \/live-tts\/ws: /);
    expect(message).toContain('session.start.voice_id: must be a non-negative integer voice id');
    expect(message).toContain('session.start.speaking_rate: must be at most 4');
    expect(message).toContain('session.start.language: must be a lower-case locale tag like "en-us"');
    expect(message).toContain('options.readyTimeoutMs: must be > 0 ms');
    expect(message).toContain('options.reconnect.maxAttempts: must be an integer');
    expect(message).not.toContain('Invalid input');
  });
});

describe('speak: sessions with the emulator', () => {
  it('a slow token stream still gives whole sentences as segments, then completes', async () => {
    const emu = await emulator();
    const parts = tokens(TEXT);
    const text$ = interval(2).pipe(
      take(parts.length),
      map((i) => parts[i]!),
    );
    const events = await lastValueFrom(text$.pipe(speak(emu, { voice_id: 1 }), toArray()));
    expect(segmentsOf(events).map((s) => s.text.trim())).toEqual(SENTENCES);
    expect(events[0]?.type).toBe('ready');
    expect(events.at(-1)).toEqual({ type: 'done' });
  });

  it('keeps segment order with concurrency and random synthesis latency', async () => {
    const emu = await emulator({ concurrency: 4, faults: { synthesisLatencyMs: [0, 25] } });
    const events = await lastValueFrom(of(TEXT).pipe(speak(emu, { voice_id: 1 }), toArray()));
    const segments = segmentsOf(events);
    expect(segments.map((s) => s.segment_id)).toEqual(SENTENCES.map((_, i) => i));
    expect(segments.map((s) => s.text.trim())).toEqual(SENTENCES);
    // every audio frame belongs to the segment most recently started, and each segment is done before the next starts
    let current: number | undefined;
    for (const event of events) {
      if (event.type === 'segmentStart') {
        expect(current).toBeUndefined();
        current = event.segment_id;
      } else if (event.type === 'audio') {
        expect(event.segment_id).toBe(current);
        // a plain Uint8Array view, not ws's Buffer
        expect(Object.getPrototypeOf(event.bytes)).toBe(Uint8Array.prototype);
      }
      else if (event.type === 'segmentDone') {
        expect(event.segment_id).toBe(current);
        current = undefined;
      }
    }
  });

  it('concatSegments gives playable WAV per segment and wordTimeline exact times (tone synth)', async () => {
    const emu = await emulator({ toneWordSeconds: 0.02 });
    const segments = await lastValueFrom(
      of(TEXT).pipe(speak(emu, { voice_id: 1, word_timestamps: true }), concatSegments(), toArray()),
    );
    expect(segments).toHaveLength(SENTENCES.length);
    for (const segment of segments) {
      expect(segment.format).toBe('wav');
      expect(String.fromCharCode(...segment.audio.subarray(0, 4))).toBe('RIFF');
      const words = segment.text.trim().split(/\s+/);
      expect(segment.word_timestamps.map((w) => w.word)).toEqual(words);
      const dataBytes = new DataView(segment.audio.buffer, segment.audio.byteOffset).getUint32(40, true);
      expect(dataBytes / (22050 * 2)).toBeCloseTo(words.length * 0.02, 6);
    }
    const timeline = await lastValueFrom(from(segments as SpokenSegment[]).pipe(wordTimeline(), toArray()));
    const allWords = TEXT.split(/\s+/);
    expect(timeline.map((w) => w.word)).toEqual(allWords);
    timeline.forEach((w, i) => {
      expect(w.index).toBe(i);
      expect(w.start).toBeCloseTo(i * 0.02, 6);
      expect(w.end).toBeCloseTo((i + 1) * 0.02, 6);
    });
  });

  it('reports a skipped segment (failSynthesis 4 times) and goes on', async () => {
    const emu = await emulator({ retryBaseMs: 1, faults: { failSynthesis: { segments: [1], times: 4 } } });
    const events = await lastValueFrom(of(TEXT).pipe(speak(emu, { voice_id: 1 }), toArray()));
    const skipped = events.filter((e) => e.type === 'segmentSkipped');
    expect(skipped).toEqual([{ type: 'segmentSkipped', segment_id: 1, text: expect.stringContaining(SENTENCES[1]!) }]);
    expect(segmentsOf(events).map((s) => s.text.trim())).toEqual(SENTENCES.filter((_, i) => i !== 1));
    expect(events.at(-1)).toEqual({ type: 'done' });
  });

  it('resubmitSkipped: the skipped text comes back as a later segment', async () => {
    const emu = await emulator({ retryBaseMs: 1, faults: { failSynthesis: { segments: [1], times: 4 } } });
    const events = await lastValueFrom(
      of(TEXT).pipe(resubmitSkipped(speak(emu, { voice_id: 1, idle_timeout: 0.05 }), { maxAttempts: 2 }), toArray()),
    );
    const skipped = events.filter((e) => e.type === 'segmentSkipped');
    expect(skipped).toEqual([expect.objectContaining({ segment_id: 1, final: false, resubmissions: 0 })]);
    const spoken = segmentsOf(events).map((s) => s.text.trim());
    expect(spoken).toEqual([...SENTENCES.filter((_, i) => i !== 1), SENTENCES[1]]);
    expect(events.at(-1)).toEqual({ type: 'done' });
  });

  it('resubmitSkipped: a text that keeps failing is reported final after maxAttempts', async () => {
    const emu = await emulator({ retryBaseMs: 1, faults: { failSynthesisMatching: { text: 'zebras', times: 1000 } } });
    const events = await lastValueFrom(
      of(TEXT).pipe(resubmitSkipped(speak(emu, { voice_id: 1, idle_timeout: 0.05 }), { maxAttempts: 2 }), toArray()),
    );
    const skipped = events.filter((e) => e.type === 'segmentSkipped');
    expect(skipped.map((e) => [e.final, e.resubmissions])).toEqual([
      [false, 0],
      [false, 1],
      [true, 2],
    ]);
    for (const e of skipped) expect(e.text.trim()).toBe(SENTENCES[2]);
    expect(segmentsOf(events).map((s) => s.text.trim())).toEqual(SENTENCES.filter((_, i) => i !== 2));
    expect(events.at(-1)).toEqual({ type: 'done' });
  });
});

describe('resubmitSkipped adds no latency (emulator)', () => {
  /**
   * One session whose text source completes right after `ready`, with text that has no
   * sentence boundary and an idle_timeout of 2 s: the service flushes it at once on
   * text.done, or only after 2 s without it. Returns the order of what was sent, what
   * was received and when the source completed, and how many sessions were opened.
   */
  async function trace(wrap: (op: ReturnType<typeof speak>) => ReturnType<typeof speak>): Promise<{ log: string[]; sessions: number }> {
    const emu = await emulator();
    const log: string[] = [];
    let sessions = 0;
    class Recording extends NodeWebSocket {
      constructor(url: string, protocols?: string | string[], options?: ConstructorParameters<typeof NodeWebSocket>[2]) {
        super(url, protocols, options);
        sessions++;
      }
      override send(data: string): void {
        log.push(`sent ${(JSON.parse(data) as { type: string }).type}`);
        super.send(data);
      }
    }
    const text$ = new Subject<string>();
    await lastValueFrom(
      text$.pipe(
        wrap(speak({ ...emu, WebSocket: Recording as unknown as WebSocketConstructorLike, headersSupported: true }, { voice_id: 1, idle_timeout: 2 })),
        map((event) => {
          log.push(`event ${event.type}`);
          if (event.type === 'ready') {
            text$.next('Hello there, this has no boundary');
            log.push('source complete');
            text$.complete();
          }
          return event;
        }),
      ),
    );
    return { log: log.filter((line) => line !== 'event audio'), sessions };
  }

  it('with nothing skipped, text.done goes out right after the source completes, as with plain speak', async () => {
    const plain = await trace((op) => op);
    const wrapped = await trace((op) => resubmitSkipped(op, { maxAttempts: 2 }));
    const expected = [
      'sent session.start',
      'event ready',
      'sent text.chunk',
      'source complete',
      'sent text.done',
      'event segmentStart',
      'event segmentDone',
      'event done',
    ];
    expect(plain).toEqual({ log: expected, sessions: 1 });
    expect(wrapped).toEqual({ log: expected, sessions: 1 });
  });

  it('a skip after text.done is spoken by a continuation session; done comes once, last', async () => {
    // The last sentence (segment 5) fails 4 times (1 try + the service's 3 retries): it is
    // skipped after text.done was sent, then spoken by a second session (as its segment 0).
    const emu = await emulator({ retryBaseMs: 1, faults: { failSynthesis: { segments: [5], times: 4 } } });
    const events = await lastValueFrom(
      of(TEXT).pipe(resubmitSkipped(speak(emu, { voice_id: 1 }), { maxAttempts: 2 }), toArray()),
    );
    expect(upgrades(emu)).toBe(2);
    expect(events.filter((e) => e.type === 'ready')).toHaveLength(2);
    expect(events.filter((e) => e.type === 'done')).toHaveLength(1);
    expect(events.at(-1)).toEqual({ type: 'done' });
    expect(segmentsOf(events).map((s) => s.text.trim())).toEqual(SENTENCES);
    const ids = events.filter((e) => e.type === 'segmentStart' || e.type === 'segmentSkipped').map((e) => (e as { segment_id: number }).segment_id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe('speak: close codes as typed errors', () => {
  it('4401 bad key: AuthenticationError with everything unspoken', async () => {
    const emu = await emulator();
    const error = await failure(lastValueFrom(of('Hello there. ', 'Bye.').pipe(speak({ ...emu, apiKey: 'wrong-key' }, { voice_id: 1 }))));
    expectLiveError(error, 'authentication');
    expect(error.closeCode).toBe(4401);
    expect(error.unspoken).toBe('Hello there. Bye.');
    expect(error.message).not.toContain('wrong-key');
  });

  it('4400 unknown voice: SessionRejectedError with the server message', async () => {
    const emu = await emulator();
    const error = await failure(lastValueFrom(of('Hello there.').pipe(speak(emu, { voice_id: 999_999 }))));
    expect(error).toBeInstanceOf(SessionRejectedError);
    expect(error.closeCode).toBe(4400);
    expect(error.message).toContain('999999');
    expect(error.unspoken).toBe('Hello there.');
  });

  it('4402 credits: CreditsExhaustedError with the text after the delivered segment', async () => {
    const emu = await emulator({ faults: { creditsAfterSegments: 2 } });
    const events: LiveSpeechEvent[] = [];
    const error = await failure(lastValueFrom(of(TEXT).pipe(speak(emu, { voice_id: 1 }), map((e) => events.push(e)))));
    expect(error).toBeInstanceOf(CreditsExhaustedError);
    expect(error.closeCode).toBe(4402);
    expect(segmentsOf(events).map((s) => s.text.trim())).toEqual(SENTENCES.slice(0, 2));
    expect(squash(error.unspoken)).toBe(squash(SENTENCES.slice(2).join(' ')));
  });
});

describe('speak: session.error then another close code', () => {
  /** A peer that answers session.start with ready, then session.error and a close with `code`. */
  const failing = (code: number) =>
    scriptedServer((socket) => {
      socket.once('message', () => {
        socket.send(JSON.stringify({ type: 'session.ready', session_id: 's', run_id: 1 }));
        socket.send(JSON.stringify({ type: 'session.error', error: 'the speech engine is not installed (npm install espeak-ng)' }));
        socket.close(code, 'internal error');
      });
    });

  it("1011: a 'session_error' carrying the service's message and the text, not retried", async () => {
    const server = await failing(1011);
    const reconnect = { maxAttempts: 3, baseDelayMs: 1 };
    const error = await failure(lastValueFrom(of('Hi.').pipe(speak({ wsUrl: server.wsUrl, apiKey: 'session-error-test-key' }, { voice_id: 1, reconnect }))));
    expectLiveError(error, 'session_error');
    expect(error.message).toContain('the speech engine is not installed (npm install espeak-ng)');
    expect(error.closeCode).toBe(1011);
    expect(error.retryable).toBe(false);
    expect(error.unspoken).toBe('Hi.');
    expect(server.connections).toHaveLength(1);
  });

  it('1013 (try again later): retryable, so reconnect tries again (the control)', async () => {
    const server = await failing(1013);
    const reconnect = { maxAttempts: 2, baseDelayMs: 1 };
    const error = await failure(lastValueFrom(of('Hi.').pipe(speak({ wsUrl: server.wsUrl, apiKey: 'session-error-test-key' }, { voice_id: 1, reconnect }))));
    expectLiveError(error, 'session_error');
    expect(error.retryable).toBe(true);
    expect(server.connections).toHaveLength(3);
  });

  it("the emulator's 4429 (too many sessions): its message, retryable", async () => {
    const emu = await emulator({ liveSessionsPerKey: 1 });
    const open = new Subject<string>();
    const first = lastValueFrom(open.pipe(speak(emu, { voice_id: 1 })));
    await waitFor(() => emu.liveConnections === 1, 5000, 'the first session');
    const error = await failure(lastValueFrom(of('Hi.').pipe(speak(emu, { voice_id: 1 }))));
    expectLiveError(error, 'session_error');
    expect(error.closeCode).toBe(4429);
    expect(error.message).toMatch(/too many live sessions/);
    expect(error.retryable).toBe(true);
    open.next('Bye.');
    open.complete();
    await first;
  });
});

describe('speak: protocol errors from a hostile server', () => {
  const hostile = (script: (socket: NodeWebSocket) => void) =>
    scriptedServer((socket) => {
      socket.once('message', () => {
        socket.send(JSON.stringify({ type: 'session.ready', session_id: 's', run_id: 1 }));
        script(socket);
      });
    });

  // [name, script, message, the text still unspoken]
  const cases: [string, (socket: NodeWebSocket) => void, RegExp, string?][] = [
    ['invalid JSON', (s) => s.send('{nope'), /not JSON/],
    ['an unknown frame', (s) => s.send(JSON.stringify({ type: 'surprise' })), /invalid frame/],
    ['binary before segment.start', (s) => s.send(Buffer.from([1, 2, 3])), /audio outside/],
    [
      'binary after segment.done',
      (s) => {
        s.send(JSON.stringify({ type: 'segment.start', segment_id: 0, text: 'Hi.' }));
        s.send(JSON.stringify({ type: 'segment.done', segment_id: 0 }));
        s.send(Buffer.from([1]));
      },
      /audio outside/,
      'More text.',
    ],
    [
      'an audio frame over 64 KiB',
      (s) => {
        s.send(JSON.stringify({ type: 'segment.start', segment_id: 0, text: 'Hi.' }));
        s.send(Buffer.alloc(64 * 1024 + 1));
      },
      /at most 65536/,
    ],
    ['segment.done for a segment not started', (s) => s.send(JSON.stringify({ type: 'segment.done', segment_id: 4 })), /not started/],
    [
      'a non-monotonic segment id',
      (s) => {
        s.send(JSON.stringify({ type: 'segment.start', segment_id: 0, text: 'Hi.' }));
        s.send(JSON.stringify({ type: 'segment.done', segment_id: 0 }));
        s.send(JSON.stringify({ type: 'segment.start', segment_id: 0, text: 'Hi.' }));
      },
      /does not follow/,
      'More text.',
    ],
    [
      // segment 1 first: segment 0 may still come, so nothing is taken as spoken
      'segment 1 before segment 0',
      (s) => {
        s.send(JSON.stringify({ type: 'segment.start', segment_id: 1, text: 'More text.' }));
        s.send(JSON.stringify({ type: 'segment.done', segment_id: 1 }));
        s.send(JSON.stringify({ type: 'segment.start', segment_id: 0, text: 'Hi.' }));
      },
      /does not follow -1 \(expected 0\)/,
      'Hi. More text.',
    ],
  ];

  for (const [name, script, message, unspoken = 'Hi. More text.'] of cases) {
    it(`${name}: ProtocolError, socket closed`, async () => {
      const server = await hostile(script);
      const error = await failure(lastValueFrom(of('Hi. More text.').pipe(speak({ wsUrl: server.wsUrl, apiKey: 'k' }, { voice_id: 1 }))));
      expectLiveError(error, 'protocol');
      expect(error.message).toMatch(message);
      expect(error.unspoken).toBe(unspoken);
      await waitFor(() => server.closes.length > 0, 5000, 'the socket to close');
      expect(server.closes).toEqual([1002]);
    });
  }

  it('a clean close before session.done is a ConnectionError with the text', async () => {
    const server = await hostile((s) => s.close(1000));
    const error = await failure(lastValueFrom(of('Hi.').pipe(speak({ wsUrl: server.wsUrl, apiKey: 'k' }, { voice_id: 1 }))));
    expectLiveError(error, 'connection');
    expect(error.closeCode).toBe(1000);
    expect(error.unspoken).toBe('Hi.');
  });
});

describe('speak: teardown', () => {
  it('barge-in: unsubscribing closes the socket at once with 1000 and nothing more is emitted', async () => {
    const emu = await emulator({ toneWordSeconds: 0.05, faults: { synthesisLatencyMs: 10 } });
    const sockets: NodeWebSocket[] = [];
    const closeCalls: (number | undefined)[] = [];
    let stateAfterBargeIn: number | undefined;
    class Recording extends NodeWebSocket {
      constructor(url: string, protocols?: string | string[], options?: { headers?: Record<string, string> }) {
        super(url, protocols, options);
        sockets.push(this);
      }
      override close(code?: number, reason?: string): void {
        closeCalls.push(code);
        super.close(code, reason);
      }
    }
    const bargeIn = new Subject<void>();
    const seen: LiveSpeechEvent[] = [];
    let afterBargeIn = 0;
    let barged = false;
    await new Promise<void>((resolve, reject) => {
      of(TEXT)
        .pipe(speak({ ...emu, WebSocket: Recording as unknown as WebSocketConstructorLike }, { voice_id: 1 }), takeUntil(bargeIn))
        .subscribe({
          next: (event) => {
            if (barged) afterBargeIn++;
            seen.push(event);
            if (event.type === 'audio' && !barged) {
              barged = true;
              bargeIn.next();
              stateAfterBargeIn = sockets[0]!.readyState;
            }
          },
          error: reject,
          complete: () => resolve(),
        });
    });
    expect(seen.at(-1)?.type).toBe('audio');
    // Once the socket is closed no frame can arrive; the events before the barge-in (the
    // control) show frames were being seen.
    await waitFor(() => sockets[0]!.readyState === NodeWebSocket.CLOSED, 5000, 'the socket to close');
    expect(seen.filter((e) => e.type === 'audio').length).toBeGreaterThan(0);
    expect(afterBargeIn).toBe(0);
    // closed at once (synchronously in the unsubscribe), with 1000
    expect(stateAfterBargeIn).toBe(NodeWebSocket.CLOSING);
    // (ws itself calls close() again when the server's close frame comes back)
    expect(closeCalls[0]).toBe(1000);
    expect(sockets).toHaveLength(1);
    expect(sockets[0]!.readyState).toBe(NodeWebSocket.CLOSED);
  });

  it('unsubscribing while connecting leaves nothing open', async () => {
    const emu = await emulator();
    const sockets: NodeWebSocket[] = [];
    class Recording extends NodeWebSocket {
      constructor(url: string, protocols?: string | string[], options?: { headers?: Record<string, string> }) {
        super(url, protocols, options);
        sockets.push(this);
      }
    }
    const subscription = of('Hello.').pipe(speak({ ...emu, WebSocket: Recording as unknown as WebSocketConstructorLike }, { voice_id: 1 })).subscribe();
    subscription.unsubscribe();
    await waitFor(() => sockets[0]!.readyState === NodeWebSocket.CLOSED, 5000, 'the socket to close');
    expect(sockets).toHaveLength(1);
  });

  it('the text source erroring closes the session: its error, unchanged, is the cause of a text_source error with unspoken', async () => {
    // the text fails once the session is ready (a fixed delay raced the connection on a busy machine)
    const ready = new Subject<void>();
    const server = await scriptedServer((socket) =>
      socket.once('message', () => socket.send(JSON.stringify({ type: 'session.ready', session_id: 's', run_id: 1 }), () => setTimeout(() => ready.next(), 20))),
    );
    const llmError = new Error('LLM stream failed');
    const text$ = concat(
      ready.pipe(take(1), map(() => 'Half a sen')),
      throwError(() => llmError),
    );
    const error = await failure(lastValueFrom(text$.pipe(speak({ wsUrl: server.wsUrl, apiKey: 'k' }, { voice_id: 1 }))));
    expectLiveError(error, 'text_source');
    // the source's own error is the cause, not changed
    expect(error.cause).toBe(llmError);
    expect(Object.keys(llmError)).toEqual([]);
    expect(error.unspoken).toBe('Half a sen');
    await waitFor(() => server.closes.length > 0, 5000, 'the socket to close');
    expect(server.closes).toEqual([1000]);
  });
});

describe('speak: reconnect without loss', () => {
  it('without reconnect, a drop is a ConnectionError (1006) with the undelivered text', async () => {
    const emu = await emulator({ faults: { dropAfterFrames: 2 } });
    const error = await failure(lastValueFrom(of(TEXT).pipe(speak(emu, { voice_id: 1 }))));
    expectLiveError(error, 'connection');
    expect(error.closeCode).toBe(1006);
    expect(error.retryable).toBe(true);
    // segment 0 delivered; segment 1 was mid-audio when the connection dropped
    expect(squash(error.unspoken)).toBe(squash(SENTENCES.slice(1).join(' ')));
  });

  it('reconnects after injected drops: every sentence spoken exactly once, in order, ids increasing', async () => {
    const emu = await emulator({ faults: { dropAfterFrames: 2 } });
    const events = await lastValueFrom(
      of(TEXT).pipe(speak(emu, { voice_id: 1, reconnect: { maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 20 } }), toArray()),
    );
    const reconnects = events.filter((e) => e.type === 'reconnected');
    expect(reconnects.length).toBeGreaterThanOrEqual(2);
    expect(reconnects[0]).toMatchObject({ type: 'reconnected', attempt: 1 });
    expect(squash((reconnects[0] as { resent: string }).resent)).toBe(squash(SENTENCES.slice(1).join(' ')));
    const delivered = await lastValueFrom(from(events).pipe(concatSegments(), toArray()));
    expect(delivered.map((s) => s.text.trim())).toEqual(SENTENCES);
    expect(squash(delivered.map((s) => s.text).join(''))).toBe(squash(TEXT));
    const ids = delivered.map((s) => s.segment_id);
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    expect(events.at(-1)).toEqual({ type: 'done' });
    expect(upgrades(emu)).toBe(reconnects.length + 1);
  });

  it('reconnect with a streaming source: text pushed during the outage is not lost', async () => {
    const emu = await emulator({ faults: { dropAfterFrames: 3 } });
    const parts = tokens(TEXT);
    const text$ = interval(2).pipe(
      take(parts.length),
      map((i) => parts[i]!),
    );
    const events = await lastValueFrom(
      text$.pipe(speak(emu, { voice_id: 1, reconnect: { maxAttempts: 3, baseDelayMs: 5 } }), concatSegments(), toArray()),
    );
    expect(events.map((s) => s.text.trim())).toEqual(SENTENCES);
  });

  it('gives up after maxAttempts in a row without progress', async () => {
    const emu = await emulator({ faults: { dropAfterFrames: 0 } });
    const events: LiveSpeechEvent[] = [];
    const error = await failure(
      lastValueFrom(
        of('Hello there.').pipe(
          speak(emu, { voice_id: 1, reconnect: { maxAttempts: 2, baseDelayMs: 1 } }),
          map((e) => events.push(e)),
        ),
      ),
    );
    expectLiveError(error, 'connection');
    expect(error.unspoken).toBe('Hello there.');
    // the emulator drops each new session before session.ready: no `reconnected` event
    expect(events.filter((e) => e.type === 'reconnected')).toHaveLength(0);
    expect(upgrades(emu)).toBe(3);
  });

  it('does not reconnect after 4401', async () => {
    const emu = await emulator();
    const error = await failure(
      lastValueFrom(of('Hi.').pipe(speak({ ...emu, apiKey: 'nope' }, { voice_id: 1, reconnect: { maxAttempts: 3, baseDelayMs: 1 } }))),
    );
    expectLiveError(error, 'authentication');
    expect(upgrades(emu)).toBe(1);
  });
});

describe('client.speak', () => {
  it('speaks through the client with its address, key and WebSocket', async () => {
    const emu = await emulator();
    const { createClient } = await import('../src/index.js');
    const client = createClient({ apiKey: emu.apiKey, baseUrl: emu.baseUrl });
    try {
      const segments = await lastValueFrom(
        of('Hello there. ', 'General Kenobi.').pipe(client.speak({ voice_id: 1, word_timestamps: true }), concatSegments(), toArray()),
      );
      expect(segments.map((s) => s.text.trim())).toEqual(['Hello there.', 'General Kenobi.']);
      expect(segments[0]!.format).toBe('wav');
      const bad = createClient({ apiKey: 'not-the-key', baseUrl: emu.baseUrl });
      const error = await failure(lastValueFrom(of('Hi.').pipe(bad.speak({ voice_id: 1 }))));
      expectLiveError(error, 'authentication');
      await bad.close();
    } finally {
      await client.close();
    }
  });
});

describe('speak: timers in virtual time (fake WebSocket)', () => {
  /** A WHATWG-style fake socket whose peer is scripted in virtual time. */
  function fakeSocketClass(scheduler: TestScheduler, script: (socket: FakeSocket, index: number) => void, opened: number[]) {
    let count = 0;
    return class extends FakeSocket {
      constructor(url: string) {
        super(url);
        opened.push(scheduler.now());
        const index = count++;
        scheduler.schedule(() => script(this, index), 1);
      }
    };
  }

  it('reconnects with exponential backoff capped at maxDelayMs, then gives up', () => {
    const scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
    scheduler.run(({ cold, expectObservable }) => {
      const opened: number[] = [];
      const Ctor = fakeSocketClass(scheduler, (socket) => socket.peerClose(1006, ''), opened);
      const result$ = cold('a', { a: 'Hello.' }).pipe(
        speak(
          { wsUrl: 'ws://fake', apiKey: 'k', WebSocket: Ctor, headersSupported: false },
          { voice_id: 1, scheduler, reconnect: { maxAttempts: 3, baseDelayMs: 10, maxDelayMs: 25, random: () => 1 } },
        ),
      );
      expectObservable(result$).toBe('59ms #', undefined, liveError('connection'));
      scheduler.flush();
      // closes at +1 after each open; delays 10, 20, 25 (capped)
      expect(opened).toEqual([0, 11, 32, 58]);
    });
  });

  it('reconnect delays are jittered: drawn from the upper half of the exponential delay', () => {
    const scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
    scheduler.run(({ cold, expectObservable }) => {
      const opened: number[] = [];
      const Ctor = fakeSocketClass(scheduler, (socket) => socket.peerClose(1006, ''), opened);
      const draws = [0, 0.5, 0];
      const result$ = cold('a', { a: 'Hello.' }).pipe(
        speak(
          { wsUrl: 'ws://fake', apiKey: 'k', WebSocket: Ctor, headersSupported: false },
          { voice_id: 1, scheduler, reconnect: { maxAttempts: 3, baseDelayMs: 20, maxDelayMs: 60, random: () => draws.shift()! } },
        ),
      );
      expectObservable(result$).toBe('74ms #', undefined, liveError('connection'));
      scheduler.flush();
      // full delays 20, 40, 60; jittered 10 (draw 0), 30 (draw 0.5), 30 (draw 0)
      expect(opened).toEqual([0, 11, 42, 73]);
      expect(draws).toEqual([]);
    });
  });

  it('unsubscribing clears the timers: no reconnect after a pending backoff, no ready timeout', () => {
    const scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
    scheduler.run(({ cold, expectObservable }) => {
      const opened: number[] = [];
      // first socket: dropped at +1; the reconnect would open at 1 + 100
      const Ctor = fakeSocketClass(scheduler, (socket) => socket.peerClose(1006, ''), opened);
      const result$ = cold('a', { a: 'Hello.' }).pipe(
        speak(
          { wsUrl: 'ws://fake', apiKey: 'k', WebSocket: Ctor, headersSupported: false },
          { voice_id: 1, scheduler, readyTimeoutMs: 20, reconnect: { maxAttempts: 3, baseDelayMs: 100, random: () => 1 } },
        ),
      );
      expectObservable(result$, '^ 50ms !').toBe('-');
      // at 60, after the unsubscribe at 51, nothing may still be scheduled (the backoff
      // timer would fire at 101)
      let pendingAt60 = -1;
      scheduler.schedule(() => (pendingAt60 = scheduler.actions.length), 60);
      scheduler.flush();
      expect(pendingAt60).toBe(0);
      expect(opened).toEqual([0]);
    });
  });

  it('a ready timeout is retried like a drop, and reported as TimeoutError at the end', () => {
    const scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
    scheduler.run(({ cold, expectObservable }) => {
      const opened: number[] = [];
      const Ctor = fakeSocketClass(scheduler, (socket) => socket.peerOpen(), opened);
      const result$ = cold('a', { a: 'Hello.' }).pipe(
        speak(
          { wsUrl: 'ws://fake', apiKey: 'k', WebSocket: Ctor, headersSupported: false },
          { voice_id: 1, scheduler, readyTimeoutMs: 100, reconnect: { maxAttempts: 1, baseDelayMs: 5, random: () => 1 } },
        ),
      );
      expectObservable(result$).toBe('205ms #', undefined, liveError('timeout'));
      scheduler.flush();
      expect(opened).toEqual([0, 105]);
    });
  });

  it('events, in virtual time, with a scripted peer; ids keep increasing across a reconnect', () => {
    const scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
    scheduler.run(({ cold, expectObservable }) => {
      const opened: number[] = [];
      const Ctor = fakeSocketClass(
        scheduler,
        (socket, index) => {
          socket.peerOpen();
          socket.peerSend({ type: 'session.ready', session_id: `s${index}`, run_id: index + 1 });
          if (index === 0) {
            socket.peerSend({ type: 'segment.start', segment_id: 0, text: 'One.' });
            socket.peerSend(new Uint8Array([1]));
            socket.peerSend({ type: 'segment.done', segment_id: 0 });
            socket.peerSend({ type: 'segment.start', segment_id: 1, text: 'Two.' });
            socket.peerSend(new Uint8Array([2]));
            socket.peerClose(1006, '');
          } else {
            socket.peerSend({ type: 'segment.start', segment_id: 0, text: ' Two.' });
            socket.peerSend(new Uint8Array([3]));
            socket.peerSend({ type: 'segment.done', segment_id: 0 });
            socket.peerSend({ type: 'session.done' });
            socket.peerClose(1000, '');
          }
        },
        opened,
      );
      const sockets: FakeSocket[] = [];
      FakeSocket.created = sockets;
      const result$ = cold('(ab|)', { a: 'One. ', b: 'Two.' }).pipe(
        speak(
          { wsUrl: 'ws://fake', apiKey: 'k y', WebSocket: Ctor, headersSupported: false },
          // already segmented text: each string is one text.chunk
          { voice_id: 1, scheduler, clientBoundaries: false, reconnect: { maxAttempts: 2, baseDelayMs: 10, random: () => 1 } },
        ),
      );
      expectObservable(result$).toBe('-(rsadtb)---(xSAEo|)', {
        r: { type: 'ready', session_id: 's0', run_id: 1, config: expect.objectContaining({ output_format: 'wav', voice_id: 1 }) },
        s: { type: 'segmentStart', segment_id: 0, text: 'One.' },
        a: { type: 'audio', segment_id: 0, bytes: new Uint8Array([1]) },
        d: { type: 'segmentDone', segment_id: 0 },
        t: { type: 'segmentStart', segment_id: 1, text: 'Two.' },
        b: { type: 'audio', segment_id: 1, bytes: new Uint8Array([2]) },
        // the new session's segment 0 is seen as 2: ids keep increasing
        x: { type: 'reconnected', attempt: 1, session_id: 's1', run_id: 2, resent: 'Two.' },
        S: { type: 'segmentStart', segment_id: 2, text: ' Two.' },
        A: { type: 'audio', segment_id: 2, bytes: new Uint8Array([3]) },
        E: { type: 'segmentDone', segment_id: 2 },
        o: { type: 'done' },
      });
      scheduler.flush();
      expect(opened).toEqual([0, 11]);
      expect(sockets.map((x) => x.url)).toEqual(['ws://fake/live-tts/ws?api_key=k+y', 'ws://fake/live-tts/ws?api_key=k+y']);
      expect(sockets[0]!.binaryType).toBe('arraybuffer');
      const frames = sockets.map((x) => x.sent.map((f) => (JSON.parse(f) as { type: string; text?: string })));
      expect(frames[0]!.map((f) => f.type)).toEqual(['session.start', 'text.chunk', 'text.chunk', 'text.done']);
      expect(frames[1]!.map((f) => [f.type, f.text])).toEqual([
        ['session.start', undefined],
        ['text.chunk', 'Two.'],
        ['text.done', undefined],
      ]);
    });
  });

  it('unsubscribing (barge-in) closes with 1000, unsubscribes the text, and emits nothing more', () => {
    const scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
    scheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const opened: number[] = [];
      const sockets: FakeSocket[] = [];
      FakeSocket.created = sockets;
      const Ctor = fakeSocketClass(
        scheduler,
        (socket) => {
          socket.peerOpen();
          socket.peerSend({ type: 'session.ready', session_id: 's', run_id: 1 });
          socket.peerSend({ type: 'segment.start', segment_id: 0, text: 'One.' });
          socket.peerSend(new Uint8Array([1]));
          // audio still arriving after the unsubscribe must not leak out
          scheduler.schedule(() => socket.peerSend(new Uint8Array([2]), true), 8);
        },
        opened,
      );
      const text = cold('a-b-c-d-e|', { a: 'One. ', b: 'Two. ', c: 'x', d: 'y', e: 'z' });
      const result$ = text.pipe(
        // one text.chunk per string, so the frames sent count the strings taken
        speak({ wsUrl: 'ws://fake', apiKey: 'k', WebSocket: Ctor, headersSupported: false }, { voice_id: 1, scheduler, clientBoundaries: false }),
      );
      expectObservable(result$, '^----!').toBe('-(rsa)', {
        r: { type: 'ready', session_id: 's', run_id: 1, config: expect.objectContaining({ voice_id: 1 }) },
        s: { type: 'segmentStart', segment_id: 0, text: 'One.' },
        a: { type: 'audio', segment_id: 0, bytes: new Uint8Array([1]) },
      });
      expectSubscriptions(text.subscriptions).toBe('^----!');
      scheduler.flush();
      expect(sockets[0]!.closedWith).toBe(1000);
      expect(sockets[0]!.sent.map((f) => JSON.parse(f).type)).toEqual(['session.start', 'text.chunk', 'text.chunk', 'text.chunk']);
    });
  });

  it('client-side boundaries: an undecided stop waits for the next token, at most boundaryHoldMs', () => {
    const scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
    scheduler.run(({ cold, expectObservable }) => {
      const sockets: FakeSocket[] = [];
      FakeSocket.created = sockets;
      const Ctor = fakeSocketClass(
        scheduler,
        (socket) => {
          socket.peerOpen();
          socket.peerSend({ type: 'session.ready', session_id: 's', run_id: 1 });
        },
        [],
      );
      // "Dr." then, 100 ms later, " Smith." (decides it); then "Bye." and 400 ms of silence
      const text = cold('-a 99ms b 99ms c', { a: 'See Dr.', b: ' Smith.', c: ' Bye.' });
      const chunksAt: Record<number, string[]> = {};
      for (const at of [2, 102, 202, 450, 452]) {
        scheduler.schedule(() => {
          chunksAt[at] = sockets[0]!.sent.map((f) => JSON.parse(f) as { type: string; text?: string }).filter((f) => f.type === 'text.chunk').map((f) => f.text!);
        }, at);
      }
      const result$ = text.pipe(speak({ wsUrl: 'ws://fake', apiKey: 'k', WebSocket: Ctor, headersSupported: false }, { voice_id: 1, scheduler }));
      expectObservable(result$, '^ 500ms !').toBe('-r', { r: expect.objectContaining({ type: 'ready' }) });
      scheduler.flush();
      expect(chunksAt[2]).toEqual(['See Dr']); // the stop after "Dr" is held (it shows up at 102: the control)
      expect(chunksAt[102]).toEqual(['See Dr', '. Smith']); // the next token decided "Dr." (no end): sent
      expect(chunksAt[202]).toEqual(['See Dr', '. Smith', '.', ' Bye']); // "Smith." ended: its own chunk
      expect(chunksAt[450]).toEqual(['See Dr', '. Smith', '.', ' Bye']); // "Bye." is held...
      expect(chunksAt[452]).toEqual(['See Dr', '. Smith', '.', ' Bye', '.']); // ...until boundaryHoldMs (250)
    });
  });

  it('a connection lost after every text was delivered completes (nothing missing)', () => {
    const scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
    scheduler.run(({ cold, expectObservable }) => {
      const Ctor = fakeSocketClass(
        scheduler,
        (socket) => {
          socket.peerOpen();
          socket.peerSend({ type: 'session.ready', session_id: 's', run_id: 1 });
          socket.peerSend({ type: 'segment.start', segment_id: 0, text: 'One.' });
          socket.peerSend({ type: 'segment.done', segment_id: 0 });
          socket.peerClose(1006, '');
        },
        [],
      );
      const result$ = cold('(a|)', { a: 'One.' }).pipe(
        speak({ wsUrl: 'ws://fake', apiKey: 'k', WebSocket: Ctor, headersSupported: false }, { voice_id: 1, scheduler }),
        map((e) => e.type),
      );
      expectObservable(result$).toBe('-(rsd|)', { r: 'ready', s: 'segmentStart', d: 'segmentDone' });
    });
  });
});

/** A minimal WHATWG-style WebSocket, driven by the test. */
class FakeSocket {
  static created: FakeSocket[] = [];
  readonly url: string;
  readyState = 0;
  binaryType = 'blob';
  readonly sent: string[] = [];
  closedWith: number | undefined;
  private readonly listeners = new Map<string, ((event: unknown) => void)[]>();
  constructor(url: string) {
    this.url = url;
    FakeSocket.created.push(this);
  }
  addEventListener(type: string, listener: (event: unknown) => void): void {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), listener]);
  }
  send(data: string): void {
    this.sent.push(data);
  }
  close(code = 1000): void {
    if (this.readyState === 3) return;
    this.closedWith = code;
    this.readyState = 3;
  }
  private fire(type: string, event: unknown): void {
    for (const listener of this.listeners.get(type) ?? []) listener(event);
  }
  peerOpen(): void {
    this.readyState = 1;
    this.fire('open', {});
  }
  peerSend(frame: object | Uint8Array, evenIfClosed = false): void {
    if (this.readyState !== 1 && !evenIfClosed) return;
    this.fire('message', { data: frame instanceof Uint8Array ? frame.buffer.slice(0) : JSON.stringify(frame) });
  }
  peerClose(code: number, reason: string): void {
    if (this.readyState === 3 && this.closedWith !== undefined) return;
    this.readyState = 3;
    this.fire('close', { code, reason });
  }
}
