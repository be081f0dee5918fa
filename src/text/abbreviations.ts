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
 */

export interface LocaleRules {
  readonly always: ReadonlySet<string>;
  readonly numeric: ReadonlySet<string>;
  /** `3. Oktober`: one to three digits and a dot are an ordinal, not a sentence end. */
  readonly ordinalDot: boolean;
  /** `;` is a question mark (Greek). */
  readonly semicolonQuestion: boolean;
  /** Closing quotes may follow the stop after a space (French `« Oui ! »`). */
  readonly spacedClosers: boolean;
  /** Length of the longest abbreviation (a longer word before a dot is never one). */
  readonly longest: number;
}

const COMMON_ALWAYS = [
  'mr', 'mrs', 'ms', 'mx', 'messrs', 'dr', 'prof', 'st', 'sr', 'vs', 'e.g', 'i.e', 'approx', 'cf',
  'viz', 'al', 'ca', 'mt', 'gen', 'col', 'lt', 'sgt', 'capt', 'rev', 'hon', 'gov', 'sen', 'rep',
  'pres', 'supt', 'cmdr', 'adm', 'ft', 'ste',
];
const COMMON_NUMERIC = [
  'no', 'nos', 'nr', 'fig', 'figs', 'p', 'pp', 'vol', 'vols', 'art', 'ch', 'chap', 'sec', 'sect',
  'ed', 'op', 'eq', 'eqn', 'ref', 'tab', 'app', 'jan', 'feb', 'mar', 'apr', 'jun', 'jul', 'aug',
  'sep', 'sept', 'oct', 'nov', 'dec', 'tel', 'ext', 'pt', 'v', 'ver', 'rev',
];

const LANGUAGE_ALWAYS: Record<string, readonly string[]> = {
  fr: ['m', 'mm', 'mme', 'mmes', 'mlle', 'mlles', 'me', 'mgr', 'pr', 'dr', 'ex', 'env', 'c.-à-d', 'cf', 'av', 'apr', 'j.-c', 'ste', 'st'],
  de: [
    'z.b', 'u.a', 'bzw', 'd.h', 'dr', 'ca', 'vgl', 'sog', 'ggf', 'evtl', 'inkl', 'hr', 'fr', 'frl', 'geb', 'gest',
    'mio', 'mrd', 'tsd', 'u.ä', 'o.ä', 'z.t', 'u.u', 'i.d.r', 's.o', 's.u', 'm.e', 'o.g', 'dipl', 'ing', 'prof', 'hl',
  ],
  es: [
    'sr', 'sra', 'sras', 'srta', 'sres', 'ud', 'uds', 'vd', 'vds', 'dña', 'dr', 'dra', 'lic', 'ing', 'arq', 'sto', 'sta',
    'ej', 'aprox', 'prof', 'profa', 'av', 'avda', 'd', 'dª',
  ],
  el: ['κ', 'κα', 'κος', 'π.χ', 'κ.λπ', 'κ.ά', 'δηλ', 'βλ', 'δρ', 'καθ'],
  hi: ['डॉ', 'प्रो', 'श्री', 'सं', 'पृ'],
  ar: ['د', 'أ', 'م', 'ص', 'هـ'],
  it: ['sig', 'sigg', 'sig.ra', 'dott', 'prof', 'ing', 'avv', 'es'],
  pt: ['sr', 'sra', 'dr', 'dra', 'prof', 'ex', 'av'],
  nl: ['dhr', 'mevr', 'o.a', 'bijv', 'd.w.z', 'z.g.a.n'],
};
const LANGUAGE_NUMERIC: Record<string, readonly string[]> = {
  fr: ['p', 'n', 'no', 'vol', 'art', 'chap', 'fig', 'tél', 'janv', 'févr', 'avr', 'juil', 'sept', 'oct', 'nov', 'déc'],
  de: ['nr', 'abs', 's', 'bd', 'str', 'tel', 'kap', 'jan', 'feb', 'aug', 'sept', 'okt', 'nov', 'dez'],
  es: ['pág', 'págs', 'núm', 'no', 'art', 'cap', 'tel', 'vol', 'ene', 'feb', 'abr', 'ago', 'sept', 'oct', 'nov', 'dic'],
  el: ['αρ', 'σελ', 'τηλ', 'κεφ'],
  it: ['pag', 'n', 'art', 'cap', 'tel'],
  pt: ['pág', 'n', 'art', 'cap', 'tel'],
  nl: ['nr', 'blz', 'tel'],
};

/** Languages writing ordinals with a dot (`am 3. Oktober`). */
const ORDINAL_DOT = new Set(['de', 'da', 'nb', 'nn', 'no', 'fi', 'cs', 'sk', 'pl', 'hu', 'sl', 'hr', 'sr', 'bs', 'is', 'et', 'lv', 'lt', 'tr', 'fo']);

const cache = new Map<string, LocaleRules>();

/** The primary language subtag of a locale tag, lower-cased (`de-DE` -> `de`). */
export function languageOf(locale: string | undefined): string {
  if (!locale) return 'en';
  const lang = locale.trim().toLowerCase().split(/[-_]/)[0];
  return lang && lang.length > 0 ? lang : 'en';
}

/** Rules for a locale tag: the common (English and international) sets plus the language's own. */
export function rulesFor(locale: string | undefined): LocaleRules {
  const lang = languageOf(locale);
  const hit = cache.get(lang);
  if (hit) return hit;
  const always = [...COMMON_ALWAYS, ...(LANGUAGE_ALWAYS[lang] ?? [])];
  const numeric = [...COMMON_NUMERIC, ...(LANGUAGE_NUMERIC[lang] ?? [])];
  const rules: LocaleRules = {
    always: new Set(always),
    numeric: new Set(numeric),
    longest: Math.max(...always.map((w) => w.length), ...numeric.map((w) => w.length)),
    ordinalDot: ORDINAL_DOT.has(lang),
    semicolonQuestion: lang === 'el',
    spacedClosers: lang === 'fr',
  };
  cache.set(lang, rules);
  return rules;
}
