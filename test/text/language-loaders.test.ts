/**
 * The three lists of the languages with a sentence-rules table agree: the tables Node loads
 * up front (`languages/all.ts`), the map of their chunks a page loads on demand
 * (`languages/loaders.ts`), and the languages `language-tables.ts` waits for. A table in one
 * and not another would be a language a page never loads, or waits for forever.
 */
import { describe, expect, it } from 'vitest';
import * as all from '../../src/text/languages/all.js';
import { LOADERS } from '../../src/text/languages/loaders.js';
import { languageTable, languageTableReady } from '../../src/text/language-tables.js';

describe('the languages with a table', () => {
  it('all.ts and loaders.ts list the same languages, and each loader gives the table all.ts has', async () => {
    const languages = Object.keys(all).sort();
    expect(languages.length).toBeGreaterThan(10);
    expect(Object.keys(LOADERS).sort()).toEqual(languages);
    for (const lang of languages) expect((await LOADERS[lang]!()).table, lang).toBe(all[lang as keyof typeof all]);
  });

  it('language-tables.ts has a table for each of them (Node: loaded from the start), none for English or Japanese', () => {
    for (const lang of Object.keys(all)) {
      expect(languageTableReady(lang), lang).toBe(true);
      expect(languageTable(lang), lang).toBe(all[lang as keyof typeof all]);
    }
    // the control: a language without a table of its own has none, and is ready at once
    expect(languageTable('en')).toBeUndefined();
    expect(languageTable('ja')).toBeUndefined();
    expect(languageTableReady('ja-jp')).toBe(true);
  });
});
