/**
 * `rxvoice/cache`: a cache of spoken sentences for live speech and `/tts-stream`, so a
 * sentence said again ("Thanks for calling.") is replayed, audio and word timestamps,
 * without a service call or a credit.
 *
 * ```ts
 * import { createClient } from 'rxvoice';
 * import { speechCache, fileCacheStore } from 'rxvoice/cache';
 *
 * const cache = speechCache({ store: fileCacheStore('.cache/speech') });
 * const speak = createClient().speak({ voice_id: 1, cache });
 * ```
 */
export { speechCache, DEFAULT_CACHE_MAX_BYTES, type SpeechCache, type SpeechCacheOptions } from './speechCache.js';
export type { SpeechCacheStats } from './core.js';
export type { CacheStore, CacheSetOptions } from './store.js';
export { memoryCacheStore, type MemoryCacheStoreOptions } from './memoryCacheStore.js';
export { fileCacheStore } from './fileCacheStore.js';
export { redisCacheStore, type RedisCacheClient, type RedisCacheStoreOptions } from './redisCacheStore.js';
