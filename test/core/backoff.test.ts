import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { backoffDelay } from '../../src/core/backoff.js';

describe('backoffDelay: the one backoff of HTTP retries and live reconnects', () => {
  it('doubles from baseDelayMs up to maxDelayMs; the jitter draws from the upper half', () => {
    const options = { baseDelayMs: 100, maxDelayMs: 1000 };
    expect([0, 1, 2, 3, 4, 5].map((n) => backoffDelay(n, options, () => 1))).toEqual([100, 200, 400, 800, 1000, 1000]);
    expect([0, 1, 2, 3, 4, 5].map((n) => backoffDelay(n, options, () => 0))).toEqual([50, 100, 200, 400, 500, 500]);
  });

  it('stays within [delay / 2, delay] for any attempt, bounds and draw', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 60 }),
        fc.integer({ min: 0, max: 10_000 }),
        fc.integer({ min: 0, max: 100_000 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (attempt, baseDelayMs, maxDelayMs, draw) => {
          const full = Math.min(maxDelayMs, baseDelayMs * 2 ** attempt);
          const delay = backoffDelay(attempt, { baseDelayMs, maxDelayMs }, () => draw);
          expect(delay).toBeGreaterThanOrEqual(full / 2);
          expect(delay).toBeLessThanOrEqual(full);
        },
      ),
    );
  });

  it('different draws give different delays (sessions dropped together spread out)', () => {
    const options = { baseDelayMs: 250, maxDelayMs: 5000 };
    const delays = new Set([0, 0.25, 0.5, 0.75].map((draw) => backoffDelay(3, options, () => draw)));
    expect(delays.size).toBe(4);
  });
});
