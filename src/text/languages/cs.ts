/** Czech (cs): the words the sentence rules read (`LanguageTable`, in `table.ts`). */
import type { LanguageTable } from './table.js';

export const table: LanguageTable = {
  always: [
    'např', 'tzv', 'resp', 'atd', 'apod', 'č', 'str', 'ul', 'nám', 'mil', 'mld', 'tis', 'prof', 'doc', 'ing', 'mudr',
    'judr', 'phdr', 'rndr', 'mgr', 'bc', 'a.s', 's.r.o',
  ],
};
