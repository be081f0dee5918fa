/**
 * The coverage reporters of a run. In CI only the per-file `text` table (its `All files` row
 * is the summary): istanbul's `text-summary` frames its figures in
 * `=== Coverage summary ===`, a line shaped like pytest's closing session line (`=== 3 passed
 * in 0.1s ===`), and a CI log reader that looks for a runner's closing line may read that frame
 * as a run that executed no test. The CI log's only closing line is the summary reporter's
 * `vitest: N passed, N failed, N skipped` (test/project/summary-reporter.test.ts checks both).
 */
export function coverageReporters(ci: boolean): string[] {
  return ci ? ['text'] : ['text-summary'];
}
