/**
 * docs/api.md, generated from the sources with the TypeScript compiler API: every entry
 * of package.json `exports`, every name it exports (its kind and the first sentence of its
 * TSDoc), and for every options type (a name ending in `Options` or `Settings`, and the
 * parameters objects of the entry's functions) each member with its type, its default and
 * one line of meaning, from the TSDoc on the member.
 *
 * `npx tsx scripts/api-md.ts` rewrites docs/api.md; `--check` exits 1 when the committed
 * file differs (test/project/api-md.test.ts runs the check in `npm test`).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** Where the reference is written. */
export const API_MD_PATH = `${ROOT}docs/api.md`;

interface PackageJson {
  name: string;
  exports: Record<string, { types?: string }>;
}

/** Entry specifier (`rxvoice/live`) and its source file. */
function entries(): Array<{ specifier: string; source: string }> {
  const pkg = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as PackageJson;
  return Object.entries(pkg.exports)
    .filter(([, conditions]) => conditions.types !== undefined)
    .map(([key, conditions]) => ({
      specifier: key === '.' ? pkg.name : `${pkg.name}/${key.replace(/^\.\//, '')}`,
      source: `${ROOT}${conditions.types!.replace(/^\.\/dist\//, 'src/').replace(/\.d\.ts$/, '.ts')}`,
    }));
}

/** One line of text: the first sentence (up to a period followed by a space or the end), table-safe. */
function oneLine(text: string): string {
  const flat = text.replace(/```[\s\S]*?```/g, '').replace(/\s+/g, ' ').trim();
  const sentence = /^(.*?[.!?])(\s|$)/.exec(flat)?.[1] ?? flat;
  return cell(sentence.length > 240 ? `${sentence.slice(0, 237)}...` : sentence);
}

const cell = (text: string): string => text.replace(/\|/g, '\\|').replace(/\s+/g, ' ').trim();

function docOf(symbol: ts.Symbol, checker: ts.TypeChecker): string {
  return ts.displayPartsToString(symbol.getDocumentationComment(checker));
}

/** A default named in the TSDoc: `@default x`, or "Default x" / "default x" in the text. */
function defaultOf(symbol: ts.Symbol, checker: ts.TypeChecker): string {
  const tag = symbol.getJsDocTags(checker).find((t) => t.name === 'default' || t.name === 'defaultValue');
  if (tag) return cell(ts.displayPartsToString(tag.text));
  const text = docOf(symbol, checker).replace(/\s+/g, ' ');
  // one of listed values marked as the default: `'host'` (default: ...)
  const marked = /('[^']+'|`[^`]+`) \(default[:)]/.exec(text);
  if (marked) return cell(marked[1]!);
  const match = /\b[Dd]efault(?:s to|:)?\s+((?:`[^`]*`|[^;.(]|\.\d)+)/.exec(text);
  if (!match) return '';
  let value = match[1]!.trim();
  // a default written inside brackets, `(default x): more`: the value ends at the bracket that closes it
  let depth = 0;
  for (let i = 0; i < value.length; i++) {
    const c = value[i];
    if (c === '`') i = Math.max(i, value.indexOf('`', i + 1));
    else if (c === '(') depth++;
    else if (c === ')' && --depth < 0) {
      value = value.slice(0, i);
      break;
    }
  }
  return cell(value.trim().replace(/[,:]$/, ''));
}

function kindOf(symbol: ts.Symbol): string {
  const flags = symbol.flags;
  if (flags & ts.SymbolFlags.Class) return 'class';
  if (flags & ts.SymbolFlags.Function) return 'function';
  if (flags & ts.SymbolFlags.Interface) return 'interface';
  if (flags & ts.SymbolFlags.TypeAlias) return 'type';
  if (flags & ts.SymbolFlags.Enum) return 'enum';
  if (flags & ts.SymbolFlags.Variable) return 'const';
  return 'value';
}

/** Members of an options type: name, type, default, meaning. */
function optionRows(type: ts.Type, checker: ts.TypeChecker, where: ts.Node): string[] {
  const rows: string[] = [];
  for (const property of checker.getPropertiesOfType(type)) {
    const propertyType = checker.getTypeOfSymbolAtLocation(property, where);
    const text = checker.typeToString(checker.getNonNullableType(propertyType), where, ts.TypeFormatFlags.NoTruncation | ts.TypeFormatFlags.UseAliasDefinedOutsideCurrentScope);
    const optional = property.flags & ts.SymbolFlags.Optional ? '?' : '';
    rows.push(`| \`${property.name}${optional}\` | \`${cell(text.length > 120 ? `${text.slice(0, 117)}...` : text)}\` | ${defaultOf(property, checker)} | ${oneLine(docOf(property, checker))} |`);
  }
  return rows;
}

const isOptionsName = (name: string): boolean => /(Options|Settings)$/.test(name) && !/^Resolved/.test(name);

/** The reference as Markdown. */
export function renderApiMd(): string {
  const list = entries();
  const program = ts.createProgram(
    list.map((e) => e.source),
    { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, strict: true, skipLibCheck: true, types: ['node'], lib: ['lib.es2023.d.ts', 'lib.dom.d.ts', 'lib.dom.iterable.d.ts'], noEmit: true },
  );
  const checker = program.getTypeChecker();
  const out: string[] = [
    '# API reference',
    '',
    '<!-- generated by scripts/api-md.ts from the sources; do not edit by hand (npx tsx scripts/api-md.ts) -->',
    '',
    'Every entry point of the package, every name it exports with the first sentence of its',
    'documentation, and every option of its options types: type, default, meaning. The',
    'HTML reference with every signature and example: `npm run docs` (TypeDoc).',
    '',
    list.map((e) => `[\`${e.specifier}\`](#${e.specifier.replace(/[^a-z0-9-]/g, '')})`).join(' · '),
    '',
  ];
  for (const entry of list) {
    const file = program.getSourceFile(entry.source);
    if (!file) throw new Error(`api-md: no source file ${entry.source}`);
    const moduleSymbol = checker.getSymbolAtLocation(file);
    if (!moduleSymbol) continue;
    const exports = checker.getExportsOfModule(moduleSymbol).sort((a, b) => a.name.localeCompare(b.name));
    out.push(`## \`${entry.specifier}\``, '', '| export | kind | what |', '|---|---|---|');
    const options: Array<{ name: string; rows: string[] }> = [];
    for (const exported of exports) {
      const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      out.push(`| \`${exported.name}\` | ${kindOf(symbol)} | ${oneLine(docOf(symbol, checker) || docOf(exported, checker))} |`);
      if (isOptionsName(exported.name) && symbol.flags & (ts.SymbolFlags.Interface | ts.SymbolFlags.TypeAlias)) {
        const type = checker.getDeclaredTypeOfSymbol(symbol);
        const rows = optionRows(type, checker, file);
        if (rows.length > 0) options.push({ name: exported.name, rows });
      }
    }
    out.push('');
    for (const { name, rows } of options) {
      out.push(`### \`${name}\``, '', '| option | type | default | meaning |', '|---|---|---|---|', ...rows, '');
    }
  }
  return `${out.join('\n').replace(/\n{3,}/g, '\n\n').trimEnd()}\n`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const text = renderApiMd();
  if (process.argv.includes('--check')) {
    if (readFileSync(API_MD_PATH, 'utf8') !== text) {
      console.error('docs/api.md differs from the sources: run npx tsx scripts/api-md.ts');
      process.exit(1);
    }
  } else {
    writeFileSync(API_MD_PATH, text);
    console.log(`docs/api.md: ${text.split('\n').length} lines`);
  }
}
