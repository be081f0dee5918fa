/**
 * A creation call (it costs credits) that failed after it may have reached the service is
 * not retryable, and its error says a task may exist: a caller retrying on `retryable`, as
 * docs/http-client.md says to, must not pay for a second task. A raw server on port 0.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { lastValueFrom } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/index.js';
import { ApiError, ConnectionError, RateLimitError } from '../../src/core/errors.js';

let server: Server;
let base = '';
let answer: 'reset' | 500 | 429 = 500;
let posts = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.method === 'POST') posts++;
      if (answer === 'reset') return req.socket.destroy(); // the whole request read, then the connection dropped
      res.writeHead(answer, { 'content-type': 'application/json', ...(answer === 429 ? { 'retry-after': '0' } : {}) });
      res.end(JSON.stringify({ error: 'the service failed' }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const failure = (promise: Promise<unknown>): Promise<unknown> => promise.then(() => undefined, (error: unknown) => error);

describe('a creation call that may have reached the service', () => {
  it('a reset after the request was read, and a 500: sent once, not retryable, and the error says a task may exist', async () => {
    const client = createClient({ apiKey: 'test-key-0123456789', baseUrl: base, maxRetries: 2, retry: { baseDelayMs: 1, maxDelayMs: 1 } });
    for (const [given, type] of [['reset', ConnectionError], [500, ApiError]] as const) {
      answer = given;
      posts = 0;
      const error = await failure(lastValueFrom(client.sound.create({ prompt: 'rain' })));
      expect(error).toBeInstanceOf(type);
      expect(error).toMatchObject({ retryable: false });
      expect((error as Error).message).toMatch(/may have reached the service and created a task/);
      expect(posts).toBe(1);
      if (given === 'reset') expect((error as Error).message).toMatch(/failed after the request was sent/); // not "could not reach"
    }
    await client.close();
  });

  it('controls: a 429 is retried and stays retryable; a status call (free) that got a 500 stays retryable; a refused connection stays retryable', async () => {
    const client = createClient({ apiKey: 'test-key-0123456789', baseUrl: base, maxRetries: 2, retry: { baseDelayMs: 1, maxDelayMs: 1 } });
    answer = 429;
    posts = 0;
    const limited = await failure(lastValueFrom(client.sound.create({ prompt: 'rain' })));
    expect(limited).toBeInstanceOf(RateLimitError);
    expect(limited).toMatchObject({ retryable: true });
    expect(posts).toBe(3);
    answer = 500;
    const status = await failure(lastValueFrom(client.sound.status('t1')));
    expect(status).toMatchObject({ retryable: true });
    expect((status as Error).message).not.toMatch(/created a task/);
    await client.close();
    // nothing listens there: the request never left, so even a creation call may be sent again
    const closed = createClient({ apiKey: 'test-key-0123456789', baseUrl: 'http://127.0.0.1:1', maxRetries: 0 });
    const refused = await failure(lastValueFrom(closed.sound.create({ prompt: 'rain' })));
    expect(refused).toMatchObject({ retryable: true, notSent: true });
    expect((refused as Error).message).toMatch(/could not reach the service/);
    await closed.close();
  });
});
