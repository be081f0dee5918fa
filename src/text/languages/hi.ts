/** Hindi (hi): the words the sentence rules read (`LanguageTable`, in `table.ts`). */
import type { LanguageTable } from './table.js';

export const table: LanguageTable = {
  always: ['डॉ', 'प्रो', 'श्री', 'सं', 'पृ'],
};
