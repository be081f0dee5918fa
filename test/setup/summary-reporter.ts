/**
 * Prints one plain closing line, `vitest: N passed, N failed, N skipped (seed S)`, as the
 * last line of the run (after the coverage summary when coverage is on), so CI logs carry
 * a runner-neutral count of what ran and the seed that replays it (`RXVOICE_SEED=S`).
 *
 * `failed` counts failed tests plus every failure outside a test: a file that failed to
 * load, a `beforeAll` / `afterAll` error of a file or a suite (counted once per file or
 * suite), and each unhandled error of the run. So a run that exits 1 never closes with
 * `0 failed`.
 */
import type { Reporter, SerializedError, TestModule, Vitest } from 'vitest/node';

export default class SummaryReporter implements Reporter {
  private coverageEnabled = false;
  private line: string | undefined;

  onInit(vitest: Vitest): void {
    this.coverageEnabled = vitest.config.coverage.enabled;
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<SerializedError> = []): void {
    let passed = 0;
    let failed = unhandledErrors.length;
    let skipped = 0;
    for (const module of testModules) {
      let failedHere = 0;
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failedHere++;
        else skipped++;
      }
      // Errors outside any test: a failed import, a failing beforeAll / afterAll.
      for (const suite of [module, ...module.children.allSuites()]) {
        if (suite.errors().length > 0) failedHere++;
      }
      // A file vitest reports as failed always counts at least once.
      if (module.state() === 'failed' && failedHere === 0) failedHere = 1;
      failed += failedHere;
    }
    const seed = process.env['RXVOICE_SEED'];
    this.line = `\nvitest: ${passed} passed, ${failed} failed, ${skipped} skipped${seed ? ` (seed ${seed})` : ''}\n`;
    if (!this.coverageEnabled) this.flush();
  }

  onCoverage(): void {
    // Runs after the coverage summary is printed; print the count last.
    setImmediate(() => this.flush());
  }

  private flush(): void {
    if (this.line !== undefined) process.stdout.write(this.line);
    this.line = undefined;
  }
}
