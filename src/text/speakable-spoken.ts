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
  de: { hour: (h, m) => `${h} Uhr${m ? ` ${m}` : ''}` },
  es: { hour: (h, m) => (m ? `${h} y ${m}` : `${h} en punto`) },
  fr: { hour: (h, m) => `${h} ${h === 'un' ? 'heure' : 'heures'}${m ? ` ${m}` : ''}` },
};
const AM_PM = /^(?:[ap]\.?m\.?|[AP]\.?M\.?)$/;
const LEAD = /^[("'«¿¡]+/;
const TRAIL = /[)"'».,;:!?]+$/;

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
  const year = w.toCardinal(String(y));
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
  return word === undefined ? undefined : `${w.toCardinal(value)} ${word}`;
}

function money(value: string, code: string, lang: string, w: NumberWords): string {
  if (LOCAL_CURRENCY[w.locale ?? ''] === code && w.toCurrency) return w.toCurrency(value);
  return withWord(value, lang, w, { style: 'currency', currency: code, currencyDisplay: 'name' }, 'currency') ?? w.toCardinal(value);
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
    return { text: w.toCardinal(plain), usedNext: false };
  }
  let m = /^([$€£])(.+)$/.exec(core) ?? /^(.+?)([$€£])$/.exec(core);
  if (m) {
    const [sym, num] = /\d/.test(m[1]!) ? [m[2]!, m[1]!] : [m[1]!, m[2]!];
    const value = plainNumber(num, lang);
    if (value !== undefined) return { text: money(value, CURRENCIES[sym]!, lang, w), usedNext: false };
  }
  if ((m = /^(.+)%$/.exec(core))) {
    const value = plainNumber(m[1]!, lang);
    if (value !== undefined) return some(withWord(value, lang, w, { style: 'unit', unit: 'percent', unitDisplay: 'long' }, 'unit'), false);
  }
  if ((m = /^(\d+(?:[.,]\d+)?)(km|cm|mm|kg|km\/h|mph|°C|°F|ms|min|GB|MB|TB|KB|kB|ml|mL)$/.exec(core))) {
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
    return some(timeWords(+m[1]!, +(m[2] ?? 0), nextCore, lang, w), false);
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
  // German ordinals: `am 3. Mai` (a day before a month name)
  if (lang === 'de') {
    const m = /^(\d{1,2})\.$/.exec(word);
    if (m && next !== undefined && isMonth(next.replace(TRAIL, ''), lang)) return { text: w.toOrdinal(m[1]!), usedNext: false };
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
