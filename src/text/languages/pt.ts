/** Portuguese (pt): the words the sentence rules read (`LanguageTable`, in `table.ts`). */
import type { LanguageTable } from './table.js';

export const table: LanguageTable = {
  always: ['sr', 'sra', 'dr', 'dra', 'prof', 'ex', 'av'],
  numeric: ['pág', 'n', 'art', 'cap', 'tel'],
  speechTags: ['disse', 'perguntou', 'gritou', 'respondeu', 'exclamou'],
};
