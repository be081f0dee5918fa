/** Polish (pl): the words the sentence rules read (`LanguageTable`, in `table.ts`). */
import type { LanguageTable } from './table.js';

export const table: LanguageTable = {
  always: [
    'np', 'tzn', 'tj', 'tzw', 'm.in', 'ok', 'ul', 'al', 'pl', 'prof', 'dr', 'hab', 'inż', 'mgr', 'mln', 'mld', 'tys',
    'zł', 'godz', 'r', 'w', 'woj', 'pow', 'gm', 'ks', 'św',
  ],
};
