/** German (de): the words the sentence rules read (`LanguageTable`, in `table.ts`). */
import type { LanguageTable } from './table.js';

export const table: LanguageTable = {
  always: [
    'z.b', 'u.a', 'bzw', 'd.h', 'dr', 'ca', 'vgl', 'sog', 'ggf', 'evtl', 'inkl', 'hr', 'fr', 'frl', 'geb', 'gest',
    'mio', 'mrd', 'tsd', 'u.ä', 'o.ä', 'z.t', 'u.u', 'i.d.r', 's.o', 's.u', 'm.e', 'o.g', 'dipl', 'ing', 'prof', 'hl',
    'med', 'kath', 'ev', 'evang', 'jur', 'phil', 'rer', 'nat', 'habil', 'mag', 'hrsg', 'bzgl', 'ggü', 'gem', 'zzgl',
    'abzgl', 'allg', 'anh', 'anm', 'bspw', 'entspr', 'erg', 'ff', 'insb', 'jh', 'jhd', 'lt', 'max', 'min', 'mind',
    'nachf', 'od', 'pkt', 'rd', 'röm', 'sen', 'sog', 'spez', 'stellv', 'urspr', 'verh', 'verw', 'vorm', 'zus', 'zzt',
    'ä',
  ],
  numeric: ['nr', 'abs', 's', 'bd', 'str', 'tel', 'kap', 'jan', 'feb', 'aug', 'sept', 'okt', 'nov', 'dez'],
  starters: [
    'Der', 'Die', 'Das', 'Den', 'Dem', 'Ein', 'Eine', 'Ich', 'Wir', 'Er', 'Sie', 'Es', 'Ihr', 'Du', 'Aber', 'Und',
    'Oder', 'Wie', 'Was', 'Wo', 'Wer', 'Warum', 'Wann', 'Dann', 'Danach', 'Daher', 'Deshalb', 'Darum', 'Trotzdem',
    'Außerdem', 'Zudem', 'Jedoch', 'Heute', 'Morgen', 'Später', 'Nun', 'Jetzt', 'Hier', 'Dort', 'Auch', 'Als', 'Wenn',
    'Weil', 'Doch', 'Dies', 'Diese', 'Dieser', 'Dieses', 'Man', 'Mein', 'Meine', 'Sein', 'Seine', 'Unser', 'Unsere',
    'Im', 'In', 'Am', 'Auf', 'Mit', 'Nach', 'Bei', 'Für', 'Von', 'Vom', 'Zum', 'Zur', 'So', 'Schließlich', 'Zuerst',
    'Anschließend',
  ],
  calendar: [
    'Montag', 'Dienstag', 'Mittwoch', 'Donnerstag', 'Freitag', 'Samstag', 'Sonnabend', 'Sonntag', 'Januar', 'Jänner',
    'Februar', 'März', 'April', 'Mai', 'Juni', 'Juli', 'August', 'September', 'Oktober', 'November', 'Dezember',
    'Jan', 'Feb', 'Mär', 'Apr', 'Jun', 'Jul', 'Aug', 'Sep', 'Sept', 'Okt', 'Nov', 'Dez', 'Jahrhundert', 'Jh',
    'Jahrestag', 'Geburtstag', 'Mal', 'Platz', 'Klasse', 'Stock', 'Liga', 'Weltkrieg',
  ],
  speechTags: ['sagte', 'fragte', 'rief', 'schrie', 'antwortete', 'flüsterte', 'meinte', 'er', 'sie', 'ich', 'wir'],
};
