/**
 * The part of a speech cache both paths (live sessions, `/tts-stream`) share: reading an
 * entry (decoded, checked for expiry) and writing one, with a store failure turned into a
 * miss or a skipped write (reported to `onError`), never into a failed speech.
 */
import { decodeEntry, encodeEntry, type CacheEntry } from './entry.js';
import type { CacheStore } from './store.js';

/** What a cache counted since it was made. */
export interface SpeechCacheStats {
  /** Sentences (or /tts-stream requests) replayed from the store. */
  hits: number;
  /** Sentences (or requests) the store did not hold. */
  misses: number;
  /** Entries written (an entry larger than the cache's `maxBytes` is not written, nor counted). */
  stored: number;
  /** Store calls that failed (each also went to `onError`). */
  errors: number;
}

/** Reads and writes entries of one cache. */
export class CacheCore {
  readonly stats: SpeechCacheStats = { hits: 0, misses: 0, stored: 0, errors: 0 };
  readonly #store: CacheStore;
  readonly #ttlMs: number | undefined;
  readonly maxBytes: number;
  readonly #onError: (error: unknown) => void;
  readonly #now: () => number;

  constructor(store: CacheStore, ttlMs: number | undefined, maxBytes: number, onError: (error: unknown) => void, now: () => number) {
    this.#store = store;
    this.#ttlMs = ttlMs;
    this.maxBytes = maxBytes;
    this.#onError = onError;
    this.#now = now;
  }

  /** The entry at `key`, or undefined (missing, expired, unreadable, or the store failed). */
  async lookup(key: string): Promise<CacheEntry | undefined> {
    let entry: CacheEntry | undefined;
    try {
      const bytes = await this.#store.get(key);
      entry = bytes === undefined ? undefined : decodeEntry(bytes);
      if (bytes !== undefined && (entry === undefined || (entry.expiresAt !== undefined && entry.expiresAt <= this.#now()))) {
        entry = undefined;
        await this.#store.delete(key);
      }
    } catch (error) {
      this.#failed(error);
      entry = undefined;
    }
    if (entry) this.stats.hits++;
    else this.stats.misses++;
    return entry;
  }

  /** Write `entry` at `key` (with the cache's expiry); resolves once written, or once the failure was reported. */
  async save(key: string, entry: Omit<CacheEntry, 'expiresAt'>): Promise<void> {
    const expiresAt = this.#ttlMs === undefined ? undefined : this.#now() + this.#ttlMs;
    const bytes = encodeEntry({ ...entry, expiresAt });
    if (bytes.byteLength > this.maxBytes) return; // it could never fit: the store would only evict for it
    try {
      await this.#store.set(key, bytes, { ttlMs: this.#ttlMs, maxBytes: this.maxBytes });
      this.stats.stored++;
    } catch (error) {
      this.#failed(error);
    }
  }

  #failed(error: unknown): void {
    this.stats.errors++;
    try {
      this.#onError(error);
    } catch {
      // The callback's own failure must not end the speech.
    }
  }
}
