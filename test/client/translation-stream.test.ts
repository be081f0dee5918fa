import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { filter, lastValueFrom, take, toArray } from 'rxjs';
import { AuthenticationError, ProtocolError, StreamError, type RxVoiceClient } from '../../src/index.js';
import { RxVoiceError, ValidationError } from '../../src/live/index.js';
import { TRANSLATION_FAIL_TRIGGER, type Emulator } from '../../src/emulator/index.js';
import { clientFor, emulator } from './helpers.js';

const request = {
  text: 'Hello world. The quick brown fox jumps over the lazy dog.',
  source_language: 'en-us',
  target_language: 'de-de',
};
const tick = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

describe('translateStream on the emulator', () => {
  let emu: Emulator;
  let client: RxVoiceClient;
  beforeAll(async () => {
    emu = await emulator({ streamDelayMs: 2 });
    client = clientFor(emu);
  });
  afterAll(async () => {
    await client.close();
    await emu.close();
  });

  it('streams the pieces; joined they are the text client.translate() gives', async () => {
    let credits: number | undefined | 'unset' = 'unset';
    const pieces = await lastValueFrom(
      client.translateStream(request, { onCredits: (c) => (credits = c) }).pipe(toArray()),
    );
    expect(pieces.length).toBeGreaterThan(5);
    expect(typeof credits).toBe('number');
    const streamed = pieces.join('');
    const task = await lastValueFrom(
      client.translate({ texts: [request.text], source_language: 'en-us', target_language: 'de-de' }),
    );
    expect(task.type).toBe('result');
    if (task.type !== 'result') return;
    expect(streamed).toBe(task.result.texts[0]);
    expect(streamed).not.toBe(request.text);
  });

  it('events variant: meta with X-Credits-Required first, then text pieces', async () => {
    const events = await lastValueFrom(client.translateStreamEvents(request).pipe(toArray()));
    expect(events[0]).toEqual({ type: 'meta', creditsRequired: expect.any(Number) });
    expect(events.slice(1).every((e) => e.type === 'text')).toBe(true);
    expect(events.length).toBeGreaterThan(2);
  });

  it('invalid request: ValidationError, nothing sent', async () => {
    const before = emu.requests.length;
    const error = await lastValueFrom(client.translateStream({ ...request, text: '' })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).source).toBe('local');
    expect((error as ValidationError).issues[0]?.loc).toEqual(['body', 'text']);
    const bad = await lastValueFrom(
      client.translateStream({ ...request, formality: 7 as unknown as 1 }),
    ).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(ValidationError);
    expect(emu.requests.length).toBe(before);
  });

  it('wrong key: AuthenticationError without the key in the message', async () => {
    const other = clientFor(emu, { apiKey: 'not-a-valid-key-123' });
    try {
      const error = await lastValueFrom(other.translateStream(request)).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(AuthenticationError);
      expect(String((error as Error).message)).not.toContain('not-a-valid-key-123');
    } finally {
      await other.close();
    }
  });

  it('an error event ends the stream with StreamError carrying the text so far', async () => {
    const error = await lastValueFrom(
      client.translateStream({ ...request, text: `Good morning everyone ${TRANSLATION_FAIL_TRIGGER} never` }),
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StreamError);
    expect(error).toBeInstanceOf(RxVoiceError);
    const streamError = error as StreamError;
    expect(streamError.code).toBe('stream');
    expect(streamError.serviceMessage).toMatch(/translation failed/);
    expect(streamError.received.length).toBeGreaterThan(0);
    expect(streamError.received).not.toContain('never');
  });

  it('a taskOutcome fault fails the stream at once', async () => {
    const faulty = await emulator({ faults: { taskOutcome: { translation: 'ERROR' } } });
    const c = clientFor(faulty);
    try {
      const error = await lastValueFrom(c.translateStream(request)).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StreamError);
      expect((error as StreamError).received).toBe('');
    } finally {
      await c.close();
      await faulty.close();
    }
  });

  it('warns once that the endpoint is deprecated', async () => {
    const warnings: string[] = [];
    const c = clientFor(emu, { warn: (_m, code) => warnings.push(code) });
    try {
      await lastValueFrom(c.translateStream(request).pipe(toArray()));
      await lastValueFrom(c.translateStream(request).pipe(toArray()));
      expect(warnings.filter((w) => /TRANSLATESTREAM/.test(w))).toHaveLength(1);
      // control for the next: locale tags alone warn of no numeric language
      expect(warnings.filter((w) => /NUMERIC_LANGUAGE/.test(w))).toHaveLength(0);
      await lastValueFrom(c.translateStream({ ...request, target_language: 7 }).pipe(toArray()));
      expect(warnings.filter((w) => /NUMERIC_LANGUAGE/.test(w))).toHaveLength(1);
    } finally {
      await c.close();
    }
  });
});

describe('translateStream against a scripted SSE server', () => {
  let server: Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
    server = undefined;
  });

  async function start(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
    server = createServer((req, res) => {
      req.resume();
      handler(req, res);
    });
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', () => r()));
    return `http://127.0.0.1:${(server!.address() as AddressInfo).port}`;
  }

  it('pieces split anywhere (mid-line, mid-character) come out whole', async () => {
    const baseUrl = await start((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'x-credits-required': '3' });
      const bytes = Buffer.from(': hi\r\ndata: Grüß \r\n\r\ndata: 日本\n\nevent: other\ndata: skip\n\ndata: 😀\n\n');
      let i = 0;
      const timer = setInterval(() => {
        if (i >= bytes.length) {
          clearInterval(timer);
          res.end();
          return;
        }
        res.write(bytes.subarray(i, i + 3));
        i += 3;
      }, 1);
    });
    const client = clientFor({ baseUrl, apiKey: 'k-123456' });
    try {
      let credits: number | undefined;
      const pieces = await lastValueFrom(client.translateStream(request, { onCredits: (c) => (credits = c) }).pipe(toArray()));
      expect(pieces).toEqual(['Grüß ', '日本', '😀']);
      expect(credits).toBe(3);
    } finally {
      await client.close();
    }
  });

  it('422 maps to ValidationError with the server detail; the key is redacted from stream errors', async () => {
    const key = 'secret-key-987654';
    let mode: '422' | 'error' = '422';
    const baseUrl = await start((req, res) => {
      expect(req.headers['x-api-key']).toBe(key);
      if (mode === '422') {
        res.writeHead(422, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ detail: [{ loc: ['body', 'target_language'], msg: 'unsupported language', type: 'value_error' }] }));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(`data: a\n\nevent: error\ndata: key ${key} is over quota\n\n`);
    });
    const client = clientFor({ baseUrl, apiKey: key });
    try {
      const error = await lastValueFrom(client.translateStream(request)).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).source).toBe('server');
      expect((error as ValidationError).issues).toEqual([{ loc: ['body', 'target_language'], msg: 'unsupported language', type: 'value_error' }]);
      mode = 'error';
      const streamError = await lastValueFrom(client.translateStream(request)).catch((e: unknown) => e);
      expect(streamError).toBeInstanceOf(StreamError);
      expect((streamError as StreamError).received).toBe('a');
      expect((streamError as StreamError).message).not.toContain(key);
      expect((streamError as StreamError).message).toContain('***');
    } finally {
      await client.close();
    }
  });

  it('sends the defaults of the contract: formality 2, gender 1', async () => {
    const bodies: string[] = [];
    const baseUrl = await start((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        bodies.push(Buffer.concat(chunks).toString());
        res.writeHead(200, { 'content-type': 'text/event-stream' }).end('data: Hallo\n\n');
      });
    });
    const client = clientFor({ baseUrl, apiKey: 'k-123456' });
    try {
      expect(await lastValueFrom(client.translateStream(request).pipe(toArray()))).toEqual(['Hallo']);
      expect(JSON.parse(bodies[0]!)).toMatchObject({ formality: 2, gender: 1 });
    } finally {
      await client.close();
    }
  });

  it('an answer that is not an event stream is a ProtocolError', async () => {
    const baseUrl = await start((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"texts":["x"]}');
    });
    const client = clientFor({ baseUrl, apiKey: 'k-123456' });
    try {
      const error = await lastValueFrom(client.translateStream(request)).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ProtocolError);
    } finally {
      await client.close();
    }
  });

  it('unsubscribing aborts the request (the server sees the connection close)', async () => {
    let closed = false;
    let sent = 0;
    const baseUrl = await start((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const timer = setInterval(() => res.write(`data: p${sent++} \n\n`), 3);
      res.on('close', () => {
        clearInterval(timer);
        closed = true;
      });
    });
    const client = clientFor({ baseUrl, apiKey: 'k-123456' });
    try {
      const two = await lastValueFrom(client.translateStream(request).pipe(take(2), toArray()));
      expect(two).toEqual(['p0 ', 'p1 ']);
      for (let i = 0; i < 50 && !closed; i++) await tick(10);
      expect(closed).toBe(true);
      // and an abort signal ends it with AbortError
      const controller = new AbortController();
      const seen: string[] = [];
      const aborted = lastValueFrom(
        client.translateStream(request, { signal: controller.signal }).pipe(
          filter((piece) => {
            seen.push(piece);
            if (seen.length === 2) controller.abort();
            return true;
          }),
        ),
      ).catch((e: unknown) => e);
      expect(await aborted).toMatchObject({ name: 'AbortError', code: 'abort' });
      expect(seen).toHaveLength(2);
    } finally {
      await client.close();
    }
  });
});
