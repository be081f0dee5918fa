/**
 * The TypeScript blocks of the README, the guides under docs/ and the JSDoc in src/, read
 * without building the package: there are blocks to check and to run (package.test.ts
 * type-checks and runs them against the packed package), and the README's Entry points
 * table names every export of the package its blocks import.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ENTRIES, ROOT, jsdocBlocks, readmeBlocks } from './helpers.js';

describe('the README', () => {
  it('names in its Entry points table every export of the package its blocks import', () => {
    const text = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const table = text.slice(text.search(/^#{2,3} Entry points$/m));
    const rows = new Map(
      [...table.matchAll(/^\| `([^`]+)` \|(.*)\|[^|]*\|$/gm)].map((m) => [m[1] as string, m[2] as string]),
    );
    expect([...rows.keys()].sort()).toEqual([...ENTRIES].sort());
    const missing: string[] = [];
    const seen = new Set<string>();
    for (const block of readmeBlocks()) {
      for (const m of block.code.matchAll(/import\s*(?:type\s*)?\{([^}]*)\}\s*from\s*'([^']+)'/g)) {
        const entry = m[2] as string;
        if (!ENTRIES.includes(entry)) continue;
        for (const spec of (m[1] as string).split(',')) {
          const name = spec.trim().replace(/^type\s+/, '').split(/\s+as\s+/)[0]!;
          if (name) seen.add(name);
          if (name && !rows.get(entry)!.includes(`\`${name}`)) missing.push(`${block.origin}: ${name} from ${entry}`);
        }
      }
    }
    // control: the imports were read (these two are used by the Quick start and the HTTP guide)
    expect([...seen]).toEqual(expect.arrayContaining(['startEmulator', 'taskResult']));
    expect(missing).toEqual([]);
  });
});

describe('the blocks package.test.ts checks', () => {
  it('finds TypeScript blocks to check in the README and in the JSDoc', () => {
    expect(readmeBlocks().length).toBeGreaterThan(3);
    expect(jsdocBlocks().length).toBeGreaterThan(10);
  });

  it('finds README blocks marked runnable', () => {
    expect(readmeBlocks().filter((b) => b.runnable).length).toBeGreaterThan(3);
  });
});
