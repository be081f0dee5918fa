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

const LANGUAGE_ALWAYS: Record<string, readonly string[]> = {
  fr: ['m', 'mm', 'mme', 'mmes', 'mlle', 'mlles', 'me', 'mgr', 'pr', 'dr', 'ex', 'env', 'c.-à-d', 'cf', 'av', 'apr', 'j.-c', 'ste', 'st'],
  de: [
    'z.b', 'u.a', 'bzw', 'd.h', 'dr', 'ca', 'vgl', 'sog', 'ggf', 'evtl', 'inkl', 'hr', 'fr', 'frl', 'geb', 'gest',
    'mio', 'mrd', 'tsd', 'u.ä', 'o.ä', 'z.t', 'u.u', 'i.d.r', 's.o', 's.u', 'm.e', 'o.g', 'dipl', 'ing', 'prof', 'hl',
    'med', 'kath', 'ev', 'evang', 'jur', 'phil', 'rer', 'nat', 'habil', 'mag', 'hrsg', 'bzgl', 'ggü', 'gem', 'zzgl',
    'abzgl', 'allg', 'anh', 'anm', 'bspw', 'entspr', 'erg', 'ff', 'insb', 'jh', 'jhd', 'lt', 'max', 'min', 'mind',
    'nachf', 'od', 'pkt', 'rd', 'röm', 'sen', 'sog', 'spez', 'stellv', 'urspr', 'verh', 'verw', 'vorm', 'zus', 'zzt', 'ä',
  ],
  es: [
    'sr', 'sra', 'sras', 'srta', 'sres', 'ud', 'uds', 'vd', 'vds', 'dña', 'dr', 'dra', 'lic', 'ing', 'arq', 'sto', 'sta',
    'ej', 'aprox', 'prof', 'profa', 'av', 'avda', 'd', 'dª', 'ee', 'uu', 'ee.uu', 'gral', 'cía', 'excmo', 'excma',
    'ilmo', 'ilma', 'pdta', 'pdte', 'sto', 'ntra', 'ntro', 'dcha', 'izq', 'izqda', 'etc', 'cra', 'cl', 'depto', 'dpto',
  ],
  el: ['κ', 'κα', 'κος', 'π.χ', 'κ.λπ', 'κ.ά', 'δηλ', 'βλ', 'δρ', 'καθ'],
  hi: ['डॉ', 'प्रो', 'श्री', 'सं', 'पृ'],
  ar: ['د', 'أ', 'م', 'ص', 'هـ'],
  it: [
    'sig', 'sigg', 'sig.ra', 'dott', 'dott.ssa', 'prof', 'prof.ssa', 'ing', 'avv', 'es', 'arch', 'geom', 'rag', 'dir',
    'amm', 'psicol', 'on', 'egr', 'gent', 'spett', 'mons', 'sen', 'ecc', 'rif', 'fig', 'all', 'ca', 'cfr', 'pres',
  ],
  da: [
    'skt', 'hr', 'fr', 'frk', 'dr', 'prof', 'bl.a', 'f.eks', 'ca', 'dvs', 'mht', 'jf', 'evt', 'inkl', 'osv', 'pga',
    'ift', 'mv', 'o.l', 'sml', 'tlf', 'vedr', 'ang', 'kl', 'stk', 'nr',
  ],
  ru: [
    'г', 'гг', 'ул', 'пгт', 'проф', 'акад', 'доц', 'канд', 'просп', 'пер', 'пл', 'д', 'им', 'т.е', 'т.к', 'т.д', 'т.п',
    'т.н', 'др', 'пр', 'см', 'ср', 'напр', 'тов', 'гр', 'ген', 'млн', 'млрд', 'тыс', 'руб', 'коп', 'долл', 'обл', 'р-н',
    'вв', 'в', 'ст', 'н.э', 'до н.э', 'зам', 'зав', 'иностр', 'гос', 'муж', 'жен', 'spb', 'спб', 'моск',
  ],
  uk: ['м', 'вул', 'проф', 'акад', 'доц', 'т.д', 'т.п', 'див', 'тис', 'млн', 'млрд', 'грн', 'обл', 'р', 'рр', 'ст'],
  bg: ['пл', 'ул', 'бул', 'гр', 'г', 'д-р', 'проф', 'доц', 'акад', 'т.е', 'т.н', 'напр', 'вж', 'др', 'млн', 'млрд', 'хил', 'лв', 'ст', 'с', 'обл'],
  kk: ['б.з.б', 'б.з', 'ж', 'жж', 'т.б', 'т.с.с', 'проф', 'акад', 'обл', 'көш', 'қ', 'т', 'млн', 'млрд', 'мыс'],
  sk: ['napr', 'tzv', 'resp', 'atď', 'p', 'pán', 'pani', 'č', 'str', 'ul', 'nám', 'mil', 'mld', 'tis', 'prof', 'doc', 'ing', 'mudr', 'judr', 'phdr', 'rndr', 'mgr', 'bc', 'a.s', 's.r.o'],
  cs: ['např', 'tzv', 'resp', 'atd', 'apod', 'č', 'str', 'ul', 'nám', 'mil', 'mld', 'tis', 'prof', 'doc', 'ing', 'mudr', 'judr', 'phdr', 'rndr', 'mgr', 'bc', 'a.s', 's.r.o'],
  pl: ['np', 'tzn', 'tj', 'tzw', 'm.in', 'ok', 'ul', 'al', 'pl', 'prof', 'dr', 'hab', 'inż', 'mgr', 'mln', 'mld', 'tys', 'zł', 'godz', 'r', 'w', 'woj', 'pow', 'gm', 'ks', 'św'],
  pt: ['sr', 'sra', 'dr', 'dra', 'prof', 'ex', 'av'],
  nl: ['dhr', 'mevr', 'o.a', 'bijv', 'd.w.z', 'z.g.a.n'],
};
const LANGUAGE_NUMERIC: Record<string, readonly string[]> = {
  fr: ['p', 'n', 'no', 'vol', 'art', 'chap', 'fig', 'tél', 'janv', 'févr', 'avr', 'juil', 'sept', 'oct', 'nov', 'déc'],
  de: ['nr', 'abs', 's', 'bd', 'str', 'tel', 'kap', 'jan', 'feb', 'aug', 'sept', 'okt', 'nov', 'dez'],
  es: [
    'pág', 'págs', 'núm', 'no', 'art', 'cap', 'tel', 'vol', 'ene', 'feb', 'abr', 'ago', 'sept', 'oct', 'nov', 'dic',
    'párrf', 'párr', 'lun', 'mar', 'mié', 'jue', 'vie', 'sáb', 'dom', 'min', 'seg', 'hr', 'hrs', 'ext', 'fax',
  ],
  el: ['αρ', 'σελ', 'τηλ', 'κεφ'],
  ru: ['кв', 'стр', 'рис', 'табл', 'гл', 'с', 'п', 'пп', 'ч', 'т', '№'],
  da: ['nr', 'tlf', 'side', 'stk', 'kap', 'jan', 'feb', 'aug', 'sept', 'okt', 'nov', 'dec'],
  it: ['pag', 'pagg', 'p', 'n', 'art', 'cap', 'tel', 'fig', 'vol'],
  pt: ['pág', 'n', 'art', 'cap', 'tel'],
  nl: ['nr', 'blz', 'tel'],
};

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
  'May Might Not Never Always Sadly Luckily Unfortunately Fortunately Clearly Of Oh Well Anyway Still Yet Together'
).split(' ');

/** Sentence starters by language (`i E.U. Hvad`, `Kapitel 4. Danach`). */
const LANGUAGE_STARTERS: Record<string, readonly string[]> = {
  da: ['Hvad', 'Hvor', 'Hvem', 'Hvorfor', 'Jeg', 'Det', 'Den', 'Der', 'Vi', 'Han', 'Hun', 'De', 'Men', 'Og', 'Så', 'I', 'Derefter', 'Bagefter', 'Senere'],
  de: [
    'Der', 'Die', 'Das', 'Den', 'Dem', 'Ein', 'Eine', 'Ich', 'Wir', 'Er', 'Sie', 'Es', 'Ihr', 'Du', 'Aber', 'Und', 'Oder',
    'Wie', 'Was', 'Wo', 'Wer', 'Warum', 'Wann', 'Dann', 'Danach', 'Daher', 'Deshalb', 'Darum', 'Trotzdem', 'Außerdem',
    'Zudem', 'Jedoch', 'Heute', 'Morgen', 'Später', 'Nun', 'Jetzt', 'Hier', 'Dort', 'Auch', 'Als', 'Wenn', 'Weil', 'Doch',
    'Dies', 'Diese', 'Dieser', 'Dieses', 'Man', 'Mein', 'Meine', 'Sein', 'Seine', 'Unser', 'Unsere', 'Im', 'In', 'Am',
    'Auf', 'Mit', 'Nach', 'Bei', 'Für', 'Von', 'Vom', 'Zum', 'Zur', 'So', 'Schließlich', 'Zuerst', 'Anschließend',
  ],
  nl: ['De', 'Het', 'Een', 'Ik', 'Wij', 'We', 'Hij', 'Zij', 'Ze', 'Maar', 'En', 'Wat', 'Waar', 'Wie', 'Waarom'],
  fr: ['Le', 'La', 'Les', 'Un', 'Une', 'Je', 'Il', 'Elle', 'Nous', 'Vous', 'Ils', 'Elles', 'Mais', 'Et', 'Que', 'Où', 'Qui', 'Pourquoi'],
  es: ['El', 'La', 'Los', 'Las', 'Un', 'Una', 'Yo', 'Él', 'Ella', 'Nosotros', 'Pero', 'Y', 'Qué', 'Dónde', 'Quién', 'Por'],
  it: ['Il', 'Lo', 'La', 'I', 'Gli', 'Le', 'Un', 'Una', 'Io', 'Lui', 'Lei', 'Noi', 'Ma', 'E', 'Che', 'Dove', 'Chi', 'Perché'],
};

/** Weekday and month names (full and abbreviated) that follow a time (`9 a.m. Sunday`) or an ordinal (`3. Oktober`). */
const CALENDAR: Record<string, readonly string[]> = {
  en: [
    'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday', 'Mon', 'Tue', 'Tues', 'Wed', 'Thu',
    'Thur', 'Thurs', 'Fri', 'Sat', 'Sun', 'January', 'February', 'March', 'April', 'May', 'June', 'July', 'August',
    'September', 'October', 'November', 'December', 'Jan', 'Feb', 'Mar', 'Apr', 'Jun', 'Jul', 'Aug', 'Sep', 'Sept',
    'Oct', 'Nov', 'Dec',
  ],
  de: [
    'Montag', 'Dienstag', 'Mittwoch', 'Donnerstag', 'Freitag', 'Samstag', 'Sonnabend', 'Sonntag', 'Januar', 'Jänner',
    'Februar', 'März', 'April', 'Mai', 'Juni', 'Juli', 'August', 'September', 'Oktober', 'November', 'Dezember', 'Jan',
    'Feb', 'Mär', 'Apr', 'Jun', 'Jul', 'Aug', 'Sep', 'Sept', 'Okt', 'Nov', 'Dez', 'Jahrhundert', 'Jh', 'Jahrestag',
    'Geburtstag', 'Mal', 'Platz', 'Klasse', 'Stock', 'Liga', 'Weltkrieg',
  ],
  da: ['januar', 'februar', 'marts', 'april', 'maj', 'juni', 'juli', 'august', 'september', 'oktober', 'november', 'december'],
};

/** Speech tags after `!` / `?`: pronouns and verbs of saying, by language (English for all). */
const SPEECH_TAGS: Record<string, readonly string[]> = {
  en: [
    'he', 'she', 'they', 'i', 'we', 'you', 'it', 'said', 'says', 'asked', 'asks', 'cried', 'shouted', 'replied', 'whispered',
    'yelled', 'added', 'answered', 'called', 'continued', 'exclaimed', 'muttered', 'murmured', 'screamed', 'sighed',
    'laughed', 'snapped', 'insisted', 'demanded', 'wondered', 'thought', 'wrote', 'came', 'cries', 'shouts',
  ],
  de: ['sagte', 'fragte', 'rief', 'schrie', 'antwortete', 'flüsterte', 'meinte', 'er', 'sie', 'ich', 'wir'],
  fr: ['dit', 'demanda', 'cria', 'répondit', 'murmura', 'ajouta', 's\'écria', 'a-t-il', 'a-t-elle', 'il', 'elle'],
  es: ['dijo', 'preguntó', 'gritó', 'respondió', 'contestó', 'susurró', 'exclamó', 'añadió'],
  it: ['disse', 'chiese', 'gridò', 'rispose', 'sussurrò', 'esclamò', 'aggiunse'],
  pt: ['disse', 'perguntou', 'gritou', 'respondeu', 'exclamou'],
  nl: ['zei', 'vroeg', 'riep', 'antwoordde', 'fluisterde', 'hij', 'zij', 'ze'],
  ru: ['сказал', 'сказала', 'спросил', 'спросила', 'крикнул', 'крикнула', 'ответил', 'ответила', 'прошептал', 'прошептала'],
};

/** Abbreviations that end a sentence before a capital but not before an opening bracket. */
const BEFORE_BRACKET = ['etc', 'inc', 'ltd', 'co', 'corp', 'llc', 'plc', 'bros', 'jr', 'esq', 'usw', 'etc', 'ecc', 'ect'];

/** Names written with `!` (`Yahoo! in`): their `!` does not end a sentence before a lower-case word. */
const EXCLAMATION_WORDS = ['yahoo', 'jeopardy', 'yum', 'wham', 'joomla', 'xũ', 'kung', 'oklahoma', 'mamma mia'];

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
    starters: new Set([...ENGLISH_STARTERS, ...(LANGUAGE_STARTERS[lang] ?? [])]),
    ownStarters: new Set(lang === 'en' ? ENGLISH_STARTERS : (LANGUAGE_STARTERS[lang] ?? [])),
    times: new Set(['a.m', 'p.m']),
    calendar: new Set([...(CALENDAR['en'] ?? []), ...(lang === 'en' ? [] : (CALENDAR[lang] ?? []))]),
    beforeBracket: new Set(BEFORE_BRACKET),
    speechTags: new Set([...(SPEECH_TAGS['en'] ?? []), ...(lang === 'en' ? [] : (SPEECH_TAGS[lang] ?? []))]),
    exclamationWords: new Set(EXCLAMATION_WORDS),
    colonStop: lang === 'hy' || lang === 'ar',
  };
  cache.set(lang, rules);
  return rules;
}
