/**
 * The service's chunk-end rule (contract, live session rule 1), shared by the emulator,
 * which applies it, and the client's speech ledger, which models it to know which sent
 * text each segment covers.
 */
import { isWhitespace, type SentenceSegmenter } from './sentences.js';

/**
 * The sentence a `text.chunk` ends with, decided as if the text ended there (contract rule
 * 1: a complete sentence is flushed at once and never waits for `idle_timeout`). Returns
 * the pieces to speak, or none when the buffered text does not end at a boundary; the
 * whitespace after the stop stays buffered, to lead the next segment.
 *
 * A stop at the chunk's end is a sentence end (`Hello there.`, `How are you? `,
 * `It costs 3.5 dollars. `, `你好。`, `"Stop!"`), except where a new sentence could not
 * start right after it (the segmenter's `atBoundary()` probe):
 *
 * | held (waits for more text or `idle_timeout`) | example |
 * |---|---|
 * | a title or abbreviation that never ends a sentence in the session's language (`abbreviations.ts`, `always`; English: Mr. Mrs. Ms. Mx. Messrs. Dr. Prof. St. Sr. vs. e.g. i.e. approx. cf. viz. al. ca. Mt. Gen. Col. Lt. Sgt. Capt. Rev. Hon. Gov. Sen. Rep. Pres. Supt. Cmdr. Adm. Ft. Ste.) | `See Dr.` |
 * | a single-letter initial | `J.` |
 * | a list number at an item's start, an ordinal where the language has them | `1.`, `am 3.` |
 * | a stop inside a quote or bracket still open | `He asked "why?` |
 *
 * A paragraph break ends a sentence in `feed` already. Everything else a chunk ends with
 * (words without a stop) is trailing text: it waits for more text or `idle_timeout`.
 */
export function sentenceEndingChunk(segmenter: SentenceSegmenter): string[] {
  // the probe first: a chunk that ends in no stop says no without the pending text joined
  if (!segmenter.atBoundary() || segmenter.pending().trim().length === 0) return [];
  const pieces = segmenter.end();
  // `the U.S. The`: end() cut after the stop; the word after it is trailing text
  const trailing = pieces.length > 1 ? pieces.pop()! : '';
  const last = pieces.pop()!;
  let at = last.length;
  while (at > 0 && isWhitespace(last.charCodeAt(at - 1))) at--;
  pieces.push(last.slice(0, at));
  // the whitespace after the stop, and any trailing word, go back into the segmenter
  return [...pieces, ...segmenter.feed(last.slice(at) + trailing)];
}
