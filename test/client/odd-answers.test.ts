/**
 * Answers that are legal but odd, and inputs checked before sending: a raw server on port 0
 * records each request and answers what the case needs.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { lastValueFrom, toArray } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/index.js';
import { ProtocolError, StreamIdleError, ValidationError } from '../../src/core/errors.js';

type Handler = (req: IncomingMessage, body: string, res: import('node:http').ServerResponse) => void;
let server: Server;
let base = '';
let handle: Handler = (_req, _body, res) => res.end();
const seen: Array<{ method: string; url: string; body: string }> = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', body });
      handle(req, body, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const client = (options: { timeoutMs?: number; streamIdleTimeoutMs?: number } = {}) => createClient({ apiKey: 'test-key-0123456789', baseUrl: base, maxRetries: 0, ...options });
const failure = (promise: Promise<unknown>): Promise<unknown> => promise.then(() => undefined, (error: unknown) => error);

describe('odd answers', () => {
  it('ttsStream: a 200 JSON answer is the service\'s message, a ProtocolError, not audio (control: audio passes)', async () => {
    const c = client();
    handle = (_req, _body, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'voice 1 is not available' }));
    };
    const request = { text: 'Hello there.', voice_id: 1, language: 'en-us', output_configuration: { format: 'wav' } } as const;
    const error = await failure(lastValueFrom(c.ttsStream(request).pipe(toArray())));
    expect(error).toBeInstanceOf(ProtocolError);
    expect((error as Error).message).toContain('voice 1 is not available');
    handle = (_req, _body, res) => {
      res.writeHead(200, { 'content-type': 'audio/wav' });
      res.end(Buffer.from('RIFF....WAVE'));
    };
    const chunks = await lastValueFrom(c.ttsStream(request).pipe(toArray()));
    expect(Buffer.concat(chunks.map((chunk) => chunk.bytes)).toString()).toBe('RIFF....WAVE');
    await c.close();
  });

  it('sound.resultStream: a download longer than timeoutMs that keeps flowing completes; one that stalls ends after streamIdleTimeoutMs', async () => {
    const c = client({ timeoutMs: 300, streamIdleTimeoutMs: 400 });
    let stall = false;
    handle = (_req, _body, res) => {
      res.writeHead(200, { 'content-type': 'audio/wav' });
      let sent = 0;
      const tick = setInterval(() => {
        if (stall && sent === 2) return; // headers and two chunks, then silence (the socket stays open)
        res.write(Buffer.alloc(1000, sent));
        if (++sent === 10) {
          clearInterval(tick);
          res.end();
        }
      }, 100);
      res.on('close', () => clearInterval(tick));
    };
    const chunks = await lastValueFrom(c.sound.resultStream(7).pipe(toArray()));
    expect(chunks.reduce((n, chunk) => n + chunk.byteLength, 0)).toBe(10_000); // 1 s of body against a 300 ms timeout
    stall = true;
    const error = await failure(lastValueFrom(c.sound.resultStream(7)));
    expect(error).toBeInstanceOf(StreamIdleError);
    await c.close();
  });

  it('a task id of "." or "..", which no URL can address (it resolves them away), is refused: asked for, before sending; answered, as a bad answer', async () => {
    const c = client();
    handle = (_req, _body, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(_req.method === 'POST' ? { task_id: '..' } : { status: 'PENDING' }));
    };
    seen.length = 0;
    for (const id of ['.', '..']) expect(await failure(lastValueFrom(c.sound.status(id)))).toBeInstanceOf(ValidationError);
    expect(seen).toEqual([]);
    await lastValueFrom(c.sound.status('a.b')); // control: dots inside an id are fine
    expect(seen.map((r) => r.url)).toEqual(['/text-to-sound/a.b']);
    expect(await failure(lastValueFrom(c.sound.create({ prompt: 'rain' })))).toBeInstanceOf(ProtocolError);
    await c.close();
  });
});

describe('inputs checked before anything is sent', () => {
  it('tasks.resume: an empty or non-string task id, an unknown family: ValidationError, no request (control: a good one polls)', async () => {
    const c = client();
    seen.length = 0;
    for (const [family, id] of [['sound', ''], ['sound', 42], ['nope', 'x']] as const) {
      const error = await failure(lastValueFrom(c.tasks.resume(family as 'sound', id as string)));
      expect(error).toBeInstanceOf(ValidationError);
    }
    expect(seen).toEqual([]);
    handle = (_req, _body, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: 'ERROR', message: 'it failed' }));
    };
    expect(await failure(lastValueFrom(c.tasks.resume('sound', 't1')))).toMatchObject({ name: 'TaskFailedError' });
    expect(seen.map((r) => r.url)).toEqual(['/text-to-sound/t1']);
    await c.close();
  });

  it('a music duration is sent as given (its 10 s limit is waived, not the field); a sound one over 10 s is refused', async () => {
    const c = client();
    handle = (_req, _body, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ task_id: 't' }));
    };
    seen.length = 0;
    await lastValueFrom(c.sound.create({ prompt: 'jazz', audio_type: 'music', duration: 30 }));
    await lastValueFrom(c.sound.create({ prompt: 'jazz', audio_type: 'music', duration: 5 }));
    expect(seen.map((r) => JSON.parse(r.body).duration)).toEqual([30, 5]);
    expect(await failure(lastValueFrom(c.sound.create({ prompt: 'rain', duration: 30 })))).toBeInstanceOf(ValidationError);
    expect(seen).toHaveLength(2);
    await c.close();
  });
});
