/**
 * Abbreviation sets and locale rules for the sentence segmenter.
 *
 * Words are stored lower-cased, without their final dot (`e.g.` is `e.g`).
 * - `always`: a dot after these never ends a sentence (titles, `e.g.`, `z.B.`, `Sr.`);
 *   only a paragraph break or the end of input ends one there.
 * - `numeric`: a dot after these does not end a sentence before a number (`No. 5`,
 *   `Fig. 3`, `S. 12`); before a capital it does.
 * Anything else (`etc.`, `Inc.`, `p.m.`, `U.S.`) follows the default rule: the dot ends
 * the sentence when the next word starts with a capital, a digit, a caseless letter or an
 * opening quote, and not when it starts in lower case.
 *
 * This file holds the common (English and international) words and the per-language flags;
 * each other language's words are a table of its own (`languages/de.ts`), loaded only when
 * that language is used (`language-tables.ts`).
 */
import { languageOf, languageTable } from './language-tables.js';

export interface LocaleRules {
  readonly always: ReadonlySet<string>;
  readonly numeric: ReadonlySet<string>;
  /** `3. Oktober`: one to three digits and a dot are an ordinal, not a sentence end. */
  readonly ordinalDot: boolean;
  /** `;` is a question mark (Greek). */
  readonly semicolonQuestion: boolean;
  /** Closing quotes may follow the stop after a space (French `« Oui ! »`). */
  readonly spacedClosers: boolean;
  /** Capitalized words that start a sentence (after `U.S.`, `E.U.`): English ones and the language's own. */
  readonly starters: ReadonlySet<string>;
  /** The language's own sentence starters only (after an ordinal: `Kapitel 4. Danach`). */
  readonly ownStarters: ReadonlySet<string>;
  /** Words that end in `!` inside a sentence (`Yahoo! in`), lower-cased, without the `!`. */
  readonly exclamationWords: ReadonlySet<string>;
  /** `:` is a full stop (Armenian, Arabic) when whitespace follows it. */
  readonly colonStop: boolean;
  /** Length of the longest abbreviation (a longer word before a dot is never one). */
  readonly longest: number;
  /** Times of day written as initials (`a.m.`, `p.m.`), lower-cased, without the last dot. */
  readonly times: ReadonlySet<string>;
  /** Weekday and month names, as written (`Sunday`, `Okt`): after `9 a.m.` or `am 3.` they go on. */
  readonly calendar: ReadonlySet<string>;
  /** Abbreviations that end a sentence before a capital, but not before `(` (`etc. (and so on)`). */
  readonly beforeBracket: ReadonlySet<string>;
  /** Lower-case words that tag speech after `!` or `?` (`Stop! she shouted`): the sentence goes on. */
  readonly speechTags: ReadonlySet<string>;
}

const COMMON_ALWAYS = [
  'mr', 'mrs', 'ms', 'mx', 'messrs', 'dr', 'prof', 'st', 'sr', 'vs', 'e.g', 'i.e', 'approx', 'cf',
  'viz', 'al', 'ca', 'mt', 'gen', 'col', 'lt', 'sgt', 'capt', 'rev', 'hon', 'gov', 'sen', 'rep',
  'pres', 'supt', 'cmdr', 'adm', 'ft', 'ste',
];
const COMMON_NUMERIC = [
  'no', 'nos', 'nr', 'fig', 'figs', 'p', 'pp', 'vol', 'vols', 'art', 'ch', 'chap', 'sec', 'sect',
  'ed', 'op', 'eq', 'eqn', 'ref', 'tab', 'app', 'jan', 'feb', 'mar', 'apr', 'jun', 'jul', 'aug',
  'sep', 'sept', 'oct', 'nov', 'dec', 'tel', 'ext', 'pt', 'v', 'ver', 'rev', 'n°', 'nº', 'no°', 'para', 'paras',
];

/** Languages writing ordinals with a dot (`am 3. Oktober`). */
const ORDINAL_DOT = new Set(['de', 'da', 'nb', 'nn', 'no', 'fi', 'cs', 'sk', 'pl', 'hu', 'sl', 'hr', 'sr', 'bs', 'is', 'et', 'lv', 'lt', 'tr', 'fo']);

/**
 * Capitalized words that usually start a sentence: pronouns, articles, conjunctions and
 * sentence adverbs. After multi-letter initials (`the U.S. Then`, `S.T.A.R. Later`) or an
 * ordinal number (`Kapitel 4. Danach`) such a word means the stop ended the sentence; any
 * other capitalized word (`the U.S. Government`, `der 2. Weltkrieg`) means it goes on.
 */
const ENGLISH_STARTERS = (
  'A An The He She It They We I You This That These Those There Then Thus But And So Yet Or Nor In On At For ' +
  'However What When Where Who Whom Whose Which Why How If After Before Our My His Her Their Its Your Yes No Now Today ' +
  'Many Most Some Being Did Millions More Still Also Meanwhile Later Earlier Soon Just Even Only Once Since While ' +
  'Although Though Because Unless Until Whether Finally First Second Third Next Last Instead Indeed Here Every Each ' +
  'All Both Few Several Other Such Another Nothing Everything Everyone Nobody Somebody Someone Afterwards Afterward ' +
  'Eventually Otherwise Therefore Hence Moreover Furthermore Besides Nevertheless Nonetheless Overall Sometimes Often ' +
  'Perhaps Maybe Usually Again Tomorrow Yesterday Tonight Please Let As By From With Without To Of Under Over Among ' +
  'Between Through During Despite Like Unlike Do Does Is Are Was Were Has Have Had Can Could Will Would Should Must ' +
  'May Might Not Never Always Sadly Luckily Unfortunately Fortunately Clearly Oh Well Anyway Together'
).split(' ');

/** English weekday and month names (full and abbreviated), that follow a time (`9 a.m. Sunday`); other languages add theirs. */
const CALENDAR = [
  'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday', 'Mon', 'Tue', 'Tues', 'Wed', 'Thu',
  'Thur', 'Thurs', 'Fri', 'Sat', 'Sun', 'January', 'February', 'March', 'April', 'May', 'June', 'July', 'August',
  'September', 'October', 'November', 'December', 'Jan', 'Feb', 'Mar', 'Apr', 'Jun', 'Jul', 'Aug', 'Sep', 'Sept',
  'Oct', 'Nov', 'Dec',
];

/** Speech tags after `!` / `?`: English pronouns and verbs of saying (for every language; others add theirs). */
const SPEECH_TAGS = [
  'he', 'she', 'they', 'i', 'we', 'you', 'it', 'said', 'says', 'asked', 'asks', 'cried', 'shouted', 'replied', 'whispered',
  'yelled', 'added', 'answered', 'called', 'continued', 'exclaimed', 'muttered', 'murmured', 'screamed', 'sighed',
  'laughed', 'snapped', 'insisted', 'demanded', 'wondered', 'thought', 'wrote', 'came', 'cries', 'shouts',
];

/** Abbreviations that end a sentence before a capital but not before an opening bracket. */
const BEFORE_BRACKET = ['etc', 'inc', 'ltd', 'co', 'corp', 'llc', 'plc', 'bros', 'jr', 'esq', 'usw', 'ecc', 'ect'];

/** Names written with `!` (`Yahoo! in`): their `!` does not end a sentence before a lower-case word (one word each: the word before the stop is what is looked up). */
const EXCLAMATION_WORDS = ['yahoo', 'jeopardy', 'yum', 'wham', 'joomla', 'xũ', 'kung', 'oklahoma'];

const cache = new Map<string, LocaleRules>();
/**
 * The rules by the locale string as given (`en-us`, `de-DE`): a segmenter is built per
 * sentence in a live session (the gate's and the ledger's), and `languageOf`'s split was a
 * regex run each time. Bounded: a process seeing more distinct strings than this falls back
 * to `languageOf` for the new ones.
 */
const byLocale = new Map<string | undefined, LocaleRules>();
const BY_LOCALE_MAX = 256;

/** Rules for a locale tag: the common (English and international) sets plus the language's own table (loaded: `language-tables.ts`). */
export function rulesFor(locale: string | undefined): LocaleRules {
  const known = byLocale.get(locale);
  if (known) return known;
  const rules = rulesForLanguage(languageOf(locale));
  if (byLocale.size < BY_LOCALE_MAX) byLocale.set(locale, rules);
  return rules;
}

function rulesForLanguage(lang: string): LocaleRules {
  const hit = cache.get(lang);
  if (hit) return hit;
  const own = languageTable(lang) ?? {};
  const always = [...COMMON_ALWAYS, ...(own.always ?? [])];
  const numeric = [...COMMON_NUMERIC, ...(own.numeric ?? [])];
  const rules: LocaleRules = {
    always: new Set(always),
    numeric: new Set(numeric),
    longest: Math.max(...always.map((w) => w.length), ...numeric.map((w) => w.length)),
    ordinalDot: ORDINAL_DOT.has(lang),
    semicolonQuestion: lang === 'el',
    spacedClosers: lang === 'fr',
    starters: new Set([...ENGLISH_STARTERS, ...(own.starters ?? [])]),
    ownStarters: new Set(lang === 'en' ? ENGLISH_STARTERS : (own.starters ?? [])),
    times: new Set(['a.m', 'p.m']),
    calendar: new Set([...CALENDAR, ...(own.calendar ?? [])]),
    beforeBracket: new Set(BEFORE_BRACKET),
    speechTags: new Set([...SPEECH_TAGS, ...(own.speechTags ?? [])]),
    exclamationWords: new Set(EXCLAMATION_WORDS),
    colonStop: lang === 'hy' || lang === 'ar',
  };
  cache.set(lang, rules);
  return rules;
}
