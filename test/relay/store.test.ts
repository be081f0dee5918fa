/**
 * The relay's budget stores: the same rules for the memory store and the Redis store (a
 * real redis-server started here on a free port in a temp dir), in the store's own clock;
 * two relays with their own Redis connections keep one budget per visitor (with a control:
 * two memory stores do not); a store that does not answer refuses (1013), nothing upstream.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import { attachLiveRelay, memoryRelayStore, redisRelayStore, type LiveRelay, type LiveRelayOptions, type RelayStore } from '../../src/relay/index.js';
import { freePort, startRedis, type RedisServer } from '../setup/redis.js';
import { requireTool } from '../setup/tools.js';

const REDIS = requireTool('redis-server', 'the relay Redis store (test/relay/store.test.ts)');
const START = JSON.stringify({ type: 'session.start', voice_id: 1, output_format: 'wav' });

let dir: string;
let redis: RedisServer | undefined;
let emulator: Emulator;
const opened: RelayStore[] = [];
/** A Redis store on the test's server, with a prefix of its own per test (so tests do not share counts). */
let prefixes = 0;
const redisStore = (prefix = `t${prefixes++}:`): RelayStore => {
  const store = redisRelayStore(redis!.url, { prefix });
  opened.push(store);
  return store;
};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rxvoice-relay-store-'));
  emulator = await startEmulator({ synth: 'tone', toneWordSeconds: 0.02 });
  if (REDIS) redis = await startRedis(REDIS, dir);
});
afterAll(async () => {
  await Promise.all(opened.map((store) => store.close?.()));
  await redis?.stop();
  await emulator?.close();
  await rm(dir, { recursive: true, force: true });
});

const stores: Array<[string, () => RelayStore]> = [
  ['memory', memoryRelayStore],
  ['redis', () => redisStore()],
];

describe.each(stores)('%s store', (name, make) => {
  it.skipIf(name === 'redis' && !REDIS)('characters: a sliding minute, all or nothing, per bucket', async () => {
    const store = make();
    const t0 = 10 * 60_000; // the start of a window
    expect(await store.take('a', 60, 100, 60_000, t0)).toBe(true);
    expect(await store.take('a', 41, 100, 60_000, t0 + 1_000)).toBe(false); // 101: refused, and not counted
    expect(await store.take('a', 40, 100, 60_000, t0 + 2_000)).toBe(true); // 100
    expect(await store.take('b', 100, 100, 60_000, t0 + 2_000)).toBe(true); // another bucket
    // half way through the next window, half of the last one still counts: 50 used
    expect(await store.take('a', 51, 100, 60_000, t0 + 90_000)).toBe(false);
    expect(await store.take('a', 50, 100, 60_000, t0 + 90_000)).toBe(true);
    // two windows later nothing is left of it
    expect(await store.take('a', 100, 100, 60_000, t0 + 180_000)).toBe(true);
  });

  it.skipIf(name === 'redis' && !REDIS)('sessions: at most max at once, freed by release or when not renewed', async () => {
    const store = make();
    expect(await store.acquire('c', 's1', 2, 1_000, 0)).toBe(true);
    expect(await store.acquire('c', 's2', 2, 1_000, 0)).toBe(true);
    expect(await store.acquire('c', 's3', 2, 1_000, 10)).toBe(false);
    expect(await store.acquire('d', 's4', 2, 1_000, 10)).toBe(true); // another client
    await store.release('c', 's1');
    expect(await store.acquire('c', 's3', 2, 1_000, 20)).toBe(true);
    await store.renew([{ client: 'c', session: 's3' }], 1_000, 900); // s3 until 1900, s2 until 1000
    expect(await store.acquire('c', 's5', 2, 1_000, 1_500)).toBe(true); // s2 expired (a crashed relay's slot)
    expect(await store.acquire('c', 's6', 2, 1_000, 1_500)).toBe(false);
  });
});

interface Site {
  relay: LiveRelay;
  url: string;
  close(): Promise<void>;
}
async function site(options: Partial<LiveRelayOptions>): Promise<Site> {
  const server: Server = createServer((_, res) => res.writeHead(404).end());
  const relay = attachLiveRelay(server, {
    path: '/speech',
    apiKey: emulator.apiKey,
    warn: () => undefined,
    baseUrl: emulator.baseUrl,
    authorize: (request) => `user:${String(request.headers['x-user'])}`,
    ...options,
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    relay,
    url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}/speech`,
    close: async () => {
      await relay.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** One session of `user` on `url` saying `text`; resolves with how it closed. */
function speakOnce(url: string, user: string, text: string): Promise<{ code: number; reason: string }> {
  const ws = new WebSocket(url, { headers: { 'x-user': user } });
  ws.on('error', () => undefined);
  ws.on('open', () => {
    ws.send(START);
    ws.send(JSON.stringify({ type: 'text.chunk', text }));
    ws.send(JSON.stringify({ type: 'text.done' }));
  });
  return new Promise((resolve) => ws.once('close', (code: number, reason: Buffer) => resolve({ code, reason: String(reason) })));
}

describe('budgets across relays', () => {
  const sixty = 'Sixty characters of text, spoken in one go by this visitor!!';

  it.skipIf(!REDIS)('two relays with their own Redis connections keep one budget per visitor; two memory stores (control) do not', async () => {
    expect(sixty).toHaveLength(60);
    for (const shared of [true, false]) {
      const prefix = `fleet${prefixes++}:`;
      const store = (): RelayStore => (shared ? redisStore(prefix) : memoryRelayStore());
      const limits = { charactersPerMinute: 100 };
      const one = await site({ store: store(), limits });
      const two = await site({ store: store(), limits });
      try {
        expect(await speakOnce(one.url, 'ann', sixty)).toMatchObject({ code: 1000 });
        const second = await speakOnce(two.url, 'ann', sixty); // 120 > 100 when the count is shared
        if (shared) expect(second).toEqual({ code: 4429, reason: 'budget: over 100 characters per minute for this client' });
        else expect(second.code).toBe(1000);
        // another visitor is not touched by ann's budget
        expect((await speakOnce(two.url, 'bob', sixty)).code).toBe(1000);
      } finally {
        await one.close();
        await two.close();
      }
    }
  });

  it.skipIf(!REDIS)('sessions at once are counted across relays too', async () => {
    const prefix = `fleet${prefixes++}:`;
    const one = await site({ store: redisStore(prefix), limits: { sessionsPerClient: 1 } });
    const two = await site({ store: redisStore(prefix), limits: { sessionsPerClient: 1 } });
    try {
      const held = new WebSocket(one.url, { headers: { 'x-user': 'cat' } });
      held.on('error', () => undefined);
      await new Promise((resolve) => held.once('open', resolve));
      held.send(START);
      await expect.poll(() => one.relay.stats().upstreams).toBe(1); // admitted
      expect(await speakOnce(two.url, 'cat', 'Hello.')).toEqual({ code: 4429, reason: 'budget: over 1 sessions at once for this client' });
      held.close();
      await new Promise((resolve) => held.once('close', resolve));
      await expect.poll(async () => (await speakOnce(two.url, 'cat', 'Hello.')).code).toBe(1000); // its slot was released
    } finally {
      await one.close();
      await two.close();
    }
  });

  it('a store that does not answer refuses with 1013 and opens nothing upstream (fails closed)', async () => {
    const silent: RelayStore = {
      take: () => new Promise(() => undefined),
      acquire: () => new Promise(() => undefined),
      renew: async () => undefined,
      release: async () => undefined,
    };
    const dead = await site({ store: silent, limits: { storeTimeoutMs: 200 } });
    const before = emulator.requests.filter((r) => r.method === 'UPGRADE').length;
    try {
      expect(await speakOnce(dead.url, 'dan', 'Hello.')).toEqual({ code: 1013, reason: 'budget store unavailable, try again later' });
      expect(emulator.requests.filter((r) => r.method === 'UPGRADE').length).toBe(before);
      expect(dead.relay.stats().refused.store).toBe(1);
    } finally {
      await dead.close();
    }
    // a Redis address where nothing listens: the same, within the store timeout
    if (REDIS) {
      const nowhere = redisRelayStore(`redis://127.0.0.1:${await freePort()}`);
      opened.push(nowhere);
      const down = await site({ store: nowhere, limits: { storeTimeoutMs: 500 } });
      try {
        expect((await speakOnce(down.url, 'dan', 'Hello.')).code).toBe(1013);
      } finally {
        await down.close();
      }
    }
  });
});
