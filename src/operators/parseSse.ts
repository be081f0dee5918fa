import { Observable, type OperatorFunction } from 'rxjs';
import { checkSseOptions, createSseParser, type SseEvent } from '../text/sse.js';

export type { SseEvent } from '../text/sse.js';
export { SseError } from '../text/sse.js';

/** Options of {@link parseSse}. */
export interface ParseSseOptions {
  /** Called with each valid `retry` value (ms) as its line is read. */
  onRetry?: (retry: number) => void;
  /** Called with each comment line's text (after the `:` and one optional space). */
  onComment?: (comment: string) => void;
  /** Longest line accepted, in UTF-16 code units, a positive integer. Default 1 MiB (1_048_576). */
  maxLineLength?: number;
  /**
   * Most characters held for one event (its `data` so far plus an unfinished line), in
   * UTF-16 code units, a positive integer; no event with longer `data` is emitted.
   * Default 16 MiB.
   */
  maxEventSize?: number;
}

/**
 * Parses a server-sent event stream: chunks of UTF-8 bytes or text in, events out.
 *
 * <span class="informal">Chunks may split lines, CRLF pairs and multibyte characters
 * anywhere; events come out exactly as an `EventSource` would dispatch them.</span>
 *
 * Each subscription gets its own incremental parser (`createSseParser`, exported from
 * this entry too, a wrapper of eventsource-parser), fed every source chunk in turn. An event is emitted at each blank line that
 * ends an event with at least one `data` line: `{ event, data, id?, retry? }`, with
 * `event` defaulting to `message`, `data` lines joined with `\n`, `id` present when this
 * event set one, `retry` when a valid `retry:` line came since the previous event. Comments are skipped (see
 * `onComment`).
 *
 * ```text
 * source:   -a-------b--------c-|
 *            'data: x\n'  '\n'  'data: y\n\n'
 * parseSse: ---------X--------Y-|
 *                   {event:'message',data:'x'}  {event:'message',data:'y'}
 * ```
 *
 * On complete, the decoder is flushed and an event not ended by a blank line is dropped,
 * then the output completes. A source error is passed through. A line longer than
 * `maxLineLength` or an event larger than `maxEventSize` errors the output with an
 * `SseError` (code `sse`) instead of buffering without bound.
 *
 * ## Example
 * ```ts
 * import { from, map } from 'rxjs';
 * import { parseSse } from 'rxvoice/operators';
 *
 * from(['data: hel', 'lo\n\ndata: world\n\n'])
 *   .pipe(parseSse(), map((e) => e.data))
 *   .subscribe(console.log); // hello, world
 * ```
 *
 * @param options Limits and the `onRetry` / `onComment` callbacks. A limit that is not a
 * positive integer, or a callback that is not a function, throws a `ValidationError`
 * (issues at `['options', ...]`) at once, when `parseSse()` is called.
 * @returns A function that returns an Observable of the parsed events.
 */
export function parseSse(options: ParseSseOptions = {}): OperatorFunction<Uint8Array | string, SseEvent> {
  checkSseOptions(options, 'parseSse');
  return (source) =>
    new Observable<SseEvent>((subscriber) => {
      const parser = createSseParser({
        ...options,
        onEvent: (event) => subscriber.next(event),
      });
      const subscription = source.subscribe({
        next(chunk) {
          try {
            parser.feed(chunk);
          } catch (error) {
            subscriber.error(error);
          }
        },
        error(error) {
          parser.reset();
          subscriber.error(error);
        },
        complete() {
          try {
            parser.end();
          } catch (error) {
            subscriber.error(error);
            return;
          }
          subscriber.complete();
        },
      });
      return () => {
        subscription.unsubscribe();
        parser.reset();
      };
    });
}
