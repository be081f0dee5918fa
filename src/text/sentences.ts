/**
 * Sentence boundaries: a pure incremental core shared by the client operator
 * (`segmentSentences`), the live session's client-side boundaries and the emulator.
 *
 * `feed(text)` returns the sentences whose end is now certain; `end()` returns the
 * remainder. Joining every returned piece gives back the input exactly.
 *
 * The core is three parts:
 * - this file, the streaming engine: it buffers the text, scans it once, code unit by code
 *   unit, keeps a bounded look-back (the word being read, the word before, open quotes, the
 *   last list marker, the current line) and emits a piece at each boundary;
 * - `sentence-decision.ts`, the decision: a run of stops (with the closing quotes glued to it)
 *   is a *candidate*, decided by a pure function of the look-back and of at most
 *   {@link LOOKAHEAD} characters after it: an end, not an end, or wait for more text;
 * - plain tables: the marks (`sentence-marks.ts`: stops, quotes, brackets), list markers
 *   (`sentence-lists.ts`) and per-language words (`abbreviations.ts`: abbreviations, titles,
 *   sentence starters, weekdays and months, speech tags).
 *
 * Boundaries that are not stops are decided here: a blank line ends a piece at once; a single
 * line break ends one when the line is a list item (`- `, `1. `, `a) `, `(2) `) or the next
 * line starts one, when the lines before and after it are both short ({@link SHORT_LINE}) and
 * end with no stop (titles, menu items: `Home` / `About us`), or after a line of no letters
 * or digits (`_____`); otherwise (hard-wrapped prose) it is a space. A rule after text
 * (`RESULTS =====`) ends a piece. Inline lists end an item before the next marker of the same
 * sequence (`1) one 2) two`, `a. one b. two`, `• 9. one • 10. two`, `Steps: i) one ii) two`).
 * A citation after a stop is part of its run (`gas. [1] It`).
 *
 * ## Rules the tests hold
 *
 * - **Lossless**: the pieces joined are the input, code unit for code unit. No piece is empty.
 * - **Chunking invariance**: the pieces depend only on the text, never on how it was split
 *   into `feed` calls (splits inside surrogate pairs included). Only `maxBufferSize`
 *   force-cuts and `flushWords()` (time-driven) cut elsewhere, and both stay lossless. Every
 *   character is looked at a bounded number of times: the work is linear in the input.
 * - **Whitespace leads**: a boundary sits right after the terminal punctuation and any
 *   closing quotes/brackets glued to it; the whitespace after it starts the next piece
 *   (`"Hi. Bye."` -> `"Hi."`, `" Bye."`). So a piece may start with whitespace, and the
 *   last piece (from `end()`) may be whitespace only; speakers skip such pieces.
 * - **Timing**: a sentence is returned as soon as its end is certain, and no later than the
 *   character that decides it, usually the first non-space character after the stop.
 * - A stop inside an open quote or bracket does not end a sentence unless the closing quote is
 *   glued to it; a quote open for more than {@link QUOTE_SPAN} code units is ignored.
 *
 * NOTE: `maxBufferSize` (default 65 536 code units) bounds the buffer: beyond it the text is
 * cut at the last whitespace (or hard, never inside a surrogate pair).
 */
import { rulesFor, type LocaleRules } from './abbreviations.js';
import { classOfWord, decide, LOOKAHEAD, LOOKBACK, type Candidate, type StopKind } from './sentence-decision.js';
import { BULLET, isNextMarker, LIST_MARKER, LIST_PREFIX, markerOf, RULE, type Marker } from './sentence-lists.js';
import {
  Char,
  classify,
  endsWithStop,
  expectedCloser,
  isCjk,
  isCloser,
  isDot,
  isHardStop,
  isInert,
  isNewline,
  isSpacedCloser,
  isStrongStop,
  isWhitespace,
  isWordChar,
} from './sentence-marks.js';
import { sentenceSegmenterOptions, type SentenceSegmenter, type SentenceSegmenterOptions } from './sentence-options.js';

export { bufferSizeOption, sentenceSegmenterOptions, type SentenceSegmenter, type SentenceSegmenterOptions } from './sentence-options.js';
export { isWhitespace } from './sentence-marks.js';
export { LOOKAHEAD } from './sentence-decision.js';

/** A quote or bracket opened longer ago than this (code units) no longer holds stops. */
const QUOTE_SPAN = 300;
/** A title, menu item or list line without markers: at most this many code units. */
const SHORT_LINE = 40;
/** After a stop: a citation (`gas. [1]`, `martyr.[7][8]`), part of the sentence before. */
const CITATION = /^[ \t]?\[\d{1,3}(?:[–-]\d{1,3})?\]$/;
const CITATION_PREFIX = /^[ \t]?\[\d{0,3}(?:[–-]\d{0,3})?$/;

/** Create an incremental sentence segmenter (see the module documentation for the rules). */
export function createSentenceSegmenter(options: SentenceSegmenterOptions = {}): SentenceSegmenter {
  const checked = sentenceSegmenterOptions(options);
  const rules: LocaleRules = rulesFor(checked.locale);
  const maxBuffer = checked.maxBufferSize;

  let parts: string[] = [];
  let partsLen = 0;
  let out: string[] = [];

  // State of the current piece; positions are offsets in the piece.
  let len = 0;
  let hasContent = false;
  let inWs = false;
  let wsStart = 0;
  let wsNl = 0;
  let lastWsStart = -1; // start of the last whitespace run that follows content
  let wordStart = 0;
  let wordLineStart = true;
  /** The current word starts a list item (line or piece start, or after a bullet there). */
  let wordItemStart = true;
  let prevWordStart = -1;
  let prevWordBullet = false;
  let prevWordCapitalized = false;
  /** The head of the word before (at most LOOKBACK + 1 code units). */
  let prevWordHead = '';
  /** Start of the current line in the piece. */
  let lineStart = 0;
  /**
   * A single line break after a short line with no stop (`Home` then `About us`): its offset
   * while the next line is read; it ends a piece if that line is short and has no stop either.
   */
  let lineBreak = -1;
  /** Where the whitespace before the last inline marker read in this piece starts (`Steps: i) one`), or -1. */
  let markerAt = -1;
  /** The word before is a number (`10 h.`: a unit, not an initial). */
  let prevWordNumeric = false;
  let lineIsList = false;
  let lastCode = 0;
  let nlCand = -1;
  let nlLook = '';
  /** Open quotes/brackets: expected closer and offset, innermost last. */
  let quotes: { closer: number; at: number }[] = [];
  /** The candidate being decided, if any; text from `cand.end` to `len` is its look-ahead. */
  let cand: Candidate | undefined;
  /** Consecutive spaced dots (`. . .`) so far. */
  let spacedDots = 0;
  let lastDotEnd = -1;
  /** The first code units of the current word (at most LOOKBACK + 1). */
  let wordHead = '';
  /** The last code unit was part of an omission (`[...]`). */
  let omissionRun = false;
  /** The current piece starts at a line start (start of input, or a piece after a cut at a line break). */
  let atLineStart = true;
  /** The last list marker read (survives cuts): value and suffix, for inline lists. */
  let marker: Marker | undefined;

  function reset(): void {
    len = 0;
    hasContent = false;
    inWs = false;
    wsNl = 0;
    lastWsStart = -1;
    wordStart = 0;
    wordLineStart = true;
    wordItemStart = true;
    prevWordStart = -1;
    prevWordBullet = false;
    prevWordCapitalized = false;
    prevWordHead = '';
    lineStart = 0;
    lineBreak = -1;
    markerAt = -1;
    prevWordNumeric = false;
    lineIsList = false;
    lastCode = 0;
    nlCand = -1;
    nlLook = '';
    quotes = [];
    cand = undefined;
    spacedDots = 0;
    lastDotEnd = -1;
    wordHead = '';
    omissionRun = false;
  }

  /** Text of the piece in [from, to), read from the end of the buffered parts. */
  function textRange(from: number, to: number): string {
    let end = partsLen;
    let result = '';
    for (let i = parts.length - 1; i >= 0 && end > from; i--) {
      const p = parts[i]!;
      const start = end - p.length;
      if (start < to) result = p.slice(Math.max(0, from - start), Math.min(p.length, to - start)) + result;
      end = start;
    }
    return result;
  }

  function joined(): string {
    if (parts.length === 1) return parts[0]!;
    const all = parts.join('');
    parts = all.length > 0 ? [all] : [];
    return all;
  }

  /** Emit [0, at) and re-scan the processed rest as the start of a new piece. */
  function cut(at: number): void {
    const all = joined();
    out.push(all.slice(0, at));
    const rest = all.slice(at);
    parts = rest.length > 0 ? [rest] : [];
    partsLen = rest.length;
    const processed = len - at;
    reset();
    atLineStart = false; // a line break in the rest is seen again by the replay
    for (let i = 0; i < processed; i++) step(rest.charCodeAt(i));
  }

  /** Re-scan the candidate's look-ahead as ordinary text (the candidate did not end). */
  function dropCandidate(): void {
    const c = cand!;
    cand = undefined;
    const ahead = c.ahead;
    len = c.end;
    for (let i = 0; i < ahead.length; i++) step(ahead.charCodeAt(i));
  }

  function openCandidate(kind: StopKind, c: number): void {
    // the word before the stop (its head, ending in `…` when longer than LOOKBACK)
    const raw = inWs || len === wordStart ? '' : len - wordStart <= LOOKBACK ? wordHead : `${wordHead.slice(0, LOOKBACK)}\u2026`;
    const spaced = kind === 'dot' && raw.length === 0 && lastDotEnd >= 0 && lastDotEnd === len - 1 ? spacedDots + 1 : kind === 'dot' && raw.length === 0 ? 1 : 0;
    const afterBullet = prevWordBullet && wordItemStart;
    cand = {
      kind,
      start: len,
      end: len + 1,
      word: raw,
      wordClass:
        kind === 'dot'
          ? classOfWord(raw, { itemStart: wordItemStart, afterBullet, lineStart: wordLineStart, afterNumber: prevWordNumeric, marker }, rules)
          : 'plain',
      closed: false,
      cornerClose: false,
      inQuote: quoteOpen(),
      spacedDots: spaced,
      prevCapitalized: prevWordCapitalized,
      prevWord: prevWordHead,
      ahead: '',
    };
    spacedDots = spaced;
    if (kind === 'dot' && c !== 0x2026) lastDotEnd = len + 1;
  }

  function stopKind(c: number): StopKind | undefined {
    if (isHardStop(c)) return 'hard';
    if (isStrongStop(c, rules.semicolonQuestion)) return 'strong';
    if (c === 0x3a && rules.colonStop) return 'colon';
    if (c === 0x2026) return 'ellipsis';
    if (isDot(c)) return 'dot';
    return undefined;
  }

  function popQuote(c: number): boolean {
    for (let q = quotes.length - 1; q >= 0; q--) {
      if (quotes[q]!.closer === c) {
        quotes.length = q;
        return true;
      }
    }
    return false;
  }

  function quoteOpen(): boolean {
    const top = quotes[quotes.length - 1];
    return top !== undefined && len - top.at <= QUOTE_SPAN;
  }

  function forceCut(): void {
    let at: number;
    if (cand) at = cand.end;
    else if (inWs && hasContent && wsStart > 0) at = wsStart;
    else if (lastWsStart > 0 && len - lastWsStart <= maxBuffer / 2) at = lastWsStart;
    else {
      at = len;
      if (lastCode >= 0xd800 && lastCode <= 0xdbff) at = len - 1; // keep a surrogate pair whole
    }
    if (at <= 0) at = len;
    cut(at);
  }

  /** One code unit while a candidate waits: extend its run, or add to its look-ahead. */
  function stepPending(c: number): void {
    const k = cand!;
    const kind = stopKind(c);
    let extend = false;
    if (len === k.end) {
      // glued to the run: more stops (`?!`, `...`, `?".`) or closing quotes and brackets
      if (kind === 'colon') {
        if (k.kind === 'dot' || k.kind === 'ellipsis') {
          k.kind = 'colon';
          extend = true;
        }
      } else if (kind !== undefined) {
        if (kind === 'hard' || (kind === 'strong' && k.kind !== 'hard')) k.kind = kind;
        else if (k.kind === 'dot') k.kind = 'ellipsis';
        k.spacedDots = 0;
        k.closed = false;
        extend = true;
      } else if (isCloser(c)) {
        popQuote(c);
        k.closed = true;
        k.cornerClose = c === 0x300d || c === 0x300f;
        extend = true;
      }
    } else if (rules.spacedClosers && isSpacedCloser(c) && /^[ \u00a0\u202f]+$/.test(k.ahead)) {
      popQuote(c); // `« Oui ! »`
      k.closed = true;
      extend = true;
    }
    lastCode = c;
    len++;
    if (extend) {
      k.end = len;
      k.ahead = '';
      k.inQuote = quoteOpen();
      return;
    }
    k.ahead += String.fromCharCode(c);
    const ahead = k.ahead;
    if (k.kind !== 'hard' && k.kind !== 'colon' && ahead.length <= 12) {
      if (CITATION.test(ahead)) {
        // `gas. [1]`: the citation belongs to the sentence it follows; the text after it decides
        k.end = len;
        k.ahead = '';
        return;
      }
      if (CITATION_PREFIX.test(ahead)) return;
    }
    let d = decide(k, ahead, false, rules);
    if (d === 'wait' && ahead.length >= LOOKAHEAD) d = decide(k, ahead, true, rules);
    if (d === 'end') cut(k.end);
    else if (d === 'not-end') dropCandidate();
  }

  function step(c: number): void {
    if (cand) {
      stepPending(c);
      if (len >= maxBuffer) forceCut();
      return;
    }
    if (nlCand >= 0) {
      if (isWhitespace(c)) {
        const at = nlCand;
        const list = LIST_MARKER.test(nlLook);
        nlCand = -1;
        nlLook = '';
        if (list) {
          cut(at);
          step(c);
          return;
        }
      } else {
        nlLook += String.fromCharCode(c);
        if (!LIST_PREFIX.test(nlLook)) {
          nlCand = -1;
          nlLook = '';
        }
      }
    }

    if (isWhitespace(c)) {
      if (!inWs) {
        inWs = true;
        wsStart = len;
        wsNl = 0;
        if (hasContent) {
          lastWsStart = len;
          if (endWord()) {
            step(c); // an inline list item starts: cut before it, re-scanned
            return;
          }
        }
      }
      if (isNewline(c)) {
        wsNl += c === 0x2029 ? 2 : 1;
        if (hasContent && (wsNl >= 2 || lineIsList)) {
          if (wsStart > 0) {
            cut(wsStart);
            step(c);
            return;
          }
        }
        if (hasContent && wsNl === 1 && endOfLine()) {
          step(c);
          return;
        }
      }
      lastCode = c;
      len++;
      if (len >= maxBuffer) forceCut();
      return;
    }

    // A non-space character.
    const newWord = inWs || len === 0;
    const inWsBefore = inWs;
    const nlBefore = inWs ? wsNl : 0;
    inWs = false;

    if (newWord) {
      if (hasContent) prevWordStart = wordStart;
      wordStart = len;
      wordHead = '';
      wordLineStart = nlBefore > 0 || (!hasContent && atLineStart);
      wordItemStart = nlBefore > 0 || !hasContent || (prevWordBullet && wordItemStart);
      if (nlBefore > 0) {
        lineIsList = false;
        lineStart = len;
        if (hasContent && nlBefore === 1) {
          nlCand = wsStart;
          nlLook = String.fromCharCode(c);
          if (!LIST_PREFIX.test(nlLook)) {
            nlCand = -1;
            nlLook = '';
          }
        }
      }
    }

    const kind = stopKind(c);
    const inOmission = (kind === 'dot' || kind === 'ellipsis') && (lastCode === 0x5b || lastCode === 0x28 || (omissionRun && (isDot(lastCode) || lastCode === 0x2026)));
    omissionRun = inOmission;
    if (kind !== undefined && !inOmission) openCandidate(kind, c);
    if (wordHead.length <= LOOKBACK) wordHead += String.fromCharCode(c);
    if (cand) {
      hasContent = true;
      lastCode = c;
      len++;
      if (len >= maxBuffer) forceCut();
      return;
    }
    if (!inOmission && !popQuote(c) && !(isCloser(c) && len > 0 && !inWsBefore && isWordChar(lastCode))) {
      // `"` opens when none is open; other quotes and brackets open by kind, unless glued
      // after a word (`nicht“`: a German closing quote)
      const closer = expectedCloser(c);
      if (closer !== 0) quotes.push({ closer, at: len });
    }
    hasContent = true;
    lastCode = c;
    len++;
    if (len >= maxBuffer) forceCut();
  }

  /**
   * A word just ended (whitespace follows): note list bullets and markers; returns true when
   * an inline list item starts here and the text was cut before it.
   */
  function endWord(): boolean {
    prevWordHead = wordHead;
    if (len - wordStart >= 5 && wordStart > lineStart && RULE.test(wordHead)) {
      // a rule after text on its line (`RESULTS =====`) underlines it: the piece ends after it
      // (a rule alone on its line is a line of its own, see endOfLine)
      cut(len);
      return true;
    }
    if (len - wordStart > 6) {
      prevWordBullet = false;
      prevWordCapitalized = classify(wordHead.charCodeAt(0)) === Char.Upper;
      prevWordNumeric = false;
      return false;
    }
    const word = textRange(wordStart, len);
    if (wordLineStart && LIST_MARKER.test(word)) lineIsList = true;
    const bullet = BULLET.test(word);
    const m = markerOf(word);
    if (m) {
      if (wordItemStart) {
        marker = m;
        markerAt = -1;
      } else if (isNextMarker(m, marker)) {
        // `1) one 2) two`: the item ends before this marker (and before its bullet); when the
        // first marker was inside the text (`Steps: i) one ii) two`), first before that one
        const at = markerAt > 0 ? markerAt : prevWordBullet && prevWordStart > 0 ? lastWsBefore(prevWordStart) : lastWsBefore(wordStart);
        if (at > 0) {
          cut(at);
          return true;
        }
      } else if (m.suffix !== '.' && (m.number === 1 || m.letter > 0 || m.roman > 0)) {
        // `x) first`, `i) one` inside a sentence: an item if the next marker follows
        marker = m;
        markerAt = lastWsBefore(wordStart);
      }
    }
    prevWordBullet = bullet;
    prevWordCapitalized = classify(word.charCodeAt(0)) === Char.Upper;
    prevWordNumeric = /^\d+$/.test(word);
    return false;
  }

  /**
   * A line just ended at a single line break (at `wsStart`). Short lines without a stop are
   * titles, menu items or list items without markers: when two follow each other, the break
   * between them ends a piece (`Home` / `About us`); a line of no letters or digits (`_____`)
   * is a piece of its own. Returns true when the text was cut.
   */
  function endOfLine(): boolean {
    const lineLen = wsStart - lineStart;
    const line = lineLen <= 4 * SHORT_LINE ? textRange(lineStart, wsStart).trim() : '';
    const short = line.length > 0 && line.length <= SHORT_LINE && !endsWithStop(line);
    const pendingBreak = lineBreak;
    lineBreak = -1;
    if (short && pendingBreak > 0) {
      cut(pendingBreak);
      return true;
    }
    if (line.length > 0 && !/[\p{L}\p{N}]/u.test(line) && wsStart > 0) {
      cut(wsStart);
      return true;
    }
    if (short) lineBreak = wsStart;
    return false;
  }

  /** Start of the whitespace run that ends at `at`. */
  function lastWsBefore(at: number): number {
    const back = textRange(Math.max(0, at - LOOKBACK), at);
    let k = back.length;
    while (k > 0 && isWhitespace(back.charCodeAt(k - 1))) k--;
    return at - (back.length - k);
  }

  function take(): string[] {
    const r = out;
    out = [];
    return r;
  }

  return {
    feed(text) {
      if (text.length === 0) return [];
      parts.push(text);
      partsLen += text.length;
      const n = text.length;
      for (let i = 0; i < n; ) {
        if (cand === undefined && nlCand < 0 && !inWs && len > wordStart) {
          // fast path: inside a word, letters and digits change nothing but the length
          let j = i;
          const limit = Math.min(n, i + (maxBuffer - 1 - len));
          while (j < limit) {
            const c = text.charCodeAt(j);
            if (isInert(c)) j++;
            else break;
          }
          if (j > i) {
            if (wordHead.length <= LOOKBACK) wordHead += text.slice(i, Math.min(j, i + LOOKBACK + 1 - wordHead.length));
            len += j - i;
            lastCode = text.charCodeAt(j - 1);
            omissionRun = false;
            i = j;
            continue;
          }
        }
        step(text.charCodeAt(i));
        i++;
      }
      return take();
    },
    end() {
      if (cand) {
        // a decision still waiting on a word (`the U.S. Then`); trailing whitespace stays
        const k = cand;
        if (k.ahead.trim().length > 0 && decide(k, k.ahead, true, rules) === 'end') cut(k.end);
      } else if (lineBreak > 0 && lineStart > lineBreak && len - lineStart <= 4 * SHORT_LINE) {
        // the last line ends with the input: `Home` / `Contact`
        const line = textRange(lineStart, len).trim();
        if (line.length > 0 && line.length <= SHORT_LINE && !endsWithStop(line)) cut(lineBreak);
      }
      const rest = joined();
      parts = [];
      partsLen = 0;
      reset();
      atLineStart = true;
      marker = undefined;
      const r = take();
      if (rest.length > 0) r.push(rest);
      return r;
    },
    pending() {
      return joined();
    },
    flushWords() {
      if (!hasContent) return [];
      let at: number;
      if (cand) at = cand.end;
      else if (inWs) at = wsStart;
      else if (isCjk(lastCode) || lastCode === 0x2c || lastCode === 0x3b || lastCode === 0x3a || lastCode === 0x3001 || lastCode === 0xff0c || lastCode === 0x060c || isCloser(lastCode)) {
        at = len;
      } else at = lastWsStart;
      if (at <= 0) return [];
      cut(at);
      return take();
    },
    atBoundary() {
      if (!hasContent) return true;
      if (!cand) return false;
      return decide(cand, `${cand.ahead} A`, true, rules) === 'end';
    },
    undecidedFrom() {
      return cand ? cand.start : lineBreak;
    },
  };
}
