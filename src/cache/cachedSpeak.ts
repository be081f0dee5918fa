/**
 * Live speech through a cache: an operator around the live session that cuts the text in
 * sentences, looks each up (in order), replays hits and sends misses to one live session,
 * opened on the first miss only (a text whose every sentence hits opens no connection).
 * The merge back in order, and what is stored, is `HitMissMerge` (merge.ts).
 *
 * Output: sentences in the order they went in, a hit after every miss before it is
 * finished; every segment numbered again in output order (hits and live segments share one
 * sequence of `segment_id`s); a `ready` first (the live one, or, when a hit comes out before
 * any session is ready, one with `session_id: 'cache'` and `run_id: -1`); one `done` last,
 * after the writes of the stored segments settled (so the next call sees them).
 */
import { concatMap, defer, Observable, Subject, type OperatorFunction, type Subscription } from 'rxjs';
import { SessionConfigSchema } from '../live/protocol.js';
import type { LiveSpeechEvent } from '../live/events.js';
import { DEFAULT_LIVE_OUTPUT_FORMAT, type SpeakOptions } from '../live/options.js';
import { segmentSentences } from '../operators/segmentSentences.js';
import type { CacheCore } from './core.js';
import { cacheKey, type AudioSettings } from './key.js';
import { HitMissMerge, nonSpace, type Slot } from './merge.js';

/** The settings of a live session that change its audio: the `session.start` configuration but `idle_timeout`. */
export function liveAudioSettings(options: SpeakOptions): AudioSettings {
  const { reconnect: _r, scheduler: _s, readyTimeoutMs: _t, maxPayload: _m, clientBoundaries: _c, boundaryHoldMs: _b, responseTimeoutMs: _x, closeGraceMs: _g, metrics: _q, ...config } = options;
  const parsed = SessionConfigSchema.safeParse({ output_format: DEFAULT_LIVE_OUTPUT_FORMAT, ...config });
  if (!parsed.success) return { path: 'live', invalid: true };
  const { idle_timeout: _idle, ...settings } = parsed.data;
  return { path: 'live', ...settings };
}

/**
 * The operator (see the file comment). `live(options)` is called at once (bad options throw
 * its `ValidationError` here) and its operator subscribed on the first miss.
 */
export function cachedSpeak(core: CacheCore, options: SpeakOptions, live: (options: SpeakOptions) => OperatorFunction<string, LiveSpeechEvent>): OperatorFunction<string, LiveSpeechEvent> {
  const liveOperator = live(options);
  const settings = liveAudioSettings(options);
  const segmenter = typeof options.language === 'string' ? { locale: options.language } : {};
  const format = typeof settings['output_format'] === 'string' ? settings['output_format'] : undefined;
  const sampleRate = typeof settings['sample_rate'] === 'number' ? settings['sample_rate'] : null;
  return (source) =>
    new Observable<LiveSpeechEvent>((subscriber) => {
      const merge = new HitMissMerge(core, subscriber, format, sampleRate, settings['word_timestamps'] === true);
      let liveInput: Subject<string> | undefined;
      let liveSubscription: Subscription | undefined;
      const openLive = (): Subject<string> => {
        if (liveInput) return liveInput;
        liveInput = new Subject<string>();
        liveSubscription = liveInput.pipe(liveOperator).subscribe({
          next: (event) => merge.live(event),
          error: (error: unknown) => subscriber.error(error),
          complete: () => merge.liveDone(),
        });
        return liveInput;
      };

      let position = 0;
      const lookup = (text: string): Observable<Slot | { kind: 'blank'; text: string }> =>
        defer(async () => {
          const chars = nonSpace(text);
          if (chars === 0) return { kind: 'blank' as const, text };
          const key = await cacheKey(text, settings).catch(() => undefined);
          const entry = key === undefined ? undefined : await core.lookup(key);
          if (entry) return { kind: 'hit' as const, entry };
          const from = position;
          position += chars;
          return { kind: 'miss' as const, text, key, from, upTo: position };
        });

      const input = source.pipe(segmentSentences(segmenter), concatMap(lookup)).subscribe({
        next: (slot) => {
          // Whitespace alone: nothing to say or to cache; the session gets it if it is open.
          if (slot.kind === 'blank') liveInput?.next(slot.text);
          else if (merge.sentence(slot)) openLive().next((slot as { text: string }).text);
        },
        error: (error: unknown) => (liveInput ? liveInput.error(error) : subscriber.error(error)),
        complete: () => {
          liveInput?.complete();
          merge.inputDone();
        },
      });
      return () => {
        input.unsubscribe();
        liveSubscription?.unsubscribe();
      };
    });
}
