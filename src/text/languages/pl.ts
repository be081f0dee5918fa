/** Polish (pl): the words the sentence rules read (`LanguageTable`, in `../language-tables.ts`). */
import type { LanguageTable } from '../language-tables.js';

export const table: LanguageTable = {
  always: [
    'np', 'tzn', 'tj', 'tzw', 'm.in', 'ok', 'ul', 'al', 'pl', 'prof', 'dr', 'hab', 'inż', 'mgr', 'mln', 'mld', 'tys',
    'zł', 'godz', 'r', 'w', 'woj', 'pow', 'gm', 'ks', 'św',
  ],
};
