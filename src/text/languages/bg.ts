/** Bulgarian (bg): the words the sentence rules read (`LanguageTable`, in `table.ts`). */
import type { LanguageTable } from './table.js';

export const table: LanguageTable = {
  always: [
    'пл', 'ул', 'бул', 'гр', 'г', 'д-р', 'проф', 'доц', 'акад', 'т.е', 'т.н', 'напр', 'вж', 'др', 'млн', 'млрд',
    'хил', 'лв', 'ст', 'с', 'обл',
  ],
};
