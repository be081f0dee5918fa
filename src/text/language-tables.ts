/**
 * The sentence rules' words for languages other than English, one file a language in
 * `languages/` (`languages/de.ts`).
 *
 * - In Node every table is there from the start: this file imports `languages/all.ts`, so
 *   every language segments synchronously from the first call (the emulator, the LiveKit
 *   plugin, `segmentSentences` on a server);
 * - in a browser bundle `languages/all.ts` is `languages/none.ts` (`"browser"` in package.json):
 *   a page loads the table of a language when a session uses it, by `import()`, which its
 *   bundler splits into a chunk a language, so a page speaking English (the default)
 *   downloads none of them, nor the map of their chunks (`languages/loaders.ts`, itself
 *   `import()`ed first: a page's first table takes two fetches, one after the other).
 *   `speak`, `segmentSentences` and `resubmitSkipped` hold the text until the table is in
 *   (`src/live/sentence-rules.ts`).
 *
 * {@link languageTableReady} says whether a locale's rules can be made now;
 * {@link loadLanguageTable} loads its table (once); {@link languageTable} gives it to
 * `rulesFor` (`abbreviations.ts`).
 */
import * as bundled from './languages/all.js';
import type { LanguageTable } from './languages/table.js';

export type { LanguageTable } from './languages/table.js';

/** The languages with a table of their own (`languages/<lang>.ts`; the keys of `languages/all.ts` and of `languages/loaders.ts`). */
const TABLES: ReadonlySet<string> = new Set(['ar', 'bg', 'cs', 'da', 'de', 'el', 'es', 'fr', 'hi', 'it', 'kk', 'nl', 'pl', 'pt', 'ru', 'sk', 'uk']);

/** The tables at hand: all of them in Node, none at first in a browser bundle (where `languages/all.ts` is `none.ts`). */
const loaded = new Map<string, LanguageTable>(Object.entries(bundled));
const loading = new Map<string, Promise<void>>();

/** The primary language subtag of a locale tag, lower-cased (`de-DE` -> `de`; none: `en`). */
export function languageOf(locale: string | undefined): string {
  if (!locale) return 'en';
  const lang = locale.trim().toLowerCase().split(/[-_]/)[0];
  return lang && lang.length > 0 ? lang : 'en';
}

/** Whether the sentence rules of `locale` can be made now: its language has no table of its own, or the table is loaded. */
export function languageTableReady(locale: string | undefined): boolean {
  const lang = languageOf(locale);
  return !TABLES.has(lang) || loaded.has(lang);
}

/**
 * The table of `lang` (a primary subtag): `undefined` for a language without one (English,
 * Japanese, ...); throws for a language whose table is not loaded yet (a caller that did not
 * wait for {@link loadLanguageTable}: a bug, never a silent fallback to other rules).
 */
export function languageTable(lang: string): LanguageTable | undefined {
  if (!TABLES.has(lang)) return undefined;
  const table = loaded.get(lang);
  if (table === undefined) throw new Error(`rxvoice: the sentence rules of "${lang}" are not loaded (await loadLanguageTable first)`);
  return table;
}

/** Loads the table of `locale`'s language, once; resolves at once when there is none to load or it is loaded. */
export function loadLanguageTable(locale: string | undefined): Promise<void> {
  const lang = languageOf(locale);
  if (languageTableReady(lang)) return Promise.resolve();
  let pending = loading.get(lang);
  if (pending === undefined) {
    pending = import('./languages/loaders.js')
      .then(({ LOADERS }) => LOADERS[lang]!())
      .then(
        ({ table }) => {
          loaded.set(lang, table);
        },
        (error: unknown) => {
          loading.delete(lang); // a failed download (of the map or of the table) may be tried again
          throw error;
        },
      );
    loading.set(lang, pending);
  }
  return pending;
}
