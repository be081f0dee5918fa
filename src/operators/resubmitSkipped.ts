import { defer, from, Observable, type OperatorFunction, type Subscriber, type Subscription } from 'rxjs';
import { LiveSessionError, liveSessionError } from '../core/errors.js';
import * as z from 'zod/mini';
import { func, integerAtLeast } from '../core/options.js';
import { checkOptions } from '../core/validation.js';
import type { LiveSpeechEvent } from '../live/events.js';
import { afterSentenceRules } from '../live/sentence-rules.js';
import { createSentenceSegmenter, type SentenceSegmenter } from '../text/sentences.js';

const OptionsSchema = z.object({
  speakOperator: func<OperatorFunction<string, LiveSpeechEvent>>(),
  maxAttempts: z.optional(integerAtLeast(0)),
  locale: z.optional(z.string()),
});

/** Options of {@link resubmitSkipped}. */
export interface ResubmitSkippedOptions {
  /** How many times one text is pushed again after a skip. Default 2. */
  maxAttempts?: number;
  /** Locale of the text, for the sentence rules that decide when resubmitting is safe. */
  locale?: string;
}

const normalize = (text: string): string => text.replace(/\s+/g, ' ').trim();

/**
 * Wraps a live speech operator so that the text of skipped segments is spoken again.
 *
 * <span class="informal">The service skips a segment whose synthesis failed three times
 * (`segment.skipped`, the session goes on). This pushes the skipped text again, as new
 * text, up to `maxAttempts` times per text, and adds no delay when nothing is
 * skipped.</span>
 *
 * Use it around `speak` (or `client.speak`):
 * `text$.pipe(resubmitSkipped(client.speak({ voice_id: 1 }), { maxAttempts: 2 }))`.
 * Resubmitted text is merged into the session's text input, so the session, its ledger,
 * reconnects and errors treat it like any other text.
 *
 * What to expect:
 * - No added latency: `text.done` goes out as soon as the text source completes, exactly
 *   as with `speak` alone; a session in which nothing is skipped behaves (and ends) the
 *   same with or without this wrapper.
 * - Every `segmentSkipped` event is passed on, with `final: false` when its text will be
 *   pushed again and `final: true` when it will not be (it was already resubmitted
 *   `maxAttempts` times); `resubmissions` tells how many times it had been. A final skip
 *   is not an error: the output completes normally; the text is reported on that event.
 * - While the text source is still open, a skipped text is pushed into the same session
 *   as soon as the text pushed so far ends at a sentence boundary, between paragraph
 *   breaks (so it never lands inside a sentence and is a segment of its own); a source
 *   that stops mid-sentence keeps it waiting for its next boundary or its end.
 * - A skip that cannot go into the same session any more (the source completed, so
 *   `text.done` was sent) is spoken by a continuation session opened right after the
 *   first one ends: a second `ready` event (new `session_id` and `run_id`) precedes its
 *   segments, and the first session's `done` is held back, so `done` comes once, last.
 * - The resubmitted text becomes a later segment: audio order is the service's segment
 *   order, so the text is spoken after the segments already queued, not in its original
 *   place. Its segment has a new, larger `segment_id` (ids of continuation sessions are
 *   shifted to keep increasing).
 *
 * ```
 * text:     -a-b-c-|
 * events:   r-s-d-k(ST)-(uv)-(D|)     k = segmentSkipped for "b" (final: false), ST = "b" again
 * ```
 *
 * Errors of the text source or of the session are passed through; when skipped text is
 * still held for resubmission, the session's `LiveSessionError` becomes the `cause` of
 * one of the same code whose `unspoken` ends with that text.
 *
 * ## Example
 * ```ts
 * tokens$.pipe(
 *   segmentSentences(),
 *   resubmitSkipped(client.speak({ voice_id: 1 }), { maxAttempts: 2 }),
 *   concatSegments(),
 * );
 * ```
 *
 * @param speakOperator The live speech operator (`speak(connection, options)` or `client.speak(options)`).
 * @param options `maxAttempts` (default 2) and the text's `locale`.
 * @return A function that returns an Observable of the session's events.
 * @throws {ValidationError} At once, for bad options (`maxAttempts` not an integer >= 0, ...).
 */
export function resubmitSkipped(
  speakOperator: OperatorFunction<string, LiveSpeechEvent>,
  options: ResubmitSkippedOptions = {},
): OperatorFunction<string, LiveSpeechEvent> {
  const checked = checkOptions(OptionsSchema, { ...options, speakOperator }, 'resubmitSkipped');
  // a language other than English: its table is loaded first (the text waits: live/sentence-rules.ts)
  return (text$) =>
    afterSentenceRules(checked.locale, text$, (text) =>
      defer(() => {
        const run: Run = { speakOperator, maxAttempts: checked.maxAttempts ?? 2, locale: checked.locale, counts: new Map(), maxId: -1 };
        return session(run, text, 0);
      }),
    );
}

/** What the sessions of one subscription share. */
interface Run {
  readonly speakOperator: OperatorFunction<string, LiveSpeechEvent>;
  readonly maxAttempts: number;
  readonly locale: string | undefined;
  /** Resubmissions so far, per (whitespace-normalized) text, across sessions. */
  readonly counts: Map<string, number>;
  /** Largest segment id passed on so far (continuation sessions are shifted above it). */
  maxId: number;
}

/** One session: `source$` is its text; skips it cannot take go to a continuation session. */
function session(run: Run, source$: Observable<string>, idShift: number): Observable<LiveSpeechEvent> {
  return new Observable<LiveSpeechEvent>((subscriber) => new ResubmitSession(run, subscriber, idShift).start(source$));
}

function newSegmenter(locale: string | undefined): SentenceSegmenter {
  return createSentenceSegmenter(locale ? { locale } : {});
}

/** The state of one session of {@link resubmitSkipped}, and its steps. */
class ResubmitSession {
  private readonly segmenter: SentenceSegmenter;
  /** Skipped texts waiting to be pushed (into this session, or a continuation). */
  private held: string[] = [];
  /** The session's text input while it takes text. */
  private input: Subscriber<string> | undefined;
  private sourceDone = false;
  private continuation: Subscription | undefined;

  constructor(
    private readonly run: Run,
    private readonly subscriber: Subscriber<LiveSpeechEvent>,
    private readonly idShift: number,
  ) {
    this.segmenter = newSegmenter(run.locale);
  }

  /** Speak this session's text input; the teardown ends it and any continuation. */
  start(source$: Observable<string>): () => void {
    // Not `map`: a resubmission must go out after the skip event reached the consumer,
    // so that events stay in segment order even when the session answers synchronously.
    const subscription = this.textInput(source$).pipe(this.run.speakOperator).subscribe({
      next: (event) => this.onEvent(event),
      error: (error: unknown) => this.onError(error),
      complete: () => this.onComplete(),
    });
    return () => {
      subscription.unsubscribe();
      this.continuation?.unsubscribe();
    };
  }

  // --- text in ---------------------------------------------------------------

  /**
   * The session's text input: the source's text and any resubmission that became possible
   * while the source is open. Completes (text.done) with the source.
   */
  private textInput(source$: Observable<string>): Observable<string> {
    return new Observable<string>((inputSubscriber) => {
      this.input = inputSubscriber;
      const subscription = source$.subscribe({
        next: (text) => {
          this.pushed(text);
          inputSubscriber.next(text);
          this.flushHeld();
        },
        error: (error: unknown) => inputSubscriber.error(error),
        complete: () => {
          this.flushHeld();
          this.sourceDone = true;
          inputSubscriber.complete();
        },
      });
      return () => {
        subscription.unsubscribe();
        this.input = undefined;
      };
    });
  }

  /** Text that went into the session: followed for sentence boundaries. */
  private pushed(text: string): void {
    if (text.length === 0) return;
    this.segmenter.feed(text);
  }

  /**
   * Push held texts into this session, if it still takes text and the text pushed so far
   * ends at a sentence boundary. Each text goes between paragraph breaks, which end a
   * sentence whatever follows (contract, live session rule 1): the service cuts the
   * sentence before it even when the text starts in lower case (`quiet. q0 s` is no
   * sentence end), and the text is a segment of its own, never joined to the source's next
   * words. Only at a boundary of the text pushed: "everything pushed was accounted for"
   * would be a guess when the service flushed on idle, and a wrong guess put a resubmitted
   * text inside a sentence (issue 28, soak seed 1328580668).
   */
  private flushHeld(): void {
    const input = this.input;
    if (!input || this.sourceDone || this.held.length === 0) return;
    if (!this.segmenter.atBoundary()) return;
    const texts = this.held;
    this.held = [];
    for (const text of texts) {
      const out = `\n\n${text.trim()}\n\n`;
      this.pushed(out);
      input.next(out);
    }
  }

  // --- events out --------------------------------------------------------------

  private shift(id: number): number {
    const shifted = id + this.idShift;
    this.run.maxId = Math.max(this.run.maxId, shifted);
    return shifted;
  }

  private onEvent(event: LiveSpeechEvent): void {
    const { subscriber } = this;
    switch (event.type) {
      case 'segmentStart':
        subscriber.next({ ...event, segment_id: this.shift(event.segment_id) });
        return;
      case 'audio':
        subscriber.next(this.idShift === 0 ? event : { ...event, segment_id: event.segment_id + this.idShift });
        return;
      case 'segmentDone':
        subscriber.next({ ...event, segment_id: this.shift(event.segment_id) });
        this.flushHeld();
        return;
      case 'segmentSkipped':
        return this.onSkipped(event);
      case 'done':
        // session.done comes after every segment was accounted for: if texts are
        // held, a continuation session speaks them and its `done` is the last.
        if (this.held.length === 0) subscriber.next(event);
        return;
      default:
        subscriber.next(event);
    }
  }

  /** A skip: held for resubmission unless its text was resubmitted `maxAttempts` times (then final). */
  private onSkipped(event: Extract<LiveSpeechEvent, { type: 'segmentSkipped' }>): void {
    const key = normalize(event.text);
    const count = this.run.counts.get(key) ?? 0;
    const final = key === '' || count >= this.run.maxAttempts;
    if (!final) {
      this.run.counts.set(key, count + 1);
      this.held.push(event.text);
    }
    this.subscriber.next({ ...event, segment_id: this.shift(event.segment_id), final, resubmissions: count });
    this.flushHeld();
  }

  // --- endings -------------------------------------------------------------------

  /**
   * Skipped text held for resubmission (reported with `final: false`) was never pushed:
   * it is unspoken too, after the session's own unspoken text. The session's error is not
   * changed: an error of the same code carries it, and the whole unspoken text.
   */
  private onError(error: unknown): void {
    if (this.held.length === 0 || !(error instanceof LiveSessionError)) return this.subscriber.error(error);
    const unspoken = [error.unspoken.trim(), ...this.held.map((text) => text.trim())].filter((text) => text !== '').join(' ');
    this.held = [];
    const { code, message, closeCode, reason, retryable } = error;
    this.subscriber.error(liveSessionError(code, message, { unspoken, closeCode, reason, retryable, cause: error }));
  }

  /** The session ended: complete, or speak the texts still held in a continuation session. */
  private onComplete(): void {
    if (this.held.length === 0) return this.subscriber.complete();
    const texts = this.held.map((text) => `${text.trim()} `);
    this.held = [];
    const subscriber = this.subscriber;
    this.continuation = session(this.run, from(texts), this.run.maxId + 1).subscribe({
      next: (event) => subscriber.next(event),
      error: (error: unknown) => subscriber.error(error),
      complete: () => subscriber.complete(),
    });
  }
}
