/**
 * A page's browser bundle, built here as a page's bundler builds it (esbuild, browser
 * platform, ESM, code splitting) into a temporary directory, and its start file imported in
 * Node: what the page loads at start and the chunks it fetches later, for the suites that
 * check what a browser page loads (test/live/features-page, test/text/language-tables).
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The built page: its directory (remove it after), its start file and that file's exports. */
export interface PageBundle<Page> {
  dir: string;
  startFile: string;
  page: Page;
}

/** Bundles `lines` (the page's module, paths relative to the repository root) and imports its start file. */
export async function bundlePage<Page>(lines: string[]): Promise<PageBundle<Page>> {
  const dir = await mkdtemp(join(tmpdir(), 'rxvoice-page-'));
  const { metafile } = await build({
    stdin: { contents: lines.join('\n'), resolveDir: ROOT, loader: 'ts', sourcefile: 'page.ts' },
    bundle: true,
    platform: 'browser',
    format: 'esm',
    splitting: true,
    outdir: dir,
    metafile: true,
    logLevel: 'silent',
  });
  const entry = Object.entries(metafile.outputs).find(([, output]) => output.entryPoint === 'page.ts')![0];
  const startFile = join(dir, entry.replace(/^.*\//, ''));
  return { dir, startFile, page: (await import(pathToFileURL(startFile).href)) as Page };
}
