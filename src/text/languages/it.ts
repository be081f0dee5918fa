/** Italian (it): the words the sentence rules read (`LanguageTable`, in `table.ts`). */
import type { LanguageTable } from './table.js';

export const table: LanguageTable = {
  always: [
    'sig', 'sigg', 'sig.ra', 'dott', 'dott.ssa', 'prof', 'prof.ssa', 'ing', 'avv', 'es', 'arch', 'geom', 'rag', 'dir',
    'amm', 'psicol', 'on', 'egr', 'gent', 'spett', 'mons', 'sen', 'ecc', 'rif', 'fig', 'all', 'ca', 'cfr', 'pres',
  ],
  numeric: ['pag', 'pagg', 'p', 'n', 'art', 'cap', 'tel', 'fig', 'vol'],
  starters: [
    'Il', 'Lo', 'La', 'I', 'Gli', 'Le', 'Un', 'Una', 'Io', 'Lui', 'Lei', 'Noi', 'Ma', 'E', 'Che', 'Dove', 'Chi',
    'Perché',
  ],
  speechTags: ['disse', 'chiese', 'gridò', 'rispose', 'sussurrò', 'esclamò', 'aggiunse'],
};
