/**
 * Where a relay keeps its visitors' counts (characters spent in the last minute, sessions
 * open), so that several relay processes can keep one budget: in memory by default
 * ({@link memoryRelayStore}), or in Redis ({@link redisRelayStore}).
 */
import { randomUUID } from 'node:crypto';
import { RxVoiceError } from '../core/errors.js';
import { loadIoredis } from '../core/ioredis.js';

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

/** How long a store's "alive" marker lives without a call refreshing it, ms (its absence means: write back what it holds). */
const MARKER_TTL_MS = 10 * 60_000;

// Each script's KEYS[1] is the store's marker: missing (Redis restarted empty, or lost it), a
// script answers -1 and changes nothing; the store then writes back what it holds (RESTORE)
// and runs the script again.
const MARKED = `if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
`;
// Character windows are hashes: one field per store (its share), so writing a share back is exact.
const SUM = `local function total(key)
  local sum = 0
  for _, v in ipairs(redis.call('HVALS', key)) do sum = sum + tonumber(v) end
  return sum
end
`;
// KEYS: marker, current window, previous window. ARGV: marker ttl, amount, limit, weight of the previous window, expiry ms, store id.
const TAKE = `${MARKED}${SUM}
if total(KEYS[2]) + total(KEYS[3]) * tonumber(ARGV[4]) + tonumber(ARGV[2]) > tonumber(ARGV[3]) then return 0 end
redis.call('HINCRBY', KEYS[2], ARGV[6], ARGV[2])
redis.call('PEXPIRE', KEYS[2], ARGV[5])
return 1`;
// KEYS: marker, the client's slots (a sorted set, score = held until). ARGV: marker ttl, session, max, now, until, expiry ms.
const ACQUIRE = `${MARKED}
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[4])
if not redis.call('ZSCORE', KEYS[2], ARGV[2]) and redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[2], ARGV[5], ARGV[2])
redis.call('PEXPIRE', KEYS[2], ARGV[6])
return 1`;
// KEYS: marker, the client's slots. ARGV: marker ttl, session, until, expiry ms. Writes the slot (back) whether Redis has it or not.
const RENEW = `${MARKED}
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[2])
if redis.call('PTTL', KEYS[2]) < tonumber(ARGV[4]) then redis.call('PEXPIRE', KEYS[2], ARGV[4]) end
return 1`;
// KEYS: marker, then the slot keys, then the window keys. ARGV: marker ttl, store id, then JSON
// { slots: [[session, until, expiry]], counts: [[amount, expiry]] } in the order of the keys.
const RESTORE = `local held = cjson.decode(ARGV[3])
local function keep(key, expiry)
  if redis.call('PTTL', key) < tonumber(expiry) then redis.call('PEXPIRE', key, expiry) end
end
for i, slot in ipairs(held.slots) do
  redis.call('ZADD', KEYS[1 + i], slot[2], slot[1])
  keep(KEYS[1 + i], slot[3])
end
for j, count in ipairs(held.counts) do
  local key = KEYS[1 + #held.slots + j]
  redis.call('HSET', key, ARGV[2], count[1])
  keep(key, count[2])
end
redis.call('SET', KEYS[1], '1', 'PX', ARGV[1])
return 1`;

/** What one store has written to Redis and still holds: the shape it writes back after a restart. */
interface Held {
  /** Slots key -> session -> held until (ms, the relay's clock). */
  slots: Map<string, Map<string, number>>;
  /** Window key -> this store's share of it, and until when the window counts. */
  counts: Map<string, { amount: number; until: number }>;
}

/**
 * Counts in Redis, shared by every relay process that uses the same Redis and `prefix`:
 * a fleet of relays keeps one budget per client. Each check-and-add is one Lua script
 * (atomic); every key expires on its own (character windows after two windows, slots of
 * a crashed relay after their `ttlMs`), so nothing piles up.
 *
 * Redis holds only what exists, also when it loses its data: each store keeps in memory the
 * slots it holds and its share of every character window still counting, and a marker key
 * in Redis; when the marker is gone (Redis restarted empty), the store writes all of it back
 * before it answers anything, and its renewals write back the slots of live sessions
 * (not only extend slots Redis still has).
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
  const id = randomUUID();
  const marker = `${prefix}alive:${id}`;
  const held: Held = { slots: new Map(), counts: new Map() };
  let client: Promise<OwnConnection> | undefined;
  let restoring: Promise<unknown> | undefined;
  const connect = (): Promise<RedisEvalClient> => {
    if (typeof redis !== 'string') return Promise.resolve(redis);
    client ??= loadIoredis<OwnConnection>('redisRelayStore').then((Redis) => {
      const connection = new Redis(redis, { maxRetriesPerRequest: 1, enableAutoPipelining: true });
      // a lost connection fails the calls waiting on it (the relay then refuses, 1013); ioredis reconnects
      connection.on('error', () => undefined);
      return connection;
    });
    return client;
  };
  const run = async (script: string, keys: string[], args: Array<string | number>): Promise<unknown> =>
    (await connect()).eval(script, keys.length, ...keys, ...args);
  /** Writes back everything this store holds, then the marker (once, however many calls found it missing). */
  const restore = (now: number): Promise<unknown> => {
    restoring ??= (async () => {
      const slots = [...held.slots].flatMap(([key, sessions]) => [...sessions].filter(([, until]) => until > now).map(([session, until]) => ({ key, session, until })));
      const counts = [...held.counts].filter(([, count]) => count.until > now);
      const json = JSON.stringify({
        slots: slots.map(({ session, until }) => [session, String(until), String(Math.ceil((until - now) * 2))]),
        counts: counts.map(([, { amount, until }]) => [String(amount), String(Math.ceil(until - now))]),
      });
      const keys = [marker, ...slots.map((slot) => slot.key), ...counts.map(([key]) => key)];
      return run(RESTORE, keys, [MARKER_TTL_MS, id, json]);
    })().finally(() => (restoring = undefined));
    return restoring;
  };
  /** Runs a marked script; when the marker is gone, writes back what the store holds and runs it again. */
  const marked = async (script: string, keys: string[], args: Array<string | number>, now: number): Promise<unknown> => {
    const answer = await run(script, [marker, ...keys], [MARKER_TTL_MS, ...args]);
    if (answer !== -1) return answer;
    await restore(now);
    const again = await run(script, [marker, ...keys], [MARKER_TTL_MS, ...args]);
    if (again === -1) throw new RxVoiceError('connection', 'the Redis relay store lost its data again while writing it back');
    return again;
  };
  const slotsKey = (name: string): string => `${prefix}slots:${name}`;
  const hold = (key: string, session: string, until: number): void => {
    const sessions = held.slots.get(key) ?? new Map<string, number>();
    sessions.set(session, until);
    held.slots.set(key, sessions);
  };

  return {
    take: async (bucket, amount, limit, windowMs, now) => {
      const slot = Math.floor(now / windowMs);
      const key = (n: number): string => `${prefix}chars:${bucket}:${windowMs}:${n}`;
      for (const [name, count] of held.counts) if (count.until <= now) held.counts.delete(name);
      const taken = (await marked(TAKE, [key(slot), key(slot - 1)], [amount, limit, previousWeight(now, windowMs), windowMs * 2, id], now)) === 1;
      if (taken) {
        // the window counts until the end of the next one
        const count = held.counts.get(key(slot)) ?? { amount: 0, until: (slot + 2) * windowMs };
        held.counts.set(key(slot), { ...count, amount: count.amount + amount });
      }
      return taken;
    },
    acquire: async (name, session, max, ttlMs, now) => {
      const ok = (await marked(ACQUIRE, [slotsKey(name)], [session, max, now, now + ttlMs, ttlMs * 2], now)) === 1;
      if (ok) hold(slotsKey(name), session, now + ttlMs);
      return ok;
    },
    renew: async (list, ttlMs, now) => {
      // only slots this store still holds: one released meanwhile is never written back
      const live = list.filter(({ client: name, session }) => held.slots.get(slotsKey(name))?.has(session) === true);
      for (const { client: name, session } of live) hold(slotsKey(name), session, now + ttlMs);
      await Promise.all(live.map(({ client: name, session }) => marked(RENEW, [slotsKey(name)], [session, now + ttlMs, ttlMs * 2], now)));
    },
    release: async (name, session) => {
      const sessions = held.slots.get(slotsKey(name));
      sessions?.delete(session);
      if (sessions?.size === 0) held.slots.delete(slotsKey(name));
      await run(`redis.call('ZREM', KEYS[1], ARGV[1]) return 1`, [slotsKey(name)], [session]);
    },
    close: async () => {
      const made = client;
      client = undefined;
      if (made !== undefined) (await made).disconnect();
    },
  };
}
