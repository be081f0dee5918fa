/**
 * Number words for spoken forms, from the `n2words` package (71 languages), loaded lazily: a
 * bundle that never turns `spokenForm` on never loads it, and each language is its own module.
 */

/** The number words of one language (the shape of an `n2words/<locale>` module). */
export interface NumberWords {
  /** The locale whose module this is (`en-US`). */
  locale: string;
  toCardinal(value: string): string;
  toOrdinal(value: string): string;
  toCurrency?(value: string): string;
}

type Loader = () => Promise<{ toCardinal(v: string): string; toOrdinal(v: string): string; toCurrency?(v: string): string }>;

/** Literal imports, so bundlers split each language into its own chunk. */
const LOADERS: Readonly<Record<string, Loader>> = {
  'en-us': () => import('n2words/en-US'),
  'en-gb': () => import('n2words/en-GB'),
  'de-de': () => import('n2words/de-DE'),
  'es-es': () => import('n2words/es-ES'),
  'es-mx': () => import('n2words/es-MX'),
  'fr-fr': () => import('n2words/fr-FR'),
  'fr-be': () => import('n2words/fr-BE'),
};
const BY_LANGUAGE: Readonly<Record<string, string>> = { en: 'en-us', de: 'de-de', es: 'es-es', fr: 'fr-fr' };

/** The locale (`en-us`) whose number words serve `language`, or undefined when none is known. */
export function numberLocale(language: string): string | undefined {
  const tag = language.toLowerCase().replace('_', '-');
  if (LOADERS[tag]) return tag;
  return BY_LANGUAGE[tag.split('-')[0]!];
}

/**
 * Load the number words of `language` (`de-de`, `fr`): English, German, Spanish and French.
 *
 * @example
 * ```ts
 * import { createSpeakableText, loadNumberWords } from 'rxvoice/operators';
 * const numberWords = await loadNumberWords('de-de');
 * const core = createSpeakableText({ language: 'de-de', spokenForm: true, numberWords });
 * ```
 * @throws {RangeError} When the language has no number words here.
 */
export async function loadNumberWords(language: string): Promise<NumberWords> {
  const locale = numberLocale(language);
  if (locale === undefined) throw new RangeError(`spoken forms: no number words for language ${JSON.stringify(language)} (en, de, es, fr)`);
  const mod = await LOADERS[locale]!();
  const words: NumberWords = { locale, toCardinal: (v) => mod.toCardinal(v), toOrdinal: (v) => mod.toOrdinal(v) };
  if (mod.toCurrency) words.toCurrency = (v) => mod.toCurrency!(v);
  return words;
}
