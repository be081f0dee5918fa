import { defineConfig } from 'vitest/config';
import { isCI } from './test/setup/tools.js';

// One seed per run: fresh unless RXVOICE_SEED is given (to replay a run). Every test file
// reads it (test/setup/seed.ts makes it fast-check's global seed); the closing line prints it.
const seed = process.env['RXVOICE_SEED'] || String(Math.floor(Math.random() * 0x7fffffff));
process.env['RXVOICE_SEED'] = seed;

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    reporters: ['default', './test/setup/summary-reporter.ts'],
    // secret-scan fails a test file that prints an API key holding the SECRET-canary marker;
    // seed makes the run's seed fast-check's global seed.
    setupFiles: ['test/setup/secret-scan.ts', 'test/setup/seed.ts'],
    env: { RXVOICE_SEED: seed },
    coverage: {
      provider: 'v8',
      include: ['src/**/*.ts'],
      // Per file in CI (which lines of which file lost coverage), the summary everywhere.
      reporter: isCI() ? ['text', 'text-summary'] : ['text-summary'],
    },
  },
});
