/**
 * Sentence boundaries: a pure incremental core shared by the client operator
 * (`segmentSentences`), the live session's client-side boundaries and the emulator.
 *
 * `feed(text)` returns the sentences whose end is now certain; `end()` returns the
 * remainder. Joining every returned piece gives back the input exactly.
 *
 * ## How it decides
 *
 * Text is scanned once, character by character. A run of terminal punctuation (with the
 * closing quotes or brackets glued to it) is a *candidate* boundary. A candidate is decided
 * by a pure function of a bounded look-back (the word before the stop, whether a quote or
 * bracket is open, the list item being read) and a bounded look-ahead (the characters after
 * the run, at most {@link LOOKAHEAD} of them). While the look-ahead does not decide, the
 * candidate waits; every character is looked at a bounded number of times, so the work is
 * linear in the input, and the result cannot depend on how the text was split into `feed`
 * calls.
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
 * - **Timing**: a sentence is returned as soon as its end is certain, and no later than the
 *   character that decides it, usually the first non-space character after the stop:
 *   - `?` `!` `;`(Greek) `:`(Armenian, Arabic): `,` `;`, a dash before a lower-case word, a
 *     lower-case word after a glued quote or a name (`"Why?" he asked.`, `Yahoo! in`), a speech
 *     tag (`Stop! she shouted`) and a capital glued to the stop (`Yum!Brands`, `!Xóõ`) continue
 *     the sentence; anything else ends it (`What? no way.` is two). CJK and other scripts' stops (`。` `！` `？` `।` `؟` `።` `။`) end at the very next
 *     character, whatever it is (`「はい。」と` aside).
 *   - `.` and `…` are decided by the first non-space character after them: a lower-case
 *     letter, `,` `;` `:` continue the sentence; a capital, a digit, a caseless letter (CJK,
 *     Arabic, Devanagari...) or an opening quote/bracket end it, except after an abbreviation
 *     (`abbreviations.ts`), an initial (`J. R. R. Tolkien`), a list number at an item start
 *     (`1. First`, `• 9. Item`, `ii. Second`), a short abbreviation before a number (`Rte. 9`),
 *     an abbreviation or initials before a bracket (`etc. (`), or an ordinal (`am 3. Oktober`,
 *     `der 2. Weltkrieg`; `Kapitel 4. Danach` ends). Multi-letter initials (`U.S.`, `S.T.A.R.`)
 *     end a sentence before a capital only when a sentence starter or a title follows (`the
 *     U.S. Government` goes on, `the U.S. Then` ends); times (`a.m.`, `P.M.`) end unless a
 *     weekday or month follows (`9 a.m. Sunday`), or, for `a.m.`, a title. `I.` after a name
 *     before a name goes on. A citation after a stop is part of its run (`gas. [1] It`).
 *   - An ellipsis ends a sentence only before a capital or an opening quote; spaced
 *     ellipses (`. . .`) end only as a fourth dot, and `word. . . . Next` ends after `word.`.
 *     `[...]` never ends.
 *   - A stop inside an open quote or bracket (`"Ei fu. Siccome`, `«К чему? – спросила»`,
 *     `《摔跤吧！爸爸》`) does not end a sentence, unless the closing quote is glued to the
 *     stop (`He said "Hi." Then`); a quote open for more than 300 code units is ignored.
 *   - A dot glued to the next character (`3.5`, `v1.2.3`, `example.com`, `e.g`) does not end,
 *     unless a word in lower case is glued to a capitalized word (`world.Next`, `1,000.That`).
 *   - A paragraph break (a blank line) ends a piece at once, with or without punctuation.
 *   - A single line break ends a piece when the line is a list item (`- `, `* `, `• `,
 *     `1. `, `a) `, `(2) `) or the next line starts one, when the lines before and after it
 *     are both short (at most {@link SHORT_LINE}) and end with no stop (titles, menu items),
 *     or after a line of no letters or digits (`_____`); otherwise (hard-wrapped prose) it
 *     is a space. A rule after text (`RESULTS =====`) ends the piece.
 *   - Inline lists end an item before the next marker of the same sequence
 *     (`1) one 2) two`, `a. one b. two`, `• 9. one • 10. two`, `Steps: i) one ii) two`).
 *
 * NOTE: `maxBufferSize` (default 65 536 code units) bounds the buffer: beyond it the text is
 * cut at the last whitespace (or hard, never inside a surrogate pair).
 */
import { optionError } from '../core/validation.js';
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

/** Characters after a candidate looked at, at most, before it is decided anyway. */
export const LOOKAHEAD = 48;
/** A quote or bracket opened longer ago than this (code units) no longer holds stops. */
const QUOTE_SPAN = 300;
/** Longest word (code units) looked back at before a stop. */
const LOOKBACK = 40;

const END = 0;
const NO = 1;
const WAIT = 2;
type Decision = typeof END | typeof NO | typeof WAIT;

/** Kinds of stop runs. */
const DOT = 0;
const ELLIPSIS = 1;
const STRONG = 2;
/** CJK and other scripts' stops: decided by the very next character. */
const HARD = 3;
/** `:` as a full stop (Armenian, Arabic): ends before whitespace only. */
const COLON = 4;

/** Word classes before a dot. */
const PLAIN = 0;
const ALWAYS = 1;
const NUMERIC = 2;
const NOT_END = 3;
const INITIALS = 4;
const INITIALS_LOWER = 5;
const PRONOUN_I = 6;
/** `a.m.`, `P.M.`: a time of day. */
const TIME = 7;
/** `3.`, `XII.` in a language writing ordinals with a dot (`am 3. Oktober`). */
const ORDINAL = 8;

/** Classes of a character after a stop. */
const UPPER = 0;
const LOWER = 1;
const DIGIT = 2;
const CASELESS = 3;
const OPEN = 4;
const CONTINUE = 5;
const OTHER = 6;
const DASH = 7;

/** A list item marker starting a line: a bullet, `1.`, `a)`, `iv.`, `(2)`, `(1.)`. */
const LIST_MARKER = /^(?:[-*•–⁃]|(?:\d{1,3}|[A-Za-z]|[ivxlc]{2,6}|[IVXLC]{2,6})(?:\.\)|[.)])|\((?:\d{1,3}|[A-Za-z]|[ivxlc]{2,6}|[IVXLC]{2,6})\.?\))$/;
/** What a line may start with while it can still become a list marker. */
const LIST_PREFIX = /^(?:[-*•–⁃]|\(?(?:\d{1,3}|[A-Za-z]|[ivxlc]{1,6}|[IVXLC]{1,6})?(?:\.\)?|\))?)$/;
/** An inline list marker: `2)`, `b.`, `ii)`, `(c)`, `• 9.`, `⁃10.`. */
const INLINE_MARKER = /^[•⁃*–-]?(\()?(\d{1,3}|[A-Za-z]|[ivxlc]{2,6}|[IVXLC]{2,6})(\.\)|\.|\))$/;
const ROMAN_VALUES: Record<string, number> = { i: 1, v: 5, x: 10, l: 50, c: 100 };
/** A roman numeral's value (`iv` 4, `XII` 12), or 0 when the letters are not one. */
function romanValue(word: string): number {
  const w = word.toLowerCase();
  let total = 0;
  for (let i = 0; i < w.length; i++) {
    const v = ROMAN_VALUES[w[i]!] ?? 0;
    const next = ROMAN_VALUES[w[i + 1] ?? ''] ?? 0;
    if (v === 0) return 0;
    total += v < next ? -v : v;
  }
  return total > 0 && total < 40 ? total : 0;
}
/** Roman numerals as list markers at an item start (`ii. First`). */
const ROMAN_ITEM = /^(?:[ivxlc]{2,6}|[IVXLC]{2,6})$/;
/** A rule: five or more of one of `=`, `_`, `-`, `*`, `~`, `#` (a heading underline, a separator). */
const RULE = /^([=_~*#-])\1{4,}$/u;
/** A title, menu item or list line without markers: at most this many code units. */
const SHORT_LINE = 40;
/** After a stop: a citation (`gas. [1]`, `martyr.[7][8]`), part of the sentence before. */
const CITATION = /^[ \t]?\[\d{1,3}(?:[–-]\d{1,3})?\]$/;
const CITATION_PREFIX = /^[ \t]?\[\d{0,3}(?:[–-]\d{0,3})?$/;
/** Vowels (Latin, Greek, Cyrillic): a short word without one before a dot is an abbreviation (`pkt.`, `str.`). */
const VOWELS = /[aeiouyàáâãäåæèéêëìíîïòóôõöøùúûüýÿœαεηιοωυаеёиоуыэюяіїє]/iu;
const BULLET = /^[•⁃*–-]$/;
const SHORT_NUMBER = /^\d{1,3}$/;
const ROMAN = /^[IVXLC]{1,7}$/;
const MULTI_INITIALS = /^(?:\p{L}\.)+\p{L}$/u;
const RE_UPPER = /^[\p{Lu}\p{Lt}]$/u;
const RE_LOWER = /^\p{Ll}$/u;
const RE_LETTER = /^[\p{L}\p{M}]$/u;
const RE_DIGIT = /^\p{Nd}$/u;
const RE_PUNCT = /^[\p{P}\p{S}]$/u;

/** ASCII letters and digits: inside a word they change nothing but the length. */
const INERT_ASCII = new Uint8Array(128);
for (let c = 48; c < 123; c++) INERT_ASCII[c] = (c <= 57 || (c >= 65 && c <= 90) || c >= 97) ? 1 : 0;
/** Character classes that are letters or digits (never stops, quotes or spaces). */
const WORD_CLASS = [1, 1, 1, 1, 0, 0, 0, 0];

/** Whether a UTF-16 code unit is whitespace (Unicode White_Space, but for the rarely used U+180E). */
export function isWhitespace(c: number): boolean {
  if (c <= 32) return c === 32 || (c >= 9 && c <= 13);
  if (c < 0x85) return false;
  return (
    c === 0x85 || c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 ||
    c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000
  );
}

function isNewline(c: number): boolean {
  return c === 10 || c === 0x2028 || c === 0x2029 || c === 0x85;
}

/** Stops that end a sentence before the very next character (CJK, Devanagari, Ethiopic...). */
function isHardStop(c: number): boolean {
  switch (c) {
    case 0x3002: case 0xff01: case 0xff1f: case 0x0964: case 0x0965: case 0xff61: case 0x06d4:
    case 0x0589: case 0x1362: case 0x1367: case 0x1368: case 0x104b: case 0x061f: case 0x2e2e:
      return true;
    default:
      return false;
  }
}

function isStrongStop(c: number, rules: LocaleRules): boolean {
  switch (c) {
    case 0x21: case 0x3f: case 0x203c: case 0x2047: case 0x2048: case 0x2049: case 0x203d: case 0x037e:
      return true;
    case 0x3b:
      return rules.semicolonQuestion;
    default:
      return false;
  }
}

function isDot(c: number): boolean {
  return c === 0x2e || c === 0xff0e;
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

/** The closer a quote or bracket expects (tracked for "stop inside quotes"), or 0. */
function expectedCloser(c: number): number {
  switch (c) {
    case 0x201c: return 0x201d; // “ ”
    case 0x201e: return 0x201c; // „ “ (German)
    case 0xab: return 0xbb; // « »
    case 0xbb: return 0xab; // » « (German, Danish: opens when none is open)
    case 0x203a: return 0x2039; // › ‹
    case 0x300a: return 0x300b; // 《 》
    case 0x300c: return 0x300d; // 「 」
    case 0x300e: return 0x300f; // 『 』
    case 0x28: return 0x29; // ( )
    case 0x5b: return 0x5d; // [ ]
    case 0xff08: return 0xff09; // （ ）
    default: return 0;
  }
}

function isCjk(c: number): boolean {
  return (c >= 0x3040 && c <= 0x30ff) || (c >= 0x3400 && c <= 0x9fff) || (c >= 0xf900 && c <= 0xfaff) || (c >= 0xac00 && c <= 0xd7af);
}

function isDash(c: number): boolean {
  return c === 0x2d || c === 0x2013 || c === 0x2014;
}

function classify(c: number): number {
  if (c < 0x80) {
    if (c >= 65 && c <= 90) return UPPER;
    if (c >= 97 && c <= 122) return LOWER;
    if (c >= 48 && c <= 57) return DIGIT;
    if (c === 0x2d) return DASH;
    if (isOpener(c)) return OPEN;
    if (c === 0x2c || c === 0x3b || c === 0x3a || c === 0x25 || c === 0x29 || c === 0x5d || c === 0x7d) return CONTINUE;
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
  if (c === 0x2013 || c === 0x2014) return DASH;
  if (isOpener(c)) return OPEN;
  if (c === 0x060c || c === 0x3001 || c === 0xff0c) return CONTINUE;
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

function isLetter(c: number): boolean {
  const cls = classify(c);
  return cls === UPPER || cls === LOWER || cls === CASELESS;
}

/**
 * A word that reads as an abbreviation before a number: two to four letters, capitalized
 * (`Rte`, `Del`, `Кв`) or without a vowel (`pkt`, `str`, `hwy`).
 */
function isShortAbbreviation(word: string): boolean {
  if (word.length < 2 || word.length > 4 || !/^\p{L}+$/u.test(word)) return false;
  const rest = word.slice(1);
  return (classify(word.charCodeAt(0)) === UPPER && rest === rest.toLowerCase() && rest !== rest.toUpperCase()) || !VOWELS.test(word);
}

/** Whether a line ends with terminal punctuation (closing quotes and brackets aside). */
function endsWithStop(line: string): boolean {
  let k = line.length - 1;
  while (k > 0 && isCloser(line.charCodeAt(k))) k--;
  const c = line.charCodeAt(k);
  return isDot(c) || c === 0x2026 || isHardStop(c) || c === 0x21 || c === 0x3f || c === 0x203c || c === 0x2047 || c === 0x2048 || c === 0x2049 || c === 0x203d || c === 0x037e;
}

function isUrlish(word: string): boolean {
  return word.includes('://') || word.includes('@') || word.toLowerCase().startsWith('www.');
}

/** The word as an abbreviation key: leading punctuation and an elided article (`l'Ing`) dropped. */
function bareWord(raw: string): { word: string; lead: number } {
  let k = 0;
  while (k < raw.length && !isWordChar(raw.charCodeAt(k))) k++;
  let w = k > 0 ? raw.slice(k) : raw;
  const apostrophe = Math.max(w.lastIndexOf("'"), w.lastIndexOf('\u2019'));
  if (apostrophe > 0 && apostrophe < w.length - 1) w = w.slice(apostrophe + 1);
  return { word: w, lead: k };
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

/** An inline list marker: its value as a number, a letter (`b` 98) and a roman numeral (`ii` 2); 0 when it is not one. */
interface Marker {
  number: number;
  letter: number;
  roman: number;
  suffix: string;
}

interface Candidate {
  kind: number;
  /** Offset of the first stop character. */
  start: number;
  /** Offset just after the run (stops and glued closers): the boundary if it ends. */
  end: number;
  /** The word before the stop (bounded), `''` when the stop follows whitespace. */
  word: string;
  /** Class of that word (dots only). */
  wordClass: number;
  /** The run ends with closing quotes/brackets. */
  closed: boolean;
  /** The run ends with a `」`/`』` (`「はい。」と言った` goes on). */
  cornerClose: boolean;
  /** A quote or bracket is still open after the run. */
  inQuote: boolean;
  /** Spaced dots (`. . .`) ending at this one, this one included; 0 for a glued dot. */
  spacedDots: number;
  /** The word before was capitalized (for `Albert I. Jones`). */
  prevCapitalized: boolean;
  /** The word before the stop's word (its head), for `Kapitel 4.` against `der 2.`. */
  prevWord: string;
  /** The text after the run seen so far (at most LOOKAHEAD code units). */
  ahead: string;
}

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

  function markerOf(word: string): Marker | undefined {
    const m = INLINE_MARKER.exec(word);
    if (!m) return undefined;
    if (m[1] !== undefined && !m[3]!.endsWith(')')) return undefined; // `(c.` is not one
    const body = m[2]!;
    const digits = /\d/.test(body);
    return {
      number: digits ? Number(body) : 0,
      letter: !digits && body.length === 1 ? body.toLowerCase().charCodeAt(0) : 0,
      roman: digits ? 0 : romanValue(body),
      suffix: m[3]!,
    };
  }

  /** Whether `m` follows the last marker read (`suffix`: `2)` after `1)`, not after `1.`; `ii)` after `i)`). */
  function isNextMarker(m: Marker | undefined, suffix = true): boolean {
    if (m === undefined || marker === undefined || (suffix && m.suffix !== marker.suffix)) return false;
    return (
      (m.number > 0 && m.number === marker.number + 1) ||
      (m.letter > 0 && marker.letter > 0 && m.letter === marker.letter + 1) ||
      (m.roman > 0 && marker.roman > 0 && m.roman === marker.roman + 1)
    );
  }

  /** Class of the word before a dot. */
  function classOfWord(raw: string, itemStart: boolean, afterBullet: boolean): number {
    if (raw.length === 0 || raw.length > LOOKBACK) return PLAIN;
    const { word: w, lead } = bareWord(raw);
    if (w.length === 0) return PLAIN;
    const glued = lead > 0 && BULLET.test(raw.slice(0, lead)); // `⁃9.`
    const listy = (lead === 0 || glued) && (SHORT_NUMBER.test(w) || (w.length === 1 && w <= 'z' && w >= 'A') || (ROMAN_ITEM.test(w) && romanValue(w) > 0));
    if (listy) {
      if (glued) afterBullet = itemStart;
      const m = markerOf(`${w}.`);
      if (afterBullet || (itemStart && (wordLineStart || w === '1' || w === 'a' || w === 'A' || isNextMarker(m, false)))) return NOT_END;
      if (!itemStart && isNextMarker(m, false)) return NOT_END;
    }
    if (w === 'I') return PRONOUN_I;
    if (w.length === 1) {
      const cls = classify(w.charCodeAt(0));
      if (cls === LOWER && prevWordNumeric && lead === 0 && w <= 'z') return PLAIN; // `10 h.`, `5 m.`: a unit (`150 г.` is a year: no)
      if (cls === UPPER || cls === LOWER || cls === CASELESS) return ALWAYS;
    }
    if (w.length > rules.longest && !MULTI_INITIALS.test(w)) return PLAIN;
    const lw = w.toLowerCase();
    if (rules.always.has(lw)) return ALWAYS;
    if (rules.numeric.has(lw)) return NUMERIC;
    if (rules.times.has(lw)) return TIME;
    // `am 3. Oktober`, `dem 1. -3. Jahrhundert`
    if (rules.ordinalDot && (lead === 0 || /^[-–]+$/u.test(raw.slice(0, lead))) && (SHORT_NUMBER.test(w) || ROMAN.test(w))) return ORDINAL;
    if (MULTI_INITIALS.test(w)) return w === lw ? INITIALS_LOWER : INITIALS;
    return PLAIN;
  }

  /**
   * Decide a candidate from its look-ahead `ahead` (the text after the run). `final`: no
   * more text will come (end of input, or a probe).
   */
  function decide(c: Candidate, ahead: string, final: boolean): Decision {
    let i = 0;
    let nl = 0;
    while (i < ahead.length && isWhitespace(ahead.charCodeAt(i))) {
      if (isNewline(ahead.charCodeAt(i))) nl += ahead.charCodeAt(i) === 0x2029 ? 2 : 1;
      i++;
    }
    if (nl >= 2) return END;
    const gap = i;
    if (c.kind === HARD) {
      if (ahead.length === 0) return final ? END : WAIT;
      if (c.inQuote) return NO;
      if (c.cornerClose && gap === 0 && classify(ahead.charCodeAt(0)) === CASELESS) return NO;
      return END;
    }
    // Spaced dots after this one (`word. . . .`): the last dot decides.
    if ((c.kind === DOT || c.kind === ELLIPSIS) && gap > 0 && nl === 0 && i < ahead.length && isDot(ahead.charCodeAt(i))) {
      const m = /^(?:[ \t\u00a0]\.)+/.exec(ahead);
      if (m) {
        const after = ahead.slice(m[0].length);
        if (!final && /^[ \t\u00a0]*$/.test(after)) return WAIT;
        const next = ahead.charCodeAt(m[0].length);
        if (!(after.length > 0 && (isWordChar(next) || isDot(next) || next === 0x2026))) {
          if (c.spacedDots > 0 || m[0].length < 6) return NO;
          // `compounds. . . . The`: the glued period ends, the spaced ellipsis starts the next
          let j = m[0].length;
          while (j < ahead.length && isCloser(ahead.charCodeAt(j))) j++;
          let k = j;
          while (k < ahead.length && isWhitespace(ahead.charCodeAt(k))) k++;
          if (k >= ahead.length) return final ? NO : WAIT;
          if (k === j) return NO;
          const cls = classify(ahead.charCodeAt(k));
          return cls === UPPER || cls === CASELESS || cls === OPEN ? END : NO;
        }
      }
    }
    if (i >= ahead.length) {
      if (!final) return WAIT;
      return END;
    }
    const f = ahead.charCodeAt(i);
    const cls = classify(f);
    if (c.kind === COLON) {
      if (gap === 0) return NO;
      return cls === LOWER ? NO : END;
    }
    if (c.kind === STRONG) {
      if (c.inQuote) return NO;
      if (gap === 0 && !c.closed && isUrlish(c.word)) return NO;
      if (cls === LOWER) {
        // a lower-case word goes on after a quote or a name (`"Why?" he asked`, `Yahoo! in`) and
        // when it is a speech tag (`Stop right there! she shouted`); otherwise it starts a
        // sentence written in lower case (`What? no way.`)
        if (c.closed || gap === 0 || rules.exclamationWords.has(bareWord(c.word).word.toLowerCase())) return NO;
        let k = i;
        while (k < ahead.length && isWordChar(ahead.charCodeAt(k))) k++;
        if (k >= ahead.length && !final && k - i < LOOKBACK) return WAIT;
        return rules.speechTags.has(ahead.slice(i, k)) ? NO : END;
      }
      // glued to a capital: a name or a click letter (`Yum!Brands`, `the !Xóõ language`)
      if (gap === 0 && !c.closed && cls === UPPER) return NO;
      if (cls === CONTINUE) return NO;
      if (cls === DASH && gap > 0) {
        // `бар? — деді`: a dash then a lower-case word goes on
        let k = i + 1;
        while (k < ahead.length && (isWhitespace(ahead.charCodeAt(k)) || isDash(ahead.charCodeAt(k)))) k++;
        if (k >= ahead.length) return final ? END : WAIT;
        return classify(ahead.charCodeAt(k)) === LOWER ? NO : END;
      }
      return END;
    }
    // DOT and ELLIPSIS
    if (c.inQuote) return NO;
    // `. .` goes on (an ellipsis being written); a lone spaced dot (`( 22 ) . He`, tokenized text) is a stop
    if (c.spacedDots > 1 && c.spacedDots < 4) return NO;
    if (gap === 0) {
      // glued: `3.5`, `e.g`, `example.com` go on; `world.Next` ends
      if (c.kind !== DOT || c.closed || cls !== UPPER) return NO;
      const w = c.word;
      const last = w.charCodeAt(w.length - 1);
      const lastCls = classify(last);
      if (w.length < 2 || !(lastCls === LOWER || lastCls === DIGIT) || /[./:@_\\]/.test(w)) return NO;
      // the glued word decides: `world.Next` ends, `Jane.Doe@example.com` goes on
      let k = i;
      while (k < ahead.length && !isWhitespace(ahead.charCodeAt(k))) k++;
      if (k >= ahead.length && !final && k - i < LOOKBACK) return WAIT;
      const raw = ahead.slice(i, k);
      const next = raw.replace(/[.!?…]+$/u, '');
      if (next.length === 1 && raw.length > 1 && isDot(raw.charCodeAt(1))) return NO; // `Ph.D.`
      return next.length > 0 && isLetter(next.charCodeAt(next.length > 1 ? 1 : 0)) && !/[./:@_\\]/.test(next) ? END : NO;
    }
    if (cls === LOWER) return NO;
    const wc = c.wordClass;
    if (wc === ALWAYS || wc === NOT_END) return NO;
    if (nl > 0) return END; // `Item one.` then a line `- Item two.`
    if (c.kind === ELLIPSIS) return cls === UPPER || cls === OPEN || (nl > 0 && cls !== CONTINUE) ? END : NO;
    if (cls === CONTINUE || cls === DASH) return NO;
    if (wc === NUMERIC) {
      if (cls === DIGIT) return NO;
      if (cls === OPEN) {
        if (i + 1 >= ahead.length) return final ? END : WAIT;
        if (classify(ahead.charCodeAt(i + 1)) === DIGIT) return NO;
      }
      return END;
    }
    const bare = wc === PLAIN || wc === TIME ? bareWord(c.word).word : '';
    // an abbreviation's dot before a bracket goes on: `etc. (and so on)`, `P.A.L.S. (Portsmouth ...)`
    if (cls === OPEN && (f === 0x28 || f === 0x5b) && (wc === INITIALS || wc === INITIALS_LOWER || wc === TIME || rules.beforeBracket.has(bare.toLowerCase()))) {
      return NO;
    }
    // a short abbreviation before a number goes on: `Rte. 9`, `Del. 1`, `pkt. 3`, `Кв. 234`
    if (cls === DIGIT && wc === PLAIN && isShortAbbreviation(bare)) return NO;
    if (wc === INITIALS || wc === INITIALS_LOWER || wc === PRONOUN_I || wc === TIME || wc === ORDINAL) {
      if (cls === DIGIT) return wc === INITIALS_LOWER || wc === TIME ? END : NO;
      if (cls !== UPPER) return wc === ORDINAL ? NO : END;
      // the next word decides: a sentence starter, a title, a weekday or month
      let k = i;
      while (k < ahead.length && isWordChar(ahead.charCodeAt(k))) k++;
      if (k >= ahead.length && !final && k - i < LOOKBACK) return WAIT;
      const next = ahead.slice(i, k);
      const title = k < ahead.length && isDot(ahead.charCodeAt(k)) && rules.always.has(next.toLowerCase());
      switch (wc) {
        case TIME:
          // `9 a.m. Sunday` goes on; `5 a.m. Mr. Smith went` goes on, `6 P.M. Mr. Smith then` ends
          if (rules.calendar.has(next)) return NO;
          return title && bare === bare.toLowerCase() ? NO : END;
        case ORDINAL:
          // `am 3. Oktober`, `der 2. Weltkrieg` go on; `Kapitel 4. Danach` ends
          if (rules.calendar.has(next)) return NO;
          if (rules.ownStarters.has(next)) return END;
          return c.prevCapitalized && !rules.ownStarters.has(bareWord(c.prevWord).word) ? END : NO;
        case INITIALS_LOWER:
          return title ? NO : END;
        case INITIALS:
          return title || rules.starters.has(next) ? END : NO;
        default:
          return c.prevCapitalized && !rules.starters.has(next) ? NO : END;
      }
    }
    return END; // a capital, a digit, a caseless letter, an opening quote, a symbol
  }

  function openCandidate(kind: number, c: number): void {
    // the word before the stop (its head, ending in `…` when longer than LOOKBACK)
    const raw = inWs || len === wordStart ? '' : len - wordStart <= LOOKBACK ? wordHead : `${wordHead.slice(0, LOOKBACK)}\u2026`;
    const spaced = kind === DOT && raw.length === 0 && lastDotEnd >= 0 && lastDotEnd === len - 1 ? spacedDots + 1 : kind === DOT && raw.length === 0 ? 1 : 0;
    const afterBullet = prevWordBullet && wordItemStart;
    cand = {
      kind,
      start: len,
      end: len + 1,
      word: raw,
      wordClass: kind === DOT ? classOfWord(raw, wordItemStart, afterBullet) : PLAIN,
      closed: false,
      cornerClose: false,
      inQuote: quoteOpen(),
      spacedDots: spaced,
      prevCapitalized: prevWordCapitalized,
      prevWord: prevWordHead,
      ahead: '',
    };
    spacedDots = spaced;
    if (kind === DOT && c !== 0x2026) lastDotEnd = len + 1;
  }

  function stopKind(c: number): number {
    if (isHardStop(c)) return HARD;
    if (isStrongStop(c, rules)) return STRONG;
    if (c === 0x3a && rules.colonStop) return COLON;
    if (c === 0x2026) return ELLIPSIS;
    if (isDot(c)) return DOT;
    return -1;
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
      if (kind === COLON) {
        if (k.kind === DOT || k.kind === ELLIPSIS) {
          k.kind = COLON;
          extend = true;
        }
      } else if (kind >= 0) {
        if (kind === HARD || (kind === STRONG && k.kind !== HARD)) k.kind = kind;
        else if (k.kind === DOT) k.kind = ELLIPSIS;
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
    if (k.kind !== HARD && k.kind !== COLON && ahead.length <= 12) {
      if (CITATION.test(ahead)) {
        // `gas. [1]`: the citation belongs to the sentence it follows; the text after it decides
        k.end = len;
        k.ahead = '';
        return;
      }
      if (CITATION_PREFIX.test(ahead)) return;
    }
    let d = decide(k, ahead, false);
    if (d === WAIT && ahead.length >= LOOKAHEAD) d = decide(k, ahead, true);
    if (d === END) cut(k.end);
    else if (d === NO) dropCandidate();
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
    const inOmission = (kind === DOT || kind === ELLIPSIS) && (lastCode === 0x5b || lastCode === 0x28 || (omissionRun && (isDot(lastCode) || lastCode === 0x2026)));
    omissionRun = inOmission;
    if (kind >= 0 && !inOmission) openCandidate(kind, c);
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
      const closer = c === 0x22 ? 0x22 : expectedCloser(c);
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
      prevWordCapitalized = classify(wordHead.charCodeAt(0)) === UPPER;
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
      } else if (isNextMarker(m)) {
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
    prevWordCapitalized = classify(word.charCodeAt(0)) === UPPER;
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
            if (c < 0x80 ? INERT_ASCII[c] === 1 : WORD_CLASS[classify(c)] === 1) j++;
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
        if (k.ahead.trim().length > 0 && decide(k, k.ahead, true) === END) cut(k.end);
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
      return decide(cand, `${cand.ahead} A`, true) === END;
    },
    undecidedFrom() {
      return cand ? cand.start : lineBreak;
    },
  };
}
