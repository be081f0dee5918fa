/** Dutch (nl): the words the sentence rules read (`LanguageTable`, in `table.ts`). */
import type { LanguageTable } from './table.js';

export const table: LanguageTable = {
  always: ['dhr', 'mevr', 'o.a', 'bijv', 'd.w.z', 'z.g.a.n'],
  numeric: ['nr', 'blz', 'tel'],
  starters: [
    'De', 'Het', 'Een', 'Ik', 'Wij', 'We', 'Hij', 'Zij', 'Ze', 'Maar', 'En', 'Wat', 'Waar', 'Wie', 'Waarom',
  ],
  speechTags: ['zei', 'vroeg', 'riep', 'antwoordde', 'fluisterde', 'hij', 'zij', 'ze'],
};
