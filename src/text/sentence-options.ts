/** Options and interface of the sentence core (`createSentenceSegmenter` in `sentences.ts`). */
import { optionError } from '../core/validation.js';

export interface SentenceSegmenterOptions {
  /** Locale tag (e.g. `en-us`, `de-de`) choosing abbreviation sets. */
  locale?: string;
  /** Buffered code units beyond which the text is force-cut (default 65 536, at least 16). */
  maxBufferSize?: number;
}

export interface SentenceSegmenter {
  /** Feed more text; returns sentences now complete, in order. */
  feed(text: string): string[];
  /** The input is over: returns the remainder (zero or one piece). */
  end(): string[];
  /** Text buffered, not yet returned. */
  pending(): string;
  /**
   * Cut the buffered text at its last word boundary (idle flush): returns the complete words
   * (zero or one piece) and keeps a partial last word buffered. A word is complete when
   * whitespace or punctuation follows it; CJK text may be cut after any character.
   */
  flushWords(): string[];
  /**
   * Whether the buffered text is at a sentence boundary: nothing but whitespace is buffered,
   * or the buffered text would end as a sentence if a new sentence (`" A"`) started right
   * after it. Constant time. Use it to know whether text may be inserted between sentences.
   */
  atBoundary(): boolean;
  /**
   * Where, in `pending()`, an undecided stop starts: a stop run whose sentence end depends on
   * text not seen yet (`"It costs 3."`, `"See Dr."`). -1 when there is none. Text before this
   * offset may be sent on; text from it waits for the next token, an idle flush or the end.
   */
  undecidedFrom(): number;
}

/** A `maxBufferSize` option checked (an integer of at least 16; default 65 536): throws a ValidationError (no clamping). */
export function bufferSizeOption(value: number | undefined, where = 'createSentenceSegmenter'): number {
  const size = value ?? 65536;
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
