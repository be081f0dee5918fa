/** Greek (el): the words the sentence rules read (`LanguageTable`, in `../language-tables.ts`). */
import type { LanguageTable } from '../language-tables.js';

export const table: LanguageTable = {
  always: ['κ', 'κα', 'κος', 'π.χ', 'κ.λπ', 'κ.ά', 'δηλ', 'βλ', 'δρ', 'καθ'],
  numeric: ['αρ', 'σελ', 'τηλ', 'κεφ'],
};
