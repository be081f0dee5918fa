/**
 * The API reference: TypeDoc reads every entry of package.json `exports` (through
 * typedoc.config.mjs) and fails when an exported symbol (function, class, interface,
 * type, variable, enum, namespace) has no documentation, or a comment links to what the
 * reference does not contain. `npm run docs` writes the HTML to docs/api/.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const TYPEDOC = join(ROOT, 'node_modules', 'typedoc', 'bin', 'typedoc');
/** typedoc.config.mjs (a variable specifier: it is JavaScript, read for its options). */
const CONFIG = pathToFileURL(join(ROOT, 'typedoc.config.mjs')).href;

function typedoc(cwd: string, args: string[]): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [TYPEDOC, ...args], { cwd, encoding: 'utf8' }, (error, stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, output: `${stdout}${stderr}` });
    });
  });
}

const CHECK = ['--emit', 'none', '--treatValidationWarningsAsErrors', '--logLevel', 'Warn'];

const fixture = mkdtempSync(join(tmpdir(), 'rxvoice-docs-'));
afterAll(() => rmSync(fixture, { recursive: true, force: true }));

describe('API reference (TypeDoc)', () => {
  it('documents every entry of package.json exports', async () => {
    const config = (await import(CONFIG)) as { default: { entryPoints: string[] } };
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { exports: Record<string, { types: string }> };
    expect(config.default.entryPoints).toEqual(Object.values(pkg.exports).map((e) => e.types.replace('./dist/', './src/').replace(/\.d\.ts$/, '.ts')));
  });

  it('every exported symbol has documentation (the check, on the package)', { timeout: 240_000 }, async () => {
    const { code, output } = await typedoc(ROOT, CHECK);
    expect(output.replace(/\x1b\[[0-9;]*m/g, '').split('\n').filter((l) => /warning|error/i.test(l) && !/Found 0 errors and 0 warnings/.test(l))).toEqual([]);
    expect(code).toBe(0);
  });

  it('control: the same check fails on an export without documentation', { timeout: 120_000 }, async () => {
    writeFileSync(join(fixture, 'package.json'), JSON.stringify({ name: 'fixture', type: 'module' }));
    writeFileSync(join(fixture, 'tsconfig.json'), JSON.stringify({ compilerOptions: { strict: true, module: 'nodenext', target: 'es2022' }, include: ['index.ts'] }));
    writeFileSync(join(fixture, 'index.ts'), '/** Documented. */\nexport const a = 1;\nexport function undocumented(): number {\n  return 2;\n}\n');
    symlinkSync(join(ROOT, 'node_modules'), join(fixture, 'node_modules'), 'dir');
    // the package's own validation settings, as flags
    const { default: config } = (await import(CONFIG)) as {
      default: { validation: Record<string, boolean>; requiredToBeDocumented: string[] };
    };
    const { code, output } = await typedoc(fixture, [
      ...CHECK,
      '--entryPoints', 'index.ts',
      '--readme', 'none',
      '--disableSources',
      ...Object.entries(config.validation).flatMap(([name, on]) => (on ? [`--validation.${name}`] : [])),
      ...config.requiredToBeDocumented.flatMap((kind) => ['--requiredToBeDocumented', kind]),
    ]);
    expect(output).toMatch(/undocumented.*does not have any documentation/);
    expect(code).not.toBe(0);
  });
});
