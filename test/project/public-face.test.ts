/**
 * The public face: every entry of package.json `exports` names what it exports, each public
 * symbol has exactly one entry, and internals are exported by none.
 *
 * Names come from the sources (the `dist/` paths of `exports` mapped to `src/`): values
 * from `import()` of the entry, values and types from the TypeScript checker
 * (`getExportsOfModule` on the entry's source file). A control runs the same collector on a
 * fixture pair of modules that share names, so a duplicate would be seen.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  name: string;
  exports: Record<string, { import: string }>;
};

/** Helpers that stay inside the package, and the modules that define them. */
const INTERNALS = ['SpeechLedger', 'redact', 'liveSessionError', 'isLoopbackHost', 'batchSizes', 'loadBullmq'];
const INTERNAL_MODULES = ['src/live/ledger.ts', 'src/core/errors.ts', 'src/client/config.ts', 'src/client/shared.ts', 'src/batch/bullmq.ts'].map((p) => join(ROOT, p));

/** Each entry of `exports` as its specifier and its source file. */
const ENTRIES = Object.entries(pkg.exports).map(([key, conditions]) => ({
  specifier: key === '.' ? pkg.name : `${pkg.name}/${key.slice(2)}`,
  source: join(ROOT, conditions.import.replace(/^\.\/dist\//, 'src/').replace(/\.js$/, '.ts')),
}));

/** What a module exports, per the checker: its export names, and the declarations they resolve to. */
interface ModuleExports {
  names: string[];
  /** One key per exported symbol (declaring file and position, aliases followed), so a rename is still the same symbol. */
  declarations: string[];
}

/** Exports of each file (values and types), read by the TypeScript checker in one program. */
function exportsByChecker(files: readonly string[]): Map<string, ModuleExports> {
  const program = ts.createProgram([...files], {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    strict: true,
    skipLibCheck: true,
    noEmit: true,
    types: ['node'],
  });
  const checker = program.getTypeChecker();
  const out = new Map<string, ModuleExports>();
  for (const file of files) {
    const source = program.getSourceFile(file);
    const symbol = source && checker.getSymbolAtLocation(source);
    if (!symbol) throw new Error(`no module symbol for ${file}`);
    const exported = checker.getExportsOfModule(symbol);
    const declarations = exported.map((s) => {
      const target = s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s;
      const decl = target.declarations?.[0];
      return decl ? `${decl.getSourceFile().fileName.replace(ROOT, '')}:${decl.pos} (${target.getName()})` : target.getName();
    });
    out.set(file, { names: exported.map((s) => s.getName()), declarations });
  }
  return out;
}

/** Every key listed by two or more owners, with its owners. */
function duplicates(lists: ReadonlyMap<string, Iterable<string>>): Record<string, string[]> {
  const owners = new Map<string, string[]>();
  for (const [owner, list] of lists) {
    for (const key of new Set(list)) owners.set(key, [...(owners.get(key) ?? []), owner]);
  }
  return Object.fromEntries([...owners].filter(([, list]) => list.length > 1));
}

/** The entries and the internals' modules, checked in one program. */
const checked = exportsByChecker([...ENTRIES.map((e) => e.source), ...INTERNAL_MODULES]);
const ofEntry = (source: string): ModuleExports => checked.get(source) ?? { names: [], declarations: [] };

/** Per entry specifier: the checker's names plus the runtime's (a value the checker missed would still count). */
async function allNames(): Promise<Map<string, Set<string>>> {
  const out = new Map<string, Set<string>>();
  for (const entry of ENTRIES) {
    const runtime = Object.keys((await import(pathToFileURL(entry.source).href)) as object);
    out.set(entry.specifier, new Set([...ofEntry(entry.source).names, ...runtime]));
  }
  return out;
}

const fixtureDir = mkdtempSync(join(tmpdir(), 'rxvoice-face-'));
afterAll(() => rmSync(fixtureDir, { recursive: true, force: true }));

describe('public face', () => {
  it('control: the collector sees a value or a type exported by two modules, also under another name', () => {
    const a = join(fixtureDir, 'a.ts');
    const b = join(fixtureDir, 'b.ts');
    writeFileSync(a, 'export const shared = 1;\nexport interface SharedType { x: number }\nexport const onlyA = 2;\n');
    writeFileSync(
      b,
      "export { shared } from './a.js';\nexport type { SharedType } from './a.js';\nexport { onlyA as renamed } from './a.js';\nexport const onlyB = 3;\n",
    );
    const fixture = exportsByChecker([a, b]);
    const names = new Map([...fixture].map(([file, e]) => [file, e.names]));
    expect(Object.keys(duplicates(names)).sort()).toEqual(['SharedType', 'shared']);
    const declarations = new Map([...fixture].map(([file, e]) => [file, e.declarations]));
    expect(Object.keys(duplicates(declarations)).map((k) => k.replace(/^.*\(|\)$/g, '')).sort()).toEqual(['SharedType', 'onlyA', 'shared']);
  });

  it('covers every entry, each exporting something, types included', () => {
    expect(ENTRIES.length).toBe(Object.keys(pkg.exports).length);
    for (const entry of ENTRIES) expect(ofEntry(entry.source).names.length, entry.specifier).toBeGreaterThan(0);
    // type-only names are seen: rxvoice/live's options type, rxvoice's wire type
    const live = ENTRIES.find((e) => e.specifier === `${pkg.name}/live`);
    const root = ENTRIES.find((e) => e.specifier === pkg.name);
    expect(ofEntry(live?.source ?? '').names).toContain('SpeakOptions');
    expect(ofEntry(root?.source ?? '').names).toContain('Voice');
  });

  it('exports each name from exactly one entry', async () => {
    expect(duplicates(await allNames())).toEqual({});
  });

  it('exports each symbol from exactly one entry, under whatever name', () => {
    expect(duplicates(new Map(ENTRIES.map((e) => [e.specifier, ofEntry(e.source).declarations])))).toEqual({});
  });

  it('exports no internal helper', async () => {
    const names = await allNames();
    const leaked = [...names].flatMap(([entry, list]) => INTERNALS.filter((n) => list.has(n)).map((n) => `${entry}: ${n}`));
    expect(leaked).toEqual([]);
    // control: the internals exist under these names in their modules, so not finding them in an entry means something
    const defined = new Set(INTERNAL_MODULES.flatMap((m) => ofEntry(m).names));
    expect(INTERNALS.filter((n) => !defined.has(n))).toEqual([]);
  });

  it('no entry re-exports a module wholesale (export * / export type *)', () => {
    const wholesale = ENTRIES.filter((e) => /^\s*export\s+(type\s+)?\*/m.test(readFileSync(e.source, 'utf8'))).map((e) => e.specifier);
    expect(wholesale).toEqual([]);
  });
});
