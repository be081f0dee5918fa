/** Arabic (ar): the words the sentence rules read (`LanguageTable`, in `../language-tables.ts`). */
import type { LanguageTable } from '../language-tables.js';

export const table: LanguageTable = {
  always: ['د', 'أ', 'م', 'ص', 'هـ'],
};
