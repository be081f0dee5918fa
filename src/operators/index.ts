export { parseSse, type ParseSseOptions, type SseEvent, SseError } from './parseSse.js';
export { concatSegments, DEFAULT_MAX_SEGMENT_BYTES, type ConcatSegmentsOptions } from './concatSegments.js';
export type { SpokenSegment } from '../live/events.js';
export { resubmitSkipped, type ResubmitSkippedOptions } from './resubmitSkipped.js';
export {
  wordTimeline,
  wordsHeardBy,
  segmentDuration,
  type TimelineWord,
  type WordTimelineOptions,
} from './wordTimeline.js';
export { segmentSentences, type SegmentSentencesOptions } from './segmentSentences.js';
export { speakableText, type SpeakableTextOptions, type SpeakablePiece, type CodeBlockMode } from './speakableText.js';
export { createSpeakableText, type SpeakableTextCore } from '../text/speakable.js';
