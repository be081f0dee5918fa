/**
 * Hostile HTTP services, second round: redirects that would carry the key away, bodies
 * that break or stall mid-read, results too large for memory or JSON where audio is
 * expected, and streams that go silent after their headers. Each peer is a loopback
 * server on port 0, bounded in time and bytes.
 */
import { describe, expect, it } from 'vitest';
import type { IncomingMessage } from 'node:http';
import { firstValueFrom, lastValueFrom, reduce, toArray, type Observable } from 'rxjs';
import { createClient, type RxVoiceClient } from '../../src/index.js';
import {
  ApiError,
  ConnectionError,
  LimitExceededError,
  ProtocolError,
  RedirectError,
  StreamIdleError,
  TimeoutError,
} from '../../src/core/errors.js';
import { hostileSuite, httpServer, rejectionOf } from './helpers.js';

const KEY = 'sk-rxv-hostile-http-0123456789';
const { cleanups, clientOn } = hostileSuite(KEY);

async function serve(handler: Parameters<typeof httpServer>[0]): Promise<Awaited<ReturnType<typeof httpServer>>> {
  const server = await httpServer(handler);
  cleanups.push(() => server.close());
  return server;
}

/** A server that records every request it receives (method, path, key header, body). */
async function recorder(): Promise<{ baseUrl: string; seen: { method: string; url: string; key: string | undefined; body: string }[] }> {
  const seen: { method: string; url: string; key: string | undefined; body: string }[] = [];
  const server = await serve((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const key = req.headers['x-api-key'];
      seen.push({ method: req.method ?? '', url: req.url ?? '', key: typeof key === 'string' ? key : undefined, body: Buffer.concat(chunks).toString() });
      res.writeHead(200, { 'content-type': 'application/json' }).end('[]');
    });
  });
  return { baseUrl: server.baseUrl, seen };
}

const WAV = Buffer.alloc(20_000, 3);

describe('redirects never carry the key to another origin', () => {
  const calls: { name: string; call: (c: RxVoiceClient) => Observable<unknown>; endpoint: string }[] = [
    { name: 'creation (POST /text-to-sound)', call: (c) => c.sound.create({ prompt: 'rain on a roof' }), endpoint: 'POST /text-to-sound' },
    { name: 'status', call: (c) => c.sound.status('t1'), endpoint: 'GET text-to-sound status' },
    { name: 'result', call: (c) => c.sound.result(7), endpoint: 'GET text-to-sound result' },
    { name: '/list-voices', call: (c) => c.voices.list(), endpoint: 'GET /list-voices' },
  ];
  for (const status of [301, 302, 307, 308]) {
    for (const { name, call, endpoint } of calls) {
      it(`${status} to another origin on ${name}: RedirectError naming it, nothing reaches the other origin`, async () => {
        const foreign = await recorder();
        const server = await serve((req, res) => {
          req.resume();
          res.writeHead(status, { location: `${foreign.baseUrl}/steal?x=1` }).end('moved');
        });
        const error = await rejectionOf(lastValueFrom(call(clientOn(server.baseUrl))));
        expect(error).toBeInstanceOf(RedirectError);
        expect(error).toMatchObject({ code: 'redirect', status, location: `${foreign.baseUrl}/steal`, retryable: false });
        expect((error as Error).message).toContain(endpoint);
        expect((error as Error).message).toContain(`redirecting to ${foreign.baseUrl}/steal`);
        // Control: the recorder sees a request sent to it directly, with its key.
        await lastValueFrom(clientOn(foreign.baseUrl).voices.list());
        expect(foreign.seen).toEqual([{ method: 'GET', url: '/list-voices', key: KEY, body: '' }]);
      });
    }
  }

  it('a redirect to the same port under another host name (another origin): not followed', async () => {
    const server = await serve((req, res) => {
      req.resume();
      const port = new URL(server.baseUrl).port;
      res.writeHead(302, { location: `http://localhost:${port}/list-voices` }).end();
    });
    const error = await rejectionOf(lastValueFrom(clientOn(server.baseUrl).voices.list()));
    expect(error).toBeInstanceOf(RedirectError);
  });

  it('a redirect to the same host and port under another scheme (another origin): not followed', async () => {
    let requests = 0;
    const server = await serve((req, res) => {
      req.resume();
      requests += 1;
      const port = new URL(server.baseUrl).port;
      res.writeHead(307, { location: `https://127.0.0.1:${port}/list-voices` }).end();
    });
    const error = await rejectionOf(lastValueFrom(clientOn(server.baseUrl).voices.list()));
    expect(error).toBeInstanceOf(RedirectError);
    expect(error).toMatchObject({ status: 307, location: `https://127.0.0.1:${new URL(server.baseUrl).port}/list-voices` });
    expect(requests).toBe(1);
  });

  it('a redirect without a Location: a RedirectError, not retried; control: the same client retries a 503', async () => {
    let requests = 0;
    const server = await serve((req, res) => {
      req.resume();
      requests += 1;
      if (req.url === '/list-voices') res.writeHead(302).end();
      else if (requests === 2) res.writeHead(503).end();
      else res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"PENDING","run_id":null}');
    });
    const client = clientOn(server.baseUrl, { maxRetries: 2, retry: { baseDelayMs: 1, maxDelayMs: 1 } });
    const error = await rejectionOf(lastValueFrom(client.voices.list()));
    expect(error).toBeInstanceOf(RedirectError);
    expect(error).toMatchObject({ status: 302, location: undefined, retryable: false });
    expect((error as Error).message).toContain('answered 302, a redirect without a usable Location: not followed');
    expect(requests).toBe(1);
    expect(await lastValueFrom(client.sound.status('t1'))).toMatchObject({ status: 'PENDING' });
    expect(requests).toBe(3);
  });

  it('same-origin redirects are followed: a 307 re-sends the body, a 303 continues as GET, a loop ends after 5 hops', async () => {
    const seen: { method: string; url: string; key: unknown; body: string }[] = [];
    const server = await serve((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seen.push({ method: req.method ?? '', url: req.url ?? '', key: req.headers['x-api-key'], body: Buffer.concat(chunks).toString() });
        if (req.url === '/text-to-sound') res.writeHead(307, { location: '/v2/text-to-sound' }).end();
        else if (req.url === '/v2/text-to-sound') res.writeHead(200, { 'content-type': 'application/json' }).end('{"task_id":"t9"}');
        else if (req.url === '/list-voices') res.writeHead(303, { location: '/voices-page' }).end();
        else if (req.url === '/voices-page') res.writeHead(200, { 'content-type': 'application/json' }).end('[]');
        else res.writeHead(302, { location: req.url + 'x' }).end();
      });
    });
    const client = clientOn(server.baseUrl);
    expect(await lastValueFrom(client.sound.create({ prompt: 'rain on a roof' }))).toEqual({ task_id: 't9' });
    expect(seen.map((r) => [r.method, r.url, r.key])).toEqual([
      ['POST', '/text-to-sound', KEY],
      ['POST', '/v2/text-to-sound', KEY],
    ]);
    expect(JSON.parse(seen[1]!.body)).toMatchObject({ prompt: 'rain on a roof' });
    seen.length = 0;
    expect(await lastValueFrom(client.voices.list())).toEqual([]);
    expect(seen.map((r) => [r.method, r.url])).toEqual([['GET', '/list-voices'], ['GET', '/voices-page']]);
    seen.length = 0;
    const loop = await rejectionOf(lastValueFrom(client.sound.status('t1')));
    expect(loop).toBeInstanceOf(RedirectError);
    expect((loop as Error).message).toContain('more than 5 redirects');
    expect(seen).toHaveLength(6);
  });

  it('a 301 or 302 after a POST continues as a GET without the body (as fetch does); control: the 307 above keeps POST and body', async () => {
    for (const status of [301, 302]) {
      const seen: { method: string; url: string; body: string; type: unknown }[] = [];
      const server = await serve((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          seen.push({ method: req.method ?? '', url: req.url ?? '', body: Buffer.concat(chunks).toString(), type: req.headers['content-type'] });
          if (req.url === '/text-to-sound') res.writeHead(status, { location: '/moved' }).end();
          else res.writeHead(200, { 'content-type': 'application/json' }).end('{"task_id":"t10"}');
        });
      });
      expect(await lastValueFrom(clientOn(server.baseUrl).sound.create({ prompt: 'rain on a roof' }))).toEqual({ task_id: 't10' });
      expect(seen.map((r) => [r.method, r.url])).toEqual([
        ['POST', '/text-to-sound'],
        ['GET', '/moved'],
      ]);
      expect(JSON.parse(seen[0]!.body)).toMatchObject({ prompt: 'rain on a roof' });
      expect(seen[0]).toMatchObject({ type: 'application/json' });
      expect(seen[1]).toMatchObject({ body: '', type: undefined });
    }
  });

  it('a redirect answer to an upload is not followed, even within the origin; control: the same 307 to a JSON call is', async () => {
    const seen: string[] = [];
    const server = await serve((req, res) => {
      req.resume();
      req.on('end', () => {
        seen.push(`${req.method} ${req.url}`);
        if (req.url === '/create-custom-voice' || req.url === '/text-to-sound') res.writeHead(307, { location: `${req.url}-2` }).end();
        else res.writeHead(200, { 'content-type': 'application/json' }).end(req.url === '/text-to-sound-2' ? '{"task_id":"t1"}' : '{"voice_id":5}');
      });
    });
    const client = clientOn(server.baseUrl);
    const error = await rejectionOf(lastValueFrom(client.voices.create({ voice_name: 'v', gender: 1, file: { data: WAV, filename: 'v.wav' } })));
    expect(error).toBeInstanceOf(RedirectError);
    expect((error as Error).message).toContain('answered a redirect to an upload: not followed');
    expect(seen).toEqual(['POST /create-custom-voice']);
    expect(await lastValueFrom(client.sound.create({ prompt: 'rain on a roof' }))).toEqual({ task_id: 't1' });
    expect(seen.slice(1)).toEqual(['POST /text-to-sound', 'POST /text-to-sound-2']);
  });

  it("a browser fetch's opaque redirect (status 0, no Location) is a RedirectError, not an answer", async () => {
    const server = await serve((req, res) => {
      req.resume();
      res.writeHead(302, { location: '/elsewhere' }).end();
    });
    // what a page's fetch gives for redirect: 'manual': type 'opaqueredirect', status 0, no headers
    const browserFetch: typeof fetch = async (input, init) => {
      const answer = await fetch(input, init);
      await answer.body?.cancel();
      const opaque = new Response(null, { status: 200 });
      Object.defineProperties(opaque, { type: { value: 'opaqueredirect' }, status: { value: 0 } });
      return opaque;
    };
    const error = await rejectionOf(lastValueFrom(clientOn(server.baseUrl, { fetch: browserFetch }).voices.list()));
    expect(error).toBeInstanceOf(RedirectError);
    expect(error).toMatchObject({ status: 0, location: undefined });
    // the opaque redirect has no status: said once, not 'a redirect a redirect'
    expect((error as Error).message).toContain('answered a redirect without a usable Location: not followed');
  });

  it("a redirect's body is cancelled, not left holding its connection: a body that never ends is cut", async () => {
    let cut!: () => void;
    const redirectCut = new Promise<void>((resolve) => (cut = resolve));
    const server = await serve((req, res) => {
      req.resume();
      if (req.url === '/list-voices') {
        res.writeHead(307, { location: '/voices-2', 'content-type': 'text/html' });
        res.write('<html>moved, and this page goes on'); // and never ends
        res.on('close', () => cut());
      } else res.writeHead(200, { 'content-type': 'application/json' }).end('[]');
    });
    expect(await lastValueFrom(clientOn(server.baseUrl).voices.list())).toEqual([]);
    await redirectCut;
  });
});

describe('failures while reading a body', () => {
  it('a status body that stalls is retried (timeoutMs), and the task result arrives', async () => {
    let statusCalls = 0;
    const server = await serve((req, res) => {
      req.resume();
      if (req.url?.startsWith('/text-to-sound/')) {
        statusCalls += 1;
        res.writeHead(200, { 'content-type': 'application/json' });
        if (statusCalls === 1) res.write('{"status":"SUC'); // then silence
        else res.end('{"status":"SUCCESS","run_id":7}');
      } else if (req.url === '/text-to-sound-result/7') {
        res.writeHead(200, { 'content-type': 'audio/wav' }).end(WAV);
      } else res.writeHead(404).end();
    });
    const client = clientOn(server.baseUrl, { timeoutMs: 300, maxRetries: 2, retry: { baseDelayMs: 1, maxDelayMs: 1 } });
    const status = await lastValueFrom(client.sound.status('t1'));
    expect(status).toMatchObject({ status: 'SUCCESS', run_id: 7 });
    expect(statusCalls).toBe(2);
  });

  it('a result download cut after 5 kB is retried and completes; without retries it is a retryable ConnectionError', async () => {
    let resultCalls = 0;
    const server = await serve((req, res) => {
      req.resume();
      resultCalls += 1;
      res.writeHead(200, { 'content-type': 'audio/wav', 'content-length': String(WAV.length) });
      if (resultCalls % 2 === 1) {
        res.write(WAV.subarray(0, 5000), () => res.socket?.destroy());
      } else res.end(WAV);
    });
    const bytes = await lastValueFrom(clientOn(server.baseUrl, { maxRetries: 2, retry: { baseDelayMs: 1, maxDelayMs: 1 } }).sound.result(7));
    expect(Buffer.from(bytes).equals(WAV)).toBe(true);
    expect(resultCalls).toBe(2);
    // Control: with no retries the cut is seen, as a retryable ConnectionError.
    const error = await rejectionOf(lastValueFrom(clientOn(server.baseUrl).sound.result(7)));
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error).toMatchObject({ retryable: true });
    expect(resultCalls).toBe(3);
  });

  it('a creation answer cut mid-body is not repeated (the task may exist and cost credits)', async () => {
    let creations = 0;
    const server = await serve((req, res) => {
      req.resume();
      creations += 1;
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '40' });
      res.write('{"task_id":', () => res.socket?.destroy());
    });
    const error = await rejectionOf(
      lastValueFrom(clientOn(server.baseUrl, { maxRetries: 3, retry: { baseDelayMs: 1, maxDelayMs: 1 } }).sound.create({ prompt: 'rain on a roof' })),
    );
    expect(error).toBeInstanceOf(ConnectionError);
    expect(creations).toBe(1);
  });

  it('a creation call whose connection drops before any answer is not repeated (it may have arrived); control: a status call is', async () => {
    const seen: string[] = [];
    let statusDropped = false;
    const server = await serve((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      req.on('end', () => {
        const drop = req.method === 'POST' || !statusDropped;
        if (req.method === 'GET') statusDropped = true;
        if (drop) res.socket?.destroy(); // the request arrived, no answer
        else res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"PENDING","run_id":null}');
      });
      req.resume();
    });
    const client = clientOn(server.baseUrl, { maxRetries: 3, retry: { baseDelayMs: 1, maxDelayMs: 1 } });
    const error = await rejectionOf(lastValueFrom(client.sound.create({ prompt: 'rain on a roof' })));
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error).toMatchObject({ notSent: false });
    expect(seen).toEqual(['POST /text-to-sound']);
    // Control: the same drop on a status call is retried, and the next answer arrives.
    expect(await lastValueFrom(client.sound.status('t1'))).toMatchObject({ status: 'PENDING' });
    expect(seen).toEqual(['POST /text-to-sound', 'GET /text-to-sound/t1', 'GET /text-to-sound/t1']);
  });

  it('a streamed result cut after its first chunk was handed out is not repeated (the chunk would come twice); control: a cut before any chunk is retried', async () => {
    let resultCalls = 0;
    let cutEarly = false;
    let firstSeen!: () => void;
    const handedOut = new Promise<void>((resolve) => (firstSeen = resolve));
    const server = await serve((req, res) => {
      req.resume();
      resultCalls += 1;
      res.writeHead(200, { 'content-type': 'audio/wav', 'content-length': String(WAV.length) });
      if (req.url === '/text-to-sound-result/7') {
        // the cut comes only once the subscriber holds the first chunk
        res.write(WAV.subarray(0, 5000), () => void handedOut.then(() => res.socket?.destroy()));
      } else if (!cutEarly) {
        // the headers, then the cut: no byte of the body to hand out
        cutEarly = true;
        res.flushHeaders();
        res.socket?.destroy();
      } else res.end(WAV);
    });
    const client = clientOn(server.baseUrl, { maxRetries: 2, retry: { baseDelayMs: 1, maxDelayMs: 1 } });
    const received: number[] = [];
    const error = await new Promise<unknown>((resolve) =>
      client.sound.resultStream(7).subscribe({
        next: (chunk) => {
          received.push(chunk.byteLength);
          firstSeen();
        },
        error: resolve,
        complete: () => resolve(undefined),
      }),
    );
    expect(error).toBeInstanceOf(ConnectionError);
    expect(received.reduce((a, b) => a + b, 0)).toBe(5000);
    expect(resultCalls).toBe(1);
    // Control: the same client retries a result cut before anything was handed out.
    const bytes = await lastValueFrom(client.sound.resultStream(8).pipe(reduce((n, c) => n + c.byteLength, 0)));
    expect(bytes).toBe(WAV.length);
    expect(resultCalls).toBe(3);
  });

  it('an error answer whose body stalls past timeoutMs: a TimeoutError (not a connection failure); control: the same answer in full is an ApiError', async () => {
    let stall = true;
    const server = await serve((req, res) => {
      req.resume();
      res.writeHead(500, { 'content-type': 'application/json' });
      if (stall) res.write('{"error":"bro'); // then silence
      else res.end('{"error":"broken"}');
    });
    const client = clientOn(server.baseUrl, { timeoutMs: 200 });
    const error = await rejectionOf(lastValueFrom(client.sound.status('t1')));
    expect(error).toBeInstanceOf(TimeoutError);
    expect((error as Error).message).toContain('timed out after 200 ms');
    stall = false;
    // (the default timeoutMs here: on a busy machine 200 ms can pass before a whole answer)
    const control = await rejectionOf(lastValueFrom(clientOn(server.baseUrl).sound.status('t1')));
    expect(control).toBeInstanceOf(ApiError);
    expect(control).toMatchObject({ status: 500 });
  });
});

describe('result size and type', () => {
  /** A result server pumping `total` bytes (chunked unless `declare`), stopping when the client goes. */
  async function bigResult(total: number, declare: boolean): Promise<{ baseUrl: string; written: () => number; gone: () => boolean }> {
    let written = 0;
    let gone = false;
    const chunk = Buffer.alloc(64 * 1024, 1);
    const server = await serve((req, res) => {
      req.resume();
      res.on('close', () => {
        gone = true;
      });
      res.writeHead(200, { 'content-type': 'audio/wav', ...(declare ? { 'content-length': String(total) } : {}) });
      const pump = (): void => {
        while (!gone && written < total) {
          const piece = chunk.subarray(0, Math.min(chunk.length, total - written));
          written += piece.length;
          if (!res.write(piece)) {
            res.once('drain', pump);
            return;
          }
        }
        if (written >= total) res.end();
      };
      pump();
    });
    return { baseUrl: server.baseUrl, written: () => written, gone: () => gone };
  }

  for (const declare of [false, true]) {
    it(`a result past maxResponseBytes (${declare ? 'declared by content-length' : 'chunked'}): LimitExceededError naming it, reading stops`, async () => {
      const big = await bigResult(64 * 1024 * 1024, declare);
      const client = clientOn(big.baseUrl, { maxResponseBytes: 1024 * 1024 });
      const error = await rejectionOf(lastValueFrom(client.sound.result(7)));
      expect(error).toBeInstanceOf(LimitExceededError);
      expect(error).toMatchObject({ code: 'limit', option: 'maxResponseBytes', limit: 1024 * 1024 });
      expect((error as Error).message).toContain('maxResponseBytes');
      for (let waited = 0; !big.gone() && waited < 3000; waited += 20) await new Promise((r) => setTimeout(r, 20));
      expect(big.gone()).toBe(true);
      expect(big.written()).toBeLessThan(32 * 1024 * 1024);
    });
  }

  it('a chunked result of maxResponseBytes is whole; one byte more is refused, not cut to the limit (read as a Node stream, or through a given fetch)', async () => {
    const limit = 64 * 1024;
    for (const [size, options] of [limit, limit + 1].flatMap((n) => [[n, {}] as const, [n, { fetch: globalThis.fetch }] as const])) {
      const server = await serve((req, res) => {
        req.resume();
        res.writeHead(200, { 'content-type': 'audio/wav' });
        res.write(Buffer.alloc(size - 1, 7));
        res.end(Buffer.alloc(1, 9));
      });
      const answer = lastValueFrom(clientOn(server.baseUrl, { maxResponseBytes: limit, ...options }).sound.result(7));
      if (size === limit) expect((await answer).byteLength).toBe(limit);
      else expect(await rejectionOf(answer)).toBeInstanceOf(LimitExceededError);
    }
  });

  it('unsubscribing from resultStream midway closes its connection (the body is cancelled, not left open while it stalls)', async () => {
    let closed!: () => void;
    const connectionClosed = new Promise<void>((resolve) => (closed = resolve));
    const server = await serve((req, res) => {
      req.resume();
      res.on('close', () => closed());
      res.writeHead(200, { 'content-type': 'audio/wav' });
      res.write(Buffer.alloc(1024, 5)); // then silence: no chunk comes to end the reading
    });
    const first = await firstValueFrom(clientOn(server.baseUrl).sound.resultStream(7));
    expect(first.byteLength).toBeGreaterThan(0);
    await connectionClosed;
  });

  it('a content-length past maxResponseBytes is refused at the headers, before the body (here: a body that never comes)', async () => {
    let requests = 0;
    const server = await serve((req, res) => {
      req.resume();
      requests += 1;
      res.writeHead(200, { 'content-type': 'audio/wav', 'content-length': String(64 * 1024 * 1024) });
      res.write(Buffer.alloc(10, 1)); // then silence: reading the body would wait for timeoutMs
    });
    const client = clientOn(server.baseUrl, { maxResponseBytes: 1024 * 1024, timeoutMs: 20_000 });
    const error = await rejectionOf(lastValueFrom(client.sound.result(7)));
    expect(error).toBeInstanceOf(LimitExceededError);
    expect(error).toMatchObject({ option: 'maxResponseBytes', limit: 1024 * 1024 });
    expect(requests).toBe(1);
  });

  it('resultStream hands the result out in chunks (no limit, nothing collected); the same size in memory is refused', async () => {
    const big = await bigResult(3 * 1024 * 1024, false);
    const client = clientOn(big.baseUrl, { maxResponseBytes: 1024 * 1024 });
    const stats = await lastValueFrom(
      client.sound.resultStream(7).pipe(reduce((acc, c) => ({ chunks: acc.chunks + 1, bytes: acc.bytes + c.byteLength, largest: Math.max(acc.largest, c.byteLength) }), { chunks: 0, bytes: 0, largest: 0 })),
    );
    expect(stats.bytes).toBe(3 * 1024 * 1024);
    expect(stats.chunks).toBeGreaterThan(1);
    expect(stats.largest).toBeLessThan(1024 * 1024);
    const refused = await bigResult(3 * 1024 * 1024, false);
    expect(await rejectionOf(lastValueFrom(clientOn(refused.baseUrl, { maxResponseBytes: 1024 * 1024 }).sound.result(7)))).toBeInstanceOf(LimitExceededError);
  });

  it('a 200 problem+json body where audio is expected (a structured JSON type): ProtocolError with the service message', async () => {
    const server = await serve((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/problem+json' }).end('{"error":"quota exceeded"}');
    });
    const error = await rejectionOf(lastValueFrom(clientOn(server.baseUrl).sound.result(7)));
    expect(error).toBeInstanceOf(ProtocolError);
    expect((error as Error).message).toContain('JSON where audio was expected: quota exceeded');
  });

  it('an API key too short to cut out of a text: the text reflecting it is withheld whole; control: a long key is cut out', async () => {
    const server = await serve((req, res) => {
      req.resume();
      res.writeHead(500, { 'content-type': 'text/plain' }).end(`internal error for ${String(req.headers['x-api-key'])}`);
    });
    const short = 'k3y-7ch'; // 7 characters, under MIN_REDACTED_SECRET_LENGTH
    const shortKeyed = createClient({ apiKey: short, baseUrl: server.baseUrl, maxRetries: 0 });
    cleanups.push(() => shortKeyed.close());
    const error = await rejectionOf(lastValueFrom(shortKeyed.voices.list()));
    expect(error).toBeInstanceOf(ApiError);
    expect((error as Error).message).not.toContain(short);
    expect((error as Error).message).toContain('[text withheld: it could contain the API key]');
    expect(JSON.stringify((error as ApiError).body ?? null)).not.toContain(short);
    const control = await rejectionOf(lastValueFrom(clientOn(server.baseUrl).voices.list()));
    expect((control as Error).message).toContain('internal error for ***');
  });

  it('a 200 application/json body where audio is expected: ProtocolError with the service message, in both result shapes', async () => {
    const server = await serve((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' }).end(`{"error":"quota exceeded for ${KEY}"}`);
    });
    const client = clientOn(server.baseUrl);
    for (const call$ of [client.sound.result(7), client.sound.resultStream(7).pipe(toArray())] as Observable<unknown>[]) {
      const error = await rejectionOf(lastValueFrom(call$));
      expect(error).toBeInstanceOf(ProtocolError);
      expect((error as Error).message).toContain('JSON where audio was expected: quota exceeded');
      expect((error as Error).message).not.toContain(KEY);
    }
  });
});

describe('streams that stall after their headers', () => {
  it('ttsStream: number headers that are blank or not numbers read as absent (not 0 or NaN); control: numbers are read', async () => {
    const cases: [Record<string, string>, { sampleRate: number | undefined; creditsRequired: number | undefined }][] = [
      [{ 'x-sample-rate': '24000', 'x-credits-required': '3' }, { sampleRate: 24000, creditsRequired: 3 }],
      [{ 'x-sample-rate': '  ', 'x-credits-required': '' }, { sampleRate: undefined, creditsRequired: undefined }],
      [{ 'x-sample-rate': 'fast', 'x-credits-required': 'Infinity' }, { sampleRate: undefined, creditsRequired: undefined }],
    ];
    for (const [headers, expected] of cases) {
      const server = await serve((req, res) => {
        req.resume();
        res.writeHead(200, { 'content-type': 'audio/mpeg', ...headers }).end(Buffer.alloc(100, 1));
      });
      const chunks = await lastValueFrom(
        clientOn(server.baseUrl).ttsStream({ text: 'Hello there.', voice_id: 1, language: 'en-us', output_configuration: { format: 'mp3' } }).pipe(toArray()),
      );
      expect(chunks[0]).toMatchObject(expected);
    }
  });

  it('ttsStream: StreamIdleError after streamIdleTimeoutMs of silence, with the bytes received', async () => {
    const server = await serve((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'audio/mpeg', 'x-credits-required': '1' });
      res.write(Buffer.alloc(1000, 9)); // then silence
    });
    const client = clientOn(server.baseUrl, { streamIdleTimeoutMs: 200 });
    const chunks: number[] = [];
    const error = await new Promise<unknown>((resolve) =>
      client
        .ttsStream({ text: 'Hello there.', voice_id: 1, language: 'en-us', output_configuration: { format: 'mp3' } })
        .subscribe({ next: (c) => chunks.push(c.bytes.byteLength), error: resolve, complete: () => resolve(undefined) }),
    );
    expect(chunks).toEqual([1000]);
    expect(error).toBeInstanceOf(StreamIdleError);
    expect(error).toMatchObject({ code: 'timeout', retryable: true, idleMs: 200, receivedBytes: 1000, received: '', endpoint: 'POST /tts-stream' });
    expect((error as Error).message).toContain('streamIdleTimeoutMs');
  });

  it('ttsStream: timeoutMs bounds the wait for the headers only, not the whole stream; control: a silent server times out with it', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const server = await serve((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'audio/mpeg' });
      res.write(Buffer.alloc(1000, 9));
      void released.then(() => res.end(Buffer.alloc(500, 9)));
    });
    const client = clientOn(server.baseUrl, { timeoutMs: 1_000 });
    let received = 0;
    let firstChunk!: () => void;
    const started = new Promise<void>((resolve) => (firstChunk = resolve));
    const done = new Promise<unknown>((resolve) =>
      client.ttsStream({ text: 'Hello there.', voice_id: 1, language: 'en-us', output_configuration: { format: 'mp3' } }).subscribe({
        next: (c) => {
          received += c.bytes.byteLength;
          firstChunk();
        },
        error: resolve,
        complete: () => resolve('complete'),
      }),
    );
    await started;
    // The control: a call started after the stream, to a server that never answers its
    // headers, times out with the same timeoutMs; once it has, the stream is past it too.
    const silent = await serve((req) => req.resume());
    const control = await rejectionOf(lastValueFrom(clientOn(silent.baseUrl, { timeoutMs: 1_000 }).voices.list()));
    expect(control).toBeInstanceOf(TimeoutError);
    release();
    expect(await done).toBe('complete');
    expect(received).toBe(1500);
  });

  it('translateStream: StreamIdleError carrying the text received so far', async () => {
    const server = await serve((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: Hallo\n\ndata:  Welt\n\n'); // then silence
    });
    const client = clientOn(server.baseUrl, { streamIdleTimeoutMs: 200 });
    const pieces: string[] = [];
    const error = await new Promise<unknown>((resolve) =>
      client
        .translateStream({ text: 'Hello world', source_language: 'en-us', target_language: 'de-de' })
        .subscribe({ next: (p) => pieces.push(p), error: resolve, complete: () => resolve(undefined) }),
    );
    expect(pieces).toEqual(['Hallo', ' Welt']);
    expect(error).toBeInstanceOf(StreamIdleError);
    expect(error).toMatchObject({ received: 'Hallo Welt', endpoint: 'POST /translation/stream' });
  });

  it('translateStream: chunks arriving more often than the idle limit keep the stream alive to its end', async () => {
    const server = await serve((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      let n = 0;
      const tick = setInterval(() => {
        n += 1;
        res.write(`data: ${n}\n\n`);
        if (n === 6) {
          clearInterval(tick);
          res.end();
        }
      }, 20);
      res.on('close', () => clearInterval(tick));
    });
    const client = clientOn(server.baseUrl, { streamIdleTimeoutMs: 2_000 });
    const pieces = await lastValueFrom(
      client.translateStream({ text: 'Hello world', source_language: 'en-us', target_language: 'de-de' }).pipe(toArray()),
    );
    expect(pieces).toEqual(['1', '2', '3', '4', '5', '6']);
  });
});
