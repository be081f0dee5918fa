/**
 * The closing line (`test/setup/summary-reporter.ts`) tells the truth: vitest runs the
 * fixture files of test/fixtures/summary in a child process with only that reporter, and
 * the line counts every failure that makes the run exit 1, including those outside a
 * test (a file that fails to load, a failing afterAll of a file or a suite, an unhandled
 * rejection), and names the run's seed.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CONFIG = fileURLToPath(new URL('./fixtures/summary/vitest.config.ts', import.meta.url));
const VITEST = fileURLToPath(new URL('../node_modules/vitest/vitest.mjs', import.meta.url));

function runFixtures(filter: string[], seed?: string): Promise<{ code: number | null; lines: string[] }> {
  const env: NodeJS.ProcessEnv = { ...process.env, CI: '' };
  delete env['RXVOICE_SEED'];
  if (seed !== undefined) env['RXVOICE_SEED'] = seed;
  delete env['NODE_V8_COVERAGE'];
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [VITEST, 'run', '--config', CONFIG, ...filter], { cwd: ROOT, env, timeout: 60_000 }, (error, stdout) => {
      if (error && typeof error.code !== 'number') return reject(error);
      resolve({ code: error ? (error.code as number) : 0, lines: stdout.split('\n').filter((line) => line.trim() !== '') });
    });
  });
}

describe.concurrent('summary reporter: the closing line', { timeout: 60_000 }, () => {
  it.each([
    ['passing', 0, 'vitest: 2 passed, 0 failed, 1 skipped'],
    ['failing', 1, 'vitest: 0 passed, 1 failed, 0 skipped'],
    ['after-all', 1, 'vitest: 1 passed, 1 failed, 0 skipped'],
    ['suite-hook', 1, 'vitest: 1 passed, 1 failed, 0 skipped'],
    ['load-error', 1, 'vitest: 0 passed, 1 failed, 0 skipped'],
    ['unhandled', 1, 'vitest: 1 passed, 1 failed, 0 skipped'],
  ])('%s.fixture.ts: exit %i, "%s"', async (name, exitCode, line) => {
    const run = await runFixtures([`${name}.fixture`]);
    expect(run.code).toBe(exitCode);
    expect(run.lines.at(-1)).toBe(line);
  });

  it('all fixtures at once: every failure counted, the seed named', async () => {
    const run = await runFixtures([], '4242');
    expect(run.code).toBe(1);
    expect(run.lines.at(-1)).toBe('vitest: 5 passed, 5 failed, 1 skipped (seed 4242)');
  });
});
