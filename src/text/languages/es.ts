/** Spanish (es): the words the sentence rules read (`LanguageTable`, in `table.ts`). */
import type { LanguageTable } from './table.js';

export const table: LanguageTable = {
  always: [
    'sr', 'sra', 'sras', 'srta', 'sres', 'ud', 'uds', 'vd', 'vds', 'dña', 'dr', 'dra', 'lic', 'ing', 'arq', 'sto',
    'sta', 'ej', 'aprox', 'prof', 'profa', 'av', 'avda', 'd', 'dª', 'ee', 'uu', 'ee.uu', 'gral', 'cía', 'excmo',
    'excma', 'ilmo', 'ilma', 'pdta', 'pdte', 'sto', 'ntra', 'ntro', 'dcha', 'izq', 'izqda', 'etc', 'cra', 'cl',
    'depto', 'dpto',
  ],
  numeric: [
    'pág', 'págs', 'núm', 'no', 'art', 'cap', 'tel', 'vol', 'ene', 'feb', 'abr', 'ago', 'sept', 'oct', 'nov', 'dic',
    'párrf', 'párr', 'lun', 'mar', 'mié', 'jue', 'vie', 'sáb', 'dom', 'min', 'seg', 'hr', 'hrs', 'ext', 'fax',
  ],
  starters: [
    'El', 'La', 'Los', 'Las', 'Un', 'Una', 'Yo', 'Él', 'Ella', 'Nosotros', 'Pero', 'Y', 'Qué', 'Dónde', 'Quién',
    'Por',
  ],
  speechTags: ['dijo', 'preguntó', 'gritó', 'respondió', 'contestó', 'susurró', 'exclamó', 'añadió'],
};
