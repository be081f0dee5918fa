/**
 * `speechCache(options)`: the cache a `client.speak({ ..., cache })` or
 * `client.ttsStream(request, { cache })` call takes.
 */
import type { Observable, OperatorFunction } from 'rxjs';
import * as z from 'zod/mini';
import type { SpeechCacheHook } from '../client/cache-hook.js';
import type { TtsStreamChunk } from '../client/tts-stream.js';
import type { TtsStreamRequest } from '../core/schemas.js';
import { checkOptions } from '../core/validation.js';
import type { LiveSpeechEvent } from '../live/events.js';
import type { SpeakOptions } from '../live/options.js';
import { cachedSpeak } from './cachedSpeak.js';
import { cachedTtsStream } from './cachedTtsStream.js';
import { CacheCore, type SpeechCacheStats } from './core.js';
import type { CacheStore } from './store.js';

/** Default {@link SpeechCacheOptions.maxBytes}: 256 MiB. */
export const DEFAULT_CACHE_MAX_BYTES = 256 * 1024 * 1024;

/** The longest `ttlSeconds`: 100 years (an expiry in milliseconds every store can write). */
const MAX_TTL_SECONDS = 100 * 365 * 24 * 3600;

/** Options of {@link speechCache}. */
export interface SpeechCacheOptions {
  /** Where entries live: `memoryCacheStore()`, `fileCacheStore(dir)`, `redisCacheStore(...)` or your own {@link CacheStore}. */
  store: CacheStore;
  /** Seconds an entry stays valid, at most 100 years; default: no expiry. */
  ttlSeconds?: number;
  /** Most bytes the store holds; least recently used entries are evicted past it. Default {@link DEFAULT_CACHE_MAX_BYTES}. */
  maxBytes?: number;
  /** Called with each failed store call (the sentence is then spoken live, or not stored). Default: ignored. */
  onError?: (error: unknown) => void;
  /** Clock for expiry, ms since the epoch. Default `Date.now`. */
  now?: () => number;
}

const isFunction = (value: unknown): boolean => typeof value === 'function';
const StoreSchema = z.custom<CacheStore>(
  (value) =>
    value !== null && typeof value === 'object' && ['get', 'set', 'delete'].every((name) => isFunction((value as unknown as Record<string, unknown>)[name])),
  { error: 'must be a cache store (get, set, delete)' },
);
const OptionsSchema = z.object({
  store: StoreSchema,
  ttlSeconds: z.optional(z.number().check(z.positive({ error: 'must be more than 0 seconds' }), z.maximum(MAX_TTL_SECONDS, { error: 'must be at most 100 years (3153600000 seconds)' }))),
  maxBytes: z.optional(z.int().check(z.positive({ error: 'must be a positive number of bytes' }))),
  onError: z.optional(z.custom<(error: unknown) => void>(isFunction, { error: 'must be a function' })),
  now: z.optional(z.custom<() => number>(isFunction, { error: 'must be a function' })),
});

/** A speech cache: pass it as `cache` to `client.speak` or `client.ttsStream`. */
export interface SpeechCache extends SpeechCacheHook {
  /** Hits, misses, writes and store failures so far. */
  readonly stats: Readonly<SpeechCacheStats>;
  /** The store (close it with `store.close?.()` when done). */
  readonly store: CacheStore;
}

/**
 * A cache of spoken sentences. Each sentence is keyed by its exact text (outer whitespace
 * trimmed), voice, language and every setting that changes the audio; a hit replays the
 * same audio bytes and word timestamps with no service call and no credit, in order with
 * the live sentences around it; a text whose every sentence hits opens no connection.
 * Live segments are stored when they are done (never skipped or partial ones).
 *
 * ## Example
 * ```ts
 * import { createClient } from 'rxvoice';
 * import { speechCache, memoryCacheStore } from 'rxvoice/cache';
 * import { of } from 'rxjs';
 *
 * const client = createClient();
 * const cache = speechCache({ store: memoryCacheStore(), ttlSeconds: 24 * 3600 });
 * of('Thanks for calling.', ' One moment.').pipe(client.speak({ voice_id: 1, cache })).subscribe();
 * ```
 *
 * @param options `store`, `ttlSeconds`, `maxBytes`, `onError`, `now`.
 * @return The cache.
 * @throws ValidationError for bad options, at once.
 */
export function speechCache(options: SpeechCacheOptions): SpeechCache {
  const parsed = checkOptions(OptionsSchema, options, 'speechCache');
  const core = new CacheCore(
    parsed.store,
    parsed.ttlSeconds === undefined ? undefined : parsed.ttlSeconds * 1000,
    parsed.maxBytes ?? DEFAULT_CACHE_MAX_BYTES,
    parsed.onError ?? (() => undefined),
    parsed.now ?? Date.now,
  );
  return {
    store: parsed.store,
    stats: core.stats,
    speak: (speakOptions: SpeakOptions, live: (o: SpeakOptions) => OperatorFunction<string, LiveSpeechEvent>) => cachedSpeak(core, speakOptions, live),
    ttsStream: (request: TtsStreamRequest, live: () => Observable<TtsStreamChunk>) => cachedTtsStream(core, request, live),
  };
}
