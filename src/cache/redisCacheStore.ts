/**
 * The store in Redis, shared by every process that uses the same Redis and `prefix`.
 * An entry is one string key (`<prefix>e:<key>`, with `PX` when the cache has a TTL); a
 * sorted set (`<prefix>lru`, score = last use) and a hash of sizes (`<prefix>sizes`) with
 * their total (`<prefix>total`) bound the size. A write and its evictions are one Lua
 * script, so concurrent writers never leave the total wrong; a read touches the sorted
 * set. An entry Redis expired on its own keeps its size counted until eviction reaches
 * it (it is the least recently used by then).
 */
import { Buffer } from 'node:buffer';
import type { CacheSetOptions, CacheStore } from './store.js';
import { loadIoredis } from '../core/ioredis.js';

/** What {@link redisCacheStore} needs of a Redis client (an ioredis `Redis` has it all). */
export interface RedisCacheClient {
  /** `GET`, answering the bytes (ioredis's `getBuffer`). */
  getBuffer(key: string): Promise<Uint8Array | null>;
  /** Runs a Lua `script` with `numberOfKeys` keys first in `args`, then the other arguments (Redis `EVAL`). */
  eval(script: string, numberOfKeys: number, ...args: Array<string | number | Uint8Array>): Promise<unknown>;
}

/** Options of {@link redisCacheStore}. */
export interface RedisCacheStoreOptions {
  /** Prefix of every key the store writes. Default `'rxvoice:cache:'`. */
  prefix?: string;
}

interface OwnConnection extends RedisCacheClient {
  on(event: 'error', listener: (error: Error) => void): unknown;
  disconnect(): void;
}

// KEYS: lru, sizes, total. ARGV: prefix, key, value, ttl ms (0: none), maxBytes, now.
const SET = `
local entry = ARGV[1] .. 'e:' .. ARGV[2]
local old = tonumber(redis.call('HGET', KEYS[2], ARGV[2]) or '0')
if ARGV[4] ~= '0' then redis.call('SET', entry, ARGV[3], 'PX', ARGV[4]) else redis.call('SET', entry, ARGV[3]) end
local size = string.len(ARGV[3])
redis.call('HSET', KEYS[2], ARGV[2], size)
redis.call('ZADD', KEYS[1], ARGV[6], ARGV[2])
local total = redis.call('INCRBY', KEYS[3], size - old)
local max = tonumber(ARGV[5])
while total > max do
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0)[1]
  if not oldest then break end
  local gone = tonumber(redis.call('HGET', KEYS[2], oldest) or '0')
  redis.call('DEL', ARGV[1] .. 'e:' .. oldest)
  redis.call('HDEL', KEYS[2], oldest)
  redis.call('ZREM', KEYS[1], oldest)
  total = redis.call('DECRBY', KEYS[3], gone)
end
return total`;
// KEYS: lru, sizes, total. ARGV: prefix, key.
const DELETE = `
local gone = tonumber(redis.call('HGET', KEYS[2], ARGV[2]) or '0')
redis.call('DEL', ARGV[1] .. 'e:' .. ARGV[2])
redis.call('HDEL', KEYS[2], ARGV[2])
redis.call('ZREM', KEYS[1], ARGV[2])
redis.call('DECRBY', KEYS[3], gone)
return 1`;
// KEYS: lru. ARGV: key, now. Touches only a key still listed.
const TOUCH = `if redis.call('ZSCORE', KEYS[1], ARGV[1]) then redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1]) end return 1`;

/**
 * A cache store in Redis. `redis` is a `redis://` address (the store connects with
 * ioredis, an optional peer dependency, on first use, and `close()` disconnects it) or a
 * client you made (an ioredis `Redis`; you close it).
 *
 * ## Example
 * ```ts
 * import { speechCache, redisCacheStore } from 'rxvoice/cache';
 *
 * const cache = speechCache({ store: redisCacheStore('redis://127.0.0.1:6379'), ttlSeconds: 7 * 24 * 3600 });
 * ```
 *
 * @param redis A `redis://` (or `rediss://`) address, or a Redis client.
 * @param options `prefix` of the keys.
 * @return The store.
 */
export function redisCacheStore(redis: string | RedisCacheClient, options: RedisCacheStoreOptions = {}): CacheStore {
  const prefix = options.prefix ?? 'rxvoice:cache:';
  const keys = [`${prefix}lru`, `${prefix}sizes`, `${prefix}total`];
  let client: Promise<OwnConnection> | undefined;
  const connect = (): Promise<RedisCacheClient> => {
    if (typeof redis !== 'string') return Promise.resolve(redis);
    client ??= loadIoredis<OwnConnection>('redisCacheStore').then((Redis) => {
      // Each call fails after one reconnect attempt and 5 s at most: no wait without a timeout.
      const connection = new Redis(redis, { maxRetriesPerRequest: 1, commandTimeout: 5000, enableAutoPipelining: true });
      connection.on('error', () => undefined);
      return connection;
    });
    return client;
  };
  return {
    async get(key) {
      const connection = await connect();
      const value = await connection.getBuffer(`${prefix}e:${key}`);
      if (value === null) return undefined;
      await connection.eval(TOUCH, 1, keys[0] as string, key, Date.now());
      return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
    },
    async set(key, value, { ttlMs, maxBytes }: CacheSetOptions) {
      if (value.byteLength > maxBytes) return;
      const ttl = ttlMs === undefined ? 0 : Math.max(1, Math.ceil(ttlMs));
      // ioredis sends a Buffer as bytes (a Uint8Array would be sent as its text).
      const bytes = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
      await (await connect()).eval(SET, keys.length, ...keys, prefix, key, bytes, ttl, maxBytes, Date.now());
    },
    async delete(key) {
      await (await connect()).eval(DELETE, keys.length, ...keys, prefix, key);
    },
    async close() {
      const made = client;
      client = undefined;
      if (made !== undefined) (await made).disconnect();
    },
  };
}
