/**
 * Prints one plain closing line, exactly `vitest: N passed, N failed, N skipped`, as the
 * last line of the run (after the coverage report when coverage is on), so CI log readers
 * that look for `N passed, N failed` alone on a line find a runner-neutral count of what
 * ran. The line just before it names the seed that replays the run
 * (`vitest: seed S (replay with RXVOICE_SEED=S)`).
 *
 * `failed` counts failed tests plus every failure outside a test: a file that failed to
 * load, a `beforeAll` / `afterAll` error of a file or a suite (counted once per file or
 * suite), and each unhandled error of the run. Coverage under its thresholds (vitest then
 * exits 1 with every test passed) counts as one failure, and a line before the closing one
 * says `vitest: coverage below its thresholds`. So a run that exits 1 never closes with a
 * line that reads as a pass.
 */
import type { Reporter, SerializedError, TestModule, Vitest } from 'vitest/node';

export default class SummaryReporter implements Reporter {
  private coverageEnabled = false;
  private reportOnFailure = false;
  private counts: { passed: number; failed: number; skipped: number } | undefined;
  private exitCodeAtTestEnd: typeof process.exitCode;

  onInit(vitest: Vitest): void {
    this.coverageEnabled = vitest.config.coverage.enabled;
    this.reportOnFailure = vitest.config.coverage.reportOnFailure ?? false;
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<SerializedError> = []): void {
    let passed = 0;
    let failedTests = 0;
    let failedOutside = unhandledErrors.length;
    let skipped = 0;
    for (const module of testModules) {
      let failedHere = 0;
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failedHere++;
        else skipped++;
      }
      failedTests += failedHere;
      // Errors outside any test: a failed import, a failing beforeAll / afterAll.
      let outside = 0;
      for (const suite of [module, ...module.children.allSuites()]) {
        if (suite.errors().length > 0) outside++;
      }
      // A file vitest reports as failed always counts at least once.
      if (module.state() === 'failed' && failedHere + outside === 0) outside = 1;
      failedOutside += outside;
    }
    this.exitCodeAtTestEnd = process.exitCode;
    this.counts = { passed, failed: failedTests + failedOutside, skipped };
    // vitest reports coverage after this, unless a test failed (and reportOnFailure is off).
    const coverageFollows = this.coverageEnabled && (failedTests === 0 || this.reportOnFailure);
    if (!coverageFollows) this.flush();
  }

  /** Called by vitest after the coverage report and its threshold check (which sets exitCode 1 when coverage is too low). */
  onFinishedReportCoverage(): void {
    if (this.counts !== undefined && process.exitCode === 1 && this.exitCodeAtTestEnd !== 1) {
      this.flush('vitest: coverage below its thresholds');
      return;
    }
    this.flush();
  }

  private flush(note?: string): void {
    if (this.counts === undefined) return;
    const { passed, failed, skipped } = this.counts;
    const seed = process.env['RXVOICE_SEED'];
    const lines = [''];
    if (note !== undefined) lines.push(note);
    if (seed) lines.push(`vitest: seed ${seed} (replay with RXVOICE_SEED=${seed})`);
    // A coverage shortfall fails the run: it counts as a failure, so the line never reads as a pass.
    lines.push(`vitest: ${passed} passed, ${failed + (note === undefined ? 0 : 1)} failed, ${skipped} skipped`);
    process.stdout.write(lines.join('\n') + '\n');
    this.counts = undefined;
  }
}
