/** One row of a side-by-side benchmark: our throughput against a peer library's. */
export interface BenchRow {
  name: string;
  ours: number;
  peer: number;
  unit: string;
  /** ours / peer (higher is better for throughput units). */
  ratio: number;
  note?: string;
  /** Which way is better for this unit (additive; the table prints it after the ratio). */
  better?: 'lower' | 'higher';
}
