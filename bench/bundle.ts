/**
 * What a browser page downloads: rxvoice's browser entries bundled for the browser with
 * esbuild (minified, ES module, esbuild's default conditions, as a page's bundler
 * would: `rxjs` resolves to its ES5 build with `tslib`), gzipped, in KB (1024 bytes).
 *
 * Bundled with code splitting, as a page's bundler does by default (Vite, webpack, Rollup;
 * esbuild with `splitting: true`): the figure is what a page loads at start, the entry and
 * the chunks it imports statically, each gzipped. The sentence rules of languages other
 * than English are `import()`ed when a session uses one (`src/text/language-tables.ts`), and
 * so are the session features a session turns on by option, its `metrics`, its stall
 * fallback and its `reconnect` (`src/live/features.ts`): chunks of their own, not counted (a page speaking
 * English without those options never loads them); the note gives their sizes. Without
 * splitting a bundler inlines them (the note says how much that adds).
 *
 * Rows:
 * - budget rows (peer column = the 30 KB budget): `speak` alone; a page of `speak` with
 *   two operators (`segmentSentences` + `concatSegments`, and `segmentSentences` +
 *   `speakableText`); and every export of `rxvoice/live` and `rxvoice/operators` at once;
 * - the floor: the captions page (`speak`, `rxvoice/web`, two operators) against the
 *   libraries alone (`rxjs` with the same operators and `zod/mini` with the same schema
 *   kinds), so the ratio shows what rxvoice's own code adds.
 *
 * The note adds two other counts of the same page: as one file without splitting, and with
 * Vite's production build and its defaults (`viteKb`: Rolldown and Vite's own minifier, the
 * preload helper Vite adds for `import()`), what the page loads at start.
 *
 * Run alone: `npx tsx bench/bundle.ts`.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { build, type Metafile } from 'esbuild';
import { build as viteBuild, version as viteVersion } from 'vite';
import type { BenchRow } from './types.js';
import { row } from './util.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The budget of issue "a package that works where users are": a page's rxvoice, gzipped. */
export const BUNDLE_BUDGET_KB = 30;

/**
 * Bundles `contents` (an entry module's source) for the browser, minified: an ES module,
 * or with `globalName` a script that puts the exports on `window[globalName]`.
 */
export async function browserBundle(contents: string, globalName?: string): Promise<Uint8Array> {
  const result = await build({
    stdin: { contents, resolveDir: ROOT, loader: 'ts' },
    bundle: true,
    platform: 'browser',
    ...(globalName === undefined ? { format: 'esm' as const } : { format: 'iife' as const, globalName }),
    minify: true,
    write: false,
    logLevel: 'silent',
  });
  return result.outputFiles[0]!.contents;
}

/** The name of the page's entry module in the bundler's report. */
const PAGE_FILE = 'page.ts';

/** A page's files as its bundler writes them (with code splitting): what loads at start, and what loads on demand. */
export interface PageLoad {
  /** The entry and the chunks it imports statically: what the page loads at start. */
  initial: Uint8Array[];
  /** Chunks loaded by `import()` only (a language's sentence rules), with their largest input's name. */
  lazy: { name: string; bytes: Uint8Array }[];
  /** Minified bytes of each input file in the initial files. */
  parts: Map<string, number>;
}

/** Bundles `contents` (an entry module's source) for the browser with code splitting, minified: what a page loads at start and on demand. */
export async function pageLoad(contents: string): Promise<PageLoad> {
  const result = await build({
    stdin: { contents, resolveDir: ROOT, loader: 'ts', sourcefile: PAGE_FILE },
    bundle: true,
    platform: 'browser',
    format: 'esm',
    splitting: true,
    outdir: '/page',
    minify: true,
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  const outputs: Metafile['outputs'] = result.metafile.outputs;
  // output paths: absolute in outputFiles, relative to the working directory in the metafile
  const baseName = (path: string): string => path.replace(/^.*\//, '');
  const files = new Map(result.outputFiles.map((file) => [baseName(file.path), file.contents]));
  const contentsOf = (path: string): Uint8Array => files.get(baseName(path))!;
  const entry = Object.keys(outputs).find((path) => outputs[path]!.entryPoint === PAGE_FILE)!; // the page (`import()`ed modules are entry points too)
  // the entry and everything it imports statically, transitively
  const initial = new Set<string>([entry]);
  for (const path of initial) {
    for (const imported of outputs[path]!.imports) if (imported.kind === 'import-statement') initial.add(imported.path);
  }
  const parts = new Map<string, number>();
  for (const path of initial) {
    for (const [file, { bytesInOutput }] of Object.entries(outputs[path]!.inputs)) {
      const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file)?.[1];
      const name = pkg ?? file.replace(/^.*\//, '').replace(/\.ts$/, '');
      parts.set(name, (parts.get(name) ?? 0) + bytesInOutput);
    }
  }
  const lazy = Object.keys(outputs)
    .filter((path) => !initial.has(path))
    .map((path) => {
      const [largest] = Object.entries(outputs[path]!.inputs).sort((a, b) => b[1].bytesInOutput - a[1].bytesInOutput);
      return { name: largest ? largest[0].replace(/^.*\//, '').replace(/\.ts$/, '') : path, bytes: contentsOf(path) };
    });
  return { initial: [...initial].map(contentsOf), lazy, parts };
}

/**
 * What a page loads at start is made of: its largest parts in minified KB (before gzip),
 * packages by name (`zod`, `rxjs`), rxvoice's modules by file, e.g. `live-session 9.5, rxjs 9.3`.
 */
export async function composition(page: string | PageLoad, parts = 8): Promise<string> {
  const load = typeof page === 'string' ? await pageLoad(page) : page;
  return [...load.parts]
    .filter(([, bytes]) => bytes > 0)
    .sort((a, b) => b[1] - a[1])
    .slice(0, parts)
    .map(([name, bytes]) => `${name} ${(bytes / 1024).toFixed(1)}`)
    .join(', ');
}

/** Gzipped KB of files fetched one by one (each gzipped on its own, as a server sends them). */
function gzipKb(files: readonly Uint8Array[]): number {
  return files.reduce((sum, file) => sum + gzipSync(file).byteLength, 0) / 1024;
}

/** What a page of `contents` loads at start, gzipped, in KB (code splitting: `import()`ed chunks not counted). */
export async function gzippedKb(contents: string): Promise<number> {
  return gzipKb((await pageLoad(contents)).initial);
}

/** The gzipped size of `contents` bundled into one file (no splitting: `import()`ed modules inlined), in KB. */
export async function oneFileKb(contents: string): Promise<number> {
  return gzipSync(await browserBundle(contents)).byteLength / 1024;
}

/**
 * What a page of `contents` loads at start with Vite's production build and its defaults
 * (Rolldown, Vite's minifier, its preload helper for `import()`), gzipped, in KB: the page
 * is a module that uses the entry's exports (`import * as page`), as an application's
 * script does (an app build drops an entry's unused exports), in a temporary directory.
 */
export async function viteKb(contents: string): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), 'rxvoice-vite-page-'));
  try {
    await writeFile(join(dir, 'entry.ts'), contents.replaceAll("from './", `from '${ROOT}`));
    await writeFile(join(dir, 'page.ts'), "import * as page from './entry.ts';\nReflect.set(globalThis, 'page', page);\n");
    const result = await viteBuild({ root: dir, configFile: false, logLevel: 'silent', build: { write: false, rollupOptions: { input: join(dir, 'page.ts') } } });
    const outputs = (Array.isArray(result) ? result : [result]).flatMap((bundle) => ('output' in bundle ? bundle.output : []));
    const chunks = new Map(outputs.flatMap((output) => (output.type === 'chunk' ? [[output.fileName, output] as const] : [])));
    // the entry and the chunks it imports statically, transitively
    const initial = new Set([...chunks.values()].filter((chunk) => chunk.isEntry).map((chunk) => chunk.fileName));
    for (const name of initial) for (const imported of chunks.get(name)!.imports) initial.add(imported);
    return [...initial].reduce((sum, name) => sum + gzipSync(chunks.get(name)!.code).byteLength, 0) / 1024;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The chunks of the languages with a sentence-rules table (`src/text/languages/<lang>.ts`), and of the map of them (`loaders.ts`). */
const LANGUAGE_CHUNK = /^[a-z]{2,3}$/;
const LANGUAGE_MAP_CHUNK = 'loaders';

/**
 * The lazy chunks in a note, gzipped KB each, largest first: the session features a page
 * loads when a session uses them (`stall-fallback 0.8, metrics 0.8, reconnect 0.4`), then the languages
 * (the map of their chunks, loaded first, then `de 0.8, es 0.4, ...`); '' when none.
 */
function lazyNote(load: PageLoad): string {
  if (load.lazy.length === 0) return '';
  const sizes = load.lazy.map(({ name, bytes }) => [name, gzipSync(bytes).byteLength / 1024] as const).sort((a, b) => b[1] - a[1]);
  const list = (chunks: typeof sizes) => chunks.map(([name, kb]) => `${name} ${kb.toFixed(1)}`).join(', ');
  const isLanguage = (name: string) => LANGUAGE_CHUNK.test(name) || name === LANGUAGE_MAP_CHUNK;
  const features = sizes.filter(([name]) => !isLanguage(name));
  const map = sizes.find(([name]) => name === LANGUAGE_MAP_CHUNK);
  const languages = sizes.filter(([name]) => LANGUAGE_CHUNK.test(name));
  const parts = [
    features.length > 0 ? `a chunk a session feature, loaded when a session uses it: ${list(features)}` : '',
    languages.length > 0 ? `one chunk a language other than English${map ? ` (after the map of them, ${map[1].toFixed(1)})` : ''}: ${list(languages)}` : '',
  ].filter((part) => part !== '');
  return `; loaded on demand, gzipped KB: ${parts.join('; ')}`;
}

const SPEAK = "export { speak } from './src/live/index.ts';";
/** The budget rows: name, entry module, and the goal of issue 33 where it set one (KB gzipped). */
const PAGES: ReadonlyArray<readonly [string, string, number?]> = [
  ['speak (rxvoice/live)', SPEAK, 22],
  ['speak + segmentSentences + concatSegments', `${SPEAK}\nexport { segmentSentences, concatSegments } from './src/operators/index.ts';`, 25],
  ['speak + segmentSentences + speakableText', `${SPEAK}\nexport { segmentSentences, speakableText } from './src/operators/index.ts';`],
  ['all of rxvoice/live + rxvoice/operators', "export * from './src/live/index.ts';\nexport * from './src/operators/index.ts';"],
];

/** What the captions example imports (`speak`, `rxvoice/web`, two operators), as an entry module. */
export const CAPTIONS_PAGE = [
  SPEAK,
  "export { toWebAudio, playbackState, wordsAsHeard } from './src/web/index.ts';",
  "export { segmentSentences, speakableText } from './src/operators/index.ts';",
].join('\n');
const FLOOR = [
  "export { Observable, Subject, defer, from, timer, asyncScheduler, filter, map, scan, share, startWith, merge, concatMap } from 'rxjs';",
  "import * as z from 'zod/mini';",
  "export const frame = z.discriminatedUnion('type', [z.object({ type: z.literal('a'), n: z.optional(z.int().check(z.minimum(0))), s: z.string() }), z.object({ type: z.literal('b'), r: z.record(z.string(), z.unknown()) })]);",
  "export const options = z.object({ e: z._default(z.enum(['x', 'y']), 'x'), b: z._default(z.boolean(), false), n: z.nullish(z.number().check(z.maximum(4))), u: z.union([z.string().check(z.regex(/^a$/)), z.int()]), f: z.custom((v) => typeof v === 'function') });",
].join('\n');

export async function run(): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  for (const [name, contents, goal] of PAGES) {
    const load = await pageLoad(contents);
    const kb = gzipKb(load.initial);
    const verdict = (kb <= BUNDLE_BUDGET_KB ? 'within budget' : 'OVER BUDGET') + (goal === undefined ? '' : `, ${kb <= goal ? 'at' : 'above'} the goal of ${goal} KB`);
    const oneFile = await oneFileKb(contents);
    const vite = await viteKb(contents);
    rows.push(
      row(
        `browser bundle: ${name}, gzipped`,
        kb,
        BUNDLE_BUDGET_KB,
        'KB',
        `${verdict} (peer column = the budget); esbuild, minified, code splitting: what a page speaking English loads at start (${oneFile.toFixed(1)} KB as one file without splitting; ${vite.toFixed(1)} KB with Vite ${viteVersion}'s defaults)${lazyNote(load)}; largest parts, KB minified before gzip: ${await composition(load)}`,
        'lower',
      ),
    );
  }
  rows.push(
    row(
      'browser bundle: captions page (speak + rxvoice/web + 2 operators), gzipped',
      await gzippedKb(CAPTIONS_PAGE),
      await gzippedKb(FLOOR),
      'KB',
      'peer: rxjs (same operators) + zod/mini (same schema kinds) alone, same bundler (code splitting, what loads at start)',
      'lower',
    ),
  );
  return rows;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const r of await run()) console.log(r);
}
