/**
 * Translate, then speak: the streamed translation, cut into sentences by the target
 * language's rules, spoken in the target language by a live session, sentence by
 * sentence as the translation arrives.
 */
import { tap, type Observable, type Observer, type OperatorFunction } from 'rxjs';
import type { TranslateStreamOptions } from '../client/translation-stream.js';
import { ValidationError } from '../core/errors.js';
import { routes } from '../core/routes.js';
import { TranslationStreamRequestSchema, type TranslationStreamRequest } from '../core/schemas.js';
import { toValidationIssues } from '../core/validation.js';
import { segmentSentences, type SegmentSentencesOptions } from '../operators/segmentSentences.js';
import type { LiveSpeechEvent } from '../live/events.js';
import type { SpeakOptions } from '../live/session.js';

/** What the chain needs of a client: `RxVoiceClient` has both methods. */
export interface TranslateThenSpeakClient {
  translateStream(request: TranslationStreamRequest, options?: TranslateStreamOptions): Observable<string>;
  speak(options: SpeakOptions): OperatorFunction<string, LiveSpeechEvent>;
}

/** Options of {@link translateThenSpeak}. */
export interface TranslateThenSpeakOptions {
  /** The translation: `text`, `source_language`, `target_language`, `formality`, `gender`. */
  translation: TranslationStreamRequest;
  /**
   * The live session (`voice_id` required). `language` defaults to the translation's
   * `target_language`, `word_timestamps` to `true`.
   */
  speech: Omit<SpeakOptions, 'language'> & { language?: SpeakOptions['language'] };
  /**
   * Sentence segmentation; `locale` defaults to the translation's `target_language`
   * (the sentence rules of the language being spoken).
   */
  segmentation?: SegmentSentencesOptions;
  /** Sees each translated piece as it arrives, and the end of the translation (progress, logs). */
  observeTranslation?: Partial<Observer<string>>;
  /** `X-Credits-Required` of the translation stream. */
  onCredits?: TranslateStreamOptions['onCredits'];
  /** Aborts the translation request (the Observable errors with `AbortError`). */
  signal?: AbortSignal;
}

/**
 * Translates a text with the streaming translation and speaks the translation as it
 * streams, in the target language.
 *
 * <span class="informal">Time to first audio does not wait for the whole translation:
 * the first sentence is spoken as soon as it is translated.</span>
 *
 * The chain is the documented pipe:
 *
 * ```ts
 * client
 *   .translateStream({ text, source_language: 'en-us', target_language: 'de-de' })
 *   .pipe(
 *     segmentSentences({ locale: 'de-de' }),
 *     client.speak({ voice_id: 1, language: 'de-de', word_timestamps: true }),
 *   );
 * ```
 *
 * ```text
 * translation: -'Ĥéļļö '-'ŵöŕļð. '-'Ĥöŵ '-'åŕé '-'ýöû?'-|
 * sentences:   ---------------------'Ĥéļļö ŵöŕļð.'--------(' Ĥöŵ åŕé ýöû?'|)
 * speech:      -------------------------ready-segmentStart-audio-…-segmentDone-…-done|
 * ```
 *
 * Throws a `ValidationError` at once, before anything is sent, for a bad translation
 * request or bad speech or segmentation options. Completes when the live session is done
 * (every sentence spoken or reported skipped). Errors with the live session's
 * `LiveSessionError`s; when the translation fails (an HTTP error, or a `StreamError`
 * when the service fails the stream, whose `received` holds the whole translated text
 * so far), the live session ends at once with a `LiveSessionError` of code
 * `'text_source'`: the translation's error is its `cause`, its `unspoken` the translated
 * text not yet spoken. Unsubscribing aborts the translation request and closes the
 * session.
 *
 * The translation endpoint is deprecated by the service; for finished texts
 * `client.translate()` (polled) then `client.speak()` gives the same speech, only later.
 *
 * ## Example
 * ```ts
 * translateThenSpeak(client, {
 *   translation: { text: 'Good morning. How are you?', source_language: 'en-us', target_language: 'fr-fr' },
 *   speech: { voice_id: 1 },
 * })
 *   .pipe(filter((e) => e.type === 'segmentStart'))
 *   .subscribe((e) => console.log(e.text));
 * ```
 *
 * @param client The client (`translateStream` and `speak`).
 * @param options Translation request, live session options, segmentation, hooks.
 * @return An Observable of the live session's events.
 */
export function translateThenSpeak(client: TranslateThenSpeakClient, options: TranslateThenSpeakOptions): Observable<LiveSpeechEvent> {
  const checked = TranslationStreamRequestSchema.safeParse(options.translation);
  if (!checked.success) {
    throw new ValidationError(toValidationIssues(checked.error, options.translation), {
      source: 'local',
      endpoint: `POST ${routes.translationStream}`,
    });
  }
  const target = options.translation.target_language;
  const locale = options.segmentation?.locale ?? (typeof target === 'string' ? target : undefined);
  const streamOptions: TranslateStreamOptions = {};
  if (options.signal) streamOptions.signal = options.signal;
  if (options.onCredits) streamOptions.onCredits = options.onCredits;
  // Built now, so that bad options throw here rather than on subscribe.
  const segment = segmentSentences({ ...options.segmentation, ...(locale === undefined ? {} : { locale }) });
  const speech = client.speak({ word_timestamps: true, ...options.speech, language: options.speech.language ?? target });
  return client.translateStream(options.translation, streamOptions).pipe(tap(options.observeTranslation ?? {}), segment, speech);
}
