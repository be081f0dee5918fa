/**
 * What a live speech session emits (`client.speak`): one discriminated union, built from
 * server frames that were parsed with the zod schemas in `protocol.ts`.
 */
import type { LiveOutputFormat, WordTimestamp } from './protocol.js';

/** The session is ready (`session.ready`): its id, its run and the configuration the server echoed. */
export interface ReadyEvent {
  type: 'ready';
  session_id: string;
  run_id: number;
  /** The configuration the server echoed (output_format, sample_rate, ...). */
  config: Record<string, unknown>;
}
/**
 * A segment begins (`segment.start`): its text, and its word timestamps (seconds, relative to
 * the segment's audio) when `word_timestamps` was requested and the lookup succeeded.
 */
export interface SegmentStartEvent {
  type: 'segmentStart';
  segment_id: number;
  /** The text spoken (what was sent, as the service segmented it). */
  text: string;
  /**
   * With `client.speak({ speakable })`: the text as written before it was made speakable
   * (`SQL` for the lexicon's `sequel`, the URL for its host, `$3.50` for its spoken form;
   * markup and thoughts left out), for captions. Absent when the segment could not be found in
   * what was sent (the service reworded it).
   */
  sourceText?: string;
  word_timestamps?: SegmentWordTimestamp[];
  /**
   * A segment replayed from a speech cache (`rxvoice/cache`): its audio was stored, no service
   * segment stands behind it and nothing was paid for it. Absent on a live segment.
   */
  cached?: true;
}
/**
 * A word of a segment and when it is spoken; with `client.speak({ speakable })`, `source` is
 * the word(s) as written that it was spoken for (all three of `three dollars fifty` have
 * `$3.50`).
 */
export type SegmentWordTimestamp = WordTimestamp & {
  /** The original word(s) this spoken word came from (set with `speakable`). */
  source?: string;
};
/** One binary audio frame of the segment most recently started (at most 64 KiB). */
export interface AudioEvent {
  type: 'audio';
  segment_id: number;
  bytes: Uint8Array;
}
/** Every audio frame of the segment was emitted (`segment.done`): its text is delivered. */
export interface SegmentDoneEvent {
  type: 'segmentDone';
  segment_id: number;
}
/**
 * Synthesis of the segment failed after the service's retries (`segment.skipped`); the
 * session goes on. Its text may be pushed again (see `resubmitSkipped`).
 */
export interface SegmentSkippedEvent {
  type: 'segmentSkipped';
  segment_id: number;
  text: string;
  /**
   * Set by `resubmitSkipped`: false when the text was pushed again (it will come back as
   * a later segment), true when it will not be tried again (attempts exhausted).
   */
  final?: boolean;
  /** Set by `resubmitSkipped`: how many times this text had been resubmitted before this skip. */
  resubmissions?: number;
}
/**
 * The service's text for a segment (`segment.start` or `segment.skipped`) differs from the
 * text rxvoice sent for it (compared with case, width and whitespace folded): the service
 * normalized it ("Doctor" for "Dr."), or segmented differently than the contract's rule. Emitted
 * right after that segment's `segmentStart` (or `segmentSkipped`). Nothing is lost either way:
 * what is re-sent or reported unspoken is decided from the text sent, never from the service's
 * wording.
 */
export interface SegmentMismatchEvent {
  type: 'segmentMismatch';
  segment_id: number;
  /** The text rxvoice sent that this segment covers. */
  sent: string;
  /** The text the service reported for it. */
  reported: string;
}
/** A new session replaced one that closed abnormally; `resent` is the text sent again. */
export interface ReconnectedEvent {
  type: 'reconnected';
  attempt: number;
  session_id: string;
  run_id: number;
  resent: string;
}
/**
 * The live session stalled (`stall` option): this sentence had not started `afterMs` after it
 * was sent (or after the previous segment ended), so it is spoken over `POST /tts-stream`
 * instead; its `segmentStart`, `audio` and `segmentDone` follow, as for a live segment. Once a
 * session falls back, every later sentence does too (the live socket is closed).
 */
export interface SegmentFallbackEvent {
  type: 'segmentFallback';
  segment_id: number;
  text: string;
  /** Why: the live session made no progress for `afterMs`. */
  reason: 'stall';
  afterMs: number;
}
/** All work is finished (`session.done`); the output completes after the clean close. */
export interface DoneEvent {
  type: 'done';
}

/** What a live speech session (`speak`, `client.speak`) emits, discriminated by `type`. */
export type LiveSpeechEvent =
  | ReadyEvent
  | SegmentStartEvent
  | AudioEvent
  | SegmentDoneEvent
  | SegmentSkippedEvent
  | SegmentMismatchEvent
  | ReconnectedEvent
  | SegmentFallbackEvent
  | DoneEvent;

/** One spoken segment with its audio concatenated (from `concatSegments()`). */
export interface SpokenSegment {
  segment_id: number;
  text: string;
  word_timestamps: WordTimestamp[];
  /** The segment's audio: a whole playable file in `format` (for wav: header + PCM). */
  audio: Uint8Array;
  /** Output format of the session, when the `ready` event told it. */
  format: LiveOutputFormat | undefined;
}
