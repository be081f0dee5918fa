/**
 * What browser playback (`toWebAudio`) emits, on the audio clock (`AudioContext.currentTime`,
 * seconds).
 */
import type { WordTimestamp } from '../live/protocol.js';

/**
 * A segment's first audio was scheduled: it will start sounding at `startTime`. Emitted
 * as soon as its first decodable bytes arrive (not on the audio clock), so a UI can show
 * the text before it is heard.
 */
export interface SegmentScheduledEvent {
  type: 'segmentScheduled';
  segment_id: number;
  text: string;
  words: WordTimestamp[];
  /** Audio-clock time of the segment's first sample. */
  startTime: number;
  /** Audio-clock time when the segment's first audio frame reached the player. */
  receivedTime: number;
}
/** The segment's first sample is playing now (emitted when the audio clock reaches it). */
export interface SegmentPlayingEvent {
  type: 'segmentPlaying';
  segment_id: number;
  text: string;
  /** Audio-clock time of the segment's first sample. */
  time: number;
}
/** A word is heard now: emitted when the audio clock reaches the sample its timestamp names. */
export interface HeardWord {
  type: 'word';
  segment_id: number;
  /** Index of the word in the segment's `word_timestamps`. */
  index: number;
  word: string;
  /** Seconds from the segment's start, as the service gave them. */
  start: number;
  end: number;
  /** Audio-clock time of the word's first sample. */
  time: number;
}
/** The segment's last sample has played. */
export interface SegmentPlayedEvent {
  type: 'segmentPlayed';
  segment_id: number;
  /** Audio-clock time just after its last sample. */
  time: number;
}
/** The service skipped a segment (its text was never synthesized); passed on as it arrives. */
export interface SegmentSkippedPlaybackEvent {
  type: 'segmentSkipped';
  segment_id: number;
  text: string;
}
/** Every segment has played; the output completes right after. */
export interface PlaybackEndedEvent {
  type: 'ended';
  /** Audio-clock time just after the last sample. */
  time: number;
}

/** What `toWebAudio` emits, discriminated by `type`. */
export type PlaybackEvent =
  | SegmentScheduledEvent
  | SegmentPlayingEvent
  | HeardWord
  | SegmentPlayedEvent
  | SegmentSkippedPlaybackEvent
  | PlaybackEndedEvent;
