/**
 * The Redis fleet store holds only what exists, against a real redis-server (started here
 * on a free port in a temp dir) and the emulator:
 * - Redis stalled (SIGSTOP) while a visitor connects: the claims time out (1013, as
 *   designed); when Redis wakes the queued claims do run (control: its command count), yet
 *   none of them holds a slot: the visitor is admitted at once.
 * - Redis restarted empty mid-session (control: it holds no key after the restart): the
 *   relay writes back the sessions it holds and their characters before it answers again,
 *   so the visitor still has 4 sessions and 4000 characters of its minute: a fifth session
 *   is refused 4429, and so is text over the rest of the minute.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { WebSocket, type RawData } from 'ws';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import { attachLiveRelay, redisRelayStore, type LiveRelay, type LiveRelayOptions, type RelayStore } from '../../src/relay/index.js';
import { startRedis, type RedisServer } from '../setup/redis.js';
import { requireTool } from '../setup/tools.js';

const REDIS = requireTool('redis-server', 'the relay fleet store (test/relay/fleet-store.test.ts)');
const START = JSON.stringify({ type: 'session.start', voice_id: 1, output_format: 'wav' });

let dir: string;
let redis: RedisServer | undefined;
let emulator: Emulator;
const stores: RelayStore[] = [];
const clients: Redis[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rxvoice-fleet-store-'));
  emulator = await startEmulator({ synth: 'tone', toneWordSeconds: 0.01 });
  if (REDIS) redis = await startRedis(REDIS, dir);
});
afterAll(async () => {
  await Promise.all(stores.map((store) => store.close?.()));
  for (const client of clients) client.disconnect();
  if (redis !== undefined) process.kill(redis.pid, 'SIGCONT');
  await redis?.stop();
  await emulator?.close();
  await rm(dir, { recursive: true, force: true });
});

/** A direct connection to the test's Redis (to read what it holds). */
function direct(): Redis {
  const client = new Redis(redis!.url, { maxRetriesPerRequest: 1, lazyConnect: false });
  client.on('error', () => undefined);
  clients.push(client);
  return client;
}

/** How many scripts Redis has run (`EVAL` and `EVALSHA`). */
async function scriptsRun(client: Redis): Promise<number> {
  const info = await client.info('commandstats');
  return [...info.matchAll(/^cmdstat_eval(?:sha)?:calls=(\d+)/gm)].reduce((sum, match) => sum + Number(match[1]), 0);
}

async function site(options: Partial<LiveRelayOptions>): Promise<{ relay: LiveRelay; url: string; close(): Promise<void> }> {
  const server = createServer((_, res) => res.writeHead(404).end());
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

/** A browser session of `user`: its frames as they come, and how it closed. */
interface Visit {
  ws: WebSocket;
  types: string[];
  closed: Promise<{ code: number; reason: string }>;
}
function visit(url: string, user: string, frames: string[]): Visit {
  const ws = new WebSocket(url, { headers: { 'x-user': user } });
  const types: string[] = [];
  ws.on('error', () => undefined);
  ws.on('open', () => frames.forEach((frame) => ws.send(frame)));
  ws.on('message', (data: RawData, isBinary: boolean) => {
    if (!isBinary) types.push((JSON.parse(String(data)) as { type: string }).type);
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.once('close', (code: number, reason: Buffer) => resolve({ code, reason: String(reason) })),
  );
  return { ws, types, closed };
}
const chunk = (text: string): string => JSON.stringify({ type: 'text.chunk', text });
const DONE = JSON.stringify({ type: 'text.done' });
/** A whole session saying `text`; resolves with how it closed. */
const speakOnce = (url: string, user: string, text: string): Promise<{ code: number; reason: string }> =>
  visit(url, user, [START, chunk(text), DONE]).closed;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(!REDIS)('redisRelayStore holds only what exists', () => {
  it('Redis stalled 3 s while a visitor connects: refused 1013, and the claims that land late hold no slot', async () => {
    const store = redisRelayStore(redis!.url, { prefix: 'stall:' });
    stores.push(store);
    const relay = await site({ store, limits: { storeTimeoutMs: 1_000, sessionsPerClient: 4 } });
    const redisDirect = direct();
    try {
      expect((await speakOnce(relay.url, 'eve', 'Hello.')).code).toBe(1000); // the store's connection is up
      const before = await scriptsRun(redisDirect);
      process.kill(redis!.pid, 'SIGSTOP');
      const stalledAt = Date.now();
      let refused: Array<{ code: number; reason: string }>;
      try {
        refused = await Promise.all([1, 2, 3, 4].map(() => speakOnce(relay.url, 'eve', 'Hello.')));
        await sleep(3_000 - (Date.now() - stalledAt));
      } finally {
        process.kill(redis!.pid, 'SIGCONT');
      }
      expect(refused).toEqual(Array(4).fill({ code: 1013, reason: 'budget store unavailable, try again later' }));
      expect(relay.relay.stats().refused.store).toBe(4);
      // control: the four claims queued during the stall did run once Redis woke
      await expect.poll(() => scriptsRun(redisDirect), { timeout: 10_000 }).toBeGreaterThanOrEqual(before + 4);
      // ... yet none holds a slot: the visitor has all 4 again, at once
      const four = [1, 2, 3, 4].map(() => visit(relay.url, 'eve', [START]));
      await expect.poll(() => relay.relay.stats().upstreams, { timeout: 10_000 }).toBe(4);
      for (const held of four) held.ws.close();
      await Promise.all(four.map((held) => held.closed));
    } finally {
      await relay.close();
    }
  });

  it('a renewal writes back a live slot Redis lost; a released one stays released (control: a second store sees both)', async () => {
    const one = redisRelayStore(redis!.url, { prefix: 'renew:' });
    const two = redisRelayStore(redis!.url, { prefix: 'renew:' });
    stores.push(one, two);
    const now = Date.now();
    expect(await one.acquire('hal', 's1', 2, 60_000, now)).toBe(true);
    expect(await one.acquire('hal', 's2', 2, 60_000, now)).toBe(true);
    expect(await two.acquire('hal', 's3', 2, 60_000, now)).toBe(false); // control: both slots are seen
    await one.release('hal', 's2');
    await direct().flushall(); // Redis loses everything
    expect(await two.acquire('hal', 's3', 2, 60_000, now + 1)).toBe(true); // nothing held now: s3 takes one
    await one.renew([{ client: 'hal', session: 's1' }, { client: 'hal', session: 's2' }], 60_000, now + 2);
    // s1 is back (with s3 the client is full); s2, released, was not written back
    expect(await two.acquire('hal', 's4', 2, 60_000, now + 3)).toBe(false);
    await two.release('hal', 's3');
    expect(await two.acquire('hal', 's4', 2, 60_000, now + 4)).toBe(true);
  });

  it('Redis restarted empty mid-session: the relay writes back its sessions and their characters', async () => {
    const store = redisRelayStore(redis!.url, { prefix: 'restart:' });
    stores.push(store);
    const relay = await site({ store, limits: { sessionsPerClient: 4, charactersPerMinute: 5000 } });
    const thousand = `${'Word '.repeat(199)}done.`; // 1000 characters, one sentence
    expect(thousand).toHaveLength(1000);
    const held: Visit[] = [];
    try {
      for (let i = 0; i < 4; i++) held.push(visit(relay.url, 'fay', [START, chunk(thousand)]));
      // each chunk was counted and forwarded: the service started speaking it
      await expect.poll(() => held.every((v) => v.types.includes('segment.start')), { timeout: 20_000 }).toBe(true);

      await redis!.stop();
      redis = await startRedis(REDIS!, dir, redis!.port);
      const redisDirect = direct();
      expect(await redisDirect.dbsize()).toBe(0); // control: it came back empty

      // the store reconnects: another visitor is served (this also shows the store works again)
      await expect.poll(async () => (await speakOnce(relay.url, 'gus', 'Hello.')).code, { timeout: 15_000 }).toBe(1000);
      // fay still holds 4 sessions ...
      expect(await speakOnce(relay.url, 'fay', 'Hello.')).toEqual({ code: 4429, reason: 'budget: over 4 sessions at once for this client' });
      // ... and has spent 4000 of her 5000 characters this minute (however much of it lies in the
      // previous fixed window): one session ends, and a new one may not say 4000 more
      held[0]!.ws.close();
      await held[0]!.closed;
      await expect.poll(() => relay.relay.stats().sessions, { timeout: 10_000 }).toBe(3);
      const over = visit(relay.url, 'fay', [START, chunk(thousand)]);
      // control: it was admitted, and its first 1000 characters (5000 this minute) were within budget
      await expect.poll(() => over.types.includes('segment.start'), { timeout: 20_000 }).toBe(true);
      for (let i = 0; i < 3; i++) over.ws.send(chunk(thousand));
      expect(await over.closed).toEqual({ code: 4429, reason: 'budget: over 5000 characters per minute for this client' });
    } finally {
      for (const v of held) v.ws.close();
      await relay.close();
    }
  });
});
