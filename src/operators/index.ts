export { parseSse, type ParseSseOptions } from './parseSse.js';
// The incremental SSE parser under parseSse (also what the client's translateStream feeds), and its error.
export { createSseParser, SseError, type SseEvent, type SseParser, type SseParserOptions, type SseErrorType } from '../text/sse.js';
export { concatSegments, DEFAULT_MAX_SEGMENT_BYTES, type ConcatSegmentsOptions } from './concatSegments.js';
export { resubmitSkipped, type ResubmitSkippedOptions } from './resubmitSkipped.js';
export {
  wordTimeline,
  wordsHeardBy,
  segmentDuration,
  type TimelineWord,
  type WordTimelineOptions,
} from './wordTimeline.js';
export { segmentSentences, type SegmentSentencesOptions } from './segmentSentences.js';
export {
  speakableText,
  type SpeakableTextOptions,
  type SpeakablePiece,
  type CodeBlockMode,
  type HiddenBlock,
  type HiddenKind,
  type LinkMode,
  type Lexicon,
  type LexiconRule,
  type NumberWords,
} from './speakableText.js';
export { createSpeakableText, loadNumberWords, type SpeakableTextCore } from '../text/speakable.js';
