/**
 * Prints one plain closing line, `vitest: N passed, N failed, N skipped`, as the last
 * line of the run (after the coverage summary when coverage is on), so CI logs carry
 * a runner-neutral count of what ran.
 */
import type { Reporter, TestModule, Vitest } from 'vitest/node';

export default class SummaryReporter implements Reporter {
  private coverageEnabled = false;
  private line: string | undefined;

  onInit(vitest: Vitest): void {
    this.coverageEnabled = vitest.config.coverage.enabled;
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failed++;
        else skipped++;
      }
      // A file that failed to load has no tests: count it as a failure.
      if (module.state() === 'failed' && module.children.size === 0) failed++;
    }
    this.line = `\nvitest: ${passed} passed, ${failed} failed, ${skipped} skipped\n`;
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
