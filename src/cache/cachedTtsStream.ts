/**
 * `/tts-stream` through a cache: the whole request (its text and every setting) is one
 * key. A hit replays the stored audio as chunks of at most 64 KiB with
 * `creditsRequired: 0` and sends nothing; a miss passes the service's chunks through and
 * stores their bytes once the answer completed (an error or an unsubscribe stores
 * nothing). The output completes after the write settles.
 */
import { concat, defer, from, ignoreElements, switchMap, tap, type Observable } from 'rxjs';
import { TtsStreamRequestSchema, type TtsStreamRequest } from '../core/schemas.js';
import type { TtsStreamChunk } from '../client/tts-stream.js';
import { MAX_AUDIO_FRAME_BYTES } from '../live/protocol.js';
import type { CacheCore } from './core.js';
import type { CacheEntry } from './entry.js';
import { cacheKey } from './key.js';

function replay(entry: CacheEntry): Observable<TtsStreamChunk> {
  const chunks: TtsStreamChunk[] = [];
  for (let at = 0, index = 0; at < entry.audio.byteLength; at += MAX_AUDIO_FRAME_BYTES, index++) {
    chunks.push({
      format: entry.format as TtsStreamChunk['format'],
      sampleRate: entry.sample_rate ?? undefined,
      creditsRequired: 0,
      bytes: entry.audio.slice(at, at + MAX_AUDIO_FRAME_BYTES),
      index,
    });
  }
  return from(chunks);
}

/** The cached call (see the file comment). */
export function cachedTtsStream(core: CacheCore, request: TtsStreamRequest, live: () => Observable<TtsStreamChunk>): Observable<TtsStreamChunk> {
  const parsed = TtsStreamRequestSchema.safeParse(request);
  // A bad request is not looked up: the call itself rejects it (ValidationError) before sending.
  if (!parsed.success) return live();
  const { text, ...settings } = parsed.data;
  return defer(async () => {
    const key = await cacheKey(text, { path: 'tts-stream', ...settings }).catch(() => undefined);
    return { key, entry: key === undefined ? undefined : await core.lookup(key) };
  }).pipe(
    switchMap(({ key, entry }) => {
      if (entry) return replay(entry);
      let received: Uint8Array[] | undefined = [];
      let bytes = 0;
      let last: TtsStreamChunk | undefined;
      const keep = (chunk: TtsStreamChunk): void => {
        last = chunk;
        bytes += chunk.bytes.byteLength;
        // An answer larger than the cache may hold is not kept (nor held in memory).
        if (bytes > core.maxBytes) received = undefined;
        received?.push(chunk.bytes);
      };
      const save = defer(async () => {
        if (key === undefined || last === undefined || received === undefined) return;
        const audio = new Uint8Array(bytes);
        let offset = 0;
        for (const piece of received) {
          audio.set(piece, offset);
          offset += piece.byteLength;
        }
        await core.save(key, { text, format: last.format, sample_rate: last.sampleRate ?? null, audio });
      }).pipe(ignoreElements());
      return concat(live().pipe(tap(keep)), save);
    }),
  );
}
