/**
 * Sentence boundaries: a pure incremental core shared by the client operator
 * (`segmentSentences`) and the emulator's live session.
 *
 * `feed(text)` returns the sentences whose end is now certain; `end()` returns the
 * remainder. Joining every returned piece gives back the input exactly.
 *
 * ## Rules (the contract the tests hold)
 *
 * - **Lossless**: the pieces joined are the input, code unit for code unit. No piece is empty.
 * - **Chunking invariance**: the pieces depend only on the text, never on how it was split
 *   into `feed` calls (splits inside surrogate pairs included). Only `maxBufferSize`
 *   force-cuts and `flushWords()` (time-driven) cut elsewhere, and both stay lossless.
 * - **Whitespace leads**: a boundary sits right after the terminal punctuation and any
 *   closing quotes/brackets glued to it; the whitespace after it starts the next piece
 *   (`"Hi. Bye."` -> `"Hi."`, `" Bye."`). So a piece may start with whitespace, and the
 *   last piece (from `end()`) may be whitespace only; speakers skip such pieces.
 * - **Timing**: a sentence is returned as soon as its end is certain, at the latest with
 *   the first non-space character after it:
 *   - `?` `!` `。` `！` `？` `।` `॥` `؟` `‼` `⁇` `⁈` `⁉` `‽` `;`(Greek, `el`) and the like cannot be
 *     abbreviations: the sentence ends as soon as the character after the stop run is seen,
 *     whatever it is (a space is enough; no need to wait for the next word). Until that
 *     character arrives the stop run might still grow (`?!`, a closing `"` or `」`), so
 *     `Why?` at the very end of a chunk waits for the next character: that is the only way
 *     to keep the result independent of chunking. Exceptions: when closing quotes/brackets
 *     follow the stop (`"Why?" he asked.`), the next non-space character decides (a lower-case
 *     word continues the sentence); in French (`fr`) a spaced closing `»` may follow
 *     (`« Oui ! »`), so there too the next non-space character decides.
 *   - `.` and `…` are decided by the first non-space character after them: a lower-case
 *     letter, `,` `;` `:` continue the sentence; a capital, a digit, a caseless letter (CJK,
 *     Arabic, Devanagari...) or an opening quote/bracket end it, except after an abbreviation
 *     (see `abbreviations.ts`), an initial (`J. R. R. Tolkien`), a list number at a line start
 *     (`1. First`) or a German-style ordinal (`am 3. Oktober`, in `de` and other such locales).
 *     An ellipsis ends a sentence only before a capital or an opening quote.
 *     `p.m.`, `etc.`, `Inc.`, `U.S.` before a capital end the sentence (heuristic: usually true).
 *   - A dot glued to the next character (`3.5`, `v1.2.3`, `example.com`, `e.g`) never ends.
 *     A `?` or `!` glued to a letter ends, except inside a URL or e-mail word
 *     (`https://a.b/?c=d`), and a `。」` glued to a following letter (`「はい。」と言った`) does not.
 *   - A paragraph break (a blank line) ends a piece at once, with or without punctuation.
 *   - A single line break ends a piece when the line is a list item (`- `, `* `, `• `,
 *     `1. `, `a) `) or the next line starts one; otherwise (hard-wrapped prose) it is a space.
 *
 * NOTE: `maxBufferSize` (default 65 536 code units) bounds the buffer: beyond it the text is
 * cut at the last whitespace (or hard, never inside a surrogate pair).
 */
import { rulesFor, type LocaleRules } from './abbreviations.js';

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
}

const TEXT = 0;
const TERM = 1;
const DOT = 0;
const ELLIPSIS = 1;
const STRONG = 2;

/** Word classes before a dot. */
const PLAIN = 0;
const ALWAYS = 1;
const NUMERIC = 2;
const NOT_END = 3;

/** Classes of the first character after a stop. */
const UPPER = 0;
const LOWER = 1;
const DIGIT = 2;
const CASELESS = 3;
const OPEN = 4;
const CONTINUE = 5;
const OTHER = 6;

const LIST_MARKER = /^(?:[-*•–]|\d{1,3}[.)]|[A-Za-z][.)])$/;
const LIST_PREFIX = /^(?:[-*•–]|\d{1,3}[.)]?|[A-Za-z][.)]?)$/;
const SHORT_NUMBER = /^\d{1,3}$/;
const RE_UPPER = /^[\p{Lu}\p{Lt}]$/u;
const RE_LOWER = /^\p{Ll}$/u;
const RE_LETTER = /^[\p{L}\p{M}]$/u;
const RE_DIGIT = /^\p{Nd}$/u;
const RE_PUNCT = /^[\p{P}\p{S}]$/u;

/** ASCII characters that, inside a word and outside a stop run, change nothing but the length. */
const INERT_ASCII = new Uint8Array(128);
for (let c = 33; c < 127; c++) INERT_ASCII[c] = c === 0x2e || c === 0x21 || c === 0x3f || c === 0x3b ? 0 : 1;

/** Whether a UTF-16 code unit is whitespace (Unicode White_Space, but for the rarely used U+180E). */
export function isWhitespace(c: number): boolean {
  if (c <= 32) return c === 32 || (c >= 9 && c <= 13);
  if (c < 0x85) return false;
  return (
    c === 0x85 || c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 ||
    c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000
  );
}

function isStrong(c: number, greek: boolean): boolean {
  switch (c) {
    case 0x21: case 0x3f: case 0x3002: case 0xff01: case 0xff1f: case 0x0964: case 0x0965:
    case 0x061f: case 0x203c: case 0x2047: case 0x2048: case 0x2049: case 0x203d: case 0xff0e:
    case 0xff61: case 0x06d4: case 0x0589: case 0x1362: case 0x037e: case 0x2e2e:
      return true;
    case 0x3b:
      return greek;
    default:
      return false;
  }
}

function isCloser(c: number): boolean {
  switch (c) {
    case 0x22: case 0x27: case 0x29: case 0x5d: case 0x7d: case 0x201d: case 0x2019: case 0x201c:
    case 0x2018: case 0xbb: case 0xab: case 0x203a: case 0x2039: case 0x300d: case 0x300f: case 0x300b:
    case 0x3009: case 0x3011: case 0xff09: case 0x3015: case 0xff3d: case 0x301e: case 0x301f:
    case 0xff02: case 0xff07: case 0x3017: case 0x3019:
      return true;
    default:
      return false;
  }
}

/** Closers that may stand after a space (French `« Oui ! »`). */
function isSpacedCloser(c: number): boolean {
  return c === 0xbb || c === 0x203a || c === 0x201d || c === 0x29 || c === 0x5d;
}

function isOpener(c: number): boolean {
  switch (c) {
    case 0x22: case 0x27: case 0x28: case 0x5b: case 0x7b: case 0x201c: case 0x2018: case 0x201e:
    case 0xab: case 0x2039: case 0xbf: case 0xa1: case 0x300c: case 0x300e: case 0x300a: case 0x3008:
    case 0x3010: case 0xff08: case 0x3014: case 0x2e18:
      return true;
    default:
      return false;
  }
}

function isCjk(c: number): boolean {
  return (c >= 0x3040 && c <= 0x30ff) || (c >= 0x3400 && c <= 0x9fff) || (c >= 0xf900 && c <= 0xfaff) || (c >= 0xac00 && c <= 0xd7af);
}

function classify(c: number): number {
  if (c < 0x80) {
    if (c >= 65 && c <= 90) return UPPER;
    if (c >= 97 && c <= 122) return LOWER;
    if (c >= 48 && c <= 57) return DIGIT;
    if (isOpener(c)) return OPEN;
    if (c === 0x2c || c === 0x3b || c === 0x3a || c === 0x25 || c === 0x29 || c === 0x5d || c === 0x7d || c === 0x2d) return CONTINUE;
    return OTHER;
  }
  if (c >= 0xd800 && c <= 0xdfff) return CASELESS; // astral: emoji, CJK ext., ... (decided on the code unit)
  const known = CLASS_CACHE[c]!;
  if (known !== 0) return known - 1;
  const cls = classifyBmp(c);
  CLASS_CACHE[c] = cls + 1;
  return cls;
}

/** Classes of BMP code units beyond ASCII, plus one; 0 when not computed yet. */
const CLASS_CACHE = new Uint8Array(0x10000);

function classifyBmp(c: number): number {
  if (isOpener(c)) return OPEN;
  if (c === 0x2013 || c === 0x2014 || c === 0x060c || c === 0x3001 || c === 0xff0c) return CONTINUE;
  const s = String.fromCharCode(c);
  if (RE_UPPER.test(s)) return UPPER;
  if (RE_LOWER.test(s)) return LOWER;
  if (RE_DIGIT.test(s)) return DIGIT;
  if (RE_LETTER.test(s)) return CASELESS;
  return OTHER;
}

/** Letters and digits (ASCII fast path; beyond ASCII anything but punctuation and symbols). */
function isWordChar(c: number): boolean {
  if (c < 0x80) return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
  return !isOpener(c) && !isCloser(c) && !RE_PUNCT.test(String.fromCharCode(c));
}

function isUrlish(word: string): boolean {
  return word.length >= 64 || word.includes('://') || word.includes('@') || word.toLowerCase().startsWith('www.');
}

/** Create an incremental sentence segmenter (see the module documentation for the rules). */
export function createSentenceSegmenter(options: SentenceSegmenterOptions = {}): SentenceSegmenter {
  const rules: LocaleRules = rulesFor(options.locale);
  const greek = rules.semicolonQuestion;
  const maxBuffer = Math.max(16, options.maxBufferSize ?? 65536);
  const longestWord = Math.max(rules.longest, 3) + 4; // leading quotes and brackets

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
  let lineIsList = false;
  let lastCode = 0;
  let phase = TEXT;
  let cand = 0;
  let kind = DOT;
  let termWs = false;
  let cornerClose = false;
  let closed = false; // closing quotes/brackets followed the stop
  let dotWordStart = 0;
  let dotPos = 0;
  let dotLineStart = false;
  let nlCand = -1;
  let nlLook = '';
  /** The current piece starts at a line start (start of input, or a piece after a cut at a line break). */
  let atLineStart = true;

  function reset(): void {
    len = 0;
    hasContent = false;
    inWs = false;
    wsNl = 0;
    lastWsStart = -1;
    wordStart = 0;
    wordLineStart = true;
    lineIsList = false;
    lastCode = 0;
    phase = TEXT;
    nlCand = -1;
    nlLook = '';
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

  /** Class of the word before the dot at `dotPos` (computed lazily: most dots never need it). */
  function wordClass(): number {
    if (dotPos - dotWordStart > longestWord) return PLAIN; // longer than any abbreviation or list number
    const raw = textRange(dotWordStart, dotPos);
    let k = 0;
    while (k < raw.length && !isWordChar(raw.charCodeAt(k))) k++;
    const w = k > 0 ? raw.slice(k) : raw;
    if (w.length === 0 || w.length > rules.longest) return PLAIN;
    if (dotLineStart && k === 0 && (SHORT_NUMBER.test(w) || (w.length === 1 && w <= 'z'))) return NOT_END;
    if (w.length === 1) {
      const cls = classify(w.charCodeAt(0));
      if (cls === UPPER || cls === LOWER || cls === CASELESS) return w === 'I' ? PLAIN : ALWAYS;
    }
    if (rules.ordinalDot && SHORT_NUMBER.test(w)) return NOT_END;
    const lw = w.toLowerCase();
    if (rules.always.has(lw)) return ALWAYS;
    if (rules.numeric.has(lw)) return NUMERIC;
    return PLAIN;
  }

  function dotEnds(c: number, hadNewline: boolean): boolean {
    const cls = classify(c);
    if (cls === LOWER) return false;
    if (kind === DOT && cls === CONTINUE) return false;
    const dotClass = wordClass();
    if (dotClass === ALWAYS || dotClass === NOT_END) return false;
    if (kind === ELLIPSIS) return cls === UPPER || cls === OPEN || (hadNewline && cls !== CONTINUE);
    if (cls === CONTINUE) return false;
    if (dotClass === NUMERIC && cls === DIGIT) return false;
    return true; // a capital, a digit, a caseless letter, an opening quote, a symbol
  }

  function forceCut(): void {
    let at: number;
    if (phase === TERM && cand > 0) at = cand;
    else if (inWs && hasContent && wsStart > 0) at = wsStart;
    else if (lastWsStart > 0 && len - lastWsStart <= maxBuffer / 2) at = lastWsStart;
    else {
      at = len;
      if (lastCode >= 0xd800 && lastCode <= 0xdbff) at = len - 1; // keep a surrogate pair whole
    }
    cut(at);
  }

  function step(c: number): void {
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
          if (wordLineStart && len - wordStart <= 4 && LIST_MARKER.test(textRange(wordStart, len))) lineIsList = true;
        }
      }
      if (c === 10 || c === 0x2028 || c === 0x2029 || c === 0x85) {
        wsNl += c === 0x2029 ? 2 : 1;
        if (hasContent && (wsNl >= 2 || lineIsList)) {
          const at = phase === TERM ? cand : wsStart;
          if (at > 0) {
            cut(at);
            step(c);
            return;
          }
        }
      }
      if (phase === TERM && !termWs) {
        termWs = true;
        if (kind === STRONG && !rules.spacedClosers && !closed) {
          cut(cand);
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
    const nlBefore = inWs ? wsNl : 0;
    inWs = false;

    if (phase === TERM) {
      if (!termWs) {
        if (isStrong(c, greek) || c === 0x2e || c === 0x2026) {
          if (isStrong(c, greek)) kind = STRONG;
          else if (kind === DOT) kind = ELLIPSIS;
          cand = len + 1;
          lastCode = c;
          len++;
          if (len >= maxBuffer) forceCut();
          return;
        }
        if (isCloser(c)) {
          cornerClose = c === 0x300d || c === 0x300f;
          closed = true;
          cand = len + 1;
          lastCode = c;
          len++;
          if (len >= maxBuffer) forceCut();
          return;
        }
        phase = TEXT;
        if (kind === STRONG && !(cornerClose && classify(c) === CASELESS) && !isUrlish(textRange(Math.max(wordStart, len - 64), len))) {
          cut(cand);
          step(c);
          return;
        }
        // glued: `3.5`, `e.g`, `example.com`; the word goes on
      } else {
        if (rules.spacedClosers && nlBefore === 0 && isSpacedCloser(c)) {
          cand = len + 1;
          termWs = false;
          closed = true;
          lastCode = c;
          len++;
          if (len >= maxBuffer) forceCut();
          return;
        }
        phase = TEXT;
        // `"Why?" he asked.`: a quoted question or exclamation followed by a lower-case word goes on
        if (kind === STRONG ? !(closed && nlBefore === 0 && classify(c) === LOWER) : dotEnds(c, nlBefore > 0)) {
          cut(cand);
          step(c);
          return;
        }
      }
    }

    if (newWord) {
      wordStart = len;
      wordLineStart = nlBefore > 0 || (!hasContent && atLineStart);
      if (nlBefore > 0) {
        lineIsList = false;
        if (hasContent && nlBefore === 1 && phase === TEXT) {
          nlCand = wsStart;
          nlLook = String.fromCharCode(c);
          if (!LIST_PREFIX.test(nlLook)) {
            nlCand = -1;
            nlLook = '';
          }
        }
      }
    }

    if (isStrong(c, greek)) {
      phase = TERM;
      kind = STRONG;
      cand = len + 1;
      termWs = false;
      cornerClose = false;
      closed = false;
    } else if (c === 0x2e || c === 0x2026) {
      phase = TERM;
      kind = c === 0x2e ? DOT : ELLIPSIS;
      cand = len + 1;
      termWs = false;
      cornerClose = false;
      closed = false;
      dotWordStart = wordStart;
      dotPos = len;
      dotLineStart = wordLineStart;
    }
    hasContent = true;
    lastCode = c;
    len++;
    if (len >= maxBuffer) forceCut();
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
      let i = 0;
      while (i < n) {
        if (phase === TEXT && nlCand < 0 && !inWs && len > 0) {
          // fast path: inside a word, a character that is neither space nor stop changes nothing but the length
          let j = i;
          while (j < n) {
            const c = text.charCodeAt(j);
            if (c < 0x80 ? INERT_ASCII[c] === 1 : !isWhitespace(c) && !isStrong(c, greek) && c !== 0x2026) j++;
            else break;
          }
          if (j > i && len + (j - i) < maxBuffer) {
            len += j - i;
            lastCode = text.charCodeAt(j - 1);
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
      const rest = joined();
      parts = [];
      partsLen = 0;
      reset();
      atLineStart = true;
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
      if (inWs) at = wsStart;
      else if (
        (phase === TERM && !termWs) || isCjk(lastCode) || lastCode === 0x2c || lastCode === 0x3b ||
        lastCode === 0x3a || lastCode === 0x3001 || lastCode === 0xff0c || lastCode === 0x060c || isCloser(lastCode)
      ) {
        at = len;
      } else at = lastWsStart;
      if (at <= 0) return [];
      cut(at);
      return take();
    },
  };
}
