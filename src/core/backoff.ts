/**
 * The one backoff of rxvoice, shared by HTTP retries and live-session reconnects:
 * exponential from `baseDelayMs`, capped at `maxDelayMs`, with "equal jitter" (a
 * uniformly random delay in the upper half), so that many clients dropped at once do
 * not come back in lockstep.
 */

/** The parameters of {@link backoffDelay}. */
export interface BackoffOptions {
  /** Delay before the first retry, ms (before jitter). */
  baseDelayMs: number;
  /** Largest delay, ms (before jitter). */
  maxDelayMs: number;
}

/**
 * The delay before retry number `attempt` (0-based): `min(maxDelayMs, baseDelayMs * 2^attempt)`,
 * then a uniformly random point of its upper half.
 *
 * ## Example
 * ```ts
 * backoffDelay(2, { baseDelayMs: 500, maxDelayMs: 8000 }, () => 1); // 2000
 * backoffDelay(2, { baseDelayMs: 500, maxDelayMs: 8000 }, () => 0); // 1000
 * ```
 *
 * @param attempt Retries made before this one (0 for the first retry).
 * @param options `baseDelayMs` and `maxDelayMs`.
 * @param random A random source in [0, 1); default `Math.random` (tests pass a fixed one).
 * @return The delay, ms.
 * @internal
 */
export function backoffDelay(attempt: number, options: BackoffOptions, random: () => number = Math.random): number {
  const raw = Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** attempt);
  return raw / 2 + (raw / 2) * random();
}
