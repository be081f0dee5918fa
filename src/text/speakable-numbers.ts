/**
 * Number words for spoken forms, from the `n2words` package (71 languages), loaded lazily at
 * run time: a program that never turns `spokenForm` on never loads it, each language is its
 * own module, and no browser bundle carries it unless the page imports one itself.
 */

/**
 * The number words of one language: the shape of an `n2words/<locale>` module (in a browser
 * bundle, import the one you need and pass it as `numberWords`; see `docs/speakable.md`).
 */
export interface NumberWords {
  /** The locale whose words these are (`en-us`, `de-de`); default: from the text's language. */
  locale?: string;
  /** A number (`'1234.5'`) in words. */
  toCardinal(value: string): string;
  /** An ordinal (`'3'`: third) in words. */
  toOrdinal(value: string): string;
  /** An amount (`'3.50'`) in words of the locale's currency. */
  toCurrency?(value: string): string;
}

/** The `n2words` module of each locale served here. */
const MODULES: Readonly<Record<string, string>> = {
  'en-us': 'n2words/en-US',
  'en-gb': 'n2words/en-GB',
  'de-de': 'n2words/de-DE',
  'es-es': 'n2words/es-ES',
  'es-mx': 'n2words/es-MX',
  'fr-fr': 'n2words/fr-FR',
  'fr-be': 'n2words/fr-BE',
};
const BY_LANGUAGE: Readonly<Record<string, string>> = { en: 'en-us', de: 'de-de', es: 'es-es', fr: 'fr-fr' };

/**
 * Loads a module by a name held in a variable: bundlers leave it to the runtime (Node, Deno,
 * Bun), so no page bundle carries number words it does not use.
 */
const importAtRuntime = (specifier: string): Promise<unknown> => import(/* @vite-ignore */ /* webpackIgnore: true */ specifier);

/** The locale (`en-us`) whose number words serve `language`, or undefined when none is known. */
export function numberLocale(language: string): string | undefined {
  const tag = language.toLowerCase().replace('_', '-');
  if (MODULES[tag]) return tag;
  return BY_LANGUAGE[tag.split('-')[0]!];
}

/**
 * Load the number words of `language` (`de-de`, `fr`) from the `n2words` package, at run time:
 * English, German, Spanish and French.
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
  const mod = (await importAtRuntime(MODULES[locale]!)) as Omit<NumberWords, 'locale'>;
  const words: NumberWords = { locale, toCardinal: (v) => mod.toCardinal(v), toOrdinal: (v) => mod.toOrdinal(v) };
  if (mod.toCurrency) words.toCurrency = (v) => mod.toCurrency!(v);
  return words;
}
