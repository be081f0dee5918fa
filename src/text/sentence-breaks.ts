/**
 * Boundaries that are not stops, for the sentence engine (`sentences.ts`): line breaks, list
 * items and rules. Each function reads the scan of the current piece and answers where the
 * piece ends (an offset) or -1 (no cut); the engine does the cut. The patterns they use are
 * the tables of `sentence-lists.ts`.
 *
 * - A single line break ends a piece when the line is a list item (`- `, `1. `, `a) `,
 *   `(2) `) or the next line starts one ({@link nextLineCut});
 * - two short lines with no stop (titles, menu items: `Home` / `About us`) are two pieces,
 *   and a line of no letters or digits (`_____`) is a piece of its own ({@link lineEndCut},
 *   {@link lastLineCut});
 * - a rule after text on its line (`RESULTS =====`) ends the piece after it, and inline lists
 *   end an item before the next marker of the same sequence (`1) one 2) two`, `a. one b. two`,
 *   `Steps: i) one ii) two`) ({@link wordEndCut}).
 */
import { BULLET, isNextMarker, LIST_MARKER, LIST_PREFIX, markerOf, RULE, type Marker } from './sentence-lists.js';
import { Char, classify, endsWithStop, isWhitespace } from './sentence-marks.js';
import { lastWsBefore, type PieceScan, type PieceText } from './sentence-scan.js';

/** A title, menu item or list line without markers: at most this many code units. */
export const SHORT_LINE = 40;
/** The longest list marker (`(viii.)`, `iii.)`) in code units. */
const MARKER_MAX = 9;

/** What the engine remembers across cuts for inline lists: the last list marker read. */
export interface ListMemory {
  marker: Marker | undefined;
}

/**
 * A word starts a new line (after a single line break): the line's start, and whether the
 * break waits for the next line's first code units (`c` first) to become a list marker.
 */
export function lineStarts(st: PieceScan, c: number, nlBefore: number): void {
  st.lineIsList = false;
  st.lineStart = st.len;
  if (st.hasContent && nlBefore === 1) {
    st.nlCand = st.wsStart;
    st.nlLook = String.fromCharCode(c);
    if (!LIST_PREFIX.test(st.nlLook)) {
      st.nlCand = -1;
      st.nlLook = '';
    }
  }
}

/**
 * One code unit `c` of a line that may start a list marker after a single line break: at the
 * whitespace after a marker (`1. `) the piece ends at the break (the offset returned);
 * otherwise -1, and the wait ends once the line cannot be a marker any more.
 *
 * The marker is read from the text, not only from the code units this function saw: a stop's
 * run takes the closer after it (`(1.)`: the `)` went to the stop's candidate, which then
 * ended no sentence).
 */
export function nextLineCut(st: PieceScan, c: number, text: PieceText): number {
  if (isWhitespace(c)) {
    const at = st.nlCand;
    const length = st.len - st.lineStart;
    const list = LIST_MARKER.test(st.nlLook) || (length > st.nlLook.length && length <= MARKER_MAX && LIST_MARKER.test(text.range(st.lineStart, st.len)));
    st.nlCand = -1;
    st.nlLook = '';
    return list ? at : -1;
  }
  st.nlLook += String.fromCharCode(c);
  if (!LIST_PREFIX.test(st.nlLook)) {
    st.nlCand = -1;
    st.nlLook = '';
  }
  return -1;
}

/**
 * A word just ended (whitespace follows): notes list bullets and markers, and the word's
 * shape for the next stop's decision. Returns where the piece ends when a rule underlines
 * the line (after it) or an inline list item starts here (before it), else -1.
 */
export function wordEndCut(st: PieceScan, text: PieceText, list: ListMemory): number {
  const head = st.wordHead;
  st.prevWordHead = head;
  const length = st.len - st.wordStart;
  if (length >= 5 && st.wordStart > st.lineStart && RULE.test(head)) {
    // a rule after text on its line (`RESULTS =====`) underlines it: the piece ends after it
    // (a rule alone on its line is a line of its own, see lineEndCut)
    return st.len;
  }
  // A word longer than the longest list marker is read as no list marker and no bullet, from its head
  // (its first LOOKBACK + 1 code units): its first one, and whether it is a number (`1234567 h.`
  // is a unit after a number, as `12 h.` is). Both kinds of word take the same reads and writes
  // below, so a process's first long word after short ones finds nothing V8 has not seen yet
  // (a read only long words made threw this function's optimized code away there).
  const long = length > MARKER_MAX;
  const word = long ? head : text.range(st.wordStart, st.len);
  if (!long) {
    if (st.wordLineStart && LIST_MARKER.test(word)) st.lineIsList = true;
    const m = markerOf(word);
    if (m) {
      if (st.wordItemStart) {
        list.marker = m;
        st.markerAt = -1;
      } else if (isNextMarker(m, list.marker)) {
        // `1) one 2) two`: the item ends before this marker (and before its bullet); when the
        // first marker was inside the text (`Steps: i) one ii) two`), first before that one
        const at = st.markerAt > 0 ? st.markerAt : st.prevWordBullet && st.prevWordStart > 0 ? lastWsBefore(text, st.prevWordStart) : lastWsBefore(text, st.wordStart);
        if (at > 0) return at;
      } else if (m.suffix !== '.' && (m.number === 1 || m.letter > 0 || m.roman > 0)) {
        // `x) first`, `i) one` inside a sentence: an item if the next marker follows
        list.marker = m;
        st.markerAt = lastWsBefore(text, st.wordStart);
      }
    }
  }
  st.prevWordBullet = !long && BULLET.test(word);
  st.prevWordCapitalized = classify(word.charCodeAt(0)) === Char.Upper;
  st.prevWordNumeric = /^\d+$/.test(word);
  return -1;
}

/**
 * A line just ended at a single line break (at `wsStart`). Short lines without a stop are
 * titles, menu items or list items without markers: when two follow each other, the break
 * between them ends a piece (`Home` / `About us`); a line of no letters or digits (`_____`)
 * is a piece of its own. Returns where the piece ends, or -1.
 */
export function lineEndCut(st: PieceScan, text: PieceText): number {
  const lineLen = st.wsStart - st.lineStart;
  const line = lineLen <= 4 * SHORT_LINE ? text.range(st.lineStart, st.wsStart).trim() : '';
  const short = line.length > 0 && line.length <= SHORT_LINE && !endsWithStop(line);
  const pendingBreak = st.lineBreak;
  st.lineBreak = -1;
  if (short && pendingBreak > 0) return pendingBreak;
  if (line.length > 0 && !/[\p{L}\p{N}]/u.test(line) && st.wsStart > 0) return st.wsStart;
  if (short) st.lineBreak = st.wsStart;
  return -1;
}

/** The input ended: a short last line after a short line (`Home` / `Contact`) is a piece; where the one before ends, or -1. */
export function lastLineCut(st: PieceScan, text: PieceText): number {
  // whitespace after the last line is no part of it (however long)
  const end = st.inWs ? st.wsStart : st.len;
  if (st.lineBreak <= 0 || st.lineStart <= st.lineBreak || end - st.lineStart > 4 * SHORT_LINE) return -1;
  const line = text.range(st.lineStart, end).trim();
  return line.length > 0 && line.length <= SHORT_LINE && !endsWithStop(line) ? st.lineBreak : -1;
}
