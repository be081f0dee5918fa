/**
 * What the listener heard: the text of a live session cut at a word boundary after some
 * seconds of its audio were played. A pure, incremental core (`HeardTracker`) fed with the
 * session's events or spoken segments, and `heardText`, the one-call form.
 */
import * as z from 'zod/mini';
import { parseWavHeader } from '../audio/wav.js';
import { ValidationError } from '../core/errors.js';
import type { LiveSpeechEvent, SpokenSegment } from './events.js';
import type { WordTimestamp } from './protocol.js';

/** How the cut was placed: from the service's word timestamps, or estimated from audio length and characters. */
export const HeardMethodSchema = z.enum(['timestamps', 'estimated']);
/** How the cut of a {@link HeardReport} was placed. */
export type HeardMethod = z.infer<typeof HeardMethodSchema>;

/** The schema of a {@link HeardReport} (what every playing sink reports). */
export const HeardReportSchema = z.object({
  /** The text whose words had finished sounding, from the start of the session. */
  heard: z.string(),
  /** The rest of the session's text: `heard + unheard` is the whole text. */
  unheard: z.string(),
  /** Seconds of the session's audio that were played, in order. */
  playedSeconds: z.number(),
  /** True when nothing is unheard. */
  complete: z.boolean(),
  /** How the cut was placed: `'timestamps'` when every segment up to the cut had word timestamps. */
  method: HeardMethodSchema,
});
/** What was heard of a session: `heard + unheard` is the session's text, cut at a word boundary. */
export type HeardReport = z.infer<typeof HeardReportSchema>;

/** What {@link heardText} reads: the events of `speak()`, or segments from `concatSegments()`. */
export type HeardInput = LiveSpeechEvent | SpokenSegment;

/** Characters per second assumed when a segment's audio length is unknown (compressed, no timestamps). */
const NOMINAL_CHARS_PER_SECOND = 14;
/** Bytes of a segment's start kept to read its WAV header. */
const HEADER_BYTES = 512;
const EPSILON = 1e-6;

interface TrackedSegment {
  id: number;
  text: string;
  words: WordTimestamp[];
  header: Uint8Array;
  bytes: number;
  /** Seconds given by the player (decoded audio), which wins over the estimate. */
  seconds: number | undefined;
  done: boolean;
}

/**
 * Follows a session's text and audio lengths, and tells at any moment what `playedSeconds`
 * of its audio carried. Memory: the text, the timestamps and a few hundred bytes a segment.
 *
 * ## Example
 * ```ts
 * import { HeardTracker } from 'rxvoice/live';
 *
 * const tracker = new HeardTracker();
 * // speech$.subscribe((event) => tracker.push(event)); ... then, on barge-in:
 * const report = tracker.report(2.4);
 * console.log(report.heard, '|', report.unheard);
 * ```
 */
export class HeardTracker {
  private readonly segments: TrackedSegment[] = [];
  private current: TrackedSegment | undefined;

  /** Feeds one event of `speak()` or one spoken segment. Other values are ignored. */
  push(input: HeardInput): void {
    if (!('type' in input)) {
      const segment = this.open(input.segment_id, input.text, input.word_timestamps);
      this.addAudio(segment, input.audio);
      segment.done = true;
      this.current = undefined;
      return;
    }
    switch (input.type) {
      case 'segmentStart':
        this.current = this.open(input.segment_id, input.text, input.word_timestamps ?? []);
        return;
      case 'audio':
        if (this.current?.id === input.segment_id) this.addAudio(this.current, input.bytes);
        return;
      case 'segmentDone':
        if (this.current?.id === input.segment_id) this.current.done = true;
        return;
      case 'reconnected':
        // the segment that was arriving is spoken again by the new session: its audio stays on
        // the timeline, its text is not counted twice
        if (this.current && !this.current.done) this.current.text = '';
        this.current = undefined;
        return;
      default:
        return;
    }
  }

  /** Sets the exact length of a segment's audio (a player that decoded it knows it): the latest segment with that id. */
  setDuration(segment_id: number, seconds: number): void {
    if (!Number.isFinite(seconds) || seconds < 0) return;
    for (let i = this.segments.length - 1; i >= 0; i--) {
      const segment = this.segments[i]!;
      if (segment.id !== segment_id) continue;
      segment.seconds = seconds;
      return;
    }
  }

  /** Seconds of audio of every segment so far. */
  get totalSeconds(): number {
    return this.segments.reduce((sum, segment) => sum + durationOf(segment), 0);
  }

  /** The session's text so far (the segments' texts, in order). */
  get text(): string {
    return this.segments.map((s) => s.text).join('');
  }

  /** What `playedSeconds` seconds of the audio (from its start, in order) carried. */
  report(playedSeconds: number): HeardReport {
    checkSeconds(playedSeconds);
    let heard = '';
    let method: HeardMethod = 'timestamps';
    let offset = 0;
    let cut = false;
    const rest: string[] = [];
    for (const segment of this.segments) {
      if (cut) {
        rest.push(segment.text);
        continue;
      }
      const seconds = durationOf(segment);
      if (segment.words.length === 0 && segment.text.trim() !== '') method = 'estimated';
      // a segment without audio (an empty WAV) is heard once the playback has reached it, so
      // that the segments after it count when played (nothing is heard before anything played)
      const played = seconds > 0 ? playedSeconds + EPSILON >= offset + seconds : playedSeconds > EPSILON && playedSeconds + EPSILON >= offset;
      if (played) {
        heard += segment.text;
        offset += seconds;
        continue;
      }
      let at = cutIndex(segment, playedSeconds - offset, seconds);
      if (heard === '' && segment.text.slice(0, at).trim() === '') at = 0; // nothing heard yet: not even the spaces before it
      heard += segment.text.slice(0, at);
      rest.push(segment.text.slice(at));
      cut = true;
    }
    const unheard = rest.join('');
    return { heard, unheard, playedSeconds, complete: unheard === '', method };
  }

  private open(id: number, text: string, words: readonly WordTimestamp[]): TrackedSegment {
    const segment: TrackedSegment = { id, text, words: [...words], header: new Uint8Array(0), bytes: 0, seconds: undefined, done: false };
    this.segments.push(segment);
    return segment;
  }

  private addAudio(segment: TrackedSegment, bytes: Uint8Array): void {
    if (segment.header.byteLength < HEADER_BYTES) {
      const take = bytes.subarray(0, HEADER_BYTES - segment.header.byteLength);
      const header = new Uint8Array(segment.header.byteLength + take.byteLength);
      header.set(segment.header);
      header.set(take, segment.header.byteLength);
      segment.header = header;
    }
    segment.bytes += bytes.byteLength;
  }
}

/**
 * What the listener heard of a live session after `playedSeconds` seconds of its audio.
 *
 * <span class="informal">The words whose audio had ended by then are heard; the cut is at a
 * word boundary, and `heard + unheard` is the session's text (the texts of its segments, in
 * order).</span>
 *
 * Word timestamps place the cut when the session has them (`word_timestamps: true`); else it
 * is estimated from the segment's audio length (WAV header and bytes) and its characters
 * (`method: 'estimated'`). Segments follow each other on one timeline, each as long as its
 * audio. Skipped segments have no audio and are not in the text (see `resubmitSkipped`).
 * The text is what the service reported for the segments started so far: after an
 * interruption, text the service had not yet begun is in neither part (the application knows
 * what it sent; `heard` is what matters for the LLM's history).
 *
 * ## Example
 * ```ts
 * import { heardText, type LiveSpeechEvent } from 'rxvoice/live';
 *
 * declare const events: LiveSpeechEvent[]; // what speak() emitted
 * const { heard, unheard, method } = heardText(events, 1.8);
 * console.log(`heard (${method}): ${heard}`, `not heard: ${unheard}`); // keep only `heard` in the LLM's history
 * ```
 *
 * @param events The session's events (from `speak()`) or its segments (from `concatSegments()`), in order.
 * @param playedSeconds Seconds of the session's audio that were played.
 * @return A {@link HeardReport}.
 * @throws {ValidationError} When `playedSeconds` is not a finite number of seconds from 0.
 */
export function heardText(events: Iterable<HeardInput>, playedSeconds: number): HeardReport {
  checkSeconds(playedSeconds);
  const tracker = new HeardTracker();
  for (const event of events) tracker.push(event);
  return tracker.report(playedSeconds);
}

function checkSeconds(seconds: number): void {
  if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds < 0) {
    throw new ValidationError([{ loc: ['playedSeconds'], msg: 'must be a finite number of seconds from 0', type: 'value_error' }], {
      source: 'local',
    });
  }
}

/** Seconds of a segment's audio: given, else from its WAV header and bytes, else its last word, else from its characters. */
function durationOf(segment: TrackedSegment): number {
  if (segment.seconds !== undefined) return segment.seconds;
  const info = parseWavHeader(segment.header);
  if (info) {
    const byteRate = (info.sampleRate * info.channels * info.bitsPerSample) / 8;
    const present = segment.bytes - info.dataOffset;
    const declared = info.dataBytes;
    const data = declared === 0 || declared === 0xffffffff || declared > present ? present : declared;
    if (byteRate > 0) return Math.max(0, data) / byteRate;
  }
  const last = segment.words[segment.words.length - 1];
  if (last) return last.end;
  return segment.text.trim().length / NOMINAL_CHARS_PER_SECOND;
}

interface Token {
  start: number;
  end: number;
}

/** Scripts written without spaces between words: Han, kana, Thai, Lao, Khmer, Myanmar. */
const UNSPACED = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/u;
let wordSegmenter: Intl.Segmenter | undefined;

/**
 * The words of `text`, as spans: runs of non-space, and within a run of a script written
 * without spaces (`你好世界。`), its words by `Intl.Segmenter` (punctuation joins the word
 * before it), where the runtime has it.
 */
function tokensOf(text: string): Token[] {
  const tokens: Token[] = [];
  for (const m of text.matchAll(/\S+/g)) {
    const run = m[0];
    if (!UNSPACED.test(run) || typeof Intl.Segmenter !== 'function') {
      tokens.push({ start: m.index, end: m.index + run.length });
      continue;
    }
    wordSegmenter ??= new Intl.Segmenter(undefined, { granularity: 'word' });
    const first = tokens.length;
    for (const piece of wordSegmenter.segment(run)) {
      const start = m.index + piece.index;
      const end = start + piece.segment.length;
      if (piece.isWordLike || tokens.length === first) tokens.push({ start, end });
      else tokens[tokens.length - 1]!.end = end; // `。` ends the word before it
    }
  }
  return tokens;
}

/** Where the text of `segment` is cut after `local` seconds of its `seconds` of audio. */
function cutIndex(segment: TrackedSegment, local: number, seconds: number): number {
  const tokens = tokensOf(segment.text);
  if (tokens.length === 0 || local <= 0) return tokens[0]?.start ?? 0;
  let count: number;
  if (segment.words.length > 0) {
    const heardWords = countWhile(segment.words, (w) => w.end <= local + EPSILON);
    count =
      segment.words.length === tokens.length
        ? heardWords
        : tokensWithin(tokens, charShare(segment.words.slice(0, heardWords)) / Math.max(1, charShare(segment.words)));
  } else {
    count = tokensWithin(tokens, seconds > 0 ? local / seconds : 0);
  }
  return count === 0 ? tokens[0]!.start : tokens[count - 1]!.end;
}

function countWhile<T>(items: readonly T[], test: (item: T) => boolean): number {
  let n = 0;
  while (n < items.length && test(items[n]!)) n++;
  return n;
}

function charShare(words: readonly WordTimestamp[]): number {
  return words.reduce((sum, w) => sum + w.word.length, 0);
}

/** How many tokens end within `fraction` of the segment's text (counted from its first to its last character). */
function tokensWithin(tokens: readonly Token[], fraction: number): number {
  const first = tokens[0]!.start;
  const span = tokens[tokens.length - 1]!.end - first;
  return countWhile(tokens, (t) => t.end - first <= fraction * span + EPSILON);
}
