/**
 * Learned polling of tasks: the client remembers how long tasks of each family took,
 * against the size of their request, and polls where completion is likely.
 *
 * The model, per task family: `ln(duration) = a + b * ln(size) + noise`, a least-squares
 * line over the last {@link HISTORY_SIZE} tasks (without a size, `b` is 0), its noise
 * read as log-normal. Given the time already waited, the next status call goes at the
 * moment when the expected lateness accrued since the last call (the time the result
 * would sit done but unseen) reaches `latenessPerPollMs`: before the likely completion
 * that moment is far off (one call may wait many seconds), around it calls are dense,
 * and in a long tail they spread out again. With fewer than {@link MIN_SAMPLES} tasks
 * seen, polling follows the configured schedule (`initialDelayMs`, `multiplier`,
 * `maxDelayMs`): by default a call every second, which is what a plain 1 s loop does.
 * Nothing known, no schedule beats that loop on both status calls and lateness for
 * every spread of durations (a longer gap anywhere makes the tasks ending there later,
 * a shorter one costs calls), so the default does not try; the frontier of what is
 * possible once the durations are known is in `bench/polling-optimal.ts`.
 *
 * Everything here is pure (no timers, no I/O): `pollTask` in tasks.ts runs it on the
 * client's scheduler, and the polling benchmark runs the same functions in virtual time.
 */
import type { ResolvedPollingOptions } from './config.js';

/** Tasks remembered per family. */
export const HISTORY_SIZE = 64;
/** Tasks of a family seen before the learned policy replaces the backoff. */
export const MIN_SAMPLES = 3;
/** Smallest spread assumed for a learned prediction (log-space standard deviation). */
const MIN_SPREAD = 0.1;
/** Shortest duration recorded, ms (the log of a zero duration is undefined). */
const MIN_DURATION_MS = 10;

/** A log-normal prediction of a task's duration, ms: `ln(duration) ~ N(mu, sigma^2)`. */
export interface DurationPrediction {
  mu: number;
  sigma: number;
}

interface Sample {
  /** ln(size), or undefined when the request had no size. */
  x: number | undefined;
  /** ln(duration in ms). */
  y: number;
}

/** What the client has seen of task durations, per task family. */
export interface TaskDurationModel {
  /**
   * Remember a finished task: it was still pending at `pendingMs` and done at `doneMs`
   * (both measured from the creation answer, by the client's clock).
   */
  record(family: string, size: number | undefined, pendingMs: number, doneMs: number): void;
  /** The prediction for a new task of `family` with `size`, or undefined before enough samples. */
  predict(family: string, size: number | undefined): DurationPrediction | undefined;
}

/** A model remembering the last {@link HISTORY_SIZE} tasks of each family. */
export function createTaskDurationModel(): TaskDurationModel {
  const history = new Map<string, Sample[]>();
  return {
    record(family, size, pendingMs, doneMs) {
      // Done between two calls: the middle. Done at the first call: only known to be
      // shorter; three quarters of it (the middle would drag predictions down).
      const duration = Math.max(MIN_DURATION_MS, pendingMs > 0 ? (pendingMs + doneMs) / 2 : doneMs * 0.75);
      const samples = history.get(family) ?? [];
      samples.push({ x: size !== undefined && size > 0 ? Math.log(size) : undefined, y: Math.log(duration) });
      if (samples.length > HISTORY_SIZE) samples.shift();
      history.set(family, samples);
    },
    predict(family, size) {
      const samples = history.get(family);
      if (!samples || samples.length < MIN_SAMPLES) return undefined;
      return fitLine(samples, size !== undefined && size > 0 ? Math.log(size) : undefined);
    },
  };
}

/** Least-squares line of y on x (samples without x, or a new task without one: the mean). */
function fitLine(samples: readonly Sample[], x: number | undefined): DurationPrediction {
  const sized = x === undefined ? [] : samples.filter((s): s is { x: number; y: number } => s.x !== undefined);
  const points = sized.length >= MIN_SAMPLES ? sized : samples.map((s) => ({ x: 0, y: s.y }));
  const at = sized.length >= MIN_SAMPLES ? (x as number) : 0;
  const n = points.length;
  const meanX = points.reduce((sum, p) => sum + p.x, 0) / n;
  const meanY = points.reduce((sum, p) => sum + p.y, 0) / n;
  let sxx = 0;
  let sxy = 0;
  for (const p of points) {
    sxx += (p.x - meanX) ** 2;
    sxy += (p.x - meanX) * (p.y - meanY);
  }
  const slope = sxx > 1e-9 ? sxy / sxx : 0;
  const intercept = meanY - slope * meanX;
  let residuals = 0;
  for (const p of points) residuals += (p.y - intercept - slope * p.x) ** 2;
  const spread = Math.max(MIN_SPREAD, Math.sqrt(residuals / Math.max(1, n - 2)));
  // Prediction interval: wider with few samples and far from the sizes seen.
  const leverage = 1 + 1 / n + (sxx > 1e-9 ? (at - meanX) ** 2 / sxx : 0);
  return { mu: intercept + slope * at, sigma: spread * Math.sqrt(leverage) };
}

/** Standard normal distribution function (erfc approximation, error below 1.2e-7). */
export function normalCdf(z: number): number {
  const x = Math.abs(z) / Math.SQRT2;
  const t = 1 / (1 + 0.5 * x);
  const erfc =
    t *
    Math.exp(
      -x * x -
        1.26551223 +
        t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))),
    );
  return z >= 0 ? 1 - erfc / 2 : erfc / 2;
}

/**
 * Time from `elapsedMs` to the next status call under a learned prediction, ms: the
 * point where the expected lateness accrued since `elapsedMs` (given the task was still
 * pending then) reaches `latenessPerPollMs`, within [`minIntervalMs`, `maxLearnedDelayMs`]
 * (the first call, at `elapsedMs` 0, has no minimum).
 *
 * @param prediction The log-normal prediction of the duration.
 * @param elapsedMs Time already waited (the last status call, or 0).
 * @param polling The resolved polling options.
 * @returns The wait until the next status call should be evaluated, ms.
 */
export function learnedPollInterval(
  prediction: DurationPrediction,
  elapsedMs: number,
  polling: Pick<ResolvedPollingOptions, 'latenessPerPollMs' | 'minIntervalMs' | 'maxLearnedDelayMs'>,
): number {
  const { mu, sigma } = prediction;
  const cdf = (t: number): number => (t <= 0 ? 0 : normalCdf((Math.log(t) - mu) / sigma));
  // Partial mean of the log-normal over (0, t].
  const partialMean = (t: number): number => (t <= 0 ? 0 : Math.exp(mu + (sigma * sigma) / 2) * normalCdf((Math.log(t) - mu - sigma * sigma) / sigma));
  const start = elapsedMs;
  const survival = Math.max(1e-12, 1 - cdf(start));
  // E[(b - D) ; start < D <= b | D > start]
  const lateness = (b: number): number =>
    (b * cdf(b) - start * cdf(start) - (partialMean(b) - partialMean(start)) - cdf(start) * (b - start)) / survival;
  // The first call (nothing waited yet) has no minimum: it may go right away.
  const minimum = start > 0 ? polling.minIntervalMs : 0;
  let low = start + minimum;
  let high = start + polling.maxLearnedDelayMs;
  if (lateness(low) >= polling.latenessPerPollMs) return minimum;
  if (lateness(high) <= polling.latenessPerPollMs) return polling.maxLearnedDelayMs;
  for (let i = 0; i < 40 && high - low > 1; i++) {
    const mid = (low + high) / 2;
    if (lateness(mid) < polling.latenessPerPollMs) low = mid;
    else high = mid;
  }
  return low - start;
}

/**
 * Delay before status call number `poll` (0-based) of the configured schedule (the
 * one before anything is learned, and the one with `adaptive: false`), exact: no jitter.
 * A random phase or an uneven gap makes the tasks ending in it later on average than
 * an even gap does, so the default (a call every second) is exactly a plain 1 s loop.
 */
export function pollDelay(poll: number, polling: Pick<ResolvedPollingOptions, 'initialDelayMs' | 'multiplier' | 'maxDelayMs'>): number {
  return Math.round(Math.min(polling.maxDelayMs, polling.initialDelayMs * polling.multiplier ** poll));
}

/**
 * Wait before status call `n` (0-based) of a task, ms: the configured schedule
 * ({@link pollDelay}) without a prediction; with one, until the learned interval after
 * the previous call (sent at `lastSentMs`, 0 for none) is over, jitter only shortening it.
 *
 * @param prediction The learned prediction, or undefined (back off).
 * @param n Status calls made so far.
 * @param lastSentMs When the previous status call was sent (0: none yet), ms since polling started.
 * @param elapsedMs Now, ms since polling started.
 * @param polling The resolved polling options.
 * @param random Random source in [0, 1) for the jitter.
 * @returns The wait, ms.
 */
export function nextPollDelay(
  prediction: DurationPrediction | undefined,
  n: number,
  lastSentMs: number,
  elapsedMs: number,
  polling: ResolvedPollingOptions,
  random: () => number,
): number {
  if (!prediction) return pollDelay(n, polling);
  const due = lastSentMs + learnedPollInterval(prediction, lastSentMs, polling);
  return Math.max(0, Math.round((due - elapsedMs) * (1 - polling.jitter * random())));
}
