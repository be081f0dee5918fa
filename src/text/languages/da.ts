/** Danish (da): the words the sentence rules read (`LanguageTable`, in `table.ts`). */
import type { LanguageTable } from './table.js';

export const table: LanguageTable = {
  always: [
    'skt', 'hr', 'fr', 'frk', 'dr', 'prof', 'bl.a', 'f.eks', 'ca', 'dvs', 'mht', 'jf', 'evt', 'inkl', 'osv', 'pga',
    'ift', 'mv', 'o.l', 'sml', 'tlf', 'vedr', 'ang', 'kl', 'stk', 'nr',
  ],
  numeric: ['nr', 'tlf', 'side', 'stk', 'kap', 'jan', 'feb', 'aug', 'sept', 'okt', 'nov', 'dec'],
  starters: [
    'Hvad', 'Hvor', 'Hvem', 'Hvorfor', 'Jeg', 'Det', 'Den', 'Der', 'Vi', 'Han', 'Hun', 'De', 'Men', 'Og', 'Så', 'I',
    'Derefter', 'Bagefter', 'Senere',
  ],
  calendar: [
    'januar', 'februar', 'marts', 'april', 'maj', 'juni', 'juli', 'august', 'september', 'oktober', 'november',
    'december',
  ],
};
