import { concatMap, defer, type OperatorFunction } from 'rxjs';
import { parseWavHeader, wavDataBytes } from '../audio/wav.js';
import * as z from 'zod/mini';
import { func } from '../core/options.js';
import { checkOptions } from '../core/validation.js';
import type { SpokenSegment } from '../live/events.js';

/** One word on the timeline of a whole live session. */
export interface TimelineWord {
  /** Segment the word belongs to. */
  segment_id: number;
  word: string;
  /** Seconds from the start of the session's first segment audio. */
  start: number;
  end: number;
  /** Position of the word in the whole timeline, from 0. */
  index: number;
}

const OptionsSchema = z.object({ durationOf: z.optional(func<(segment: SpokenSegment) => number | undefined>()) });

/** Options of {@link wordTimeline}. */
export interface WordTimelineOptions {
  /**
   * Duration in seconds of a segment's audio. Default {@link segmentDuration}: exact for
   * WAV (data size / byte rate); for compressed formats the end of the segment's last
   * word (an approximation that ignores trailing silence).
   */
  durationOf?: (segment: SpokenSegment) => number | undefined;
}

/**
 * Duration in seconds of a segment's audio: for WAV, the data chunk size (or the bytes
 * actually present when the header holds a streaming placeholder) divided by the byte
 * rate. For other formats (or unreadable audio), the end of the last word, or 0.
 */
export function segmentDuration(segment: SpokenSegment): number {
  const info = parseWavHeader(segment.audio);
  if (info) {
    const byteRate = (info.sampleRate * info.channels * info.bitsPerSample) / 8;
    if (byteRate > 0) return wavDataBytes(info, segment.audio.byteLength - info.dataOffset) / byteRate;
  }
  const last = segment.word_timestamps[segment.word_timestamps.length - 1];
  return last ? last.end : 0;
}

/**
 * Puts the word timestamps of spoken segments on one timeline across segments.
 *
 * <span class="informal">Word timestamps of the service are relative to their segment;
 * played back to back, the segments make one timeline. This operator shifts each word by
 * the total duration of the audio of the segments before it.</span>
 *
 * Operator order: `speak(...)`, then `concatSegments()`, then `wordTimeline()`. It reads
 * whole segments, so it comes after `concatSegments()` (the raw events of `speak` do not
 * type-check as its input), and the session needs `word_timestamps: true`.
 *
 * For each {@link SpokenSegment} (from `concatSegments()`), emits one
 * {@link TimelineWord} per word timestamp, in order, with `start`/`end` in seconds from
 * the start of the first segment's audio, and a running `index`. The offset of a segment
 * is the sum of the durations of previous segments (exact for WAV: data size / byte
 * rate; see `durationOf`). A segment without word timestamps emits nothing but still
 * moves the offset.
 *
 * ```
 * segments:  --A-----B--|      (A: 2 words, 0.5 s; B: 1 word)
 * timeline:  --(aa)--b--|      (b starts at 0.5 s + its relative start)
 * ```
 *
 * Errors and completion pass through.
 *
 * ## Example
 * ```ts
 * import type { TimelineWord } from 'rxvoice/operators';
 *
 * const heard: TimelineWord[] = [];
 * text$.pipe(client.speak({ voice_id: 1, word_timestamps: true }), concatSegments(), wordTimeline())
 *   .subscribe((word) => heard.push(word));
 * // on barge-in after 3.2 s of playback: wordsHeardBy(heard, 3.2)
 * ```
 *
 * @param options `durationOf` to measure segments of a compressed format exactly.
 * @return A function that returns an Observable of {@link TimelineWord}s.
 * @throws {ValidationError} At once, when `durationOf` is given and not a function.
 */
export function wordTimeline(options: WordTimelineOptions = {}): OperatorFunction<SpokenSegment, TimelineWord> {
  const durationOf = checkOptions(OptionsSchema, options, 'wordTimeline').durationOf ?? segmentDuration;
  return (source) =>
    defer(() => {
      let offset = 0;
      let index = 0;
      return source.pipe(
        concatMap((segment) => {
          const base = offset;
          const words = segment.word_timestamps.map(
            (w): TimelineWord => ({
              segment_id: segment.segment_id,
              word: w.word,
              start: base + w.start,
              end: base + w.end,
              index: index++,
            }),
          );
          offset = base + (durationOf(segment) ?? segmentDuration(segment));
          return words;
        }),
      );
    });
}

/**
 * The words fully heard by `seconds` of playback (those that ended by then), in order.
 * With `partial: true`, also the word being spoken at that moment.
 */
export function wordsHeardBy(
  timeline: readonly TimelineWord[],
  seconds: number,
  options: { partial?: boolean } = {},
): TimelineWord[] {
  const epsilon = 1e-9;
  return timeline.filter((w) => (options.partial ? w.start < seconds - epsilon : w.end <= seconds + epsilon));
}
