/**
 * Spoken forms: numbers, ordinals, decimals, money, percentages, dates, times and common units
 * in the words of the text's language. Number words come from `n2words` (`speakable-numbers.ts`);
 * unit, currency and month names from the platform's `Intl` (CLDR), so no word tables live here.
 * Pure functions of one word and the word after it.
 */
import type { NumberWords } from './speakable-numbers.js';

/** A word's spoken form; `usedNext`: the word after it (a unit, `%`, a currency) is part of it. */
export interface SpokenForm {
  text: string;
  usedNext: boolean;
}

const UNITS: Readonly<Record<string, string>> = {
  km: 'kilometer', m: 'meter', cm: 'centimeter', mm: 'millimeter', mi: 'mile', ft: 'foot',
  kg: 'kilogram', g: 'gram', lb: 'pound', lbs: 'pound', oz: 'ounce', l: 'liter', L: 'liter', ml: 'milliliter', mL: 'milliliter',
  'km/h': 'kilometer-per-hour', mph: 'mile-per-hour', '°C': 'celsius', '°F': 'fahrenheit',
  h: 'hour', min: 'minute', s: 'second', ms: 'millisecond', KB: 'kilobyte', kB: 'kilobyte', MB: 'megabyte', GB: 'gigabyte', TB: 'terabyte',
};
const CURRENCIES: Readonly<Record<string, string>> = { $: 'USD', '€': 'EUR', '£': 'GBP', USD: 'USD', EUR: 'EUR', GBP: 'GBP' };
/** The currency each number-words locale speaks with `toCurrency`. */
const LOCAL_CURRENCY: Readonly<Record<string, string>> = { 'en-us': 'USD', 'en-gb': 'GBP', 'de-de': 'EUR', 'es-es': 'EUR', 'fr-fr': 'EUR', 'fr-be': 'EUR' };
const TIME_WORDS: Readonly<Record<string, { hour: (h: string, m: string) => string }>> = {
  de: { hour: (h, m) => `${h.replace(/eins$/, 'ein')} Uhr${m ? ` ${m}` : ''}` },
  es: { hour: (h, m) => (m ? `${h} y ${m}` : `${h} en punto`) },
  // `une heure`, `vingt et une heures`: heure is feminine
  fr: { hour: (h, m) => `${h.replace(/\bun$/, 'une')} ${h === 'un' ? 'heure' : 'heures'}${m ? ` ${m}` : ''}` },
};
const AM_PM = /^(?:[ap]\.?m\.?|[AP]\.?M\.?)$/;
/** Brackets, quotes and marks before a word (curly, German and CJK ones too). */
const LEAD = /^[("'«¿¡“‘„‚»[（「『【]+/;
/** Brackets, quotes and punctuation after a word (curly, German and CJK ones too). */
const TRAIL = /[)"'».,;:!?”’“«\]）」』】。，、！？；：…]+$/;
/** Scale words an amount of money may take before its currency's name (`$3 million`: three million dollars). */
const SCALES = /^(?:thousand|million|billion|trillion)$/;

/**
 * `value` (a plain decimal string) as a cardinal, its fraction read digit by digit (`3.14`:
 * three point one four, where n2words reads `fourteen`), with the language's decimal word.
 */
function cardinal(value: string, w: NumberWords): string {
  const point = value.indexOf('.');
  if (point < 0) return w.toCardinal(value);
  const decimal = w.toCardinal('0.5').slice(w.toCardinal('0').length, -w.toCardinal('5').length).trim();
  const digits = [...value.slice(point + 1)].map((d) => w.toCardinal(d));
  return `${w.toCardinal(value.slice(0, point))} ${decimal} ${digits.join(' ')}`;
}

/** Number words before a noun (a unit, `Uhr`): German `eins` is `ein`, Spanish `uno` is `un` (`veintiún`). */
function beforeNoun(words: string, lang: string): string {
  if (lang === 'de') return words.replace(/eins$/, 'ein');
  if (lang === 'es') return words.replace(/veintiuno$/, 'veintiún').replace(/uno$/, 'un');
  return words;
}

/**
 * A year in a date: English and German say the years 1100-1999 in hundreds (`nineteen
 * ninety-nine`, `neunzehnhundertneunundneunzig`); other years (`two thousand twenty-four`),
 * and the other languages, as a cardinal.
 */
function yearWords(y: number, lang: string, w: NumberWords): string {
  const [high, low] = [Math.floor(y / 100), y % 100];
  if (lang === 'en' && y >= 1100 && y < 2000) {
    if (low === 0) return `${w.toCardinal(String(high))} hundred`;
    return `${w.toCardinal(String(high))} ${low < 10 ? `oh ${w.toCardinal(String(low))}` : w.toCardinal(String(low))}`;
  }
  if (lang === 'de' && y >= 1100 && y < 2000) return `${w.toCardinal(String(high))}hundert${low === 0 ? '' : w.toCardinal(String(low))}`;
  return w.toCardinal(String(y));
}

/** Number syntax of a language: `1,234.5` (en) or `1.234,5` (de, es, fr). */
function plainNumber(s: string, lang: string): string | undefined {
  const comma = lang !== 'en';
  const group = comma ? /^-?\d{1,3}(?:\.\d{3})+(?:,\d+)?$/ : /^-?\d{1,3}(?:,\d{3})+(?:\.\d+)?$/;
  const simple = comma ? /^-?\d+(?:,\d+)?$/ : /^-?\d+(?:\.\d+)?$/;
  if (!group.test(s) && !simple.test(s)) return undefined;
  if (s.replace(/^-/, '').length > 1 && /^-?0\d/.test(s)) return undefined; // `007`, a code
  return comma ? s.replace(/\./g, '').replace(',', '.') : s.replace(/,/g, '');
}

function intlPart(lang: string, value: number, options: Intl.NumberFormatOptions, type: string): string | undefined {
  try {
    return new Intl.NumberFormat(lang, options).formatToParts(value).find((p) => p.type === type)?.value;
  } catch {
    return undefined;
  }
}

function monthName(lang: string, month: number): string {
  return new Intl.DateTimeFormat(lang, { month: 'long', timeZone: 'UTC' }).format(Date.UTC(2000, month - 1, 1));
}

function dateWords(y: number, m: number, d: number, lang: string, w: NumberWords): string | undefined {
  if (m < 1 || m > 12 || d < 1 || d > 31) return undefined;
  const month = monthName(lang, m);
  const year = yearWords(y, lang, w);
  switch (lang) {
    case 'en':
      return `${month} ${w.toOrdinal(String(d))}, ${year}`;
    case 'de':
      return `${w.toOrdinal(String(d))} ${month} ${year}`;
    case 'es':
      return `${w.toCardinal(String(d))} de ${month} de ${year}`;
    default:
      return `${d === 1 ? w.toOrdinal('1') : w.toCardinal(String(d))} ${month} ${year}`;
  }
}

function timeWords(h: number, min: number, next: string | undefined, lang: string, w: NumberWords): string | undefined {
  if (h > 24 || min > 59) return undefined;
  const hour = w.toCardinal(String(h));
  const minutes = min === 0 ? '' : w.toCardinal(String(min));
  if (lang === 'en') {
    if (min === 0) return next !== undefined && AM_PM.test(next) ? hour : `${hour} o'clock`;
    return `${hour} ${min < 10 ? `oh ${minutes}` : minutes}`;
  }
  return TIME_WORDS[lang]?.hour(hour, minutes);
}

/** `value` (a plain decimal string) with a unit, currency or percent word after it. */
function withWord(value: string, lang: string, w: NumberWords, options: Intl.NumberFormatOptions, type: string): string | undefined {
  const word = intlPart(lang, Number(value), options, type);
  if (word === undefined) return undefined;
  const number = cardinal(value, w);
  return `${options.unit === 'percent' ? number : beforeNoun(number, lang)} ${word}`;
}

function money(value: string, code: string, lang: string, w: NumberWords): string {
  if (LOCAL_CURRENCY[w.locale ?? ''] === code && w.toCurrency) return w.toCurrency(value);
  return withWord(value, lang, w, { style: 'currency', currency: code, currencyDisplay: 'name' }, 'currency') ?? cardinal(value, w);
}

/** An amount with a scale word (`$3 million`, `$1.2 billion`): the number and the scale, then the currency's name in the plural. */
function scaledMoney(value: string, scale: string, code: string, lang: string, w: NumberWords): string {
  const local = LOCAL_CURRENCY[w.locale ?? ''] === code && w.toCurrency;
  const name = local ? w.toCurrency!('2').slice(w.toCardinal('2').length).trim() : intlPart(lang, 2, { style: 'currency', currency: code, currencyDisplay: 'name' }, 'currency');
  return `${cardinal(value, w)} ${scale}${name ? ` ${name}` : ''}`;
}

/** The core of a word (no leading or trailing punctuation) as words, or undefined to leave it. */
function coreForm(core: string, next: string | undefined, lang: string, w: NumberWords): SpokenForm | undefined {
  const nextCore = next?.replace(LEAD, '').replace(TRAIL, '');
  const plain = plainNumber(core, lang);
  if (plain !== undefined) {
    if (nextCore !== undefined && next!.replace(TRAIL, '') === nextCore) {
      const unit = UNITS[nextCore];
      if (unit) return some(withWord(plain, lang, w, { style: 'unit', unit, unitDisplay: 'long' }, 'unit'), true);
      if (nextCore === '%') return some(withWord(plain, lang, w, { style: 'unit', unit: 'percent', unitDisplay: 'long' }, 'unit'), true);
      const code = CURRENCIES[nextCore];
      if (code) return { text: money(plain, code, lang, w), usedNext: true };
    }
    return { text: cardinal(plain, w), usedNext: false };
  }
  let m = /^([$€£])(.+)$/.exec(core) ?? /^(.+?)([$€£])$/.exec(core);
  if (m) {
    const [sym, num] = /\d/.test(m[1]!) ? [m[2]!, m[1]!] : [m[1]!, m[2]!];
    const value = plainNumber(num, lang);
    if (value !== undefined && lang === 'en' && nextCore !== undefined && SCALES.test(nextCore) && next!.replace(TRAIL, '') === nextCore) {
      return { text: scaledMoney(value, nextCore, CURRENCIES[sym]!, lang, w), usedNext: true };
    }
    if (value !== undefined) return { text: money(value, CURRENCIES[sym]!, lang, w), usedNext: false };
  }
  if ((m = /^(.+)%$/.exec(core))) {
    const value = plainNumber(m[1]!, lang);
    if (value !== undefined) return some(withWord(value, lang, w, { style: 'unit', unit: 'percent', unitDisplay: 'long' }, 'unit'), false);
  }
  if ((m = /^(-?\d+(?:[.,]\d+)?)(km|cm|mm|kg|km\/h|mph|°C|°F|ms|min|GB|MB|TB|KB|kB|ml|mL)$/.exec(core))) {
    const value = plainNumber(m[1]!, lang);
    if (value !== undefined) return some(withWord(value, lang, w, { style: 'unit', unit: UNITS[m[2]!]!, unitDisplay: 'long' }, 'unit'), false);
  }
  return datesAndOrdinals(core, next, nextCore, lang, w);
}

function datesAndOrdinals(core: string, next: string | undefined, nextCore: string | undefined, lang: string, w: NumberWords): SpokenForm | undefined {
  let m: RegExpExecArray | null;
  if ((m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(core))) return some(dateWords(+m[1]!, +m[2]!, +m[3]!, lang, w), false);
  if ((m = /^(\d{1,2})([./])(\d{1,2})\2(\d{4})$/.exec(core))) {
    const monthFirst = (w.locale ?? 'en-us') === 'en-us';
    const [d, mo] = monthFirst ? [+m[3]!, +m[1]!] : [+m[1]!, +m[3]!];
    return some(dateWords(+m[4]!, mo, d, lang, w), false);
  }
  if ((m = /^(\d{1,2}):(\d{2})$/.exec(core) ?? (lang === 'fr' ? /^(\d{1,2})h(\d{2})?$/.exec(core) : null))) {
    // German `15:30 Uhr`: the Uhr the time's words say already
    const uhr = lang === 'de' && nextCore === 'Uhr' && next!.replace(TRAIL, '') === nextCore;
    return some(timeWords(+m[1]!, +(m[2] ?? 0), nextCore, lang, w), uhr);
  }
  const ordinal = { en: /^(\d+)(?:st|nd|rd|th)$/, fr: /^(\d+)(?:er|re|e|ème|è)$/, es: /^(\d+)\.?[ºª°]$/, de: /^$/ }[lang];
  if (ordinal && (m = ordinal.exec(core)) && +m[1]! > 0) return { text: w.toOrdinal(m[1]!), usedNext: false };
  void next;
  return undefined;
}

const some = (text: string | undefined, usedNext: boolean): SpokenForm | undefined => (text === undefined ? undefined : { text, usedNext });

/**
 * The spoken form of `word` (whitespace-delimited, with its punctuation), given the `next` word
 * (undefined at the end), or undefined when it is not a number, date or time.
 */
export function spokenFormOf(word: string, next: string | undefined, language: string, w: NumberWords): SpokenForm | undefined {
  const lang = language.split('-')[0]!;
  // German ordinals: `am 3. Mai` (a day before a month name); elsewhere `20.` is an ordinal
  // whose ending depends on the sentence (`im 20. Jahrhundert`: zwanzigsten), or a number
  // ending a sentence: left as written, for the service to read
  if (lang === 'de') {
    const m = /^(\d{1,2})\.$/.exec(word);
    if (m && next !== undefined && isMonth(next.replace(TRAIL, ''), lang)) return { text: w.toOrdinal(m[1]!), usedNext: false };
    if (/^\d+\.$/.test(word) && next !== undefined) return undefined;
  }
  const lead = LEAD.exec(word)?.[0] ?? '';
  let core = word.slice(lead.length);
  const trail = TRAIL.exec(core)?.[0] ?? '';
  core = core.slice(0, core.length - trail.length);
  if (!/\d/.test(core)) return undefined;
  try {
    const form = coreForm(core, next, lang, w);
    if (!form) return undefined;
    if (form.usedNext) return { text: `${lead}${form.text}${next!.match(TRAIL)?.[0] ?? ''}`, usedNext: true };
    return { text: `${lead}${form.text}${trail}`, usedNext: false };
  } catch {
    return undefined; // n2words refused it (too large, ...): the word is spoken as written
  }
}

function isMonth(word: string, lang: string): boolean {
  for (let i = 1; i <= 12; i++) if (monthName(lang, i).toLowerCase() === word.toLowerCase()) return true;
  return false;
}
