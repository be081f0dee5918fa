/** Helpers of the reliability suite: a seeded RNG, leak checks, small hostile servers. */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket as WsSocket } from 'ws';
import { afterEach, beforeEach, expect } from 'vitest';
import { createClient, type ClientOptions, type RxVoiceClient } from '../../src/index.js';

/** A small seeded PRNG (mulberry32): the same seed gives the same run. */
export { mulberry32 as seededRandom } from '../../src/emulator/random.js';

/** An integer in [min, max]. */
export function randomInt(random: () => number, min: number, max: number): number {
  return min + Math.floor(random() * (max - min + 1));
}

/** Counts of the active resources by kind (`TCPSocketWrap`, `Timeout`, ...). */
export function activeResources(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const kind of process.getActiveResourcesInfo()) counts[kind] = (counts[kind] ?? 0) + 1;
  return counts;
}

const LEAK_KINDS = ['TCPSocketWrap', 'TCPServerWrap', 'Timeout', 'Immediate', 'PipeWrap', 'ProcessWrap'] as const;

/**
 * Wait (up to `withinMs`) until no resource kind of {@link LEAK_KINDS} counts more than in
 * `baseline`; returns what is left over (empty when nothing leaked).
 */
export async function leftovers(baseline: Record<string, number>, withinMs = 3000): Promise<Record<string, number>> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const now = activeResources();
    const extra: Record<string, number> = {};
    for (const kind of LEAK_KINDS) {
      const diff = (now[kind] ?? 0) - (baseline[kind] ?? 0);
      if (diff > 0) extra[kind] = diff;
    }
    if (Object.keys(extra).length === 0 || Date.now() > deadline) return extra;
    await new Promise<void>((resolve) => setTimeout(resolve, 25));
  }
}

/** A node:http server on port 0 with a handler; `close()` cuts every connection. */
export async function httpServer(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ baseUrl: string; server: Server; close(): Promise<void> }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A `ws` server on port 0 running `onConnection` per socket; `close()` terminates every client. */
export async function wsServer(
  onConnection: (socket: WsSocket, request: IncomingMessage) => void,
): Promise<{ wsUrl: string; close(): Promise<void>; closes: number[] }> {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', maxPayload: 256 * 1024 * 1024 });
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  const closes: number[] = [];
  wss.on('connection', (socket, request) => {
    socket.on('error', () => undefined);
    socket.on('close', (code) => closes.push(code));
    onConnection(socket, request);
  });
  const { port } = wss.address() as AddressInfo;
  return {
    wsUrl: `ws://127.0.0.1:${port}`,
    closes,
    close: () =>
      new Promise<void>((resolve) => {
        for (const client of wss.clients) client.terminate();
        wss.close(() => resolve());
      }),
  };
}

/** Run `tasks` with at most `limit` at once; resolves with their results in order. */
export async function mapLimit<T, R>(items: readonly T[], limit: number, task: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      results[index] = await task(items[index] as T, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/** The error an Observable-backed promise rejects with (fails when it resolves). */
export async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection, got a value');
}

/**
 * A WebSocket server without `ws`: answers the upgrade by hand and then hands over the
 * raw socket, so a test can write any frame bytes (a 100 MB length header, invalid UTF-8).
 */
export async function rawWsServer(
  onUpgraded: (socket: import('node:net').Socket) => void,
  options: { handshake?: boolean } = {},
): Promise<{ baseUrl: string; close(): Promise<void> }> {
  const { createHash } = await import('node:crypto');
  const sockets = new Set<import('node:net').Socket>();
  const server = createServer((_req, res) => res.writeHead(404).end());
  server.on('upgrade', (req: IncomingMessage, socket: import('node:net').Socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
    // http server sockets allow half-open connections: when the client ends, end too.
    socket.on('end', () => socket.destroy());
    if (options.handshake === false) return; // never answers
    const key = String(req.headers['sec-websocket-key'] ?? '');
    const accept = createHash('sha1').update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64');
    socket.write(
      `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`,
    );
    onUpgraded(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** An unmasked server-to-client frame header (FIN set) for `opcode` and a payload `length`. */
export function frameHeader(opcode: number, length: number): Buffer {
  if (length < 126) return Buffer.from([0x80 | opcode, length]);
  if (length < 65536) {
    const header = Buffer.alloc(4);
    header[0] = 0x80 | opcode;
    header[1] = 126;
    header.writeUInt16BE(length, 2);
    return header;
  }
  const header = Buffer.alloc(10);
  header[0] = 0x80 | opcode;
  header[1] = 127;
  header.writeBigUInt64BE(BigInt(length), 2);
  return header;
}

/** A whole unmasked text frame. */
export function textFrame(text: string): Buffer {
  const payload = Buffer.from(text, 'utf8');
  return Buffer.concat([frameHeader(0x1, payload.length), payload]);
}

/**
 * Per-test hygiene of a hostile suite: cleanups run after each test (last first), then
 * no socket or timer of the test may be left. `clientOn` makes a client with `key`, no
 * retries unless asked, closed after the test.
 */
export function hostileSuite(key: string): {
  cleanups: (() => Promise<void>)[];
  clientOn(baseUrl: string, options?: ClientOptions): RxVoiceClient;
} {
  const cleanups: (() => Promise<void>)[] = [];
  let baseline: Record<string, number>;
  beforeEach(() => {
    baseline = activeResources();
  });
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    // Every socket and timer of the test is gone once its servers are closed.
    expect(await leftovers(baseline)).toEqual({});
  });
  return {
    cleanups,
    clientOn(baseUrl, options = {}) {
      const client = createClient({ apiKey: key, baseUrl, maxRetries: 0, warn: () => undefined, ...options });
      cleanups.push(() => client.close());
      return client;
    },
  };
}
