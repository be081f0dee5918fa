/**
 * One random seed per test run (a vitest `setupFiles` entry). vitest.config.ts draws it
 * once, or takes it from `RXVOICE_SEED`, and hands it to every test file; here it becomes
 * fast-check's global seed, so every property of the run draws its cases from it, and
 * the soak plans its sessions from it. The closing summary line prints it; a failed
 * property prints it too (fast-check's `seed`). Replay a run: `RXVOICE_SEED=<seed> npx vitest run ...`.
 */
import fc from 'fast-check';

/** The seed given in `RXVOICE_SEED`, or `undefined` when none (or not an integer) is set. */
export function seedFromEnv(env: NodeJS.ProcessEnv = process.env): number | undefined {
  const text = env['RXVOICE_SEED'];
  if (text === undefined || text.trim() === '') return undefined;
  const seed = Number(text);
  if (!Number.isSafeInteger(seed)) throw new Error(`RXVOICE_SEED must be an integer, got ${JSON.stringify(text)}`);
  return seed;
}

/** A fresh 31-bit seed. */
export function freshSeed(): number {
  return Math.floor(Math.random() * 0x7fffffff);
}

/** The seed of this run (from vitest.config.ts through `RXVOICE_SEED`; fresh when a file runs without it). */
export const SEED = seedFromEnv() ?? freshSeed();

fc.configureGlobal({ seed: SEED });
