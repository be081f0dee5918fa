/** speak(): option validation, the connection it opens (address, key, WebSocket), the browser path and a relay connection without a key. */
import { describe, expect, it } from 'vitest';
import { from, lastValueFrom, of, toArray } from 'rxjs';
import { WebSocket as NodeWebSocket } from 'ws';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { speak, type WebSocketConstructorLike } from '../../src/live/session.js';
import { concatSegments } from '../../src/operators/concatSegments.js';
import { ValidationError } from '../../src/core/errors.js';
import { waitFor } from '../fixtures/sinkFixtures.js';
import { emulator, scriptedServer, upgrades, failure, thrown, expectLiveError, servers } from './helpers.js';

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
    const live = await import('../../src/live/index.js'); // the browser entry
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
    // client-side boundaries (the default): the stop at the end is undecided until the text ends,
    // and the words of its sentence since the last chunk wait with it
    expect(frames.slice(1)).toEqual([
      { type: 'text.chunk', text: 'Hel' },
      { type: 'text.chunk', text: 'lo ' },
      { type: 'text.chunk', text: 'world.' },
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

  it('no live session at the address (404 to the upgrade): the error says where it looked and what to set, without the key', async () => {
    const emu = await emulator();
    const base = emu.wsUrl.replace(/\/live-tts\/ws$/, '/apis');
    // the key in the address's query (a browser-style constructor): the hint names the address without it
    const error = await failure(lastValueFrom(of('Hi there.').pipe(speak({ wsUrl: base, apiKey: emu.apiKey, headersSupported: false }, { voice_id: 1 }))));
    expectLiveError(error, 'connection');
    expect(error.message).toBe(
      'The live session closed abnormally (code 1006: Unexpected server response: 404). ' +
        `No live session at ${base}/live-tts/ws: set the live address (createClient's \`liveUrl\`, or speak's \`wsUrl\`) to the service's live WebSocket path`,
    );
    expect(error.message).not.toContain(emu.apiKey);
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

  it('speak, rxvoice/operators and rxvoice/sources load no Node built-in and not the full zod: only rxjs, zod/mini and ws (the default constructor); speak itself not even zod/mini', async () => {
    // speak itself checks frames and options without a schema library (live/checks.ts)
    expect([...(await runtimeImports('../../src/live/session.ts'))].sort()).toEqual(['rxjs', 'ws']);
    // src/live/index.ts: the browser entry (speak, events, errors)
    expect([...(await runtimeImports('../../src/live/index.ts'))].sort()).toEqual(['rxjs', 'ws', 'zod/mini']);
    // the emulator's graph does load the full zod (HTTP schemas): the scan sees it
    expect(await runtimeImports('../../src/emulator/index.ts')).toContain('zod');
    // while the main entry is Node-only (undici, uploads from files)
    expect([...(await runtimeImports('../../src/index.ts'))].some((spec) => spec.startsWith('node:'))).toBe(true);
    // the whole rxvoice/operators barrel (parseSse included: eventsource-parser and a
    // TextDecoder) loads in a browser
    const bare = await runtimeImports('../../src/operators/index.ts');
    expect(bare).toContain('eventsource-parser');
    expect([...bare].filter((spec) => spec.startsWith('node:') || !['rxjs', 'zod/mini', 'eventsource-parser'].includes(spec))).toEqual([]);
    // rxvoice/sources loads too (fromTokens for fetch streams; fromFile/fromStdin need Node
    // only when subscribed)
    const sources = await runtimeImports('../../src/sources/index.ts');
    expect([...sources].filter((spec) => spec.startsWith('node:') || spec !== 'rxjs')).toEqual([]);
    // the scan does see Node built-ins: uploads from files are Node-only
    expect(await runtimeImports('../../src/client/upload.ts')).toContain('node:fs');
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
    const root = fileURLToPath(new URL('../..', import.meta.url));
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

