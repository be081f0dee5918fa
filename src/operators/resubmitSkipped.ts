import { defer, Observable, type OperatorFunction, type Subscriber } from 'rxjs';
import type { LiveSpeechEvent } from '../live/events.js';
import { SpeechLedger } from '../live/ledger.js';
import { createSentenceSegmenter } from '../text/sentences.js';

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
 * (`segment.skipped`, the session goes on). This pushes the skipped text into the same
 * session again, as new text, up to `maxAttempts` times per text.</span>
 *
 * Use it around `speak` (or `client.speak`):
 * `text$.pipe(resubmitSkipped(client.speak({ voice_id: 1 }), { maxAttempts: 2 }))`.
 * It merges the resubmitted text into the session's text input, so the session, its
 * ledger, reconnects and errors treat it like any other text.
 *
 * What to expect:
 * - Every `segmentSkipped` event is passed on, with `final: false` when its text was
 *   pushed again and `final: true` when it will not be (it was already resubmitted
 *   `maxAttempts` times); `resubmissions` tells how many times it had been. A final skip
 *   is not an error: the session goes on and completes normally; the text is reported
 *   on that event.
 * - The resubmitted text becomes a later segment: audio order is the service's segment
 *   order, so the text is spoken after the segments that were already queued, not in
 *   its original place. Its segment has a new, larger `segment_id`.
 * - Resubmitting waits for a sentence boundary in the text pushed so far (so it never
 *   lands in the middle of a sentence), or for the end of the input, or for everything
 *   pushed to be accounted for.
 * - `text.done` is held back until every text pushed is delivered or finally skipped
 *   (the session must stay open to take resubmissions). Trailing text without a
 *   sentence boundary is then flushed by the service's `idle_timeout`, so the end of the
 *   session can take up to `idle_timeout` longer than without this wrapper.
 *
 * ```
 * text:     -a-b-|
 * events:   r-s-d-k(a)--s-d-D|      k = segmentSkipped for "b" (final: false), then "b" again
 * ```
 *
 * Errors of the text source or of the session are passed through.
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
 */
export function resubmitSkipped(
  speakOperator: OperatorFunction<string, LiveSpeechEvent>,
  options: ResubmitSkippedOptions = {},
): OperatorFunction<string, LiveSpeechEvent> {
  const maxAttempts = options.maxAttempts ?? 2;
  if (!Number.isInteger(maxAttempts) || maxAttempts < 0) throw new RangeError('maxAttempts must be a non-negative integer');
  return (text$) =>
    defer(() => {
      const ledger = new SpeechLedger();
      const segmenter = createSentenceSegmenter(options.locale ? { locale: options.locale } : {});
      const counts = new Map<string, number>();
      let input: Subscriber<string> | undefined;
      let held: string[] = [];
      let sourceDone = false;
      let lastChar = ' ';

      const pushed = (text: string): void => {
        if (text.length === 0) return;
        ledger.push(text);
        segmenter.feed(text);
        lastChar = text[text.length - 1] ?? lastChar;
      };
      // At a sentence boundary when the buffered text would end as a sentence if another
      // sentence followed (the segmenter waits for the next character to decide).
      const atBoundary = (): boolean => {
        const pending = segmenter.pending();
        if (pending.trim() === '') return true;
        const probe = createSentenceSegmenter(options.locale ? { locale: options.locale } : {});
        const pieces = probe.feed(`${pending} A`);
        return pieces.join('').trimEnd().length >= pending.trimEnd().length;
      };
      const flushHeld = (force: boolean): void => {
        if (!input || held.length === 0 || !(force || atBoundary() || ledger.unspoken() === '')) return;
        const texts = held;
        held = [];
        for (const text of texts) {
          const out = `${/\s/.test(lastChar) ? '' : ' '}${text.trim()} `;
          pushed(out);
          input.next(out);
        }
      };
      const maybeEnd = (): void => {
        if (sourceDone && held.length === 0 && ledger.unspoken() === '') input?.complete();
      };

      // The session's text input: the source's text, then (after each piece went out)
      // any resubmission that became possible. Completes (text.done) only when
      // everything pushed was delivered or finally skipped.
      const input$ = new Observable<string>((subscriber) => {
        input = subscriber;
        const subscription = text$.subscribe({
          next: (text) => {
            pushed(text);
            subscriber.next(text);
            flushHeld(false);
          },
          error: (error: unknown) => subscriber.error(error),
          complete: () => {
            sourceDone = true;
            flushHeld(true);
            maybeEnd();
          },
        });
        return () => {
          subscription.unsubscribe();
          input = undefined;
        };
      });

      const events$ = input$.pipe(speakOperator);
      // Not `map`: a resubmission must go out after the skip event reached the consumer,
      // so that events stay in segment order even when the session answers synchronously.
      return new Observable<LiveSpeechEvent>((subscriber) =>
        events$.subscribe({
          next: (event) => {
            switch (event.type) {
              case 'segmentStart':
                ledger.segmentStarted(event.segment_id, event.text);
                subscriber.next(event);
                return;
              case 'segmentDone':
                ledger.segmentDelivered(event.segment_id);
                subscriber.next(event);
                flushHeld(sourceDone);
                maybeEnd();
                return;
              case 'reconnected':
                ledger.abortInProgress();
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
                subscriber.next({ ...event, final, resubmissions: count });
                flushHeld(sourceDone);
                maybeEnd();
                return;
              }
              default:
                subscriber.next(event);
            }
          },
          error: (error: unknown) => {
            // Skipped text held for resubmission (reported with `final: false`) was never
            // pushed: it is unspoken too, after the session's own unspoken text.
            if (held.length > 0 && error !== null && typeof error === 'object' && Object.isExtensible(error)) {
              const carrier = error as { unspoken?: unknown };
              const before = typeof carrier.unspoken === 'string' ? carrier.unspoken.trim() : '';
              carrier.unspoken = [before, ...held.map((text) => text.trim())].filter((text) => text !== '').join(' ');
              held = [];
            }
            subscriber.error(error);
          },
          complete: () => subscriber.complete(),
        }),
      );
    });
}
