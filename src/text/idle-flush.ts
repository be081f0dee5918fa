/**
 * The idle flush of `segmentSentences({ idleTimeout })`: where buffered text without a
 * sentence boundary is cut when the producer stalls. Kept out of the sentence engine (which
 * only cuts where it is told, `flushAt`), so that code that never flushes on idle (`speak`'s
 * browser bundle) does not carry it.
 * @internal
 */
import { isCjk, isCloser } from './sentence-marks.js';
import type { PieceScan, PieceText } from './sentence-scan.js';
import type { SentenceSegmenter } from './sentence-options.js';

/** Two last characters that the next token may continue as the same word (see {@link endsInsideWord}). */
const INSIDE_WORD_END = /^(?:\p{N}[.,:]|\p{L}['’])$/u;
/** Quotes a word may open with: such a word ends with its closing one (`'yes'`), not an apostrophe. */
const OPENING_QUOTES = "'‘";

/**
 * Cut the buffered text at its last word boundary (idle flush): returns the complete words
 * (zero or one piece) and keeps a partial last word buffered. A word is complete when
 * whitespace or punctuation follows it, except a mark the next token may continue (a stop,
 * comma or colon right after a digit: `3.` of `3.5`, `1,` of `1,000`, `10:` of `10:30`; an
 * apostrophe right after a letter: `don'` of `don't`); CJK text may be cut after any character.
 */
export function flushWords(segmenter: SentenceSegmenter): string[] {
  return segmenter.flushAt(lastWordEnd);
}

/** Where the idle flush cuts the buffered text: an offset into it, or <= 0 for nowhere. */
function lastWordEnd(st: Readonly<PieceScan>, text: PieceText): number {
  if (!st.hasContent) return 0;
  if (st.inWs && !st.cand) return st.wsStart;
  if (endsInsideWord(st, text)) return st.lastWsStart;
  if (st.cand) return st.cand.end;
  const last = st.lastCode;
  // a comma, semicolon or colon (Latin, CJK, Arabic), a closer, or CJK ends a word
  if (isCjk(last) || last === 0x2c || last === 0x3b || last === 0x3a || last === 0x3001 || last === 0xff0c || last === 0x060c || isCloser(last)) return st.len;
  return st.lastWsStart;
}

/** Whether the buffered text ends in a mark the next token may continue as part of the same word. */
function endsInsideWord(st: Readonly<PieceScan>, text: PieceText): boolean {
  if (st.inWs || (st.cand !== undefined && st.cand.ahead !== '') || st.len < 2) return false;
  const tail = text.range(st.len - 2, st.len);
  if (!INSIDE_WORD_END.test(tail)) return false;
  return /\p{N}/u.test(tail) || !OPENING_QUOTES.includes(text.range(st.wordStart, st.wordStart + 1));
}
