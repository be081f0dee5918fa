/**
 * The house report: files in `src/` over a line budget and functions over a length budget,
 * measured with the TypeScript parser (a function's first to last line, for every function,
 * method, accessor, constructor and arrow function with a body).
 *
 *   npx tsx scripts/house-report.ts [--file-lines 500] [--function-lines 120]
 *
 * Prints one line per file or function over its budget, longest first; exits 0 (a report,
 * not a gate).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

const argv = process.argv.slice(2);
const option = (name: string, fallback: number): number => {
  const at = argv.indexOf(name);
  return at >= 0 ? Number(argv[at + 1]) : fallback;
};
const FILE_LINES = option('--file-lines', 500);
const FUNCTION_LINES = option('--function-lines', 120);
const ROOT = join(import.meta.dirname, '..');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

function nameOf(node: ts.Node, source: ts.SourceFile): string {
  const named = node as ts.Node & { name?: ts.Node };
  if (named.name) return named.name.getText(source);
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  const parent = node.parent;
  if (parent && ts.isVariableDeclaration(parent)) return parent.name.getText(source);
  if (parent && ts.isPropertyAssignment(parent)) return parent.name.getText(source);
  return '(anonymous)';
}

const files: Array<[string, number]> = [];
const functions: Array<[string, number]> = [];
for (const path of sourceFiles(join(ROOT, 'src'))) {
  const text = readFileSync(path, 'utf8');
  const file = relative(ROOT, path);
  const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
  if (lines > FILE_LINES) files.push([file, lines]);
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && (node as ts.FunctionLikeDeclaration).body) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const length = last - first + 1;
      if (length > FUNCTION_LINES) functions.push([`${file}:${first + 1} ${nameOf(node, source)}`, length]);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
}
const byLength = (a: [string, number], b: [string, number]) => b[1] - a[1];
console.log(`files in src/ over ${FILE_LINES} lines: ${files.length}`);
for (const [file, lines] of files.sort(byLength)) console.log(`  ${lines}  ${file}`);
console.log(`functions over ${FUNCTION_LINES} lines: ${functions.length}`);
for (const [fn, lines] of functions.sort(byLength)) console.log(`  ${lines}  ${fn}`);
