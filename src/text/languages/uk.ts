/** Ukrainian (uk): the words the sentence rules read (`LanguageTable`, in `table.ts`). */
import type { LanguageTable } from './table.js';

export const table: LanguageTable = {
  always: [
    'м', 'вул', 'проф', 'акад', 'доц', 'т.д', 'т.п', 'див', 'тис', 'млн', 'млрд', 'грн', 'обл', 'р', 'рр', 'ст',
  ],
};
