/**
 * docs/api.md is generated from the sources (scripts/api-md.ts) and committed: it must be
 * what the script makes of the current sources, name every entry and every runtime export,
 * and give createClient's options their type, default and meaning.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { API_MD_PATH, renderApiMd } from '../../scripts/api-md.js';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { exports: Record<string, { types?: string }> };

describe('docs/api.md', () => {
  const rendered = renderApiMd();

  it('is what scripts/api-md.ts makes of the sources (run npx tsx scripts/api-md.ts after changing an export or its TSDoc)', () => {
    expect(readFileSync(API_MD_PATH, 'utf8')).toBe(rendered);
  });

  it('names every entry and every runtime export of each', { timeout: 120_000 }, async () => {
    for (const [key, conditions] of Object.entries(pkg.exports)) {
      const specifier = key === '.' ? 'rxvoice' : `rxvoice/${key.slice(2)}`;
      const section = rendered.split(`## \`${specifier}\``)[1]?.split('\n## ')[0];
      expect(section, specifier).toBeDefined();
      const source = new URL(`../../${conditions.types!.replace('./dist/', 'src/').replace(/\.d\.ts$/, '.ts')}`, import.meta.url).href;
      // framework entries load their framework lazily or at import; their names are read from the types alone
      const names = await import(source).then((m: Record<string, unknown>) => Object.keys(m), () => []);
      for (const name of names) expect(section, `${specifier}: ${name}`).toContain(`| \`${name}\` |`);
    }
  });

  it("gives createClient's options a type, a default and a meaning", () => {
    const table = rendered.split('### `ClientOptions`')[1]!.split('\n### ')[0]!;
    const row = (name: string): string[] => (table.split('\n').find((line) => line.startsWith(`| \`${name}?\``)) ?? '').split(' | ');
    expect(row('baseUrl')[2]).toContain('https://client.camb.ai/apis');
    expect(row('apiKey')[2]).toContain('CAMB_API_KEY');
    expect(row('liveUrl')[3]).toContain('live speech WebSocket');
    expect(row('timeoutMs')[1]).toBe('`number`');
    expect(row('timeoutMs')[2]).toBe('60000');
    // every member has a meaning
    const empty = table.split('\n').filter((line) => line.startsWith('| `') && line.trimEnd().endsWith('|  |'));
    expect(empty).toEqual([]);
  });
});
