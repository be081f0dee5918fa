/**
 * The marks the sentence core reads, as plain tables (extend a table, not the code), and the
 * character classes built from them. Per-language word lists (abbreviations, titles, sentence
 * starters, weekdays and months) are in `abbreviations.ts` and `languages/<lang>.ts`; list
 * markers in `sentence-lists.ts`.
 */

/** Stops that end a sentence before the very next character, whatever it is (CJK, Devanagari, Ethiopic, ...). */
export const HARD_STOPS = '\u3002\uff01\uff1f\u0964\u0965\uff61\u06d4\u0589\u1362\u1367\u1368\u104b\u061f\u2e2e'; // 。！？।॥｡۔։።፧፨။؟⸮
/** `?` / `!` and their kin; a lower-case word after them may continue the sentence. */
export const STRONG_STOPS = '!?\u203c\u2047\u2048\u2049\u203d\u037e'; // ! ? ‼ ⁇ ⁈ ⁉ ‽ and the Greek question mark U+037E
/** Dots: the full stop and its full-width form; `…` is an ellipsis. */
export const DOTS = '.\uff0e'; // . ．
/** Quotes and brackets that open. */
export const OPENERS = '"\'([{\u201c\u2018\u201e\u00ab\u2039\u00bf\u00a1\u300c\u300e\u300a\u3008\u3010\uff08\u3014\u2e18'; // “ ‘ „ « ‹ ¿ ¡ 「 『 《 〈 【 （ 〔 ⸘
/** Quotes and brackets that close (a quote glued after a stop stays with its sentence). */
export const CLOSERS =
  '"\')]}\u201d\u2019\u201c\u2018\u00bb\u00ab\u203a\u2039\u300d\u300f\u300b\u3009\u3011\uff09\u3015\uff3d\u301e\u301f\uff02\uff07\u3017\u3019'; // ” ’ “ ‘ » « › ‹ 」 』 》 〉 】 ） 〕 ］ 〞 〟 ＂ ＇ 〗 〙
/** Closers that may stand after a space (French `« Oui ! »`). */
export const SPACED_CLOSERS = '\u00bb\u203a\u201d)]'; // » › ” ) ]
/** What each opener expects (for "a stop inside an open quote or bracket goes on"). */
export const QUOTE_PAIRS: Record<string, string> = {
  '“': '”', // English
  '„': '“', // German
  '«': '»', // French, Russian
  '»': '«', // German, Danish (opens when none is open)
  '›': '‹',
  '《': '》',
  '「': '」',
  '『': '』',
  '(': ')',
  '[': ']',
  '（': '）',
  '"': '"',
};
/** Marks after a stop that continue the sentence (`Fig. 3, p. 4`; Arabic and CJK commas). */
export const CONTINUERS = ',;:%)]}\u060c\u3001\uff0c'; // and ، 、 ，
/** Dashes: a dash before a lower-case word continues a `?` sentence (`бар? — деді`). */
export const DASHES = '-\u2013\u2014'; // - – —

/** One bit per table, per UTF-16 code unit: the hot checks are a single array read. */
const FLAGS = new Uint8Array(0x10000);
const [HARD, STRONG, DOT, OPEN, CLOSE, SPACED_CLOSE, CONTINUE, DASH] = [1, 2, 4, 8, 16, 32, 64, 128];
for (const [chars, bit] of [
  [HARD_STOPS, HARD],
  [STRONG_STOPS, STRONG],
  [DOTS, DOT],
  [OPENERS, OPEN],
  [CLOSERS, CLOSE],
  [SPACED_CLOSERS, SPACED_CLOSE],
  [CONTINUERS, CONTINUE],
  [DASHES, DASH],
] as const) {
  for (const ch of chars) FLAGS[ch.charCodeAt(0)]! |= bit;
}
/** `;` (U+003B) is a question mark in Greek text. */
const SEMICOLON = 0x3b;
const PAIRS = new Map(Object.entries(QUOTE_PAIRS).map(([o, c]) => [o.charCodeAt(0), c.charCodeAt(0)]));

/** Classes of a character after a stop (numbers: the class is read once per character). */
export const Char = { Upper: 0, Lower: 1, Digit: 2, Caseless: 3, Open: 4, Continue: 5, Other: 6, Dash: 7 } as const;
export type CharClass = (typeof Char)[keyof typeof Char];

/** Whether a UTF-16 code unit is whitespace (Unicode White_Space, but for the rarely used U+180E). */
export function isWhitespace(c: number): boolean {
  if (c <= 32) return c === 32 || (c >= 9 && c <= 13);
  if (c < 0x85) return false;
  return (
    c === 0x85 || c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 ||
    c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000
  );
}

export function isNewline(c: number): boolean {
  return c === 10 || c === 0x2028 || c === 0x2029 || c === 0x85;
}

export const isHardStop = (c: number): boolean => (FLAGS[c]! & HARD) !== 0;
/** `?`, `!` and kin; `;` only where it is a question mark (Greek). */
export const isStrongStop = (c: number, semicolonQuestion: boolean): boolean => (FLAGS[c]! & STRONG) !== 0 || (semicolonQuestion && c === SEMICOLON);
export const isDot = (c: number): boolean => (FLAGS[c]! & DOT) !== 0;
export const isOpener = (c: number): boolean => (FLAGS[c]! & OPEN) !== 0;
export const isCloser = (c: number): boolean => (FLAGS[c]! & CLOSE) !== 0;
export const isSpacedCloser = (c: number): boolean => (FLAGS[c]! & SPACED_CLOSE) !== 0;
export const isDash = (c: number): boolean => (FLAGS[c]! & DASH) !== 0;
/** The closer a quote or bracket expects, or 0 when it is not tracked. */
export const expectedCloser = (c: number): number => PAIRS.get(c) ?? 0;

export function isCjk(c: number): boolean {
  return (c >= 0x3040 && c <= 0x30ff) || (c >= 0x3400 && c <= 0x9fff) || (c >= 0xf900 && c <= 0xfaff) || (c >= 0xac00 && c <= 0xd7af);
}

const RE_UPPER = /^[\p{Lu}\p{Lt}]$/u;
const RE_LOWER = /^\p{Ll}$/u;
const RE_LETTER = /^[\p{L}\p{M}]$/u;
const RE_DIGIT = /^\p{Nd}$/u;
const RE_PUNCT = /^[\p{P}\p{S}]$/u;

/** Classes of BMP code units, plus one; 0 when not computed yet. */
const CLASS_CACHE = new Uint8Array(0x10000);

function classifyOnce(c: number): CharClass {
  if (c >= 65 && c <= 90) return Char.Upper;
  if (c >= 97 && c <= 122) return Char.Lower;
  if (c >= 48 && c <= 57) return Char.Digit;
  if ((FLAGS[c]! & DASH) !== 0) return Char.Dash;
  if ((FLAGS[c]! & OPEN) !== 0) return Char.Open;
  if ((FLAGS[c]! & CONTINUE) !== 0) return Char.Continue;
  if (c < 0x80) return Char.Other;
  const s = String.fromCharCode(c);
  if (RE_UPPER.test(s)) return Char.Upper;
  if (RE_LOWER.test(s)) return Char.Lower;
  if (RE_DIGIT.test(s)) return Char.Digit;
  if (RE_LETTER.test(s)) return Char.Caseless;
  return Char.Other;
}

/** The class of a code unit (astral code units: caseless, like emoji and CJK extensions). */
export function classify(c: number): CharClass {
  if (c >= 0xd800 && c <= 0xdfff) return Char.Caseless;
  const known = CLASS_CACHE[c]!;
  if (known !== 0) return (known - 1) as CharClass;
  const cls = classifyOnce(c);
  CLASS_CACHE[c] = cls + 1;
  return cls;
}


/** ASCII letters and digits: inside a word they change nothing but the length. */
export const INERT_ASCII = new Uint8Array(128);
for (let c = 48; c < 123; c++) INERT_ASCII[c] = c <= 57 || (c >= 65 && c <= 90) || c >= 97 ? 1 : 0;

/** Whether a code unit beyond ASCII is a letter or digit (never a stop, quote or space): the fast path. */
export function isInert(c: number): boolean {
  return c < 0x80 ? INERT_ASCII[c] === 1 : classify(c) <= Char.Caseless;
}

/**
 * Text of letters, digits and spaces alone (`isInert` code units and U+0020: most of an
 * LLM's word tokens), not empty: no stop, quote, bracket, tag, list marker or line break. Fed
 * to a sentence segmenter that holds no undecided stop, it cannot open one, and cuts nothing
 * short of the segmenter's buffer size; so the live session's gate and ledger may give it to
 * their segmenters late, with the next text that is not quiet (a segmenter's cuts do not
 * depend on how its text is chunked).
 */
export function isQuietText(text: string): boolean {
  // from the end: a text with a stop in it mostly has it there (`... number 3! `), so the
  // whole sentences a session is given say no at once
  for (let i = text.length - 1; i >= 0; i--) {
    const c = text.charCodeAt(i);
    if (c !== 0x20 && !isInert(c)) return false;
  }
  return text.length > 0;
}

/** Letters and digits (beyond ASCII: anything but punctuation and symbols). */
export function isWordChar(c: number): boolean {
  if (c < 0x80) return INERT_ASCII[c] === 1;
  return (FLAGS[c]! & (OPEN | CLOSE)) === 0 && !RE_PUNCT.test(String.fromCharCode(c));
}

export function isLetter(c: number): boolean {
  const cls = classify(c);
  return cls === Char.Upper || cls === Char.Lower || cls === Char.Caseless;
}

/** Whether a line ends with terminal punctuation (closing quotes and brackets aside). */
export function endsWithStop(line: string): boolean {
  let k = line.length - 1;
  while (k > 0 && isCloser(line.charCodeAt(k))) k--;
  const c = line.charCodeAt(k);
  return c === 0x2026 || (FLAGS[c]! & (DOT | HARD | STRONG)) !== 0;
}
