/** Bulgarian (bg): the words the sentence rules read (`LanguageTable`, in `../language-tables.ts`). */
import type { LanguageTable } from '../language-tables.js';

export const table: LanguageTable = {
  always: [
    'пл', 'ул', 'бул', 'гр', 'г', 'д-р', 'проф', 'доц', 'акад', 'т.е', 'т.н', 'напр', 'вж', 'др', 'млн', 'млрд',
    'хил', 'лв', 'ст', 'с', 'обл',
  ],
};
