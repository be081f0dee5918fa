/**
 * What a live speech session emits (`client.speak`): one discriminated union, built from
 * server frames that were parsed with the zod schemas in `protocol.ts`.
 */
import type { LiveOutputFormat, WordTimestamp } from './protocol.js';

export interface ReadyEvent {
  type: 'ready';
  session_id: string;
  run_id: number;
  /** The configuration the server echoed (output_format, sample_rate, ...). */
  config: Record<string, unknown>;
}
export interface SegmentStartEvent {
  type: 'segmentStart';
  segment_id: number;
  text: string;
  word_timestamps?: WordTimestamp[];
}
export interface AudioEvent {
  type: 'audio';
  segment_id: number;
  bytes: Uint8Array;
}
export interface SegmentDoneEvent {
  type: 'segmentDone';
  segment_id: number;
}
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
/** A new session replaced one that closed abnormally; `resent` is the text sent again. */
export interface ReconnectedEvent {
  type: 'reconnected';
  attempt: number;
  session_id: string;
  run_id: number;
  resent: string;
}
export interface DoneEvent {
  type: 'done';
}

export type LiveSpeechEvent =
  | ReadyEvent
  | SegmentStartEvent
  | AudioEvent
  | SegmentDoneEvent
  | SegmentSkippedEvent
  | ReconnectedEvent
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
