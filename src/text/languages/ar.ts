/** Arabic (ar): the words the sentence rules read (`LanguageTable`, in `table.ts`). */
import type { LanguageTable } from './table.js';

export const table: LanguageTable = {
  always: ['د', 'أ', 'م', 'ص', 'هـ'],
};
