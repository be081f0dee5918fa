/**
 * The candidate decision of the sentence core: is this stop the end of a sentence, not an
 * end, or must it wait for more text? A pure function of the candidate (the stop run and a
 * bounded look-back: the word before it, an open quote, the list item being read) and of a
 * bounded look-ahead (the text after the run, at most {@link LOOKAHEAD} code units).
 *
 * The rules, in the order `decide` applies them:
 * - A blank line after a stop ends the sentence; CJK and other scripts' stops (`。` `।` `؟`)
 *   end before the very next character, unless a quote is open (`「はい。」と` goes on).
 * - `?` `!` (`;` in Greek, `:` in Armenian and Arabic): `,` `;`, a dash before a lower-case
 *   word, a lower-case word after a glued quote or a name (`"Why?" he asked`, `Yahoo! in`), a
 *   speech tag (`Stop! she shouted`) and a capital glued to the stop (`Yum!Brands`, `!Xóõ`)
 *   continue the sentence; anything else ends it (`What? no way.` is two).
 * - `.` `…`: inside an open quote or bracket, never. Glued to the next character (`3.5`,
 *   `e.g`, `example.com`) only when a lower-case word meets a capitalized one (`world.Next`).
 *   A lower-case letter, `,` `;` `:` or a dash continue. Then the word before decides
 *   (`classOfWord`): titles and abbreviations that never end (`Dr.`, `z. B.`), list markers
 *   at an item start (`1.`, `b.`, `ii.`) and single letters never end; `No.`, `Fig.` do not end
 *   before a number; a short abbreviation before a number (`Rte. 9`, `pkt. 3`) does not end;
 *   abbreviations and initials before a bracket (`etc. (`, `P.A.L.S. (`) do not end;
 *   initials (`U.S.`), times (`a.m.`, `P.M.`) and ordinals (`am 3.`) look at the next word:
 *   a sentence starter ends them (`the U.S. Then`, `Kapitel 4. Danach`), a weekday or month
 *   continues a time or an ordinal (`9 a.m. Sunday`, `am 3. Oktober`), a title continues
 *   `a.m.`, any other capitalized word continues initials (`the U.S. Government`). Anything
 *   else before a capital, a digit, a caseless letter or an opening quote ends the sentence.
 * - Spaced ellipses (`. . .`) end only as a fourth dot; a lone spaced dot (`( 22 ) .`) is a stop.
 *
 * Word lists are tables: English and common ones in `abbreviations.ts`, other languages' in
 * `languages/<lang>.ts`; list markers in `sentence-lists.ts`.
 */
import type { LocaleRules } from './abbreviations.js';
import { Char, type CharClass, classify, isCloser, isDash, isDot, isLetter, isNewline, isSpacedCloser, isWhitespace, isWordChar } from './sentence-marks.js';
import { BULLET, isNextMarker, markerOf, romanValue, ROMAN_ITEM, type Marker } from './sentence-lists.js';

/** Characters after a candidate looked at, at most, before it is decided anyway. */
export const LOOKAHEAD = 48;
/** Longest word (code units) looked back at before a stop. */
export const LOOKBACK = 40;

/** What a candidate's look-ahead tells. */
export type Decision = 'end' | 'not-end' | 'wait';

/**
 * Kinds of stop runs: `dot` (`.`), `ellipsis` (`…`, `...`), `strong` (`?` `!`), `hard` (CJK
 * and other scripts' stops, decided by the very next character), `colon` (`:` as a full stop
 * in Armenian and Arabic, ending before whitespace only).
 */
export type StopKind = 'dot' | 'ellipsis' | 'strong' | 'hard' | 'colon';

/**
 * Classes of the word before a dot: `plain`; `always` (never ends: `Dr.`, `e.g.`, a single
 * letter); `numeric` (does not end before a number: `No.`, `Fig.`); `list-marker` (`1.` at an
 * item start); `initials` (`U.S.`), `initials-lower` (`e.u.`), `pronoun-i` (`I.`), `time`
 * (`a.m.`, `P.M.`), `ordinal` (`3.` where ordinals take a dot).
 */
export type WordClass = 'plain' | 'always' | 'numeric' | 'list-marker' | 'initials' | 'initials-lower' | 'pronoun-i' | 'time' | 'ordinal';

/** A stop run waiting for its decision. */
export interface Candidate {
  kind: StopKind;
  /** Offset of the first stop character. */
  start: number;
  /** Offset just after the run (stops and glued closers): the boundary if it ends. */
  end: number;
  /** The word before the stop (bounded), `''` when the stop follows whitespace. */
  word: string;
  /** Class of that word (dots only). */
  wordClass: WordClass;
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

/**
 * Whether code unit `c` extends the stop run of `k` (and how: `'stop'` or `'closer'`, whose
 * quote the caller closes): more stops glued to it (`?!`, `...`, `?".`), closing quotes and
 * brackets glued to it, or a closer after spaces where the language puts one (`« Oui ! »`).
 * `kind`: `c`'s stop kind, if a stop; `glued`: `c` comes right after the run. Updates `k`.
 */
export function extendRun(k: Candidate, c: number, kind: StopKind | undefined, glued: boolean, spacedClosers: boolean): 'stop' | 'closer' | false {
  if (!glued) {
    if (!(spacedClosers && isSpacedCloser(c) && /^[ \u00a0\u202f]+$/.test(k.ahead))) return false;
    k.closed = true;
    return 'closer';
  }
  if (kind === 'colon') {
    if (k.kind !== 'dot' && k.kind !== 'ellipsis') return false;
    k.kind = 'colon';
    return 'stop';
  }
  if (kind !== undefined) {
    if (kind === 'hard' || (kind === 'strong' && k.kind !== 'hard')) k.kind = kind;
    else if (k.kind === 'dot') k.kind = 'ellipsis';
    k.spacedDots = 0;
    k.closed = false;
    return 'stop';
  }
  if (!isCloser(c)) return false;
  k.closed = true;
  k.cornerClose = c === 0x300d || c === 0x300f;
  return 'closer';
}

/** After a stop: a citation (`gas. [1]`, `martyr.[7][8]`), part of the sentence before. */
const CITATION = /^[ \t]?\[\d{1,3}(?:[–-]\d{1,3})?\]$/;
const CITATION_PREFIX = /^[ \t]?\[\d{0,3}(?:[–-]\d{0,3})?$/;

/** Whether the look-ahead is a citation (`'extend'`: the run takes it in), may become one (`'wait'`), or is not one. */
export function citation(k: Candidate, ahead: string): 'extend' | 'wait' | undefined {
  if (k.kind === 'hard' || k.kind === 'colon' || ahead.length > 12) return undefined;
  if (CITATION.test(ahead)) return 'extend';
  return CITATION_PREFIX.test(ahead) ? 'wait' : undefined;
}

const SHORT_NUMBER = /^\d{1,3}$/;
const ROMAN = /^[IVXLC]{1,7}$/;
const MULTI_INITIALS = /^(?:\p{L}\.)+\p{L}$/u;
/** Vowels (Latin, Greek, Cyrillic): a short word without one before a dot is an abbreviation (`pkt.`, `str.`). */
const VOWELS = /[aeiouyàáâãäåæèéêëìíîïòóôõöøùúûüýÿœαεηιοωυаеёиоуыэюяіїє]/iu;

/**
 * A word that reads as an abbreviation before a number: two to four letters, capitalized
 * (`Rte`, `Del`, `Кв`) or without a vowel (`pkt`, `str`, `hwy`).
 */
function isShortAbbreviation(word: string): boolean {
  if (word.length < 2 || word.length > 4 || !/^\p{L}+$/u.test(word)) return false;
  const rest = word.slice(1);
  return (classify(word.charCodeAt(0)) === Char.Upper && rest === rest.toLowerCase() && rest !== rest.toUpperCase()) || !VOWELS.test(word);
}

function isUrlish(word: string): boolean {
  return word.includes('://') || word.includes('@') || word.toLowerCase().startsWith('www.');
}

/** The word as an abbreviation key: leading punctuation and an elided article (`l'Ing`) dropped. */
export function bareWord(raw: string): { word: string; lead: number } {
  let k = 0;
  while (k < raw.length && !isWordChar(raw.charCodeAt(k))) k++;
  let w = k > 0 ? raw.slice(k) : raw;
  const apostrophe = Math.max(w.lastIndexOf("'"), w.lastIndexOf('\u2019'));
  if (apostrophe > 0 && apostrophe < w.length - 1) w = w.slice(apostrophe + 1);
  return { word: w, lead: k };
}

/** Where the word before a dot stands (read by the engine as it scans). */
export interface WordContext {
  /** The word starts a list item (a line or piece start, or after a bullet there). */
  itemStart: boolean;
  /** A bullet stands before the word at an item start (`• 9.`). */
  afterBullet: boolean;
  /** The word starts a line. */
  lineStart: boolean;
  /** The word before is a number (`10 h.`: a unit, not an initial). */
  afterNumber: boolean;
  /** The last list marker read (`2.` after `1.` is an item). */
  marker: Marker | undefined;
}

/** Class of the word before a dot (`raw`: the word as written, at most LOOKBACK code units). */
export function classOfWord(raw: string, at: WordContext, rules: LocaleRules): WordClass {
  const { itemStart } = at;
  let { afterBullet } = at;
  if (raw.length === 0 || raw.length > LOOKBACK) return 'plain';
  const { word: w, lead } = bareWord(raw);
  if (w.length === 0) return 'plain';
  const glued = lead > 0 && BULLET.test(raw.slice(0, lead)); // `⁃9.`
  // `(1.)`, `(a.)`: a marker in brackets, its stop before the closing one
  const bracketed = lead === 1 && raw.charCodeAt(0) === 0x28;
  const listy = (lead === 0 || glued || bracketed) && (SHORT_NUMBER.test(w) || (w.length === 1 && w <= 'z' && w >= 'A') || (ROMAN_ITEM.test(w) && romanValue(w) > 0));
  if (listy) {
    if (glued) afterBullet = itemStart;
    const m = markerOf(`${w}.`);
    if (afterBullet || (itemStart && (at.lineStart || w === '1' || w === 'a' || w === 'A' || isNextMarker(m, at.marker, false)))) return 'list-marker';
    if (!itemStart && isNextMarker(m, at.marker, false)) return 'list-marker';
  }
  if (w === 'I') return 'pronoun-i';
  if (w.length === 1) {
    const cls = classify(w.charCodeAt(0));
    if (cls === Char.Lower && at.afterNumber && lead === 0 && w <= 'z') return 'plain'; // `10 h.`, `5 m.`: a unit (`150 г.` is a year: no)
    if (cls === Char.Upper || cls === Char.Lower || cls === Char.Caseless) return 'always';
  }
  if (w.length > rules.longest && !MULTI_INITIALS.test(w)) return 'plain';
  const lw = w.toLowerCase();
  if (rules.always.has(lw)) return 'always';
  if (rules.numeric.has(lw)) return 'numeric';
  if (rules.times.has(lw)) return 'time';
  // `am 3. Oktober`, `dem 1. -3. Jahrhundert`
  if (rules.ordinalDot && (lead === 0 || /^[-–]+$/u.test(raw.slice(0, lead))) && (SHORT_NUMBER.test(w) || ROMAN.test(w))) return 'ordinal';
  if (MULTI_INITIALS.test(w)) return w === lw ? 'initials-lower' : 'initials';
  return 'plain';
}

/**
 * Decide a candidate from its look-ahead `ahead` (the text after the run): the sentence ends
 * after the run, it does not, or the look-ahead does not tell yet. `final`: no more text will
 * come (end of input, or a probe). The steps: a blank line ends; a hard stop; spaced dots
 * after a dot; then, at the first character after the gap, by the run's kind.
 */
export function decide(c: Candidate, ahead: string, final: boolean, rules: LocaleRules): Decision {
  let i = 0;
  let nl = 0;
  while (i < ahead.length && isWhitespace(ahead.charCodeAt(i))) {
    if (isNewline(ahead.charCodeAt(i))) nl += ahead.charCodeAt(i) === 0x2029 ? 2 : 1;
    i++;
  }
  if (nl >= 2) return 'end';
  const gap = i;
  if (c.kind === 'hard') {
    if (ahead.length === 0) return final ? 'end' : 'wait';
    if (c.inQuote) return 'not-end';
    if (c.cornerClose && gap === 0 && classify(ahead.charCodeAt(0)) === Char.Caseless) return 'not-end';
    return 'end';
  }
  // Spaced dots after this one (`word. . . .`): the last dot decides.
  if ((c.kind === 'dot' || c.kind === 'ellipsis') && gap > 0 && nl === 0 && i < ahead.length && isDot(ahead.charCodeAt(i))) {
    const spaced = decideSpacedDots(c, ahead, final);
    if (spaced !== undefined) return spaced;
  }
  if (i >= ahead.length) {
    if (!final) return 'wait';
    return 'end';
  }
  const cls = classify(ahead.charCodeAt(i));
  if (c.kind === 'colon') {
    if (gap === 0) return 'not-end';
    return cls === Char.Lower ? 'not-end' : 'end';
  }
  if (c.kind === 'strong') return decideStrong(c, ahead, i, final, rules);
  return decideDot(c, ahead, i, nl, final, rules);
}

/** Spaced dots after a dot (`word. . . .`, `compounds. . . . The`); undefined: not such a run. */
function decideSpacedDots(c: Candidate, ahead: string, final: boolean): Decision | undefined {
  const m = /^(?:[ \t\u00a0]\.)+/.exec(ahead);
  if (m) {
    const after = ahead.slice(m[0].length);
    if (!final && /^[ \t\u00a0]*$/.test(after)) return 'wait';
    const next = ahead.charCodeAt(m[0].length);
    if (!(after.length > 0 && (isWordChar(next) || isDot(next) || next === 0x2026))) {
      if (c.spacedDots > 0 || m[0].length < 6) return 'not-end';
      // `compounds. . . . The`: the glued period ends, the spaced ellipsis starts the next
      let j = m[0].length;
      while (j < ahead.length && isCloser(ahead.charCodeAt(j))) j++;
      let k = j;
      while (k < ahead.length && isWhitespace(ahead.charCodeAt(k))) k++;
      if (k >= ahead.length) return final ? 'not-end' : 'wait';
      if (k === j) return 'not-end';
      const cls = classify(ahead.charCodeAt(k));
      return cls === Char.Upper || cls === Char.Caseless || cls === Char.Open ? 'end' : 'not-end';
    }
  }
  return undefined;
}

/** `?`, `!` and their kin: a quote, a URL, a lower-case word after them (a speech tag?), a dash. */
function decideStrong(c: Candidate, ahead: string, i: number, final: boolean, rules: LocaleRules): Decision {
  const gap = i;
  const cls = classify(ahead.charCodeAt(i));
  if (c.inQuote) return 'not-end';
  if (gap === 0 && !c.closed && isUrlish(c.word)) return 'not-end';
  if (cls === Char.Lower) {
    // a lower-case word goes on after a quote or a name (`"Why?" he asked`, `Yahoo! in`) and
    // when it is a speech tag (`Stop right there! she shouted`); otherwise it starts a
    // sentence written in lower case (`What? no way.`)
    if (c.closed || gap === 0 || rules.exclamationWords.has(bareWord(c.word).word.toLowerCase())) return 'not-end';
    let k = i;
    while (k < ahead.length && isWordChar(ahead.charCodeAt(k))) k++;
    if (k >= ahead.length && !final && k - i < LOOKBACK) return 'wait';
    return rules.speechTags.has(ahead.slice(i, k)) ? 'not-end' : 'end';
  }
  // glued to a capital: a name or a click letter (`Yum!Brands`, `the !Xóõ language`)
  if (gap === 0 && !c.closed && cls === Char.Upper) return 'not-end';
  if (cls === Char.Continue) return 'not-end';
  if (cls === Char.Dash) {
    // `бар? — деді`, `love?—or fear`: a dash (spaced or glued) then a lower-case word goes on
    let k = i + 1;
    while (k < ahead.length && (isWhitespace(ahead.charCodeAt(k)) || isDash(ahead.charCodeAt(k)))) k++;
    if (k >= ahead.length) return final ? 'end' : 'wait';
    return classify(ahead.charCodeAt(k)) === Char.Lower ? 'not-end' : 'end';
  }
  return 'end';
}

/** `.` and `…`: glued text, a lower-case word, the word before the dot and the word after. */
function decideDot(c: Candidate, ahead: string, i: number, nl: number, final: boolean, rules: LocaleRules): Decision {
  const gap = i;
  const f = ahead.charCodeAt(i);
  const cls = classify(f);
  if (c.inQuote) return 'not-end';
  // `. .` goes on (an ellipsis being written); a lone spaced dot (`( 22 ) . He`, tokenized text) is a stop
  if (c.spacedDots > 1 && c.spacedDots < 4) return 'not-end';
  if (gap === 0) return decideGlued(c, ahead, i, cls, final);
  if (cls === Char.Lower) return 'not-end';
  const wc = c.wordClass;
  if (wc === 'always' || wc === 'list-marker') return 'not-end';
  if (nl > 0) return 'end'; // `Item one.` then a line `- Item two.`
  if (c.kind === 'ellipsis') return cls === Char.Upper || cls === Char.Open || (nl > 0 && cls !== Char.Continue) ? 'end' : 'not-end';
  if (cls === Char.Continue || cls === Char.Dash) return 'not-end';
  if (wc === 'numeric') {
    if (cls === Char.Digit) return 'not-end';
    if (cls === Char.Open) {
      if (i + 1 >= ahead.length) return final ? 'end' : 'wait';
      if (classify(ahead.charCodeAt(i + 1)) === Char.Digit) return 'not-end';
    }
    return 'end';
  }
  const bare = wc === 'plain' || wc === 'time' ? bareWord(c.word).word : '';
  // an abbreviation's dot before a bracket goes on: `etc. (and so on)`, `P.A.L.S. (Portsmouth ...)`
  if (cls === Char.Open && (f === 0x28 || f === 0x5b) && (wc === 'initials' || wc === 'initials-lower' || wc === 'time' || rules.beforeBracket.has(bare.toLowerCase()))) {
    return 'not-end';
  }
  // a short abbreviation before a number goes on: `Rte. 9`, `Del. 1`, `pkt. 3`, `Кв. 234`
  if (cls === Char.Digit && wc === 'plain' && isShortAbbreviation(bare)) return 'not-end';
  if (wc === 'initials' || wc === 'initials-lower' || wc === 'pronoun-i' || wc === 'time' || wc === 'ordinal') {
    return decideByNextWord(c, ahead, i, cls, bare, final, rules);
  }
  return 'end'; // a capital, a digit, a caseless letter, an opening quote, a symbol
}

/** A dot glued to what follows: `3.5`, `e.g`, `example.com` go on; `world.Next` ends. */
function decideGlued(c: Candidate, ahead: string, i: number, cls: CharClass, final: boolean): Decision {
  if (c.kind !== 'dot' || c.closed || cls !== Char.Upper) return 'not-end';
  const w = c.word;
  const last = w.charCodeAt(w.length - 1);
  const lastCls = classify(last);
  if (w.length < 2 || !(lastCls === Char.Lower || lastCls === Char.Digit) || /[./:@_\\]/.test(w)) return 'not-end';
  // the glued word decides: `world.Next` ends, `Jane.Doe@example.com` goes on
  let k = i;
  while (k < ahead.length && !isWhitespace(ahead.charCodeAt(k))) k++;
  if (k >= ahead.length && !final && k - i < LOOKBACK) return 'wait';
  const raw = ahead.slice(i, k);
  const next = raw.replace(/[.!?…]+$/u, '');
  if (next.length === 1 && raw.length > 1 && isDot(raw.charCodeAt(1))) return 'not-end'; // `Ph.D.`
  return next.length > 0 && isLetter(next.charCodeAt(next.length > 1 ? 1 : 0)) && !/[./:@_\\]/.test(next) ? 'end' : 'not-end';
}

/** After initials, `I`, a time (`a.m.`) or an ordinal: a digit, a lower-case letter, or the next word decides. */
function decideByNextWord(c: Candidate, ahead: string, i: number, cls: CharClass, bare: string, final: boolean, rules: LocaleRules): Decision {
  const wc = c.wordClass;
  if (cls === Char.Digit) return wc === 'initials-lower' || wc === 'time' ? 'end' : 'not-end';
  if (cls !== Char.Upper) return wc === 'ordinal' ? 'not-end' : 'end';
  // the next word decides: a sentence starter, a title, a weekday or month
  let k = i;
  while (k < ahead.length && isWordChar(ahead.charCodeAt(k))) k++;
  if (k >= ahead.length && !final && k - i < LOOKBACK) return 'wait';
  const next = ahead.slice(i, k);
  const title = k < ahead.length && isDot(ahead.charCodeAt(k)) && rules.always.has(next.toLowerCase());
  switch (wc) {
    case 'time':
      // `9 a.m. Sunday` goes on; `5 a.m. Mr. Smith went` goes on, `6 P.M. Mr. Smith then` ends
      if (rules.calendar.has(next)) return 'not-end';
      return title && bare === bare.toLowerCase() ? 'not-end' : 'end';
    case 'ordinal':
      // `am 3. Oktober`, `der 2. Weltkrieg` go on; `Kapitel 4. Danach` ends
      if (rules.calendar.has(next)) return 'not-end';
      if (rules.ownStarters.has(next)) return 'end';
      return c.prevCapitalized && !rules.ownStarters.has(bareWord(c.prevWord).word) ? 'end' : 'not-end';
    case 'initials-lower':
      return title ? 'not-end' : 'end';
    case 'initials':
      return title || rules.starters.has(next) ? 'end' : 'not-end';
    default:
      return c.prevCapitalized && !rules.starters.has(next) ? 'not-end' : 'end';
  }
}

