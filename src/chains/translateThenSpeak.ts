/**
 * Translate, then speak: the translation, cut into sentences by the target language's
 * rules, spoken in the target language by a live session as the translation arrives.
 * By default the translation is polled (POST /translation tasks, the service's
 * recommended form); the streamed form (POST /translation/stream) is deprecated by the
 * service and kept as `translationMode: 'streamed'`.
 */
import { concat, ignoreElements, merge, mergeMap, shareReplay, tap, type Observable, type Observer, type OperatorFunction } from 'rxjs';
import type { CallOptions } from '../client/request.js';
import { taskResult, type TaskEvent } from '../client/tasks.js';
import type { TranslateStreamOptions } from '../client/translation-stream.js';
import { ValidationError } from '../core/errors.js';
import type { ValidationIssue } from '../core/schemas.js';
import { TranslationRequestSchema, TranslationStreamRequestSchema, type TranslationRequest, type TranslationResult, type TranslationStreamRequest } from '../core/schemas.js';
import { toValidationIssues } from '../core/validation.js';
import { routes } from '../core/routes.js';
import type { z } from 'zod';
import { segmentSentences, type SegmentSentencesOptions } from '../operators/segmentSentences.js';
import type { LiveSpeechEvent } from '../live/events.js';
import type { SpeakOptions } from '../live/options.js';

/** What the chain needs of a client: `RxVoiceClient` has all three methods. */
export interface TranslateThenSpeakClient {
  /** `POST /translation` as a polled task (see `RxVoiceClient.translate`). */
  translate(request: TranslationRequest, options?: CallOptions): Observable<TaskEvent<TranslationResult>>;
  /** The deprecated `POST /translation/stream`: translated pieces as they arrive. */
  translateStream(request: TranslationStreamRequest, options?: TranslateStreamOptions): Observable<string>;
  /** A live speech session as an operator: text in, speech events out. */
  speak(options: SpeakOptions): OperatorFunction<string, LiveSpeechEvent>;
}

/** Options of {@link translateThenSpeak}. */
export interface TranslateThenSpeakOptions {
  /**
   * The translation: `texts` (several texts, the polled form's request) or `text`, with
   * `source_language`, `target_language` and the optional fields of either form.
   */
  translation: TranslationRequest | TranslationStreamRequest;
  /**
   * `'polled'` (the default): POST /translation tasks, the texts in batches of 1, 2, 4,
   * ... texts, all started at once, spoken in order as each batch arrives (the first
   * text is heard before the last batch is translated). `'streamed'`: the deprecated
   * POST /translation/stream (the texts joined by blank lines), spoken sentence by
   * sentence as it streams; the client warns once that it is deprecated.
   */
  translationMode?: 'polled' | 'streamed';
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
  /**
   * Sees the translation as it arrives (streamed: each piece; polled: each translated
   * text, followed by a blank line) and its end (progress, logs).
   */
  observeTranslation?: Partial<Observer<string>>;
  /** `X-Credits-Required` of the translation stream (streamed mode only). */
  onCredits?: TranslateStreamOptions['onCredits'];
  /**
   * Aborts the translation requests: the live session then ends with a `LiveSessionError`
   * of code `'text_source'` whose `cause` is the `AbortError`.
   */
  signal?: AbortSignal;
}

/** Batches of 1, 2, 4, ... texts: the first is fast, each next one has time while the previous is spoken. */
function doublingBatches(texts: readonly string[]): string[][] {
  const batches: string[][] = [];
  for (let start = 0, size = 1; start < texts.length; start += size, size *= 2) batches.push(texts.slice(start, start + size));
  return batches;
}

/** The polled translation: every batch's task started at once, the texts emitted in order. */
function polledTranslation(client: TranslateThenSpeakClient, request: TranslationRequest & { texts: string[] }, options: CallOptions): Observable<string> {
  const results = doublingBatches(request.texts).map((texts) =>
    client.translate({ ...request, texts }, options).pipe(taskResult(), shareReplay({ bufferSize: 1, refCount: true })),
  );
  return merge(
    // Starts every task at once...
    merge(...results).pipe(ignoreElements()),
    // ...and hands the texts on in order, a blank line after each (a paragraph break).
    concat(...results).pipe(mergeMap((result) => result.texts.map((text) => `${text}\n\n`))),
  );
}

/**
 * The chain's own options (not the request's, the speech's or the segmentation's, which
 * their schemas check): a `ValidationError` naming each bad one, before anything is sent.
 */
function checkChainOptions(options: TranslateThenSpeakOptions): void {
  const issues: ValidationIssue[] = [];
  const bad = (loc: string[], msg: string): void => void issues.push({ loc: ['options', ...loc], msg, type: 'value_error' });
  const { translationMode, onCredits, signal, observeTranslation } = options as Partial<Record<keyof TranslateThenSpeakOptions, unknown>>;
  if (translationMode !== undefined && translationMode !== 'polled' && translationMode !== 'streamed') bad(['translationMode'], "must be 'polled' or 'streamed'");
  if (onCredits !== undefined && typeof onCredits !== 'function') bad(['onCredits'], 'must be a function');
  if (signal !== undefined && !(signal instanceof AbortSignal)) bad(['signal'], 'must be an AbortSignal');
  if (observeTranslation !== undefined) {
    if (typeof observeTranslation !== 'object' || observeTranslation === null) bad(['observeTranslation'], 'must be an observer (an object of next, error and complete)');
    else {
      for (const key of ['next', 'error', 'complete'] as const) {
        const hook = (observeTranslation as Record<string, unknown>)[key];
        if (hook !== undefined && typeof hook !== 'function') bad(['observeTranslation', key], 'must be a function');
      }
    }
  }
  const translation = options.translation as { text?: unknown; texts?: unknown } | undefined;
  if (translation?.text !== undefined && translation.texts !== undefined) bad(['translation'], 'takes `texts` or `text`, not both');
  if (issues.length > 0) throw new ValidationError(issues, { source: 'local', endpoint: 'translateThenSpeak' });
}

/** Throw the ValidationError of a request that fails `schema`, as the client would before sending. */
function check<S extends z.ZodType>(schema: S, request: unknown, endpoint: string): void {
  const checked = schema.safeParse(request);
  if (!checked.success) throw new ValidationError(toValidationIssues(checked.error, request), { source: 'local', endpoint });
}

/**
 * Translates texts and speaks the translation as it arrives, in the target language.
 *
 * <span class="informal">Time to first audio does not wait for the whole translation:
 * the first text (polled) or sentence (streamed) is spoken as soon as it is translated.</span>
 *
 * The polled chain (the default) is, in effect:
 *
 * ```ts
 * // batches [t1], [t2, t3], [t4..t7], ...: one POST /translation task each, all at once
 * const batches = [['Good morning.'], ['How are you?', 'Fine, thanks.']];
 * concat(...batches.map((texts) => client.translate({ texts, source_language: 'en-us', target_language: 'de-de' }).pipe(taskResult())))
 *   .pipe(
 *     mergeMap((result) => result.texts.map((text) => `${text}\n\n`)),
 *     segmentSentences({ locale: 'de-de' }),
 *     client.speak({ voice_id: 1, language: 'de-de', word_timestamps: true }),
 *   );
 * ```
 *
 * ```text
 * tasks:       -[t1]-----[t2 t3]-----------[t4..t7]-|
 * sentences:   -----s1--------s2--s3-------------s4…|
 * speech:      --ready-segmentStart-audio-…-segmentDone-…-done|
 * ```
 *
 * Throws a `ValidationError` at once, before anything is sent, for a bad translation
 * request (the whole of it, before any batch; `texts` or `text`, not both), bad speech or
 * segmentation options, or a bad option of the chain's own (`translationMode`, `onCredits`,
 * `signal`, `observeTranslation`).
 * Completes when the live session is done (every sentence spoken or reported skipped).
 * Errors with the live session's `LiveSessionError`s; when the translation fails (a
 * polled task's `TaskFailedError`, `PaymentRequiredError`, ...; an HTTP error; streamed,
 * a `StreamError` whose `received` holds the text translated so far), the live session
 * ends at once with a `LiveSessionError` of code `'text_source'`: the translation's
 * error is its `cause`, its `unspoken` the translated text not yet spoken.
 * Unsubscribing stops polling, aborts the requests and closes the session.
 *
 * Polled, a text is one task per batch: n texts make about log2(n) + 1 tasks (each a
 * creation call, paid). Streamed, the first sentence can be heard sooner, but the
 * service deprecates that endpoint.
 *
 * ## Example
 * ```ts
 * import { filter } from 'rxjs';
 * import { createClient, translateThenSpeak } from 'rxvoice';
 *
 * const client = createClient();
 * translateThenSpeak(client, {
 *   translation: { texts: ['Good morning.', 'How are you?'], source_language: 'en-us', target_language: 'fr-fr' },
 *   speech: { voice_id: 1 },
 * })
 *   .pipe(filter((e) => e.type === 'segmentStart'))
 *   .subscribe((e) => console.log(e.text));
 * ```
 *
 * @param client The client (`translate`, `translateStream` and `speak`).
 * @param options Translation request and mode, live session options, segmentation, hooks.
 * @return An Observable of the live session's events.
 */
export function translateThenSpeak(client: TranslateThenSpeakClient, options: TranslateThenSpeakOptions): Observable<LiveSpeechEvent> {
  checkChainOptions(options);
  const request = options.translation as Partial<TranslationRequest> & Partial<TranslationStreamRequest>;
  const { text, texts, ...fields } = request;
  let translation$: Observable<string>;
  if (options.translationMode === 'streamed') {
    const streamRequest = { ...fields, text: texts !== undefined && text === undefined ? texts.join('\n\n') : text } as TranslationStreamRequest;
    check(TranslationStreamRequestSchema, streamRequest, `POST ${routes.translationStream}`);
    const streamOptions: TranslateStreamOptions = {};
    if (options.signal) streamOptions.signal = options.signal;
    if (options.onCredits) streamOptions.onCredits = options.onCredits;
    translation$ = client.translateStream(streamRequest, streamOptions);
  } else {
    const polledRequest = { ...fields, texts: texts ?? [text] } as TranslationRequest & { texts: string[] };
    // The whole request is checked before any batch is sent.
    check(TranslationRequestSchema, polledRequest, `POST ${routes.translation}`);
    translation$ = polledTranslation(client, polledRequest, options.signal ? { signal: options.signal } : {});
  }
  const target = request.target_language;
  const locale = options.segmentation?.locale ?? (typeof target === 'string' ? target : undefined);
  // Built now, so that bad options throw here rather than on subscribe.
  const segment = segmentSentences({ ...options.segmentation, ...(locale === undefined ? {} : { locale }) });
  const speech = client.speak({ word_timestamps: true, ...options.speech, language: options.speech.language ?? target });
  return translation$.pipe(tap(options.observeTranslation ?? {}), segment, speech);
}
