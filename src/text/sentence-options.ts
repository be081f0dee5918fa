/** Options and interface of the sentence core (`createSentenceSegmenter` in `sentences.ts`). */
import { optionError } from '../core/validation.js';
import type { PieceScan, PieceText } from './sentence-scan.js';

export interface SentenceSegmenterOptions {
  /** Locale tag (e.g. `en-us`, `de-de`) choosing abbreviation sets. */
  locale?: string;
  /** Buffered code units beyond which the text is force-cut (default 65 536, at least 16). */
  maxBufferSize?: number;
}

/**
 * An incremental sentence segmenter (`createSentenceSegmenter`).
 *
 * ## Rules the tests hold
 *
 * - **Lossless**: the pieces joined are the input, code unit for code unit. No piece is empty.
 * - **Chunking invariance**: the pieces depend only on the text, never on how it was split
 *   into `feed` calls (splits inside surrogate pairs included). Only `maxBufferSize`
 *   force-cuts and `flushAt()` (time-driven) cut elsewhere, and both stay lossless. Every
 *   character is looked at a bounded number of times: the work is linear in the input.
 * - **Whitespace leads**: a boundary sits right after the terminal punctuation and any
 *   closing quotes/brackets glued to it; the whitespace after it starts the next piece
 *   (`"Hi. Bye."` -> `"Hi."`, `" Bye."`). So a piece may start with whitespace, and the
 *   last piece (from `end()`) may be whitespace only; speakers skip such pieces.
 * - **Timing**: a sentence is returned as soon as its end is certain, and no later than the
 *   character that decides it, usually the first non-space character after the stop.
 * - A stop inside an open quote or bracket does not end a sentence unless the closing quote is
 *   glued to it; a quote open for more than 300 code units is ignored.
 *
 * NOTE: `maxBufferSize` (default 65 536 code units) bounds the buffer: beyond it the text is
 * cut at the last whitespace (or hard, never inside a surrogate pair).
 */
/** Where a time-driven flush cuts: an offset into the buffered text, from the scan's state (<= 0: nowhere). */
export type FlushPoint = (scan: Readonly<PieceScan>, text: PieceText) => number;

export interface SentenceSegmenter {
  /** Feed more text; returns sentences now complete, in order. */
  feed(text: string): string[];
  /** The input is over: returns the remainder (zero or one piece). */
  end(): string[];
  /** Text buffered, not yet returned. */
  pending(): string;
  /**
   * Cut the buffered text where `where` says (an offset into `pending()`; nothing when it is
   * <= 0), as a time-driven flush does (`flushWords` of `idle-flush.ts`): returns the piece
   * before it (zero or one piece) and keeps the rest buffered.
   */
  flushAt(where: FlushPoint): string[];
  /**
   * Whether the buffered text is at a sentence boundary: nothing but whitespace is buffered,
   * or the buffered text would end as a sentence if a new sentence (`" A"`) started right
   * after it. Constant time. Use it to know whether text may be inserted between sentences.
   */
  atBoundary(): boolean;
  /**
   * Where, in `pending()`, an undecided boundary starts: a stop run whose sentence end depends
   * on text not seen yet (`"It costs 3."`, `"See Dr."`), or a line break after a short line
   * without a stop, decided at the end of the next line (`"Home\n"`). -1 when there is none.
   * Text before this offset may be sent on; text from it waits for the next token, an idle
   * flush or the end.
   */
  undecidedFrom(): number;
}

/** The default `maxBufferSize`: buffered code units beyond which the text is force-cut. */
export const DEFAULT_MAX_BUFFER_SIZE = 65536;

/** A `maxBufferSize` option checked (an integer of at least 16; default 65 536): throws a ValidationError (no clamping). */
export function bufferSizeOption(value: number | undefined, where = 'createSentenceSegmenter'): number {
  const size = value ?? DEFAULT_MAX_BUFFER_SIZE;
  if (!Number.isInteger(size) || size < 16) throw optionError(where, ['maxBufferSize'], 'must be an integer >= 16 (code units)', 'greater_than_equal');
  return size;
}

/** A validated copy of the options (the one place they are checked): throws a ValidationError. */
export function sentenceSegmenterOptions(options: SentenceSegmenterOptions = {}): { locale: string | undefined; maxBufferSize: number } {
  const maxBufferSize = bufferSizeOption(options.maxBufferSize);
  if (options.locale !== undefined && typeof options.locale !== 'string') {
    throw optionError('createSentenceSegmenter', ['locale'], 'must be a string such as "en-us"', 'string_type');
  }
  return { locale: options.locale, maxBufferSize };
}
