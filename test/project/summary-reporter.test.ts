/**
 * The closing line (`test/setup/summary-reporter.ts`) tells the truth: vitest runs the
 * fixture files of test/fixtures/summary in a child process with only that reporter, and
 * the line counts every failure that makes the run exit 1, including those outside a
 * test (a file that fails to load, a failing afterAll of a file or a suite, an unhandled
 * rejection, coverage under its thresholds), and names the run's seed.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { coverageReporters } from '../setup/coverage-reporters.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CONFIG = fileURLToPath(new URL('../fixtures/summary/vitest.config.ts', import.meta.url));
const VITEST = fileURLToPath(new URL('../../node_modules/vitest/vitest.mjs', import.meta.url));

function runFixtures(filter: string[], seed?: string, extra: string[] = []): Promise<{ code: number | null; lines: string[]; stderr: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, CI: '' };
  delete env['RXVOICE_SEED'];
  if (seed !== undefined) env['RXVOICE_SEED'] = seed;
  delete env['NODE_V8_COVERAGE'];
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [VITEST, 'run', '--config', CONFIG, ...extra, ...filter], { cwd: ROOT, env, timeout: 60_000 }, (error, stdout, stderr) => {
      if (error && typeof error.code !== 'number') return reject(error);
      resolve({ code: error ? (error.code as number) : 0, lines: stdout.split('\n').filter((line) => line.trim() !== ''), stderr });
    });
  });
}

describe.concurrent('summary reporter: the closing line', { timeout: 60_000 }, () => {
  it.each([
    ['passing', 0, [2, 0, 1]],
    ['failing', 1, [0, 1, 0]],
    ['after-all', 1, [1, 1, 0]],
    ['suite-hook', 1, [1, 1, 0]],
    ['load-error', 1, [0, 1, 0]],
    ['unhandled', 1, [1, 1, 0]],
  ] as const)(
    // The title names the counts only as numbers: a title holding the closing line itself would
    // print a second closing-line-shaped text into the CI log.
    '%s.fixture.ts: exit %i, counts (passed, failed, skipped) %j',
    async (name, exitCode, [passed, failed, skipped]) => {
      const run = await runFixtures([`${name}.fixture`]);
      expect(run.code).toBe(exitCode);
      expect(run.lines.at(-1)).toBe(`vitest: ${passed} passed, ${failed} failed, ${skipped} skipped`);
    },
  );

  it('all fixtures at once: every failure counted, the seed named', async () => {
    const run = await runFixtures([], '4242');
    expect(run.code).toBe(1);
    expect(run.lines.at(-1)).toBe('vitest: 6 passed, 5 failed, 1 skipped');
    // The seed on its own line just before, so the closing line stays exactly `N passed, N failed, N skipped`.
    expect(run.lines.at(-2)).toBe('vitest: seed 4242 (replay with RXVOICE_SEED=4242)');
  });

  // Each run its own report directory: concurrent runs would share the fixtures' one.
  const reportDirs: string[] = [];
  afterAll(() => {
    for (const dir of reportDirs) rmSync(dir, { recursive: true, force: true });
  });
  const coverage = (branches: number, reporters = ['text-summary']): string[] => {
    const dir = mkdtempSync(join(tmpdir(), 'rxvoice-summary-coverage-'));
    reportDirs.push(dir);
    const reporterArgs = reporters.map((reporter) => `--coverage.reporter=${reporter}`);
    return ['--coverage.enabled', `--coverage.reportsDirectory=${dir}`, '--coverage.include=covered.ts', ...reporterArgs, `--coverage.thresholds.branches=${branches}`];
  };
  // A line framed like pytest's closing session line (`=== 3 passed in 0.1s ===`).
  const pytestFrame = (line: string): boolean => /^=+ .+ =+$/.test(line.trim());

  it('coverage under its thresholds: exit 1, and the line says so after the coverage report', async () => {
    const run = await runFixtures(['coverage.fixture'], undefined, coverage(100));
    expect(run.code).toBe(1);
    expect(run.lines.some((line) => /^Branches\s+: 50% \( 1\/2 \)$/.test(line))).toBe(true);
    expect(run.lines.at(-1)).toBe('vitest: 1 passed, 1 failed, 0 skipped');
    expect(run.lines).toContain('vitest: coverage below its thresholds');
  });

  it('coverage at its thresholds (the control): exit 0, a plain line', async () => {
    const run = await runFixtures(['coverage.fixture'], undefined, coverage(50));
    expect(run.code, run.stderr).toBe(0);
    expect(run.lines.at(-1)).toBe('vitest: 1 passed, 0 failed, 0 skipped');
  });

  it("CI's coverage report frames nothing like another runner's closing line (control: text-summary does)", async () => {
    const ci = await runFixtures(['coverage.fixture'], undefined, coverage(50, coverageReporters(true)));
    expect(ci.code, ci.stderr).toBe(0);
    expect(ci.lines.some((line) => /^All files\s*\|/.test(line.trim()))).toBe(true);
    expect(ci.lines.filter(pytestFrame)).toEqual([]);
    expect(ci.lines.filter((line) => /\d+ passed, \d+ failed/.test(line))).toEqual(['vitest: 1 passed, 0 failed, 0 skipped']);
    const summary = await runFixtures(['coverage.fixture'], undefined, coverage(50, ['text-summary']));
    expect(summary.lines.filter(pytestFrame)).toEqual([expect.stringContaining('Coverage summary')]);
  });
});
