/**
 * Prints one plain closing line, `vitest: N passed, N failed, N skipped (seed S)`, as the
 * last line of the run (after the coverage report when coverage is on), so CI logs carry
 * a runner-neutral count of what ran and the seed that replays it (`RXVOICE_SEED=S`).
 *
 * `failed` counts failed tests plus every failure outside a test: a file that failed to
 * load, a `beforeAll` / `afterAll` error of a file or a suite (counted once per file or
 * suite), and each unhandled error of the run. Coverage under its thresholds (vitest then
 * exits 1 with every test passed) adds `; coverage below its thresholds`. So a run that
 * exits 1 never closes with a line that reads as a pass.
 */
import type { Reporter, SerializedError, TestModule, Vitest } from 'vitest/node';

export default class SummaryReporter implements Reporter {
  private coverageEnabled = false;
  private reportOnFailure = false;
  private line: string | undefined;
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
    const seed = process.env['RXVOICE_SEED'];
    this.line = `\nvitest: ${passed} passed, ${failedTests + failedOutside} failed, ${skipped} skipped${seed ? ` (seed ${seed})` : ''}\n`;
    // vitest reports coverage after this, unless a test failed (and reportOnFailure is off).
    const coverageFollows = this.coverageEnabled && (failedTests === 0 || this.reportOnFailure);
    if (!coverageFollows) this.flush();
  }

  /** Called by vitest after the coverage report and its threshold check (which sets exitCode 1 when coverage is too low). */
  onFinishedReportCoverage(): void {
    if (this.line !== undefined && process.exitCode === 1 && this.exitCodeAtTestEnd !== 1) {
      this.line = this.line.replace(/\n$/, '; coverage below its thresholds\n');
    }
    this.flush();
  }

  private flush(): void {
    if (this.line !== undefined) process.stdout.write(this.line);
    this.line = undefined;
  }
}
