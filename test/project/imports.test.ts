/**
 * The import graph of `src/`: no file imports itself back through others, and the folders'
 * imports point down the layers of DESIGN.md (the folders' graph has no cycle; `core` imports
 * no other folder; the emulator imports no client code and the client none of the emulator;
 * nothing imports the CLI).
 *
 * Every import counts, type-only ones too (`import type`, `export type ... from`, `import()`
 * with a literal path): a cycle of types alone is still two files that cannot be read, moved
 * or loaded one without the other. The graph is read twice, as Node resolves it and as a
 * browser bundle does (package.json `"browser"` swaps files). A control runs the cycle finder
 * on a graph with a known cycle, so a cycle would be seen.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SRC = join(ROOT, 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

/** The relative module specifiers a file names: imports, re-exports and `import()` of a literal, type-only ones included. */
function specifiersOf(path: string): string[] {
  const source = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      found.push(node.moduleSpecifier.text);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [argument] = node.arguments;
      if (argument && ts.isStringLiteral(argument)) found.push(argument.text);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      found.push(node.argument.literal.text); // `typeof import('./x.js')`
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found.filter((specifier) => specifier.startsWith('.'));
}

/** File -> the files it imports (paths relative to the root), with package.json `"browser"`'s swaps applied when given. */
function importGraph(swaps: Record<string, string> = {}): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const path of sourceFiles(SRC)) {
    const from = relative(ROOT, path);
    const targets = specifiersOf(path).map((specifier) => {
      const target = relative(ROOT, resolve(dirname(path), specifier)).replace(/\.js$/, '.ts');
      return swaps[target] ?? target;
    });
    graph.set(from, [...new Set(targets)]);
  }
  return graph;
}

/** The strongly connected components of more than one node, or of one node importing itself (Tarjan). */
export function cyclesOf(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const connect = (node: string): void => {
    index.set(node, next);
    low.set(node, next);
    next++;
    stack.push(node);
    onStack.add(node);
    for (const to of graph.get(node) ?? []) {
      if (!index.has(to)) {
        connect(to);
        low.set(node, Math.min(low.get(node)!, low.get(to)!));
      } else if (onStack.has(to)) {
        low.set(node, Math.min(low.get(node)!, index.get(to)!));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || (graph.get(node) ?? []).includes(node)) cycles.push(component.sort());
  };
  for (const node of graph.keys()) if (!index.has(node)) connect(node);
  return cycles;
}

/** `src/live/ledger.ts` -> `live`; `src/index.ts` -> `index`. */
function folderOf(file: string): string {
  const [, first = ''] = file.split('/');
  return first.endsWith('.ts') ? first.slice(0, -3) : first;
}

function folderGraph(files: ReadonlyMap<string, readonly string[]>): Map<string, string[]> {
  const folders = new Map<string, Set<string>>();
  for (const [file, targets] of files) {
    const from = folderOf(file);
    const set = folders.get(from) ?? new Set<string>();
    for (const target of targets) if (folderOf(target) !== from) set.add(folderOf(target));
    folders.set(from, set);
  }
  return new Map([...folders].map(([folder, set]) => [folder, [...set]]));
}

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { browser?: Record<string, string> };
/** package.json `"browser"`'s swaps of source files (`src/live/node-socket.ts` -> `src/live/browser-socket.ts`). */
const BROWSER_SWAPS = Object.fromEntries(
  Object.entries(pkg.browser ?? {})
    .filter(([from]) => from.startsWith('./src/'))
    .map(([from, to]) => [from.slice(2).replace(/\.js$/, '.ts'), to.slice(2)]),
);

describe('the import graph of src/', () => {
  const node = importGraph();

  it('reads the imports it should (control: known edges, a type-only one and an import() among them)', () => {
    expect(node.size).toBeGreaterThan(200);
    expect(node.get('src/live/live-session.ts')).toContain('src/live/ledger.ts');
    expect(node.get('src/live/live-session.ts')).toContain('src/live/reconnect.ts'); // `import type`
    expect(node.get('src/live/features.ts')).toContain('src/live/reconnect.ts'); // `import()`
    expect(node.get('src/text/languages/loaders.ts')).toContain('src/text/languages/de.ts'); // `import()`
    for (const targets of node.values()) for (const target of targets) expect(node.has(target), target).toBe(true);
  });

  it('finds a cycle where there is one (control)', () => {
    const graph = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a', 'd']],
      ['d', []],
      ['e', ['e']],
    ]);
    expect(cyclesOf(graph)).toEqual([['a', 'b', 'c'], ['e']]);
    expect(cyclesOf(new Map([['a', ['b']], ['b', []]]))).toEqual([]);
  });

  it('has no cycle between files, as Node resolves them', () => {
    expect(cyclesOf(node)).toEqual([]);
  });

  it('has no cycle between files, as a browser bundle resolves them ("browser" swaps)', () => {
    expect(Object.keys(BROWSER_SWAPS).length).toBeGreaterThan(0);
    const browser = importGraph(BROWSER_SWAPS);
    expect(browser.get('src/live/options.ts')).toContain('src/live/browser-socket.ts');
    expect(cyclesOf(browser)).toEqual([]);
  });

  it('has no cycle between folders', () => {
    expect(cyclesOf(folderGraph(node))).toEqual([]);
  });

  it('keeps the rules of DESIGN.md: core at the bottom, the emulator and the client apart, the CLI on top', () => {
    const folders = folderGraph(node);
    expect(folders.get('core')).toEqual([]);
    expect(folders.get('emulator')).not.toContain('client');
    expect(folders.get('client')).not.toContain('emulator');
    for (const [folder, targets] of folders) if (folder !== 'cli') expect(targets, folder).not.toContain('cli');
    expect(folders.get('live')).toContain('text'); // control: a folder's imports are read
  });
});
