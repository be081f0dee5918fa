/**
 * bin/rxvoice.js runs a dist/ build when one exists, the source otherwise, and always the
 * source with RXVOICE_FROM_SOURCE=1 (what the tests set, so a stale build is never what
 * they test). Checked on a copy of the launcher next to a fake stale build.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'rxvoice-launcher-'));
  mkdirSync(join(dir, 'bin'));
  mkdirSync(join(dir, 'dist/cli'), { recursive: true });
  copyFileSync(join(ROOT, 'bin/rxvoice.js'), join(dir, 'bin/rxvoice.js'));
  symlinkSync(join(ROOT, 'src'), join(dir, 'src'));
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  writeFileSync(join(dir, 'package.json'), '{"type":"module"}');
  writeFileSync(join(dir, 'dist/cli/main.js'), "export async function run() { console.log('stale build'); }\n");
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function launch(env: NodeJS.ProcessEnv): Promise<{ stdout: string; code: number }> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [join(dir, 'bin/rxvoice.js'), '--help'], { env: { PATH: process.env['PATH'] ?? '', ...env }, timeout: 30_000 }, (error, stdout) => {
      if (error && typeof error.code !== 'number') return reject(error);
      resolve({ stdout, code: error ? (error.code as number) : 0 });
    });
  });
}

describe('bin/rxvoice.js', { timeout: 60_000 }, () => {
  it('with a build present: runs the build (the control), or the source under RXVOICE_FROM_SOURCE=1', async () => {
    const built = await launch({});
    expect(built.stdout.trim()).toBe('stale build');
    const source = await launch({ RXVOICE_FROM_SOURCE: '1' });
    expect(source.code).toBe(0);
    expect(source.stdout).not.toContain('stale build');
    expect(source.stdout).toMatch(/^rxvoice: speech and localization/);
  });
});
