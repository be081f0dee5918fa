/**
 * The client's default sender (`dispatcher-fetch.ts`): undici's `dispatcher.request`, its
 * answer handed on as a `Response`. Against a real server on port 0: the answer as `fetch`
 * gives it (status, reason, repeated headers, the body byte for byte, a 204 without body, a
 * redirect not followed); `content-length` on a text body; a body cancelled half-read closes
 * its socket (control: bodies read to the end leave theirs open); the abort
 * signal; and what still goes through `fetch` (a `FormData` body, `redirect: 'error'`, a
 * dispatcher without `request`), each with its control.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Agent } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import type { FetchLike } from '../../src/client/config.js';
import { lastValueFrom, take, toArray } from 'rxjs';
import { bodyBytes, cancelBody, readUpTo } from '../../src/client/body.js';
import { dispatcherFetch } from '../../src/client/dispatcher-fetch.js';

let server: Server | undefined;
let agent: Agent | undefined;
afterEach(async () => {
  await agent?.close();
  agent = undefined;
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

const BIG = Buffer.alloc(300_000, 0).map((_, i) => i % 251);

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
  socket: Socket;
}

/** A server of a few answers; `seen` lists each request it got, `closed` the sockets closed. */
async function serve(): Promise<{ url: string; seen: Seen[]; closed: Socket[] }> {
  const seen: Seen[] = [];
  const closed: Socket[] = [];
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString(), socket: req.socket });
      const path = (req.url ?? '').split('?')[0];
      if (path === '/big') {
        res.writeHead(201, 'Made Here', { 'content-type': 'audio/wav', 'set-cookie': ['a=1', 'b=2'], 'x-credits-required': '3' });
        res.end(BIG);
      } else if (path === '/bare') {
        res.writeHead(404, '').end();
      } else if (path === '/none') {
        res.writeHead(204).end();
      } else if (path === '/moved') {
        res.writeHead(307, { location: '/big' }).end('moved');
      } else {
        res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      }
    });
  });
  server.on('connection', (socket) => socket.on('close', () => closed.push(socket)));
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, closed };
}

/** The sender with a fallback that records its calls (and answers 599), on a fresh agent. */
function sender(): { send: FetchLike; fallbackCalls: string[] } {
  agent = new Agent({ keepAliveTimeout: 10_000 });
  const fallbackCalls: string[] = [];
  const fallback: FetchLike = async (input) => {
    fallbackCalls.push(input);
    return new Response(null, { status: 599 });
  };
  return { send: dispatcherFetch(fallback), fallbackCalls };
}

async function bytesOf(response: Response): Promise<Buffer> {
  return Buffer.from(await response.arrayBuffer());
}

describe('dispatcherFetch: the answer as fetch gives it', () => {
  it('status, reason, headers (a repeated one kept), the body byte for byte; the request as sent', async () => {
    const { url, seen } = await serve();
    const { send, fallbackCalls } = sender();
    const body = JSON.stringify({ text: 'héllo', voice_id: 1 });
    const response = await send(`${url}/big?x=1`, { method: 'POST', headers: { 'x-api-key': 'k', 'content-type': 'application/json' }, body, dispatcher: agent, redirect: 'manual' });
    expect(response.status).toBe(201);
    expect(response.ok).toBe(true);
    expect(response.statusText).toBe('Made Here');
    expect(response.headers.get('x-credits-required')).toBe('3');
    expect(response.headers.getSetCookie()).toEqual(['a=1', 'b=2']);
    expect((await bytesOf(response)).equals(BIG)).toBe(true);
    expect(fallbackCalls).toEqual([]);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ method: 'POST', url: '/big?x=1', body });
    expect(seen[0]?.headers['content-length']).toBe(String(Buffer.byteLength(body)));
    expect(seen[0]?.headers['transfer-encoding']).toBeUndefined();
    expect(seen[0]?.headers['x-api-key']).toBe('k');
  });

  it('a 204 has no body; a redirect is an answer like any other (not followed)', async () => {
    const { url, seen } = await serve();
    const { send } = sender();
    const none = await send(`${url}/none`, { method: 'GET', headers: {}, dispatcher: agent });
    expect(none.status).toBe(204);
    expect(none.body).toBeNull();
    const moved = await send(`${url}/moved`, { method: 'POST', headers: {}, body: '{}', dispatcher: agent, redirect: 'manual' });
    expect(moved.status).toBe(307);
    expect(moved.headers.get('location')).toBe('/big');
    expect((await bytesOf(moved)).toString()).toBe('moved');
    expect(seen.map((s) => s.url)).toEqual(['/none', '/moved']);
  });

  it('a status line without a reason gets the standard one (as fetch gives it)', async () => {
    const { url } = await serve();
    const { send } = sender();
    const bare = await send(`${url}/bare`, { method: 'GET', headers: {}, dispatcher: agent });
    expect(bare.status).toBe(404);
    expect(bare.statusText).toBe('Not Found');
    await bare.arrayBuffer();
  });

  it('a body cancelled half-read closes its socket; control: bodies read to the end leave their sockets open', async () => {
    const { url, seen, closed } = await serve();
    const { send } = sender();
    for (let i = 0; i < 3; i++) await bytesOf(await send(`${url}/big`, { method: 'GET', headers: {}, dispatcher: agent }));
    expect(new Set(seen.map((s) => s.socket)).size).toBeLessThan(3); // kept alive and used again
    expect(closed).toEqual([]);
    const half = await send(`${url}/big`, { method: 'GET', headers: {}, dispatcher: agent });
    const reader = half.body!.getReader();
    expect((await reader.read()).done).toBe(false);
    await reader.cancel();
    await expect.poll(() => closed.length, { timeout: 5_000 }).toBe(1);
    expect(closed[0] === seen[3]?.socket).toBe(true);
  });

  it('the abort signal ends the call with an abort', async () => {
    const { url } = await serve();
    const { send } = sender();
    const controller = new AbortController();
    controller.abort();
    await expect(send(`${url}/big`, { method: 'GET', headers: {}, dispatcher: agent, signal: controller.signal })).rejects.toMatchObject({ name: expect.stringMatching(/Abort/) });
  });
});

describe('dispatcherFetch: the readers of body.ts read the Node stream directly', () => {
  it('bodyBytes: the bytes whole, as plain Uint8Arrays; readUpTo: the same bytes', async () => {
    const { url } = await serve();
    const { send } = sender();
    const chunks = await lastValueFrom(bodyBytes(await send(`${url}/big`, { method: 'GET', headers: {}, dispatcher: agent })).pipe(toArray()));
    expect(chunks.every((c) => c.constructor === Uint8Array)).toBe(true);
    expect(Buffer.concat(chunks).equals(BIG)).toBe(true);
    const { bytes, over } = await readUpTo(await send(`${url}/big`, { method: 'GET', headers: {}, dispatcher: agent }), 1_000_000);
    expect(over).toBe(false);
    expect(Buffer.from(bytes).equals(BIG)).toBe(true);
  });

  it('an early unsubscribe, a read past its limit and cancelBody each close their socket; control: whole reads close none', async () => {
    const { url, seen, closed } = await serve();
    const { send } = sender();
    const get = () => send(`${url}/big`, { method: 'GET', headers: {}, dispatcher: agent });
    await lastValueFrom(bodyBytes(await get()).pipe(toArray()));
    await readUpTo(await get(), 1_000_000);
    expect(closed).toEqual([]);
    await lastValueFrom(bodyBytes(await get()).pipe(take(1)));
    await expect.poll(() => closed.length, { timeout: 5_000 }).toBe(1);
    const limited = await readUpTo(await get(), 1000);
    expect(limited.over).toBe(true);
    expect(Buffer.from(limited.bytes).equals(BIG.subarray(0, 1000))).toBe(true);
    await expect.poll(() => closed.length, { timeout: 5_000 }).toBe(2);
    await cancelBody(await get());
    await expect.poll(() => closed.length, { timeout: 5_000 }).toBe(3);
    expect(seen).toHaveLength(5);
  });
});

describe('dispatcherFetch: what still goes through fetch', () => {
  it('a FormData body, redirect "error", and a dispatcher without request; control: the same call with a text body does not', async () => {
    const { url, seen } = await serve();
    const { send, fallbackCalls } = sender();
    const form = new FormData();
    form.set('a', 'b');
    expect((await send(`${url}/form`, { method: 'POST', headers: {}, body: form, dispatcher: agent, redirect: 'error' })).status).toBe(599);
    expect((await send(`${url}/err`, { method: 'POST', headers: {}, body: '{}', dispatcher: agent, redirect: 'error' })).status).toBe(599);
    expect((await send(`${url}/shim`, { method: 'POST', headers: {}, body: '{}', dispatcher: {}, redirect: 'manual' })).status).toBe(599);
    expect((await send(`${url}/none`, { method: 'POST', headers: {}, body: '{}', redirect: 'manual' })).status).toBe(599);
    expect(fallbackCalls).toEqual([`${url}/form`, `${url}/err`, `${url}/shim`, `${url}/none`]);
    expect(seen).toEqual([]);
    // control
    expect((await send(`${url}/text`, { method: 'POST', headers: {}, body: '{}', dispatcher: agent, redirect: 'manual' })).status).toBe(200);
    expect(seen.map((s) => s.url)).toEqual(['/text']);
    expect(fallbackCalls).toHaveLength(4);
  });
});
