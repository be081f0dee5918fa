/** Greek (el): the words the sentence rules read (`LanguageTable`, in `table.ts`). */
import type { LanguageTable } from './table.js';

export const table: LanguageTable = {
  always: ['κ', 'κα', 'κος', 'π.χ', 'κ.λπ', 'κ.ά', 'δηλ', 'βλ', 'δρ', 'καθ'],
  numeric: ['αρ', 'σελ', 'τηλ', 'κεφ'],
};
