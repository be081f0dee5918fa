/**
 * What a speech cache keeps its entries in. A store maps keys (64 hex digits) to the
 * bytes of an entry and bounds its own size: `set` gets the cache's `maxBytes`, and the
 * store evicts least recently used entries to stay under it. Expiry is in the entry
 * itself (`expiresAt`), checked on every read, so a store needs no clock; a store may also
 * drop expired entries on its own (Redis does, with `PX`).
 */

/** What `set` is told besides the key and the bytes. */
export interface CacheSetOptions {
  /** Time to live, ms; undefined: no expiry. */
  ttlMs: number | undefined;
  /** Most bytes the store should hold (entries' bytes); older entries are evicted first. */
  maxBytes: number;
}

/** A place to keep cached sentences: `memoryCacheStore()`, `fileCacheStore(dir)`, `redisCacheStore(...)`, or your own. */
export interface CacheStore {
  /** The bytes stored at `key`, or undefined. A read counts as a use (least recently used goes first). */
  get(key: string): Promise<Uint8Array | undefined>;
  /** Store `value` at `key` (replacing any), then evict until the store holds at most `maxBytes`. */
  set(key: string, value: Uint8Array, options: CacheSetOptions): Promise<void>;
  /** Remove `key` (an expired or unreadable entry). */
  delete(key: string): Promise<void>;
  /** Release what the store holds open (a Redis connection it made); idempotent. */
  close?(): Promise<void>;
}
