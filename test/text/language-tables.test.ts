/**
 * The sentence rules of languages other than English in a browser bundle: not in what a page
 * loads at start, loaded by `import()` when a session uses the language, with the text that
 * comes meanwhile held (nothing lost) and segmented by that language's rules. The bundle is
 * built here as a page's bundler builds it (esbuild, browser platform, code splitting) and
 * run in Node against the emulator; Node's own build (every table from the start) is the control.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readdir, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { from, lastValueFrom, Subject, toArray, type OperatorFunction } from 'rxjs';
import { WebSocket as NodeWebSocket } from 'ws';
import { segmentSentences as nodeSegmentSentences } from '../../src/operators/segmentSentences.js';
import { languageTableReady as nodeReady } from '../../src/text/language-tables.js';
import type { speak as Speak } from '../../src/live/session.js';
import type { resubmitSkipped as ResubmitSkipped } from '../../src/operators/resubmitSkipped.js';
import type { LiveSpeechEvent } from '../../src/live/events.js';
import { bundlePage } from '../setup/page-bundle.js';
import { emulator, segmentsOf, squash } from '../live/helpers.js';


interface Page {
  speak: typeof Speak;
  segmentSentences: typeof nodeSegmentSentences;
  resubmitSkipped: typeof ResubmitSkipped;
  languageTableReady: (locale: string | undefined) => boolean;
}

let dir: string;
let page: Page;
let pageFile: string;

beforeAll(async () => {
  ({ dir, startFile: pageFile, page } = await bundlePage<Page>([
    "export { speak } from './src/live/index.ts';",
    "export { segmentSentences, resubmitSkipped } from './src/operators/index.ts';",
    "export { languageTableReady } from './src/text/language-tables.ts';",
  ]));
}, 60_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

// `Hr.` is a title in German (never ends a sentence), a plain word in English
const GERMAN = 'Er wohnt bei Hr. Schmidt. Er ist nett.';
const GERMAN_PIECES = ['Er wohnt bei Hr. Schmidt.', ' Er ist nett.'];
const ENGLISH_RULES_PIECES = ['Er wohnt bei Hr.', ' Schmidt.', ' Er ist nett.'];

/** `text` pushed at once into a hot source right after subscribing (before any table could load), then completed. */
function pushedAtOnce<T>(operator: OperatorFunction<string, T>, text: string[]): Promise<T[]> {
  const source = new Subject<string>();
  const result = lastValueFrom(source.pipe(operator, toArray()));
  for (const t of text) source.next(t);
  source.complete();
  return result;
}

describe('language tables in a browser bundle', () => {
  it('the page loads no language table at start; each is a chunk of its own', async () => {
    const files = await readdir(dir);
    const start = await readFile(pageFile, 'utf8');
    const german = files.filter((f) => f.startsWith('de-'));
    expect(german).toHaveLength(1);
    expect(await readFile(join(dir, german[0]!), 'utf8')).toContain('Weltkrieg');
    // the control: English words are in the page itself; German ones are not
    expect(start).toContain('Wednesday');
    expect(start).not.toContain('Weltkrieg');
    expect(start).not.toContain('Anschließend');
    // nor the map of the chunks (their names): a chunk of its own, loaded before a table
    const map = files.filter((f) => f.startsWith('loaders-'));
    expect(map).toHaveLength(1);
    expect(await readFile(join(dir, map[0]!), 'utf8')).toContain(german[0]!);
    expect(start).not.toContain(german[0]!);
  });

  it('Node has every table from the start; the page, English only', () => {
    expect(nodeReady('de-de')).toBe(true);
    expect(page.languageTableReady('en-us')).toBe(true);
    expect(page.languageTableReady('ja-jp')).toBe(true); // no table of its own
    expect(page.languageTableReady('da-dk')).toBe(false);
  });

  it('segmentSentences holds the text while the table loads, then cuts by its rules', async () => {
    expect(page.languageTableReady('de-de')).toBe(false);
    const tokens = GERMAN.match(/.{1,3}/gs)!;
    const pieces = await pushedAtOnce(page.segmentSentences({ locale: 'de-de' }), tokens);
    expect(pieces).toEqual(GERMAN_PIECES);
    expect(page.languageTableReady('de-de')).toBe(true);
    // the control: Node's build cuts the same, and English rules would cut otherwise
    expect(await lastValueFrom(from(tokens).pipe(nodeSegmentSentences({ locale: 'de-de' }), toArray()))).toEqual(GERMAN_PIECES);
    expect(await lastValueFrom(from(tokens).pipe(page.segmentSentences({ locale: 'en-us' }), toArray()))).toEqual(ENGLISH_RULES_PIECES);
  });

  it('an error of the source while the table loads comes after the text held before it', async () => {
    const source = new Subject<string>();
    const seen: string[] = [];
    const done = new Promise<unknown>((resolve) => source.pipe(page.segmentSentences({ locale: 'it-it' })).subscribe({ next: (s) => seen.push(s), error: resolve }));
    source.next('Ciao. Come va');
    source.error(new Error('boom'));
    expect(((await done) as Error).message).toBe('boom');
    expect(seen).toEqual(['Ciao.', ' Come va']);
  });

  it('unsubscribing while the table loads unsubscribes the source and starts nothing', async () => {
    const source = new Subject<string>();
    const seen: string[] = [];
    const subscription = source.pipe(page.segmentSentences({ locale: 'nl-nl' })).subscribe((s) => seen.push(s));
    source.next('Hallo. ');
    expect(source.observed).toBe(true); // the control: held while loading
    subscription.unsubscribe();
    expect(source.observed).toBe(false);
    // the control: a second subscription, started, emits (output of the first would have been seen)
    const again = await pushedAtOnce(page.segmentSentences({ locale: 'nl-nl' }), ['Hallo. Dag.']);
    expect(again).toEqual(['Hallo.', ' Dag.']);
    expect(seen).toEqual([]);
  });

  it('speak with a language whose table is not loaded: the text waits, none is lost, the session speaks it', async () => {
    const emu = await emulator();
    expect(page.languageTableReady('fr-fr')).toBe(false);
    const text = 'M. Dupont est arrivé. Mme Durand aussi. Ils parlent.';
    const connection = { wsUrl: emu.wsUrl, apiKey: emu.apiKey, WebSocket: NodeWebSocket };
    const events = await pushedAtOnce(page.speak(connection, { voice_id: 1, language: 'fr-fr', output_format: 'wav' }), text.match(/.{1,4}/gs)!);
    expect(page.languageTableReady('fr-fr')).toBe(true);
    expect(events.at(-1)?.type).toBe('done');
    const spoken = segmentsOf(events as LiveSpeechEvent[]).map((s) => s.text);
    expect(squash(spoken.join(''))).toBe(squash(text));
    expect(spoken.map((s) => s.trim())).toEqual(['M. Dupont est arrivé.', 'Mme Durand aussi.', 'Ils parlent.']);
  });

  it('a table that fails to download errors the output (nothing hangs); a later subscription loads it', async () => {
    const chunk = (await readdir(dir)).find((f) => f.startsWith('pl-'))!;
    await rename(join(dir, chunk), join(dir, `${chunk}.away`));
    const text = ['Mam owoce, np. Jab', 'łka. Tak.'];
    const failed = await pushedAtOnce(page.segmentSentences({ locale: 'pl-pl' }), text).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failed).toBeInstanceOf(Error);
    expect(page.languageTableReady('pl-pl')).toBe(false);
    await rename(join(dir, `${chunk}.away`), join(dir, chunk));
    // `np.` (for example) never ends a sentence in Polish; English rules would cut after it
    expect(await pushedAtOnce(page.segmentSentences({ locale: 'pl-pl' }), text)).toEqual(['Mam owoce, np. Jabłka.', ' Tak.']);
    expect(await pushedAtOnce(page.segmentSentences({ locale: 'en-us' }), text)).toEqual(['Mam owoce, np.', ' Jabłka.', ' Tak.']);
    expect(page.languageTableReady('pl-pl')).toBe(true);
  });

  it('resubmitSkipped waits for the table too, and the session speaks every text', async () => {
    const emu = await emulator();
    expect(page.languageTableReady('es-es')).toBe(false);
    const text = 'La Sra. García llegó. Todo bien.';
    const connection = { wsUrl: emu.wsUrl, apiKey: emu.apiKey, WebSocket: NodeWebSocket };
    const speakOperator = page.speak(connection, { voice_id: 1, language: 'es-es', output_format: 'wav' });
    const events = await pushedAtOnce(page.resubmitSkipped(speakOperator, { locale: 'es-es' }), text.match(/.{1,5}/gs)!);
    expect(page.languageTableReady('es-es')).toBe(true);
    expect(events.at(-1)?.type).toBe('done');
    expect(squash(segmentsOf(events as LiveSpeechEvent[]).map((s) => s.text).join(''))).toBe(squash(text));
  });
});
