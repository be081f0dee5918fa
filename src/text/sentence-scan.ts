/**
 * The sentence engine's memory (`sentences.ts`): the buffered text of the piece being read,
 * and what the scan knows about it. Positions are offsets in the piece.
 */
import type { LocaleRules } from './abbreviations.js';
import { classOfWord, LOOKBACK, type Candidate, type StopKind } from './sentence-decision.js';
import type { Marker } from './sentence-lists.js';
import { isDot, isHardStop, isStrongStop, isWhitespace } from './sentence-marks.js';

/** A quote or bracket opened longer ago than this (code units) no longer holds stops. */
const QUOTE_SPAN = 300;

/** The text of the current piece, kept as the chunks it was fed in (joined only when cut). */
export class PieceText {
  private parts: string[] = [];
  /** Code units buffered. */
  length = 0;

  push(text: string): void {
    // the first part in a new array of one: a push to an empty array reserves 17 slots (152 B),
    // kept while a stop is held
    if (this.parts.length === 0) this.parts = [text];
    else this.parts.push(text);
    this.length += text.length;
  }

  /** The text in [from, to), read from the end (the recent chunks). */
  range(from: number, to: number): string {
    let end = this.length;
    let result = '';
    for (let i = this.parts.length - 1; i >= 0 && end > from; i--) {
      const p = this.parts[i]!;
      const start = end - p.length;
      if (start < to) result = p.slice(Math.max(0, from - start), Math.min(p.length, to - start)) + result;
      end = start;
    }
    return result;
  }

  /** All the buffered text (joined once). */
  all(): string {
    if (this.parts.length === 1) return this.parts[0]!;
    const all = this.parts.join('');
    this.parts = all.length > 0 ? [all] : [];
    return all;
  }

  /** Removes and returns [0, at); the rest stays buffered. */
  cutAt(at: number): string {
    const all = this.all();
    const rest = all.slice(at);
    this.parts = rest.length > 0 ? [rest] : [];
    this.length = rest.length;
    return all.slice(0, at);
  }

  clear(): void {
    this.parts = [];
    this.length = 0;
  }
}

/** What the scan knows about the current piece (a fresh one after every cut). */
export interface PieceScan {
  /** Code units scanned. */
  len: number;
  /** Anything but whitespace scanned. */
  hasContent: boolean;
  /** In a whitespace run: where it starts and how many line breaks it holds. */
  inWs: boolean;
  wsStart: number;
  wsNl: number;
  /** Start of the last whitespace run that follows content, or -1. */
  lastWsStart: number;
  /** The word being read: its start, its first code units (at most LOOKBACK + 1). */
  wordStart: number;
  wordHead: string;
  /** The word starts a line. */
  wordLineStart: boolean;
  /** The word starts a list item (line or piece start, or after a bullet there). */
  wordItemStart: boolean;
  /** The word before: its start, whether a bullet, capitalized or a number, its head. */
  prevWordStart: number;
  prevWordBullet: boolean;
  prevWordCapitalized: boolean;
  prevWordNumeric: boolean;
  prevWordHead: string;
  /** Start of the current line. */
  lineStart: number;
  /** The current line is a list item (`- `, `1. `). */
  lineIsList: boolean;
  /**
   * A single line break after a short line with no stop (`Home` then `About us`): its offset
   * while the next line is read; it ends a piece if that line is short and has no stop either.
   */
  lineBreak: number;
  /** A single line break whose next line may start a list marker (`1. `): its offset and the line's first code units. */
  nlCand: number;
  nlLook: string;
  /** Where the whitespace before the last inline marker read mid-text starts (`Steps: i) one`), or -1. */
  markerAt: number;
  /** The last code unit scanned. */
  lastCode: number;
  /** Open quotes/brackets: expected closer and offset, innermost last. */
  quotes: { closer: number; at: number }[];
  /** The stop run being decided, if any; text from `cand.end` to `len` is its look-ahead. */
  cand: Candidate | undefined;
  /** Consecutive spaced dots (`. . .`) so far, and where the last dot ended. */
  spacedDots: number;
  lastDotEnd: number;
  /** The last code unit was part of an omission (`[...]`). */
  omissionRun: boolean;
}

export function newPieceScan(): PieceScan {
  return {
    len: 0,
    hasContent: false,
    inWs: false,
    wsStart: 0,
    wsNl: 0,
    lastWsStart: -1,
    wordStart: 0,
    wordHead: '',
    wordLineStart: true,
    wordItemStart: true,
    prevWordStart: -1,
    prevWordBullet: false,
    prevWordCapitalized: false,
    prevWordNumeric: false,
    prevWordHead: '',
    lineStart: 0,
    lineIsList: false,
    lineBreak: -1,
    nlCand: -1,
    nlLook: '',
    markerAt: -1,
    lastCode: 0,
    quotes: [],
    cand: undefined,
    spacedDots: 0,
    lastDotEnd: -1,
    omissionRun: false,
  };
}

/** Closes the innermost open quote or bracket that `c` closes; false when none does. */
export function popQuote(st: PieceScan, c: number): boolean {
  for (let q = st.quotes.length - 1; q >= 0; q--) {
    if (st.quotes[q]!.closer === c) {
      st.quotes.length = q;
      return true;
    }
  }
  return false;
}

/** Whether a quote or bracket opened less than QUOTE_SPAN code units ago is still open. */
export function quoteOpen(st: PieceScan): boolean {
  const top = st.quotes[st.quotes.length - 1];
  return top !== undefined && st.len - top.at <= QUOTE_SPAN;
}

/** Start of the whitespace run that ends at `at`. */
export function lastWsBefore(text: PieceText, at: number): number {
  const back = text.range(Math.max(0, at - LOOKBACK), at);
  let k = back.length;
  while (k > 0 && isWhitespace(back.charCodeAt(k - 1))) k--;
  return at - (back.length - k);
}

/** The kind of stop `c` is in this language, or undefined. */
export function stopKindOf(c: number, rules: LocaleRules): StopKind | undefined {
  if (isHardStop(c)) return 'hard';
  if (isStrongStop(c, rules.semicolonQuestion)) return 'strong';
  if (c === 0x3a && rules.colonStop) return 'colon';
  if (c === 0x2026) return 'ellipsis';
  if (isDot(c)) return 'dot';
  return undefined;
}

/** A stop run starts at `st.len` (the stop `c`): the candidate, with the look-back it is decided by. */
export function openCandidate(st: PieceScan, kind: StopKind, c: number, marker: Marker | undefined, rules: LocaleRules): void {
  // the word before the stop (its head, ending in `…` when longer than LOOKBACK)
  const raw = st.inWs || st.len === st.wordStart ? '' : st.len - st.wordStart <= LOOKBACK ? st.wordHead : `${st.wordHead.slice(0, LOOKBACK)}\u2026`;
  const spaced = kind === 'dot' && raw.length === 0 && st.lastDotEnd >= 0 && st.lastDotEnd === st.len - 1 ? st.spacedDots + 1 : kind === 'dot' && raw.length === 0 ? 1 : 0;
  const afterBullet = st.prevWordBullet && st.wordItemStart;
  st.cand = {
    kind,
    start: st.len,
    end: st.len + 1,
    word: raw,
    wordClass:
      kind === 'dot'
        ? classOfWord(raw, { itemStart: st.wordItemStart, afterBullet, lineStart: st.wordLineStart, afterNumber: st.prevWordNumeric, marker }, rules)
        : 'plain',
    closed: false,
    cornerClose: false,
    inQuote: quoteOpen(st),
    spacedDots: spaced,
    prevCapitalized: st.prevWordCapitalized,
    prevWord: st.prevWordHead,
    ahead: '',
  };
  st.spacedDots = spaced;
  if (kind === 'dot' && c !== 0x2026) st.lastDotEnd = st.len + 1;
}
