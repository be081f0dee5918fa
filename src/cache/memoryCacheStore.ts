/**
 * The in-process store: a `Map` in recency order (a read moves the entry to the end), with
 * its total size kept, so eviction drops from the front until the total fits.
 */
import { checkOptions } from '../core/validation.js';
import * as z from 'zod/mini';
import type { CacheSetOptions, CacheStore } from './store.js';

/** Options of {@link memoryCacheStore}. */
export interface MemoryCacheStoreOptions {
  /** A bound of this store's own, bytes, besides the cache's `maxBytes` (the smaller wins). */
  maxBytes?: number;
}

const OptionsSchema = z.object({ maxBytes: z.optional(z.int().check(z.positive())) });

/**
 * A cache store in memory: entries live as long as the process, least recently used
 * evicted first once the size bound is reached.
 *
 * ## Example
 * ```ts
 * import { speechCache, memoryCacheStore } from 'rxvoice/cache';
 *
 * const cache = speechCache({ store: memoryCacheStore(), maxBytes: 64 * 1024 * 1024 });
 * ```
 *
 * @param options `maxBytes`, an extra bound of the store's own.
 * @return The store.
 */
export function memoryCacheStore(options: MemoryCacheStoreOptions = {}): CacheStore {
  const { maxBytes: ownBound } = checkOptions(OptionsSchema, options, 'memoryCacheStore');
  const entries = new Map<string, Uint8Array>();
  let total = 0;
  const remove = (key: string): void => {
    const value = entries.get(key);
    if (value === undefined) return;
    entries.delete(key);
    total -= value.byteLength;
  };
  return {
    get(key) {
      const value = entries.get(key);
      if (value !== undefined) {
        entries.delete(key);
        entries.set(key, value);
      }
      return Promise.resolve(value);
    },
    set(key, value, { maxBytes }: CacheSetOptions) {
      const bound = Math.min(maxBytes, ownBound ?? Infinity);
      remove(key);
      if (value.byteLength <= bound) {
        entries.set(key, value.slice());
        total += value.byteLength;
      }
      for (const oldest of entries.keys()) {
        if (total <= bound) break;
        remove(oldest);
      }
      return Promise.resolve();
    },
    delete(key) {
      remove(key);
      return Promise.resolve();
    },
  };
}
