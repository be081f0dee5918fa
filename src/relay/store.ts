/**
 * Where a relay keeps its visitors' counts (characters spent in the last minute, sessions
 * open), so that several relay processes can keep one budget: in memory by default
 * ({@link memoryRelayStore}), or in Redis ({@link redisRelayStore}).
 */
import { RxVoiceError } from '../core/errors.js';

/**
 * The counts a relay keeps per client. Every method answers through a promise; the relay
 * waits at most `limits.storeTimeoutMs` for it, and a failure or a late answer refuses
 * what was asked (the relay fails closed). `now` is the relay's clock, in ms.
 */
export interface RelayStore {
  /**
   * Adds `amount` to the counter `bucket` when its total over the last `windowMs` (a
   * sliding window: the current fixed window plus the previous one, weighted by how much
   * of it still lies within `windowMs`) stays at most `limit`; resolves whether it did.
   * All or nothing.
   */
  take(bucket: string, amount: number, limit: number, windowMs: number, now: number): Promise<boolean>;
  /**
   * Takes one of `max` session slots of `client` for session `session` until `now + ttlMs`
   * (the relay renews it while the session lives); resolves false when all are taken.
   */
  acquire(client: string, session: string, max: number, ttlMs: number, now: number): Promise<boolean>;
  /** Extends the slots of live sessions to `now + ttlMs`. */
  renew(slots: ReadonlyArray<{ client: string; session: string }>, ttlMs: number, now: number): Promise<void>;
  /** Frees a slot taken with `acquire`. */
  release(client: string, session: string): Promise<void>;
  /** Frees what the store holds (a connection it opened); the relay does not call it. */
  close?(): Promise<void>;
}

/** The weight of the previous fixed window in a sliding window at `now`. */
function previousWeight(now: number, windowMs: number): number {
  return 1 - (now % windowMs) / windowMs;
}

/**
 * The counts in this process's memory (the default store): a relay in one process needs
 * nothing else. Entries of clients idle for two windows (or whose slots all expired) are
 * swept, so memory follows the clients active now.
 */
export function memoryRelayStore(): RelayStore {
  const windows = new Map<string, { slot: number; current: number; previous: number; windowMs: number }>();
  const slots = new Map<string, Map<string, number>>();
  let lastSweep = 0;

  function sweep(now: number): void {
    if (now - lastSweep < 10_000) return;
    lastSweep = now;
    for (const [bucket, entry] of windows) if (Math.floor(now / entry.windowMs) > entry.slot + 1) windows.delete(bucket);
    for (const [client, held] of slots) {
      for (const [session, until] of held) if (until <= now) held.delete(session);
      if (held.size === 0) slots.delete(client);
    }
  }

  return {
    take: async (bucket, amount, limit, windowMs, now) => {
      sweep(now);
      const slot = Math.floor(now / windowMs);
      let entry = windows.get(bucket);
      if (entry === undefined || entry.slot < slot - 1 || entry.windowMs !== windowMs) entry = { slot, current: 0, previous: 0, windowMs };
      else if (entry.slot === slot - 1) entry = { slot, current: 0, previous: entry.current, windowMs };
      windows.set(bucket, entry);
      if (entry.current + entry.previous * previousWeight(now, windowMs) + amount > limit) return false;
      entry.current += amount;
      return true;
    },
    acquire: async (client, session, max, ttlMs, now) => {
      sweep(now);
      const held = slots.get(client) ?? new Map<string, number>();
      for (const [id, until] of held) if (until <= now) held.delete(id);
      if (!held.has(session) && held.size >= max) return false;
      held.set(session, now + ttlMs);
      slots.set(client, held);
      return true;
    },
    renew: async (list, ttlMs, now) => {
      for (const { client, session } of list) {
        const held = slots.get(client);
        if (held?.has(session) === true) held.set(session, now + ttlMs);
      }
    },
    release: async (client, session) => {
      const held = slots.get(client);
      held?.delete(session);
      if (held?.size === 0) slots.delete(client);
    },
  };
}

/** What {@link redisRelayStore} needs of a Redis client: `eval` (an ioredis `Redis` has it). */
export interface RedisEvalClient {
  /** Runs a Lua `script` with `numberOfKeys` keys first in `args`, then the other arguments (Redis `EVAL`). */
  eval(script: string, numberOfKeys: number, ...args: Array<string | number>): Promise<unknown>;
}

/** The connection the store opens itself (an ioredis `Redis`). */
interface OwnConnection extends RedisEvalClient {
  on(event: 'error', listener: (error: Error) => void): unknown;
  disconnect(): void;
}

/** Options of {@link redisRelayStore}. */
export interface RedisRelayStoreOptions {
  /** Prefix of every key the store writes. Default `'rxvoice:relay:'`. */
  prefix?: string;
}

// KEYS: current window, previous window. ARGV: amount, limit, weight of the previous window, expiry ms.
const TAKE = `
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
local previous = tonumber(redis.call('GET', KEYS[2]) or '0')
if current + previous * tonumber(ARGV[3]) + tonumber(ARGV[1]) > tonumber(ARGV[2]) then return 0 end
redis.call('INCRBY', KEYS[1], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1`;
// KEYS: the client's slots (a sorted set, score = held until). ARGV: session, max, now, until, expiry ms.
const ACQUIRE = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[3])
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) and redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[4], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 1`;
// KEYS: the client's slots. ARGV: session, until, expiry ms.
const RENEW = `
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
end
return 1`;

/**
 * Counts in Redis, shared by every relay process that uses the same Redis and `prefix`:
 * a fleet of relays keeps one budget per client. Each check-and-add is one Lua script
 * (atomic); every key expires on its own (character windows after two windows, slots of
 * a crashed relay after their `ttlMs`), so nothing piles up.
 *
 * `redis` is a `redis://` address (the store connects with ioredis, an optional peer
 * dependency, on first use, and `close()` disconnects it) or a client you made (an ioredis
 * `Redis`, or anything with the same `eval`; you close it).
 *
 * ## Example
 * ```ts
 * import { createServer } from 'node:http';
 * import { attachLiveRelay, redisRelayStore } from 'rxvoice/relay';
 *
 * const server = createServer();
 * attachLiveRelay(server, { path: '/speech', store: redisRelayStore('redis://127.0.0.1:6379') });
 * ```
 *
 * @param redis A `redis://` (or `rediss://`) address, or a Redis client.
 * @param options `prefix` of the keys.
 * @return The store, for the relay's `store` option.
 */
export function redisRelayStore(redis: string | RedisEvalClient, options: RedisRelayStoreOptions = {}): RelayStore {
  const prefix = options.prefix ?? 'rxvoice:relay:';
  let client: Promise<OwnConnection> | undefined;
  const connect = (): Promise<RedisEvalClient> => {
    if (typeof redis !== 'string') return Promise.resolve(redis);
    client ??= loadIoredis().then((Redis) => {
      const connection = new Redis(redis, { maxRetriesPerRequest: 1, enableAutoPipelining: true });
      // a lost connection fails the calls waiting on it (the relay then refuses, 1013); ioredis reconnects
      connection.on('error', () => undefined);
      return connection;
    });
    return client;
  };
  const run = async (script: string, keys: string[], args: Array<string | number>): Promise<unknown> =>
    (await connect()).eval(script, keys.length, ...keys, ...args);
  const slotsKey = (name: string): string => `${prefix}slots:${name}`;

  return {
    take: async (bucket, amount, limit, windowMs, now) => {
      const slot = Math.floor(now / windowMs);
      const key = (n: number): string => `${prefix}window:${bucket}:${windowMs}:${n}`;
      return (await run(TAKE, [key(slot), key(slot - 1)], [amount, limit, previousWeight(now, windowMs), windowMs * 2])) === 1;
    },
    acquire: async (name, session, max, ttlMs, now) =>
      (await run(ACQUIRE, [slotsKey(name)], [session, max, now, now + ttlMs, ttlMs * 2])) === 1,
    renew: async (list, ttlMs, now) => {
      await Promise.all(list.map(({ client: name, session }) => run(RENEW, [slotsKey(name)], [session, now + ttlMs, ttlMs * 2])));
    },
    release: async (name, session) => {
      await run(`redis.call('ZREM', KEYS[1], ARGV[1]) return 1`, [slotsKey(name)], [session]);
    },
    close: async () => {
      const made = client;
      client = undefined;
      if (made !== undefined) (await made).disconnect();
    },
  };
}

type IoredisConstructor = new (address: string, options: Record<string, unknown>) => OwnConnection;

async function loadIoredis(): Promise<IoredisConstructor> {
  const specifier = 'ioredis';
  try {
    const module = (await import(specifier)) as { default?: unknown; Redis?: unknown };
    return (module.Redis ?? module.default) as IoredisConstructor;
  } catch (error) {
    throw new RxVoiceError('config', 'redisRelayStore with an address needs the optional package ioredis (npm install ioredis)', { cause: error });
  }
}
