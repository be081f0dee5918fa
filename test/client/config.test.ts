import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { inspect } from 'node:util';
import { lastValueFrom } from 'rxjs';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  AbortError,
  ApiError,
  AuthenticationError,
  ConnectionError,
  ProtocolError,
  RateLimitError,
  TaskFailedError,
  TimeoutError,
  createClient,
} from '../../src/index.js';
import { RxVoiceError, ValidationError } from '../../src/live/index.js';
import { isLoopbackHost } from '../../src/client/config.js';
import type { Emulator } from '../../src/emulator/index.js';
import { clientFor, countingProxy, emulator } from './helpers.js';

const KEY = 'sk-live-SECRET-7f3a9c1e5b';
let emu: Emulator;
let rogue: Server;
let rogueUrl: string;

beforeAll(async () => {
  emu = await emulator({ apiKeys: [KEY] });
  // A misbehaving service: echoes the key in its error bodies, answers wrong types.
  rogue = createServer((req, res) => {
    const key = String(req.headers['x-api-key'] ?? '');
    if (req.url === '/text-to-sound') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ task_id: 42 }));
      return;
    }
    if (req.url === '/audio-separation/bare') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify('PENDING'));
      return;
    }
    if (req.url === '/text-to-sound/extra') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: 'SUCCESS', run_id: 5, progress: 100, new_field: { nested: true } }));
      return;
    }
    if (req.url === '/list-voices') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('not json');
      return;
    }
    res.writeHead(500, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: `internal failure for key ${key}`, status: 500, echo: key }));
  });
  await new Promise<void>((r) => rogue.listen(0, '127.0.0.1', r));
  rogueUrl = `http://127.0.0.1:${(rogue.address() as AddressInfo).port}`;
});
afterAll(async () => {
  rogue.closeAllConnections();
  await new Promise<void>((r) => rogue.close(() => r()));
  await emu.close();
});
afterEach(() => {
  emu.context.options.faults.httpErrors = undefined;
  emu.context.options.faults.httpLatencyMs = undefined;
  emu.context.options.faults.taskOutcome = undefined;
});

function configError(fn: () => unknown): RxVoiceError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(RxVoiceError);
    expect((error as RxVoiceError).code).toBe('config');
    return error as RxVoiceError;
  }
  throw new Error('expected a config error');
}

describe('configuration', () => {
  it('a missing key names both variables; a key alone goes to the public service', () => {
    const error = configError(() => createClient({ env: {} }));
    expect(error.message).toContain('CAMB_API_KEY');
    expect(error.message).toContain('RXVOICE_API_KEY');
    const onlyAddress = configError(() => createClient({ env: { RXVOICE_BASE_URL: 'https://api.example.com' } }));
    expect(onlyAddress.message).toContain('CAMB_API_KEY');
    const onlyKey = createClient({ env: { CAMB_API_KEY: KEY } });
    expect(onlyKey.baseUrl).toBe('https://client.camb.ai/apis');
    expect(onlyKey.wsUrl).toBe('wss://client.camb.ai/apis/live-tts/ws');
  });

  it('falls back to RXVOICE_API_KEY and RXVOICE_BASE_URL', async () => {
    const saved = { key: process.env['RXVOICE_API_KEY'], url: process.env['RXVOICE_BASE_URL'] };
    process.env['RXVOICE_API_KEY'] = KEY;
    process.env['RXVOICE_BASE_URL'] = `${emu.baseUrl}/`;
    try {
      const client = createClient();
      expect(client.baseUrl).toBe(emu.baseUrl);
      expect(client.wsUrl).toBe(emu.wsUrl);
      const voices = await lastValueFrom(client.voices.list());
      expect(voices.length).toBeGreaterThan(0);
      await client.close();
    } finally {
      if (saved.key === undefined) delete process.env['RXVOICE_API_KEY'];
      else process.env['RXVOICE_API_KEY'] = saved.key;
      if (saved.url === undefined) delete process.env['RXVOICE_BASE_URL'];
      else process.env['RXVOICE_BASE_URL'] = saved.url;
    }
  });

  it('refuses plain http to a non-loopback host', () => {
    const error = configError(() => createClient({ apiKey: KEY, baseUrl: 'http://api.example.com' }));
    expect(error.message).toContain('allowInsecureHttp');
    expect(error.message).not.toContain(KEY);
    expect(() => createClient({ apiKey: KEY, baseUrl: 'http://api.example.com', allowInsecureHttp: true })).not.toThrow();
    expect(() => createClient({ apiKey: KEY, baseUrl: 'https://api.example.com' })).not.toThrow();
    for (const host of ['localhost', '127.0.0.1', '127.9.8.7', '[::1]']) {
      expect(() => createClient({ apiKey: KEY, baseUrl: `http://${host}:8080` })).not.toThrow();
    }
    expect(isLoopbackHost('128.0.0.1')).toBe(false);
    expect(isLoopbackHost('10.0.0.1')).toBe(false);
  });

  it('refuses a base address carrying credentials, never echoing them; control: the same address without them is taken', () => {
    for (const userinfo of ['user:s3cr3t-pass@', 'user@', ':s3cr3t-pass@']) {
      const error = configError(() => createClient({ apiKey: KEY, baseUrl: `https://${userinfo}api.example.com/v` }));
      expect(error.message).toContain('must not carry credentials');
      expect(error.message).not.toContain('s3cr3t-pass');
    }
    expect(createClient({ apiKey: KEY, baseUrl: 'https://api.example.com/v' }).baseUrl).toBe('https://api.example.com/v');
  });

  it('derives the live WebSocket address and keeps a base path', () => {
    const c = createClient({ apiKey: KEY, baseUrl: 'https://api.example.com/v/' });
    expect(c.baseUrl).toBe('https://api.example.com/v');
    expect(c.wsUrl).toBe('wss://api.example.com/v/live-tts/ws');
  });

  it('invalid options are config errors naming the field, never echoing values', () => {
    const error = configError(() => createClient({ apiKey: KEY, baseUrl: 'https://x.example', timeoutMs: -1 }));
    expect(error.message).toContain('timeoutMs');
    const bad = configError(() => createClient({ apiKey: KEY, baseUrl: `not a url ${KEY}` }));
    expect(bad.message).not.toContain(KEY);
  });
});

describe('transport', () => {
  it('uses undici with keep-alive: sequential calls share one connection, close() ends it', async () => {
    const proxy = await countingProxy(emu.baseUrl);
    try {
      const client = clientFor({ baseUrl: proxy.baseUrl, apiKey: KEY });
      for (let i = 0; i < 5; i += 1) await lastValueFrom(client.voices.list());
      const { task_id } = await lastValueFrom(client.sound.create({ prompt: 'keep alive' }));
      await lastValueFrom(client.sound.status(task_id));
      expect(proxy.seen).toHaveLength(7);
      // Without keep-alive: 7 connections. undici's pool may open a second one while the
      // first is being released right after a response; after that they are reused.
      expect(proxy.connections.opened).toBeLessThanOrEqual(2);
      expect(proxy.connections.open).toBe(proxy.connections.opened);
      await client.close();
      await vi.waitFor(() => expect(proxy.connections.open).toBe(0), { timeout: 2_000, interval: 10 });
    } finally {
      await proxy.close();
    }
  });

  it('sends x-api-key on every request and no key elsewhere (no query, no other header)', async () => {
    const seen: { url: string; headers: Record<string, string> }[] = [];
    const recording = (url: string, init: Record<string, unknown>): Promise<Response> => {
      seen.push({ url, headers: { ...(init['headers'] as Record<string, string>) } });
      return fetch(url, init as RequestInit);
    };
    const client = clientFor({ baseUrl: emu.baseUrl, apiKey: KEY }, { fetch: recording });
    await lastValueFrom(client.textToSound({ prompt: 'headers', duration: 0.5 }));
    await lastValueFrom(client.voices.list());
    expect(seen.length).toBeGreaterThanOrEqual(4);
    for (const r of seen) {
      expect(r.headers['x-api-key']).toBe(KEY);
      expect(r.url).not.toContain(KEY);
      expect(Object.entries(r.headers).filter(([, v]) => v.includes(KEY)).map(([k]) => k)).toEqual(['x-api-key']);
    }
    await client.close();
  });
});

describe('the key never shows', () => {
  function expectNoKey(value: unknown): void {
    expect(String(value)).not.toContain(KEY);
    expect(inspect(value, { depth: 20, showHidden: true, getters: true })).not.toContain(KEY);
    let json = '';
    try {
      json = JSON.stringify(value) ?? '';
    } catch {
      json = '';
    }
    expect(json).not.toContain(KEY);
    if (value instanceof Error) {
      expect(value.message).not.toContain(KEY);
      expect(String(value.stack)).not.toContain(KEY);
    }
  }

  it('in the client: toString, inspect, JSON, its resources', () => {
    const client = createClient({ apiKey: KEY, baseUrl: emu.baseUrl });
    expectNoKey(client);
    expect(inspect(client)).toContain('***');
    expect(JSON.parse(JSON.stringify(client))).toEqual({ baseUrl: emu.baseUrl, wsUrl: emu.wsUrl });
    expectNoKey(client.sound);
    expectNoKey(client.config);
    expect(Object.keys(client)).not.toContain('apiKey');
  });

  it('in every kind of error', async () => {
    const client = clientFor({ baseUrl: emu.baseUrl, apiKey: KEY }, { maxRetries: 0 });
    // the short timeout only where a timeout is the point (on a busy machine 150 ms can pass before a quick answer)
    const slowClient = clientFor({ baseUrl: emu.baseUrl, apiKey: KEY }, { maxRetries: 0, timeoutMs: 150 });
    const rogueClient = clientFor({ baseUrl: rogueUrl, apiKey: KEY }, { maxRetries: 0 });
    const errors: unknown[] = [];
    const grab = async (p: Promise<unknown>): Promise<unknown> => {
      const e = await p.then(
        () => undefined,
        (x: unknown) => x,
      );
      errors.push(e);
      return e;
    };
    expect(await grab(lastValueFrom(client.sound.create({ prompt: KEY, duration: 99 })))).toBeInstanceOf(ValidationError);
    expect(await grab(lastValueFrom(client.ttsStream({ text: `Say ${KEY}.`, voice_id: 424242, language: 'en-us' })))).toBeInstanceOf(ValidationError);
    const wrongKey = clientFor({ baseUrl: emu.baseUrl, apiKey: `${KEY}-wrong` }, { maxRetries: 0 });
    const auth = await grab(lastValueFrom(wrongKey.voices.list()));
    expect(auth).toBeInstanceOf(AuthenticationError);
    expect((auth as AuthenticationError).status).toBe(401);
    expect(inspect(auth, { depth: 20, showHidden: true })).not.toContain(`${KEY}-wrong`);
    expect(await grab(lastValueFrom(client.sound.status('missing')))).toBeInstanceOf(ApiError);
    emu.context.options.faults.httpErrors = { status: 429, count: 1, retryAfter: 3 };
    const limited = await grab(lastValueFrom(client.voices.list()));
    expect(limited).toBeInstanceOf(RateLimitError);
    expect((limited as RateLimitError).retryAfter).toBe(3);
    emu.context.options.faults.httpErrors = undefined;
    emu.context.options.faults.httpLatencyMs = 400;
    expect(await grab(lastValueFrom(slowClient.voices.list()))).toBeInstanceOf(TimeoutError);
    emu.context.options.faults.httpLatencyMs = undefined;
    const controller = new AbortController();
    controller.abort();
    expect(await grab(lastValueFrom(client.voices.list({ signal: controller.signal })))).toBeInstanceOf(AbortError);
    emu.context.options.faults.taskOutcome = { '*': 'ERROR' };
    expect(await grab(lastValueFrom(client.textToSound({ prompt: 'x' })))).toBeInstanceOf(TaskFailedError);
    const echoed = await grab(lastValueFrom(rogueClient.sound.status('abc')));
    expect(echoed).toBeInstanceOf(ApiError);
    expect((echoed as ApiError).message).toContain('internal failure for key ***');
    const wrongType = await grab(lastValueFrom(rogueClient.sound.create({ prompt: 'x' })));
    expect(wrongType).toBeInstanceOf(ProtocolError);
    expect((wrongType as ProtocolError).message).toContain('POST /text-to-sound');
    expect(await grab(lastValueFrom(rogueClient.voices.list()))).toBeInstanceOf(ProtocolError);
    expect(await lastValueFrom(rogueClient.separation.status('bare'))).toEqual({ status: 'PENDING' });
    // Unknown extra fields are tolerated (a newer service may add some).
    expect(await lastValueFrom(rogueClient.sound.status('extra'))).toMatchObject({ status: 'SUCCESS', run_id: 5 });
    const refused = clientFor({ baseUrl: 'http://127.0.0.1:1', apiKey: KEY }, { maxRetries: 0 });
    expect(await grab(lastValueFrom(refused.voices.list()))).toBeInstanceOf(ConnectionError);
    for (const e of errors) expectNoKey(e);
    await Promise.all([client.close(), slowClient.close(), rogueClient.close(), wrongKey.close(), refused.close()]);
  });
});
