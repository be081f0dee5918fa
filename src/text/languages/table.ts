/**
 * The shape of one language's table (`<lang>.ts` here), apart from `../language-tables.ts`,
 * which loads the tables: each table imports its type from here, not from the file that
 * imports it.
 */
/** One language's words (each list optional), added to the common (English and international) ones. */
export interface LanguageTable {
  /** A dot after these never ends a sentence: lower-cased, without the last dot (`z.b`). */
  readonly always?: readonly string[];
  /** A dot after these does not end a sentence before a number (`Nr. 5`). */
  readonly numeric?: readonly string[];
  /** Capitalized words that start a sentence (`Danach`, after `Kapitel 4.`). */
  readonly starters?: readonly string[];
  /** Weekday and month names, as written (`Oktober`, after `am 3.`). */
  readonly calendar?: readonly string[];
  /** Lower-case words that tag speech after `!` or `?` (`sagte`). */
  readonly speechTags?: readonly string[];
}
