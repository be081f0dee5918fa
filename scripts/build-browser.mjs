// @ts-check
/**
 * The ready browser build: dist/browser/rxvoice.js, one ES module a page loads with no
 * bundler (`<script type="module">` and `import { speak, toWebAudio } from '/rxvoice.js'`).
 * It holds rxvoice/live (speak, its events and errors), rxvoice/web (toWebAudio,
 * wordsAsHeard, playbackState), the browser-safe operators, and the rxjs functions a
 * page needs to drive them. Part of `npm run build`; the relay guide of the README
 * serves it.
 */
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';

/** The package directory to build in (default: this checkout); `node scripts/build-browser.mjs DIR`. */
const root = process.argv[2] ? `${process.argv[2].replace(/\/+$/, '')}/` : fileURLToPath(new URL('..', import.meta.url));

/** What the page gets: every name of these entries, and a few rxjs functions. */
const entry = `
export * from './src/live/index.ts';
export * from './src/web/index.ts';
export { segmentSentences, speakableText, concatSegments, wordTimeline, wordsHeardBy } from './src/operators/index.ts';
export { of, from, fromEvent, Subject, BehaviorSubject, share, map, filter, takeUntil, tap, lastValueFrom, firstValueFrom } from 'rxjs';
`;

await build({
  stdin: { contents: entry, resolveDir: root, sourcefile: 'rxvoice-browser.ts', loader: 'ts' },
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: 'es2022',
  minify: true,
  sourcemap: false, // a map would point into node_modules, which the package does not ship
  legalComments: 'eof',
  outfile: `${root}dist/browser/rxvoice.js`,
  logLevel: 'warning',
});
