/** Hindi (hi): the words the sentence rules read (`LanguageTable`, in `../language-tables.ts`). */
import type { LanguageTable } from '../language-tables.js';

export const table: LanguageTable = {
  always: ['डॉ', 'प्रो', 'श्री', 'सं', 'पृ'],
};
