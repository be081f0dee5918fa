/**
 * Where each language's table is, for a browser page: one `import()` each, with a literal
 * path, so that a bundler makes each table a chunk of its own. This map is itself loaded by
 * `import()` (`../language-tables.ts`) when a session first needs a table: its entries name
 * the chunks by their hashed file names, which a page speaking English would otherwise
 * download for nothing (0.2 KB gzipped). Node never loads it: every table is there from the
 * start (`all.ts`).
 */
import type { LanguageTable } from './table.js';

/** The loader of each language's table, by primary language subtag (the keys of `all.ts`). */
export const LOADERS: Readonly<Record<string, () => Promise<{ table: LanguageTable }>>> = {
  ar: () => import('./ar.js'),
  bg: () => import('./bg.js'),
  cs: () => import('./cs.js'),
  da: () => import('./da.js'),
  de: () => import('./de.js'),
  el: () => import('./el.js'),
  es: () => import('./es.js'),
  fr: () => import('./fr.js'),
  hi: () => import('./hi.js'),
  it: () => import('./it.js'),
  kk: () => import('./kk.js'),
  nl: () => import('./nl.js'),
  pl: () => import('./pl.js'),
  pt: () => import('./pt.js'),
  ru: () => import('./ru.js'),
  sk: () => import('./sk.js'),
  uk: () => import('./uk.js'),
};
