/**
 * What a browser page downloads: rxvoice's browser entries bundled for the browser with
 * esbuild (minified, ES module, esbuild's default conditions, as a page's bundler
 * would: `rxjs` resolves to its ES5 build with `tslib`), gzipped, in KB (1024 bytes).
 *
 * Rows:
 * - budget rows (peer column = the 30 KB budget): `speak` alone; a page of `speak` with
 *   two operators (`segmentSentences` + `concatSegments`, and `segmentSentences` +
 *   `speakableText`); and every export of `rxvoice/live` and `rxvoice/operators` at once;
 * - the floor: the captions page (`speak`, `rxvoice/web`, two operators) against the
 *   libraries alone (`rxjs` with the same operators and `zod/mini` with the same schema
 *   kinds), so the ratio shows what rxvoice's own code adds.
 *
 * Run alone: `npx tsx bench/bundle.ts`.
 */
import { gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
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

/**
 * What a bundle is made of: its largest parts in minified KB (before gzip), packages by
 * name (`zod`, `rxjs`), rxvoice's modules by file, e.g. `session 12.0, abbreviations 10.8,
 * rxjs 9.5`.
 */
export async function composition(contents: string, parts = 8): Promise<string> {
  const result = await build({
    stdin: { contents, resolveDir: ROOT, loader: 'ts' },
    bundle: true,
    platform: 'browser',
    format: 'esm',
    minify: true,
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  const sizes = new Map<string, number>();
  for (const output of Object.values(result.metafile.outputs)) {
    for (const [file, { bytesInOutput }] of Object.entries(output.inputs)) {
      const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file)?.[1];
      const name = pkg ?? file.replace(/^.*\//, '').replace(/\.ts$/, '');
      sizes.set(name, (sizes.get(name) ?? 0) + bytesInOutput);
    }
  }
  return [...sizes]
    .filter(([, bytes]) => bytes > 0)
    .sort((a, b) => b[1] - a[1])
    .slice(0, parts)
    .map(([name, bytes]) => `${name} ${(bytes / 1024).toFixed(1)}`)
    .join(', ');
}

/** The gzipped size of the browser bundle of `contents`, in KB. */
export async function gzippedKb(contents: string): Promise<number> {
  return gzipSync(await browserBundle(contents)).byteLength / 1024;
}

const SPEAK = "export { speak } from './src/live/index.ts';";
const PAGES: ReadonlyArray<readonly [string, string]> = [
  ['speak (rxvoice/live)', SPEAK],
  ['speak + segmentSentences + concatSegments', `${SPEAK}\nexport { segmentSentences, concatSegments } from './src/operators/index.ts';`],
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
  for (const [name, contents] of PAGES) {
    const kb = await gzippedKb(contents);
    const verdict = kb <= BUNDLE_BUDGET_KB ? 'within budget' : 'OVER BUDGET';
    const parts = await composition(contents);
    rows.push(row(`browser bundle: ${name}, gzipped`, kb, BUNDLE_BUDGET_KB, 'KB', `${verdict} (peer column = the budget); esbuild, minified; largest parts, KB minified before gzip: ${parts}`, 'lower'));
  }
  rows.push(
    row(
      'browser bundle: captions page (speak + rxvoice/web + 2 operators), gzipped',
      await gzippedKb(CAPTIONS_PAGE),
      await gzippedKb(FLOOR),
      'KB',
      'peer: rxjs (same operators) + zod/mini (same schema kinds) alone, same bundler',
      'lower',
    ),
  );
  return rows;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const r of await run()) console.log(r);
}
