import { asyncScheduler, Observable, type OperatorFunction, type SchedulerLike, type Subscription } from 'rxjs';
import { add, checkNumber, isRecord, optionIssues, throwIfIssues } from '../core/checks.js';
import { afterSentenceRules } from '../live/sentence-rules.js';
import { createSentenceSegmenter, sentenceSegmenterOptions } from '../text/sentences.js';
import { flushWords } from '../text/idle-flush.js';

/**
 * The options checked as `z.object({ locale: z.optional(z.string()), maxBufferSize:
 * z.optional(z.number()), idleTimeout, firstIdleTimeout: z.optional(milliseconds()),
 * scheduler: z.optional(scheduler()) })` would (test/operators/option-checks.test.ts),
 * without loading zod.
 */
function checkSegmentOptions(options: unknown): SegmentSentencesOptions {
  const issues = optionIssues();
  if (!isRecord(options)) issues.out.push({ loc: ['options'], msg: 'must be an object', type: 'object_type' });
  else {
    const { locale, maxBufferSize, idleTimeout, firstIdleTimeout, scheduler } = options;
    if (locale !== undefined && typeof locale !== 'string') add(issues, 'locale', 'must be a string', 'string_type');
    if (maxBufferSize !== undefined) checkNumber(issues, 'maxBufferSize', maxBufferSize, { msg: 'must be a number' });
    const ms = { msg: 'must be a finite number of milliseconds', min: [0, true, 'must be >= 0 ms'] } as const;
    if (idleTimeout !== undefined) checkNumber(issues, 'idleTimeout', idleTimeout, ms);
    if (firstIdleTimeout !== undefined) checkNumber(issues, 'firstIdleTimeout', firstIdleTimeout, ms);
    const isScheduler = isRecord(scheduler) && typeof scheduler['now'] === 'function' && typeof scheduler['schedule'] === 'function';
    if (scheduler !== undefined && !isScheduler) add(issues, 'scheduler', 'must be an RxJS scheduler', 'value_error');
  }
  throwIfIssues(issues.out, 'segmentSentences');
  return options as SegmentSentencesOptions;
}

/** Options of {@link segmentSentences}. */
export interface SegmentSentencesOptions {
  /** Locale tag choosing abbreviation sets and script rules (`en-us`, `de-de`, `el-gr`...). Default English. */
  locale?: string;
  /** Buffered code units beyond which text is force-cut at the last whitespace (default 65 536, at least 16). */
  maxBufferSize?: number;
  /**
   * Client-side idle flush, in milliseconds (the service's `idle_timeout` is in seconds):
   * after this much silence, buffered text without a sentence boundary is emitted up to its
   * last word boundary; a partial last word stays buffered. Each token restarts the timer.
   * Default: no idle flush.
   */
  idleTimeout?: number;
  /**
   * Idle timeout used until the first piece has been emitted (a quicker first audio).
   * Default: `idleTimeout`.
   */
  firstIdleTimeout?: number;
  /** Scheduler of the idle timer (default `asyncScheduler`); pass a `TestScheduler` in tests. */
  scheduler?: SchedulerLike;
}

/**
 * Turns a stream of text tokens into a stream of sentences.
 *
 * <span class="informal">Tokens in (LLM output, translation pieces), sentences out, in
 * order, each as soon as its end is certain.</span>
 *
 * Built on the pure core `createSentenceSegmenter` (`src/text/sentences.ts`), which holds
 * the rules: abbreviations, initials, decimals, URLs, quotes, lists, paragraph breaks, CJK,
 * Devanagari, Arabic, Greek and Spanish punctuation. Joining the output gives back the input
 * exactly; the whitespace after a sentence starts the next piece. The output does not depend
 * on how the text was split into tokens, except for idle flushes, which depend on time.
 *
 * When a sentence is emitted (the timing rule), always synchronously, in the same frame as
 * the token that makes its end certain, usually the first non-space character after the stop:
 * - `?` `!` (Greek `;`): a lower-case word, `,` or a dash before a lower-case word continue
 *   the sentence (`Yahoo! in`, `"Why?" he asked.`); anything else ends it. Until that
 *   character arrives the stop run may still grow (`"Why?"` then `"!"` is one sentence,
 *   `"Why?!"`), so emitting early would make the output depend on the chunking;
 * - CJK, Devanagari, Arabic, Ethiopic and Burmese stops (`。` `।` `؟` `።` `။`...) end with
 *   the very next character, space or not;
 * - `.` and `…` are decided by the first non-space character after them (a capital, digit,
 *   caseless letter or opening quote ends the sentence; a lower-case letter, `,` `;` `:`
 *   continue it; abbreviations, initials, list numbers and ordinals never end it); after
 *   `U.S.`-style initials and `I.` the next word decides;
 * - a paragraph break (blank line) ends the piece at once; a stop at the very end of the
 *   input is emitted at completion.
 *
 * ```
 * tokens:    -a----b---c-------|      a = "Hello wor", b = "ld. Why", c = "? Then"
 * sentences: ------x---y-------(z|)   x = "Hello world.", y = " Why?", z = " Then"
 * ```
 *
 * With `idleTimeout`, trailing text without a boundary is flushed after that silence, cut
 * at the last word boundary (never mid-word), so a stalled producer still gets its words
 * spoken; `firstIdleTimeout` shortens the wait for the first piece.
 *
 * On completion the remainder is emitted (it may be whitespace only), then completion.
 * On error the remainder is emitted first, then the error: no text is lost.
 * Unsubscribing clears the idle timer and unsubscribes from the source.
 *
 * ## Example
 * ```ts
 * import { from } from 'rxjs';
 * import { segmentSentences } from 'rxvoice/operators';
 *
 * from(['Dr. Smith paid $4', '.99. Wh', 'y? Because.'])
 *   .pipe(segmentSentences({ locale: 'en-us', idleTimeout: 1000 }))
 *   .subscribe(console.log);
 * // "Dr. Smith paid $4.99."  " Why?"  " Because."
 * ```
 *
 * @param options Locale, buffer bound, idle flush timeouts (ms) and scheduler.
 * @throws {ValidationError} At once, for bad options: `idleTimeout` or `firstIdleTimeout`
 * negative or not finite, `maxBufferSize` not an integer >= 16, a `scheduler` that is not one.
 * @return A function that returns an Observable of sentences (strings, never empty).
 */
export function segmentSentences(options: SegmentSentencesOptions = {}): OperatorFunction<string, string> {
  const { locale, maxBufferSize, idleTimeout, firstIdleTimeout, ...rest } = checkSegmentOptions(options);
  const scheduler = rest.scheduler ?? asyncScheduler;
  const segmenterOptions = {
    ...(locale !== undefined ? { locale } : {}),
    ...(maxBufferSize !== undefined ? { maxBufferSize } : {}),
  };
  sentenceSegmenterOptions(segmenterOptions); // the sentence core's own options, checked now too
  // a language other than English: its table is loaded first (the text waits: live/sentence-rules.ts)
  const plan: Plan = { segmenterOptions, scheduler, idleTimeout, firstIdleTimeout };
  return (source) => afterSentenceRules(locale, source, (text) => segmentLoaded(text, plan));
}

/** The checked options of one {@link segmentSentences}. */
interface Plan {
  readonly segmenterOptions: { locale?: string; maxBufferSize?: number };
  readonly scheduler: SchedulerLike;
  readonly idleTimeout: number | undefined;
  readonly firstIdleTimeout: number | undefined;
}

/** The operator's work, once the locale's rules are loaded. */
function segmentLoaded(source: Observable<string>, { segmenterOptions, scheduler, idleTimeout, firstIdleTimeout }: Plan): Observable<string> {
  return new Observable<string>((subscriber) => {
    const segmenter = createSentenceSegmenter(segmenterOptions);
    let emitted = false;
    let timer: Subscription | undefined;

    const emit = (pieces: string[]): void => {
      for (const piece of pieces) {
        emitted = true;
        subscriber.next(piece);
      }
    };
    const clearTimer = (): void => {
      timer?.unsubscribe();
      timer = undefined;
    };
    const armTimer = (): void => {
      clearTimer();
      const due = !emitted && firstIdleTimeout !== undefined ? firstIdleTimeout : idleTimeout;
      if (due === undefined) return;
      timer = scheduler.schedule(() => {
        timer = undefined;
        emit(flushWords(segmenter));
      }, due);
    };

    const subscription = source.subscribe({
      next(token) {
        emit(segmenter.feed(token));
        if (idleTimeout !== undefined || firstIdleTimeout !== undefined) armTimer();
      },
      error(err: unknown) {
        clearTimer();
        emit(segmenter.end());
        subscriber.error(err);
      },
      complete() {
        clearTimer();
        emit(segmenter.end());
        subscriber.complete();
      },
    });
    return () => {
      clearTimer();
      subscription.unsubscribe();
    };
  });
}
