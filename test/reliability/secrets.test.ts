/**
 * Secrets: distinctive canary API keys (all holding the marker `SECRET-canary`) go
 * through a run that provokes every kind of error: 401, 422, 429, 500, task failures
 * (ERROR, TIMEOUT, PAYMENT_REQUIRED), live 4400/4401/4402, skips, dropped connections,
 * connection errors, timeouts, aborts, a hostile server that reflects the key into every
 * answer (bodies, SSE error events, session.error, close reasons), and CLI errors. Every
 * error's `message`, `String(err)`, `util.inspect(err, { depth: 5 })` and
 * `JSON.stringify(err)`, every emitted event, the client itself, everything written to
 * console / stdout / stderr (the emulator runs with `log: true`) and the CLI's streams
 * are scanned: the marker must never appear.
 *
 * Identifiers the service hands out (`task_id`, `session_id`) are passed through verbatim
 * (they must be used as given), so the reflecting server does not put the key there;
 * every message, field name, error type, body and header value it sends is scrubbed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inspect, format } from 'node:util';
import { Readable, Writable } from 'node:stream';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NEVER, Observable, lastValueFrom, of, toArray } from 'rxjs';
import { WebSocket as NodeWebSocket } from 'ws';
import { createClient, type ClientOptions, type RxVoiceClient } from '../../src/index.js';
import { startEmulator, type Emulator, type Faults } from '../../src/emulator/index.js';
import { RxVoiceError } from '../../src/core/errors.js';
import { resubmitSkipped } from '../../src/operators/resubmitSkipped.js';
import { main, type CliIo } from '../../src/cli/main.js';
import { httpServer, wsServer } from './helpers.js';

const MARKER = 'SECRET-canary';
const key = (purpose: string): string => `sk-rxv-${MARKER}-${purpose}-7f3a9c41d2`;
const KEYS = {
  main: key('main'),
  unknown: key('unknown'),
  rateLimited: key('ratelimit'),
  broken: key('broken'),
  taskError: key('taskerror'),
  taskTimeout: key('tasktimeout'),
  poor: key('poor'),
  noCredits: key('nocredits'),
  skipping: key('skipping'),
  dropping: key('dropping'),
} as const;
const FAULTS: Record<string, Faults> = {
  [KEYS.rateLimited]: { httpErrors: { status: 429, count: 1000, retryAfter: 0 } },
  [KEYS.broken]: { httpErrors: { status: 500, count: 1000 } },
  [KEYS.taskError]: { taskOutcome: { '*': 'ERROR' } },
  [KEYS.taskTimeout]: { taskOutcome: { '*': 'TIMEOUT' } },
  [KEYS.poor]: { taskOutcome: { '*': 'PAYMENT_REQUIRED' } },
  [KEYS.noCredits]: { creditsAfterSegments: 0 },
  [KEYS.skipping]: { failSynthesis: { segments: 'all', times: 4 } },
  [KEYS.dropping]: { dropAfterFrames: 0 },
};

// ---------------------------------------------------------------------------
// Everything seen
// ---------------------------------------------------------------------------

/** Where each captured text came from, and the text. */
const seen: { where: string; text: string }[] = [];
const errorsSeen: RxVoiceError[] = [];
const untyped: unknown[] = [];
let eventsSeen = 0;
/** What the reflecting server received and sent back with the key in it (the positive control). */
const reflected: string[] = [];

function recordError(where: string, error: unknown): void {
  if (error instanceof RxVoiceError) errorsSeen.push(error);
  else untyped.push(error);
  const e = error as Error;
  seen.push(
    { where: `${where}: message`, text: String(e?.message) },
    { where: `${where}: String`, text: String(error) },
    { where: `${where}: inspect`, text: inspect(error, { depth: 5 }) },
    { where: `${where}: JSON`, text: JSON.stringify(error) ?? '' },
    { where: `${where}: stack`, text: String(e?.stack) },
  );
}

function recordEvent(where: string, event: unknown): void {
  eventsSeen++;
  seen.push({
    where: `${where}: event`,
    text: JSON.stringify(event, (_k, v: unknown) => (v instanceof Uint8Array ? `<${v.byteLength} bytes>` : v)),
  });
}

/** Subscribe, record every value and the error (or completion). */
function observe<T>(where: string, source$: Observable<T>): Promise<unknown> {
  return new Promise((resolve) => {
    source$.subscribe({
      next: (value) => recordEvent(where, value),
      error: (error: unknown) => {
        recordError(where, error);
        resolve(error);
      },
      complete: () => resolve(undefined),
    });
  });
}

// Console, stdout and stderr of this file (the emulator logs to stderr).
const originals = {
  stdout: process.stdout.write.bind(process.stdout),
  stderr: process.stderr.write.bind(process.stderr),
  console: { log: console.log, info: console.info, warn: console.warn, error: console.error, debug: console.debug },
};
function capture(): void {
  const wrap =
    (name: 'stdout' | 'stderr') =>
    (chunk: unknown, ...rest: unknown[]): boolean => {
      const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8');
      seen.push({ where: name, text });
      // The emulator's request log is scanned, not shown (it would flood the test output).
      if (/^\[rxvoice[ -]emulator\]/.test(text)) {
        const callback = rest.find((r): r is () => void => typeof r === 'function');
        if (callback) queueMicrotask(callback);
        return true;
      }
      return (originals[name] as (...args: unknown[]) => boolean)(chunk, ...rest);
    };
  process.stdout.write = wrap('stdout') as typeof process.stdout.write;
  process.stderr.write = wrap('stderr') as typeof process.stderr.write;
  for (const method of ['log', 'info', 'warn', 'error', 'debug'] as const) {
    console[method] = (...args: unknown[]) => {
      seen.push({ where: `console.${method}`, text: format(...args) });
      originals.console[method](...args);
    };
  }
}
function release(): void {
  process.stdout.write = originals.stdout as typeof process.stdout.write;
  process.stderr.write = originals.stderr as typeof process.stderr.write;
  Object.assign(console, originals.console);
}

// ---------------------------------------------------------------------------
// Servers
// ---------------------------------------------------------------------------

let emu: Emulator;
let dir: string;
const cleanups: (() => Promise<void>)[] = [];

function clientOf(apiKey: string, options: ClientOptions = {}): RxVoiceClient {
  const client = createClient({
    apiKey,
    baseUrl: emu.baseUrl,
    maxRetries: 0,
    polling: { initialDelayMs: 5, maxDelayMs: 20, jitter: 0 },
    retry: { baseDelayMs: 1, maxDelayMs: 5 },
    warn: (message) => seen.push({ where: 'warn hook', text: message }),
    ...options,
  });
  cleanups.push(() => client.close());
  return client;
}

beforeAll(async () => {
  capture();
  dir = mkdtempSync(join(tmpdir(), 'rxvoice-secrets-'));
  emu = await startEmulator({
    synth: 'tone',
    toneWordSeconds: 0.01,
    taskDurationMs: 5,
    retryBaseMs: 1,
    log: true,
    apiKeys: Object.values(KEYS).filter((k) => k !== KEYS.unknown),
    faultsByKey: FAULTS,
  });
});

afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await emu?.close();
  release();
  rmSync(dir, { recursive: true, force: true });
});

// ---------------------------------------------------------------------------
// The run
// ---------------------------------------------------------------------------

const sound = { prompt: 'rain on a tin roof', duration: 1 };
const TEXT = 'Hello there. How are you today?';

describe('the API key never leaks', () => {
  it('HTTP errors from the emulator: 401, 422, 429, 500, task ERROR / TIMEOUT / PAYMENT_REQUIRED', async () => {
    const unknown = clientOf(KEYS.unknown);
    for (const call of [
      unknown.voices.list(),
      unknown.textToSound(sound),
      unknown.translateStream({ text: 'Hello', source_language: 'en-us', target_language: 'de-de' }),
      unknown.ttsStream({ text: 'Hello there', voice_id: 1, language: 'en-us' }),
      unknown.speech.task({ text: 'Hi', voice_id: 1, language: 'en-us' }),
    ] as Observable<unknown>[]) {
      await observe('401', call);
    }
    const main = clientOf(KEYS.main);
    await observe('422 (server)', main.sound.results([999_998, 999_999]));
    await observe('422 (server, unknown voice)', main.ttsStream({ text: 'Hello there', voice_id: 987_654, language: 'en-us' }));
    await observe('404 result', main.sound.result(987_654));
    for (const name of ['rateLimited', 'broken', 'taskError', 'taskTimeout', 'poor'] as const) {
      const client = clientOf(KEYS[name]);
      await observe(name, client.textToSound(sound));
      await observe(name, client.translate({ texts: ['Hello'], source_language: 'en-us', target_language: 'de-de' }));
      await observe(name, client.translateStream({ text: 'Hello', source_language: 'en-us', target_language: 'de-de' }));
    }
    const names = new Set(errorsSeen.map((e) => e.name));
    for (const name of ['AuthenticationError', 'ValidationError', 'RateLimitError', 'ApiError', 'TaskFailedError', 'TaskTimeoutError', 'PaymentRequiredError']) {
      expect(names, name).toContain(name);
    }
  });

  it('live sessions: 4400, 4401, 4402, skips, drops; header and api_key query', async () => {
    // A browser-style constructor (two parameters): the key goes in the api_key query.
    class BrowserStyle extends NodeWebSocket {
      constructor(url: string, protocols?: string | string[]) {
        super(url, protocols);
      }
    }
    for (const WebSocket of [undefined, BrowserStyle]) {
      const options: ClientOptions = WebSocket ? { WebSocket } : {};
      const speakWith = (k: string, extra: Record<string, unknown> = {}) =>
        of(TEXT).pipe(clientOf(k, options).speak({ voice_id: 1, idle_timeout: 0.05, ...extra }));
      await observe('4401', speakWith(KEYS.unknown));
      await observe('4400 voice', speakWith(KEYS.main, { voice_id: 987_654 }));
      await observe('4402', speakWith(KEYS.noCredits));
      await observe('skips', of(TEXT).pipe(resubmitSkipped(clientOf(KEYS.skipping, options).speak({ voice_id: 1, idle_timeout: 0.05 }), { maxAttempts: 1 })));
      await observe('drop', speakWith(KEYS.dropping));
      await observe('drop with reconnect', speakWith(KEYS.dropping, { reconnect: { maxAttempts: 2, baseDelayMs: 1 } }));
      await observe('ok', speakWith(KEYS.main, { word_timestamps: true }));
    }
    const kinds = new Set(errorsSeen.map((e) => `${e.name}:${e.code}`));
    for (const kind of ['LiveSessionError:authentication', 'SessionRejectedError:session_rejected', 'CreditsExhaustedError:credits_exhausted', 'LiveSessionError:connection']) {
      expect(kinds, kind).toContain(kind);
    }
  });

  it('connection errors, timeouts and aborts', async () => {
    const closed = await httpServer(() => undefined);
    const closedUrl = closed.baseUrl;
    await closed.close();
    const nowhere = createClient({ apiKey: KEYS.main, baseUrl: closedUrl, maxRetries: 1, retry: { baseDelayMs: 1, maxDelayMs: 2 } });
    cleanups.push(() => nowhere.close());
    await observe('connection refused (HTTP)', nowhere.voices.list());
    await observe('connection refused (live)', of(TEXT).pipe(nowhere.speak({ voice_id: 1, reconnect: { maxAttempts: 1, baseDelayMs: 1 } })));

    const silent = await httpServer((req) => req.resume());
    cleanups.push(() => silent.close());
    const slow = createClient({ apiKey: KEYS.main, baseUrl: silent.baseUrl, timeoutMs: 100, maxRetries: 0 });
    cleanups.push(() => slow.close());
    await observe('timeout (HTTP)', slow.voices.list());
    await observe('timeout (stream)', slow.translateStream({ text: 'Hi', source_language: 'en-us', target_language: 'de-de' }));
    const controller = new AbortController();
    const aborted = observe('abort', slow.textToSound(sound, { signal: controller.signal }));
    setTimeout(() => controller.abort(), 20);
    await aborted;
    const noReady = await wsServer(() => undefined);
    cleanups.push(() => noReady.close());
    const liveSlow = createClient({ apiKey: KEYS.main, baseUrl: noReady.wsUrl.replace('ws:', 'http:') });
    cleanups.push(() => liveSlow.close());
    await observe('ready timeout', NEVER.pipe(liveSlow.speak({ voice_id: 1, readyTimeoutMs: 100 })));
    const names = new Set(errorsSeen.map((e) => e.name));
    for (const name of ['ConnectionError', 'TimeoutError', 'AbortError']) expect(names, name).toContain(name);
  });

  it('a hostile server reflecting the key into every answer: bodies, SSE errors, session.error, close reasons', async () => {
    const echo = (req: { headers: Record<string, string | string[] | undefined>; url?: string }): string => {
      const fromQuery = new URL(req.url ?? '/', 'http://x').searchParams.get('api_key');
      return String(req.headers['x-api-key'] ?? fromQuery ?? '');
    };
    const http = await httpServer((req, res) => {
      req.resume();
      const k = echo(req);
      reflected.push(k);
      const path = req.url ?? '/';
      if (path.startsWith('/list-voices')) {
        res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: `key ${k} is not valid`, status: 401 }));
      } else if (path.startsWith('/text-to-sound/')) {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ status: 'ERROR', run_id: null, message: `failed for ${k}` }));
      } else if (path.startsWith('/text-to-sound')) {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ task_id: 'task-1' }));
      } else if (path.startsWith('/translation/stream')) {
        res.writeHead(200, { 'content-type': 'text/event-stream' }).end(`data: piece\n\nevent: error\ndata: stream failed for ${k}\n\n`);
      } else if (path.startsWith('/translation')) {
        res.writeHead(422, { 'content-type': 'application/json' }).end(JSON.stringify({ detail: [{ loc: ['body', k], msg: `bad ${k}`, type: k }] }));
      } else if (path.startsWith('/tts-stream')) {
        res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '0' }).end(JSON.stringify({ error: `slow down ${k}` }));
      } else if (path.startsWith('/tts')) {
        res.writeHead(500, { 'content-type': 'text/plain', 'x-request-id': k }).end(`internal error for ${k}`);
      } else {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ [k]: k, unexpected: k }));
      }
    });
    cleanups.push(() => http.close());
    const client = createClient({ apiKey: KEYS.main, baseUrl: http.baseUrl, maxRetries: 0, polling: { initialDelayMs: 1, jitter: 0 }, warn: () => undefined });
    cleanups.push(() => client.close());
    await observe('reflect 401', client.voices.list());
    await observe('reflect task message', client.textToSound(sound));
    await observe('reflect SSE error', client.translateStream({ text: 'Hi', source_language: 'en-us', target_language: 'de-de' }));
    await observe('reflect 422', client.translate({ texts: ['Hi'], source_language: 'en-us', target_language: 'de-de' }));
    await observe('reflect 429', client.ttsStream({ text: 'Hello there', voice_id: 1, language: 'en-us' }));
    await observe('reflect 500', client.speech.create({ text: 'Hi', voice_id: 1, language: 'en-us' }));
    await observe('reflect wrong body', client.translation.result(5));

    const scripts: ((socket: NodeWebSocket, k: string) => void)[] = [
      (socket, k) => {
        socket.send(JSON.stringify({ type: 'session.error', error: `voice forbidden for ${k}` }));
        socket.close(4400, `rejected ${k}`.slice(0, 120));
      },
      (socket, k) => socket.close(4401, `bad ${k}`.slice(0, 120)),
      (socket, k) => {
        socket.send(JSON.stringify({ type: 'session.ready', session_id: 's', run_id: 1 }));
        socket.send(JSON.stringify({ type: 'session.error', error: `no credits for ${k}` }));
        socket.close(4402, `poor ${k}`.slice(0, 120));
      },
      (socket, k) => {
        socket.send(JSON.stringify({ type: 'session.ready', session_id: 's', run_id: 1 }));
        socket.close(1011, `crash ${k}`.slice(0, 120));
      },
      (socket, k) => socket.send(JSON.stringify({ type: k, error: k })),
      (socket, k) => socket.send(JSON.stringify({ type: 'session.ready', session_id: 's', run_id: k })),
    ];
    let script = 0;
    const live = await wsServer((socket, request) => {
      const k = echo(request);
      reflected.push(k);
      const run = scripts[script] as (s: NodeWebSocket, k: string) => void;
      socket.once('message', () => run(socket as unknown as NodeWebSocket, k));
    });
    cleanups.push(() => live.close());
    class BrowserStyle extends NodeWebSocket {
      constructor(url: string, protocols?: string | string[]) {
        super(url, protocols);
      }
    }
    for (const WebSocket of [undefined, BrowserStyle]) {
      const liveClient = createClient({ apiKey: KEYS.main, baseUrl: live.wsUrl.replace('ws:', 'http:'), ...(WebSocket ? { WebSocket } : {}) });
      cleanups.push(() => liveClient.close());
      for (script = 0; script < scripts.length; script++) {
        await observe(`reflect live ${script}`, of(TEXT).pipe(liveClient.speak({ voice_id: 1, reconnect: { maxAttempts: 1, baseDelayMs: 1 } })));
      }
    }
    // the positive control: the key really was sent back at us, everywhere
    expect(reflected.filter((k) => k === KEYS.main).length).toBeGreaterThanOrEqual(7 + 2 * scripts.length);
  });

  it('the CLI: errors and progress on its streams', async () => {
    class Collector extends Writable {
      text = '';
      isTTY = false;
      override _write(chunk: Buffer | string, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
        this.text += chunk.toString();
        callback();
      }
    }
    const runs: [string, string[]][] = [
      [KEYS.unknown, ['voices']],
      [KEYS.unknown, ['speak', TEXT, '-o', join(dir, 'a.wav')]],
      [KEYS.noCredits, ['speak', TEXT, '-o', join(dir, 'b.wav'), '--json']],
      [KEYS.skipping, ['speak', TEXT, '-o', join(dir, 'c.wav'), '--resubmit-skipped']],
      [KEYS.poor, ['sound', 'thunder', '-o', join(dir, 'd.wav')]],
      [KEYS.taskError, ['sound', 'thunder', '-o', join(dir, 'e.wav'), '--json']],
      [KEYS.rateLimited, ['translate', '--from', 'en-us', '--to', 'de-de', 'Hello']],
      [KEYS.broken, ['voices', '--json']],
      [KEYS.main, ['speak', TEXT, '--voice', '987654', '-o', join(dir, 'f.wav')]],
      [KEYS.main, ['voice', 'create', join(dir, 'missing.wav'), '--name', 'x', '--gender', '1']],
      [KEYS.main, ['speak', TEXT, '-o', join(dir, 'g.wav'), '--json', '--word-timestamps']],
    ];
    for (const [apiKey, argv] of runs) {
      const stdout = new Collector();
      const stderr = new Collector();
      const io: CliIo = {
        stdout,
        stderr,
        stdin: Readable.from([]),
        env: { RXVOICE_API_KEY: apiKey, RXVOICE_BASE_URL: emu.baseUrl, PATH: '' },
        cwd: dir,
        onInterrupt: () => () => undefined,
      };
      let code: number;
      try {
        code = await main(argv, io);
      } catch (error) {
        recordError(`cli ${argv[0]}`, error);
        code = -1;
      }
      seen.push({ where: `cli ${argv.join(' ')}: stdout`, text: stdout.text }, { where: `cli ${argv.join(' ')}: stderr (exit ${code})`, text: stderr.text });
      expect(code, `${argv.join(' ')}: ${stderr.text}`).toBeGreaterThanOrEqual(0);
    }
  });

  it('the client itself never shows the key', () => {
    const client = clientOf(KEYS.main);
    const shown = [
      { where: 'client inspect', text: inspect(client, { depth: 10, showHidden: true }) },
      { where: 'client String', text: String(client) },
      { where: 'client JSON', text: JSON.stringify(client) },
      { where: 'client config', text: inspect(client.config, { depth: 10 }) },
    ];
    seen.push(...shown);
    for (const { where, text } of shown) {
      expect(text, where).not.toContain(KEYS.main);
      expect(text, where).not.toContain(MARKER);
    }
    // The control: the inspected views really show the client's settings (its base URL).
    expect(shown[0]!.text).toContain(emu.baseUrl);
    expect(shown[3]!.text).toContain(emu.baseUrl);
  });

  it('zero hits for the key in everything captured', () => {
    expect(untyped.map((e) => inspect(e))).toEqual([]);
    // the run did produce plenty to scan, and the emulator did log
    expect(errorsSeen.length).toBeGreaterThan(50);
    expect(eventsSeen).toBeGreaterThan(20);
    expect(seen.some((s) => s.where === 'stderr' && s.text.includes('[rxvoice emulator]'))).toBe(true);
    const leaks = seen
      .filter((s) => s.text.includes(MARKER) || s.text.includes(encodeURIComponent(KEYS.main)))
      .map((s) => `${s.where}: ${s.text.slice(Math.max(0, s.text.indexOf(MARKER) - 80), s.text.indexOf(MARKER) + 40)}`);
    expect(leaks).toEqual([]);
    const kinds = [...new Set(errorsSeen.map((e) => e.name))].sort();
    originals.console.info(`[secrets] ${errorsSeen.length} errors (${kinds.join(', ')}), ${eventsSeen} events, ${seen.length} texts scanned`);
  });
});
