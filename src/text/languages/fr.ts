/** French (fr): the words the sentence rules read (`LanguageTable`, in `table.ts`). */
import type { LanguageTable } from './table.js';

export const table: LanguageTable = {
  always: [
    'm', 'mm', 'mme', 'mmes', 'mlle', 'mlles', 'me', 'mgr', 'pr', 'dr', 'ex', 'env', 'c.-à-d', 'cf', 'av', 'apr',
    'j.-c', 'ste', 'st',
  ],
  numeric: [
    'p', 'n', 'no', 'vol', 'art', 'chap', 'fig', 'tél', 'janv', 'févr', 'avr', 'juil', 'sept', 'oct', 'nov', 'déc',
  ],
  starters: [
    'Le', 'La', 'Les', 'Un', 'Une', 'Je', 'Il', 'Elle', 'Nous', 'Vous', 'Ils', 'Elles', 'Mais', 'Et', 'Que', 'Où',
    'Qui', 'Pourquoi',
  ],
  speechTags: [
    'dit', 'demanda', 'cria', 'répondit', 'murmura', 'ajouta', 's\'écria', 'a-t-il', 'a-t-elle', 'il', 'elle',
  ],
};
