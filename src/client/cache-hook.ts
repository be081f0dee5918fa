/**
 * What `client.speak({ ..., cache })` and `client.ttsStream(request, { cache })` need of a
 * cache: the `speechCache(...)` of `rxvoice/cache` fits it. The client only hands it the
 * live operator (or the HTTP call) to use for what the cache does not hold; the cache
 * decides the rest. Declared here so the client imports no cache code.
 */
import type { Observable, OperatorFunction } from 'rxjs';
import type { TtsStreamRequest } from '../core/schemas.js';
import type { LiveSpeechEvent } from '../live/events.js';
import type { SpeakOptions } from '../live/options.js';
import type { TtsStreamChunk } from './tts-stream.js';

/** A speech cache as the client sees it (`speechCache(...)` from `rxvoice/cache`). */
export interface SpeechCacheHook {
  /**
   * Live speech through the cache: sentences it holds are replayed, the others spoken by
   * `live(options)`, all in order. Throws `ValidationError` at once for bad options.
   */
  speak(options: SpeakOptions, live: (options: SpeakOptions) => OperatorFunction<string, LiveSpeechEvent>): OperatorFunction<string, LiveSpeechEvent>;
  /** `/tts-stream` through the cache: a held request is replayed, else `live()` is called and its audio kept. */
  ttsStream(request: TtsStreamRequest, live: () => Observable<TtsStreamChunk>): Observable<TtsStreamChunk>;
}

/** Whether `value` has the hook's two methods (the client checks the `cache` option with it). */
export function isSpeechCacheHook(value: unknown): value is SpeechCacheHook {
  return (
    value !== null &&
    typeof value === 'object' &&
    typeof (value as SpeechCacheHook).speak === 'function' &&
    typeof (value as SpeechCacheHook).ttsStream === 'function'
  );
}
