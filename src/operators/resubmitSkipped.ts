import { defer, from, Observable, type OperatorFunction, type Subscriber, type Subscription } from 'rxjs';
import { LiveSessionError, liveSessionError } from '../core/errors.js';
import * as z from 'zod/mini';
import { func, integerAtLeast } from '../core/options.js';
import { checkOptions } from '../core/validation.js';
import type { LiveSpeechEvent } from '../live/events.js';
import { SpeechLedger } from '../live/ledger.js';
import { createSentenceSegmenter } from '../text/sentences.js';

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
 *   as soon as the text pushed so far ends at a sentence boundary (so it never lands
 *   inside a sentence), or everything pushed is accounted for.
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
  const maxAttempts = checked.maxAttempts ?? 2;
  const locale = checked.locale;
  const newSegmenter = () => createSentenceSegmenter(locale ? { locale } : {});
  return (text$) =>
    defer(() => {
      /** Resubmissions so far, per (whitespace-normalized) text, across sessions. */
      const counts = new Map<string, number>();
      /** Largest segment id passed on so far (continuation sessions are shifted above it). */
      let maxId = -1;

      /** One session: `source$` is its text; skips it cannot take go to a continuation. */
      const session = (source$: Observable<string>, idShift: number): Observable<LiveSpeechEvent> =>
        new Observable<LiveSpeechEvent>((subscriber) => {
          const ledger = new SpeechLedger({ locale });
          let segmenter = newSegmenter();
          /** Skipped texts waiting to be pushed (into this session, or a continuation). */
          let held: string[] = [];
          let input: Subscriber<string> | undefined;
          let sourceDone = false;
          let lastChar = ' ';
          let continuation: Subscription | undefined;

          const pushed = (text: string): void => {
            if (text.length === 0) return;
            ledger.push(text);
            segmenter.feed(text);
            lastChar = text[text.length - 1] ?? lastChar;
          };
          /** Push held texts into this session, if it still takes text and it is safe now. */
          const flushHeld = (): void => {
            if (!input || sourceDone || held.length === 0) return;
            const allAccounted = ledger.unspoken() === '';
            if (!allAccounted && !segmenter.atBoundary()) return;
            // Everything pushed was spoken or skipped: the service's buffer is empty, so is ours.
            if (allAccounted) segmenter = newSegmenter();
            const texts = held;
            held = [];
            for (const text of texts) {
              const out = `${/\s/.test(lastChar) ? '' : ' '}${text.trim()} `;
              pushed(out);
              input.next(out);
            }
          };

          // The session's text input: the source's text and any resubmission that became
          // possible while the source is open. Completes (text.done) with the source.
          const input$ = new Observable<string>((inputSubscriber) => {
            input = inputSubscriber;
            const subscription = source$.subscribe({
              next: (text) => {
                pushed(text);
                inputSubscriber.next(text);
                flushHeld();
              },
              error: (error: unknown) => inputSubscriber.error(error),
              complete: () => {
                flushHeld();
                sourceDone = true;
                inputSubscriber.complete();
              },
            });
            return () => {
              subscription.unsubscribe();
              input = undefined;
            };
          });

          const shift = (id: number): number => {
            const shifted = id + idShift;
            maxId = Math.max(maxId, shifted);
            return shifted;
          };

          // Not `map`: a resubmission must go out after the skip event reached the consumer,
          // so that events stay in segment order even when the session answers synchronously.
          const subscription = input$.pipe(speakOperator).subscribe({
            next: (event) => {
              switch (event.type) {
                case 'segmentStart':
                  ledger.segmentStarted(event.segment_id, event.text);
                  subscriber.next({ ...event, segment_id: shift(event.segment_id) });
                  return;
                case 'audio':
                  subscriber.next(idShift === 0 ? event : { ...event, segment_id: event.segment_id + idShift });
                  return;
                case 'segmentDone':
                  ledger.segmentDelivered(event.segment_id);
                  subscriber.next({ ...event, segment_id: shift(event.segment_id) });
                  flushHeld();
                  return;
                case 'reconnected':
                  ledger.resend();
                  subscriber.next(event);
                  return;
                case 'segmentSkipped': {
                  ledger.segmentSkipped(event.segment_id, event.text);
                  const key = normalize(event.text);
                  const count = counts.get(key) ?? 0;
                  const final = key === '' || count >= maxAttempts;
                  if (!final) {
                    counts.set(key, count + 1);
                    held.push(event.text);
                  }
                  subscriber.next({ ...event, segment_id: shift(event.segment_id), final, resubmissions: count });
                  flushHeld();
                  return;
                }
                case 'done':
                  // session.done comes after every segment was accounted for: if texts are
                  // held, a continuation session speaks them and its `done` is the last.
                  if (held.length === 0) subscriber.next(event);
                  return;
                default:
                  subscriber.next(event);
              }
            },
            error: (error: unknown) => {
              // Skipped text held for resubmission (reported with `final: false`) was never
              // pushed: it is unspoken too, after the session's own unspoken text. The
              // session's error is not changed: an error of the same code carries it, and
              // the whole unspoken text.
              if (held.length > 0 && error instanceof LiveSessionError) {
                const unspoken = [error.unspoken.trim(), ...held.map((text) => text.trim())].filter((text) => text !== '').join(' ');
                held = [];
                subscriber.error(
                  liveSessionError(error.code, error.message, {
                    unspoken,
                    closeCode: error.closeCode,
                    reason: error.reason,
                    retryable: error.retryable,
                    cause: error,
                  }),
                );
                return;
              }
              subscriber.error(error);
            },
            complete: () => {
              if (held.length === 0) {
                subscriber.complete();
                return;
              }
              const texts = held.map((text) => `${text.trim()} `);
              held = [];
              continuation = session(from(texts), maxId + 1).subscribe({
                next: (event) => subscriber.next(event),
                error: (error: unknown) => subscriber.error(error),
                complete: () => subscriber.complete(),
              });
            },
          });
          return () => {
            subscription.unsubscribe();
            continuation?.unsubscribe();
          };
        });

      return session(text$, 0);
    });
}
