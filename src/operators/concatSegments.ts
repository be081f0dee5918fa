import { filter, map, Observable, type OperatorFunction } from 'rxjs';
import { LimitExceededError } from '../core/errors.js';
import { checkNumber, optionIssues, throwIfIssues } from '../core/checks.js';
import { LIVE_OUTPUT_FORMATS } from '../core/live-formats.js';
import { concatBytes } from '../core/bytes.js';
import type { LiveSpeechEvent, SpokenSegment } from '../live/events.js';
import type { LiveOutputFormat, WordTimestamp } from '../live/protocol.js';

interface Pending {
  segment_id: number;
  text: string;
  word_timestamps: WordTimestamp[];
  chunks: Uint8Array[];
  bytes: number;
}

/** Default {@link ConcatSegmentsOptions.maxSegmentBytes}: 64 MiB (over 11 minutes of 48 kHz 16-bit mono WAV). */
export const DEFAULT_MAX_SEGMENT_BYTES = 64 * 1024 * 1024;

/** Options of {@link concatSegments}. */
export interface ConcatSegmentsOptions {
  /**
   * Most audio bytes held for one segment; a segment growing past it ends the stream with
   * a `LimitExceededError` (`option: 'maxSegmentBytes'`). Default
   * {@link DEFAULT_MAX_SEGMENT_BYTES} (64 MiB), far beyond any spoken sentence.
   */
  maxSegmentBytes?: number;
}

/** The options checked as `z.object({ maxSegmentBytes: z.optional(z.int().check(z.positive())) })` would (test/operators/option-checks.test.ts), without loading zod. */
function checkConcatOptions(options: unknown): ConcatSegmentsOptions {
  const issues = optionIssues();
  if (typeof options !== 'object' || options === null || Array.isArray(options)) issues.out.push({ loc: ['options'], msg: 'must be an object', type: 'object_type' });
  else {
    const { maxSegmentBytes } = options as ConcatSegmentsOptions;
    const positive = 'must be a positive integer';
    if (maxSegmentBytes !== undefined) checkNumber(issues, 'maxSegmentBytes', maxSegmentBytes, { int: true, msg: positive, min: [0, false, positive] });
  }
  throwIfIssues(issues.out, 'concatSegments');
  return options as ConcatSegmentsOptions;
}

function formatOf(config: Record<string, unknown>): LiveOutputFormat | undefined {
  const value = config['output_format'];
  return typeof value === 'string' && (LIVE_OUTPUT_FORMATS as readonly string[]).includes(value)
    ? (value as LiveOutputFormat)
    : undefined;
}

/**
 * Collects the audio of each live segment and emits one {@link SpokenSegment} per
 * segment, when it is done.
 *
 * <span class="informal">From the event stream of `speak` to whole segments: text, word
 * timestamps and one playable audio file each, in segment order.</span>
 *
 * Audio chunks of a segment are kept in an array and joined once, at `segmentDone`,
 * into a single `Uint8Array` of the total size (one allocation, no quadratic copying,
 * and no view into the transport's buffers). `format` comes from the `ready` event's
 * `config.output_format`.
 *
 * Skipped segments emit nothing (their text is on the `segmentSkipped` event, which
 * `resubmitSkipped` handles). A segment abandoned by a reconnect (a `reconnected` event,
 * or a new `segmentStart`, before its `segmentDone`) is dropped, as is a partial segment
 * when the source errors or completes. Memory holds at most one segment's audio, and at
 * most `maxSegmentBytes` of it: a segment whose audio grows past that (a service that never
 * ends a segment) ends the stream with a `LimitExceededError` naming the option, instead of
 * growing memory without bound.
 *
 * ```
 * events:   r-s-a-a-d-s-a-d-|
 * concat:   --------S-----S-|
 * ```
 *
 * Errors and completion of the source are passed through. A bad `maxSegmentBytes` (not a
 * positive integer) throws a `ValidationError` (at `options.maxSegmentBytes`) when the
 * operator is created.
 *
 * ## Example
 * ```ts
 * text$.pipe(client.speak({ voice_id: 1 }), concatSegments())
 *   .subscribe((segment) => player.enqueue(segment.audio));
 * ```
 *
 * @param options `maxSegmentBytes` (default 64 MiB).
 * @throws {ValidationError} At once, for a `maxSegmentBytes` that is not a positive integer.
 * @return A function that returns an Observable of {@link SpokenSegment}s, in order.
 */
export function concatSegments(options: ConcatSegmentsOptions = {}): OperatorFunction<LiveSpeechEvent, SpokenSegment> {
  const { maxSegmentBytes = DEFAULT_MAX_SEGMENT_BYTES } = checkConcatOptions(options);
  // Per-subscription state, as `defer` gives, written out: `defer` converts whatever its
  // factory returns (promises, iterables, async iterables, streams), code that a browser page
  // would download for nothing here (about 1.7 KB gzipped with rxjs's ES5 build and its tslib
  // helpers: bench/bundle.ts).
  return (source) =>
    new Observable<SpokenSegment>((subscriber) => {
      let format: LiveOutputFormat | undefined;
      let pending: Pending | undefined;
      return source.pipe(
        map((event): SpokenSegment | undefined => {
          switch (event.type) {
            case 'ready':
              format = formatOf(event.config);
              return undefined;
            case 'segmentStart':
              pending = {
                segment_id: event.segment_id,
                text: event.text,
                word_timestamps: event.word_timestamps ?? [],
                chunks: [],
                bytes: 0,
              };
              return undefined;
            case 'audio':
              if (pending && pending.segment_id === event.segment_id) {
                pending.bytes += event.bytes.byteLength;
                if (pending.bytes > maxSegmentBytes) {
                  const id = pending.segment_id;
                  pending = undefined;
                  throw new LimitExceededError(
                    'maxSegmentBytes',
                    maxSegmentBytes,
                    `concatSegments: segment ${id} has more than maxSegmentBytes (${maxSegmentBytes} bytes) of audio`,
                  );
                }
                pending.chunks.push(event.bytes);
              }
              return undefined;
            case 'segmentDone': {
              const done = pending;
              pending = undefined;
              if (!done || done.segment_id !== event.segment_id) return undefined;
              return {
                segment_id: done.segment_id,
                text: done.text,
                word_timestamps: done.word_timestamps,
                audio: concatBytes(done.chunks),
                format,
              };
            }
            case 'reconnected':
            case 'segmentSkipped':
              pending = undefined;
              return undefined;
            default:
              return undefined;
          }
        }),
        filter((segment): segment is SpokenSegment => segment !== undefined),
      ).subscribe(subscriber);
    });
}
