/** Slovak (sk): the words the sentence rules read (`LanguageTable`, in `table.ts`). */
import type { LanguageTable } from './table.js';

export const table: LanguageTable = {
  always: [
    'napr', 'tzv', 'resp', 'atď', 'p', 'pán', 'pani', 'č', 'str', 'ul', 'nám', 'mil', 'mld', 'tis', 'prof', 'doc',
    'ing', 'mudr', 'judr', 'phdr', 'rndr', 'mgr', 'bc', 'a.s', 's.r.o',
  ],
};
