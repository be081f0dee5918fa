// @ts-check
/**
 * TypeDoc: the API reference (`npm run docs`, into docs/api/) of every entry of the
 * package's `exports`, read from package.json so that a new entry is documented (and
 * checked) without touching this file. Each entry's `types` file in dist/ maps to its
 * source in src/.
 */
import { readFileSync } from 'node:fs';

const pkg = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8'));

/** @type {string[]} */
const entryPoints = Object.values(pkg.exports).map((conditions) =>
  conditions.types.replace(/^\.\/dist\//, './src/').replace(/\.d\.ts$/, '.ts'),
);

/** @type {Partial<import('typedoc').TypeDocOptions>} */
const config = {
  entryPoints,
  tsconfig: './tsconfig.build.json',
  out: './docs/api',
  name: 'rxvoice',
  readme: './README.md',
  excludeInternal: true,
  disableSources: true,
  excludePrivate: true,
  // the check (test/docs.test.ts): every exported symbol documented; members are
  // documented where they carry meaning, not required one by one
  validation: { notExported: false, invalidLink: true, notDocumented: true },
  requiredToBeDocumented: ['Function', 'Class', 'Interface', 'TypeAlias', 'Variable', 'Enum', 'Namespace'],
};

export default config;
