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

/** What a run writes to `bench/results.json` (and `results.quick.json`, `results.partial.json`). */
export interface BenchResults {
  /** CPU, cores, memory, node, OS, load average at start and end, date. */
  machine: Record<string, unknown>;
  /** The machine in one line, as the README table quotes it. */
  machineLine: string;
  /** When the run started (ISO 8601). */
  date: string;
  quick: boolean;
  only: string[] | null;
  /** Whole run, s. */
  seconds: number;
  /** Each benchmark's elapsed time (skipped ones too), ms. */
  timingsMs: Record<string, number>;
  rows: (BenchRow & { benchmark?: string })[];
  skipped: { benchmark: string; reason: string }[];
}
