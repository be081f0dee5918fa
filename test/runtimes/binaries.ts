/**
 * Where the runtime suite finds `bun`, `deno` and `workerd`: the dev dependencies of the
 * same names, never a system install. npm 11 does not run install scripts by default
 * (locally and in CI's `npm ci` alike), so a package's `.bin` launcher may be a stub; each
 * candidate is tried with `--version`, the launcher first, then the binary inside the
 * platform package (`@oven/bun-linux-x64*`, `@deno/<platform>`, `@cloudflare/workerd-*`).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** The runtimes the suite runs. */
export type Runtime = 'bun' | 'deno' | 'workerd';

const NODE_MODULES = resolve(import.meta.dirname, '../../node_modules');

/** Binaries inside the scoped platform packages whose names start with `prefix`. */
function platformBinaries(scope: string, prefix: string, inner: string[]): string[] {
  const dir = join(NODE_MODULES, scope);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => name.startsWith(prefix))
    .map((name) => join(dir, name, ...inner));
}

function candidates(runtime: Runtime): string[] {
  const bin = join(NODE_MODULES, '.bin', runtime);
  switch (runtime) {
    case 'bun':
      return [bin, join(NODE_MODULES, 'bun', 'bin', 'bun.exe'), ...platformBinaries('@oven', `bun-${process.platform}-${process.arch}`, ['bin', 'bun'])];
    case 'deno':
      return [bin, join(NODE_MODULES, 'deno', 'deno'), ...platformBinaries('@deno', `${process.platform}-${process.arch}`, ['deno'])];
    case 'workerd':
      return [bin, join(NODE_MODULES, 'workerd', 'bin', 'workerd'), ...platformBinaries('@cloudflare', `workerd-${process.platform}-`, ['bin', 'workerd'])];
  }
}

/** The first candidate that answers `--version` with exit 0, with its version line; undefined when none does. */
export function findRuntime(runtime: Runtime): { path: string; version: string } | undefined {
  for (const path of candidates(runtime)) {
    if (!existsSync(path)) continue;
    const run = spawnSync(path, ['--version'], { encoding: 'utf8', timeout: 20_000 });
    if (run.status === 0) return { path, version: (run.stdout.split('\n')[0] ?? '').trim() };
  }
  return undefined;
}
