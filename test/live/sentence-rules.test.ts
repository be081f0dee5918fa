/**
 * Waiting for a language's sentence rules, in this process (the bundled page of
 * test/text/language-tables.test.ts does the same through esbuild, outside coverage's view):
 * `languages/all.js` is replaced by an empty module here, as a browser bundle's `"browser"`
 * field replaces it with `none.js`, so every table is loaded on demand. Checked: the text that
 * comes while a table loads is held and replayed in order (values, then completion or error),
 * the language's rules apply once it is in (English rules are the control), unsubscribing
 * before the table is in releases the source, and a loaded table starts at once.
 */
import { describe, expect, it, vi } from 'vitest';
import { concat, lastValueFrom, of, Subject, throwError, toArray } from 'rxjs';
import { afterSentenceRules } from '../../src/live/sentence-rules.js';
import { languageTable, languageTableReady, loadLanguageTable } from '../../src/text/language-tables.js';
import { segmentSentences } from '../../src/operators/segmentSentences.js';

vi.mock('../../src/text/languages/all.js', () => ({}));

const GERMAN = ['Er wohnt bei Hr. Schm', 'idt. Er ist nett.'];

describe('sentence rules loaded on demand (a browser bundle, in this process)', () => {
  it('a table not loaded is refused, never replaced by other rules; English and languages without a table are ready', () => {
    expect(languageTableReady('sk-SK')).toBe(false);
    expect(() => languageTable('sk')).toThrow(/not loaded/);
    expect(languageTableReady('en-us')).toBe(true);
    expect(languageTableReady('ja-jp')).toBe(true);
    expect(languageTableReady(undefined)).toBe(true);
  });

  it("German text waits for German's table, then is cut by German rules (control: English cuts after 'Hr.')", async () => {
    expect(languageTableReady('de-de')).toBe(false);
    const german = lastValueFrom(of(...GERMAN).pipe(segmentSentences({ locale: 'de-de' }), toArray()));
    expect(await german).toEqual(['Er wohnt bei Hr. Schmidt.', ' Er ist nett.']);
    expect(languageTableReady('de-de')).toBe(true);
    const english = await lastValueFrom(of(...GERMAN).pipe(segmentSentences({ locale: 'en-us' }), toArray()));
    expect(english.length).toBeGreaterThan(2);
    expect(english.join('')).toBe(GERMAN.join(''));
  });

  it('a hot source: what comes while the table loads is held and replayed in order, then the rest passes', async () => {
    expect(languageTableReady('fr-fr')).toBe(false);
    const text$ = new Subject<string>();
    const seen: string[] = [];
    const done = new Promise<void>((resolve, reject) =>
      afterSentenceRules('fr-fr', text$, (held) => held).subscribe({ next: (t) => seen.push(t), error: reject, complete: resolve }),
    );
    expect(text$.observed).toBe(true); // subscribed at once: a hot source loses nothing
    text$.next('a');
    text$.next('b');
    expect(seen).toEqual([]); // held while the table loads
    await loadLanguageTable('fr-fr');
    await Promise.resolve();
    expect(seen).toEqual(['a', 'b']);
    text$.next('c');
    text$.complete();
    await done;
    expect(seen).toEqual(['a', 'b', 'c']);
  });

  it('an error that comes while the table loads is replayed after the text before it', async () => {
    expect(languageTableReady('es-es')).toBe(false);
    const seen: string[] = [];
    const failure = new Error('source failed');
    const error = await new Promise<unknown>((resolve) =>
      afterSentenceRules('es-es', concat(of('uno'), throwError(() => failure)), (held) => held).subscribe({ next: (t) => seen.push(t), error: resolve }),
    );
    expect(error).toBe(failure);
    expect(seen).toEqual(['uno']);
  });

  it('unsubscribing before the table is in releases the source and starts nothing (control: kept, it starts)', async () => {
    expect(languageTableReady('it-it')).toBe(false);
    let starts = 0;
    const text$ = new Subject<string>();
    const subscription = afterSentenceRules('it-it', text$, (held) => {
      starts++;
      return held;
    }).subscribe();
    subscription.unsubscribe();
    expect(text$.observed).toBe(false);
    await loadLanguageTable('it-it');
    await Promise.resolve();
    expect(starts).toBe(0);
    // the control, with the table now loaded: it starts at once, synchronously
    const kept = afterSentenceRules('it-it', text$, (held) => {
      starts++;
      return held;
    }).subscribe();
    expect(starts).toBe(1);
    kept.unsubscribe();
  });

  it('one load per language, however many wait for it', async () => {
    expect(languageTableReady('pl-pl')).toBe(false);
    const first = loadLanguageTable('pl-pl');
    const second = loadLanguageTable('pl-PL');
    expect(second).toBe(first);
    await first;
    expect(languageTable('pl')).toBeDefined();
    await expect(loadLanguageTable('pl-pl')).resolves.toBeUndefined();
  });

  it('every language with a table loads one that has words (what a page fetches, a chunk a language)', async () => {
    const languages = ['ar', 'bg', 'cs', 'da', 'de', 'el', 'es', 'fr', 'hi', 'it', 'kk', 'nl', 'pl', 'pt', 'ru', 'sk', 'uk'];
    await Promise.all(languages.map((lang) => loadLanguageTable(lang)));
    for (const lang of languages) {
      expect(languageTableReady(lang), lang).toBe(true);
      const table = languageTable(lang);
      const words = Object.values(table ?? {}).flat();
      expect(words.length, lang).toBeGreaterThan(0);
    }
  });
});
