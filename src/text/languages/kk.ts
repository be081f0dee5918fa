/** Kazakh (kk): the words the sentence rules read (`LanguageTable`, in `table.ts`). */
import type { LanguageTable } from './table.js';

export const table: LanguageTable = {
  always: [
    'б.з.б', 'б.з', 'ж', 'жж', 'т.б', 'т.с.с', 'проф', 'акад', 'обл', 'көш', 'қ', 'т', 'млн', 'млрд', 'мыс',
  ],
};
