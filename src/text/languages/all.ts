/**
 * Every language table, each exported under its primary language subtag (`de`), for Node:
 * `language-tables.ts` imports this file, so server code, tests and scripts segment every
 * language synchronously from the first call. A browser bundle replaces this file with
 * `none.ts`, which exports nothing (`"browser"` in package.json, a field bundlers read for a
 * browser target), and a page loads only the table of a language it uses, by `import()`
 * (see `../language-tables.ts`).
 */
export { table as ar } from './ar.js';
export { table as bg } from './bg.js';
export { table as cs } from './cs.js';
export { table as da } from './da.js';
export { table as de } from './de.js';
export { table as el } from './el.js';
export { table as es } from './es.js';
export { table as fr } from './fr.js';
export { table as hi } from './hi.js';
export { table as it } from './it.js';
export { table as kk } from './kk.js';
export { table as nl } from './nl.js';
export { table as pl } from './pl.js';
export { table as pt } from './pt.js';
export { table as ru } from './ru.js';
export { table as sk } from './sk.js';
export { table as uk } from './uk.js';

