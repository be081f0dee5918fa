/**
 * The best any polling schedule can do on a known distribution of task durations: the
 * frontier printed beside the polling rows.
 *
 * The classic inspection-schedule problem (Barlow, Hunter and Proschan, 1963): status
 * calls at times t1 < t2 < ...; a task that completes at X is seen at the first call at or
 * after X; minimize the expected lateness E[t_K - X] plus `lambda` times the expected
 * number of calls E[K]. Solved by dynamic programming over a grid of call times (the
 * union of a uniform grid and the distribution's quantiles, so the grid is fine where
 * tasks complete): V(i) = min over j > i of lambda * P(X > t_i) + E[(t_j - X); t_i < X <= t_j] + V(j).
 * Sweeping `lambda` gives (calls, lateness) points; their lower convex hull (two schedules
 * mixed at random reach any point between two of them) is the frontier: the least mean
 * lateness possible at a given mean number of calls.
 *
 * Pure arithmetic, no timers; `bench/polling.ts` uses it, `test/client/polling.test.ts` too.
 */
import { normalCdf } from '../src/client/polling.js';

/** A distribution of task durations, ms: its CDF and partial mean E[X; X <= t]. */
export interface DurationDistribution {
  cdf(t: number): number;
  partialMean(t: number): number;
  /** A time by which all but `1 - p` of the tasks are done. */
  quantile(p: number): number;
}

/** Log-normal durations (median `medianMs`, log-space sigma), cut at `capMs` (the client's deadline). */
export function logNormal(medianMs: number, sigma: number, capMs = Number.POSITIVE_INFINITY): DurationDistribution {
  const mu = Math.log(medianMs);
  const rawCdf = (t: number): number => (t <= 0 ? 0 : normalCdf((Math.log(t) - mu) / sigma));
  const rawPartial = (t: number): number => (t <= 0 ? 0 : Math.exp(mu + (sigma * sigma) / 2) * normalCdf((Math.log(t) - mu - sigma * sigma) / sigma));
  const mass = Number.isFinite(capMs) ? rawCdf(capMs) : 1;
  return {
    cdf: (t) => Math.min(1, rawCdf(Math.min(t, capMs)) / mass),
    partialMean: (t) => rawPartial(Math.min(t, capMs)) / mass,
    quantile: (p) => {
      // bisection in log space (the CDF is monotone)
      let low = Math.log(medianMs) - 12 * sigma;
      let high = Math.log(Number.isFinite(capMs) ? capMs : medianMs) + 12 * sigma;
      for (let i = 0; i < 80; i++) {
        const mid = (low + high) / 2;
        if (Math.min(1, rawCdf(Math.exp(mid)) / mass) < p) low = mid;
        else high = mid;
      }
      return Math.min(Math.exp(high), capMs);
    },
  };
}

/**
 * The same distribution as the client sees it: a call sent at t finds the task done when
 * t >= duration - `shiftMs` (the network and service time before the service reads it).
 * Durations below the shift count as done at 0.
 */
export function shifted(dist: DurationDistribution, shiftMs: number): DurationDistribution {
  const base = dist.cdf(shiftMs);
  const basePartial = dist.partialMean(shiftMs);
  return {
    cdf: (t) => dist.cdf(Math.max(0, t) + shiftMs),
    partialMean: (t) => (t <= 0 ? 0 : dist.partialMean(t + shiftMs) - basePartial - shiftMs * (dist.cdf(t + shiftMs) - base)),
    quantile: (p) => Math.max(0, dist.quantile(p) - shiftMs),
  };
}

/** One optimal schedule: its call times, mean calls and mean lateness (ms). */
export interface Schedule {
  lambda: number;
  times: number[];
  calls: number;
  latenessMs: number;
}

/** The grid of candidate call times: 0, a uniform grid to the 1 - 1e-4 quantile, and quantiles. */
function grid(dist: DurationDistribution, points: number): number[] {
  const end = dist.quantile(1 - 1e-4);
  const half = Math.max(2, Math.floor(points / 2));
  const times = [0];
  for (let k = 1; k <= half; k++) times.push((end * k) / half);
  for (let k = 0; k < half; k++) times.push(dist.quantile((k + 0.5) / half));
  const sorted = [...new Set(times.map((t) => Math.round(t * 1000) / 1000))].sort((a, b) => a - b);
  return sorted.filter((t) => t >= 0 && t <= end);
}

/**
 * The schedule minimizing mean lateness + `lambda` x mean calls on `dist` (call times
 * restricted to the grid; the tail past the last grid point, 1e-4 of the tasks, ignored).
 */
export function optimalSchedule(dist: DurationDistribution, lambda: number, points = 1200, times = grid(dist, points)): Schedule {
  const n = times.length;
  const F = times.map((t) => dist.cdf(t));
  const M = times.map((t) => dist.partialMean(t));
  // value[i]: cost to go after a call at times[i] found the task pending (i = n: start, nothing called yet)
  const value = new Float64Array(n + 1);
  const next = new Int32Array(n + 1).fill(-1);
  const solve = (i: number, survival: number, fi: number, mi: number): void => {
    let best = Number.POSITIVE_INFINITY;
    let arg = -1;
    for (let j = i === n ? 0 : i + 1; j < n; j++) {
      const t = times[j] as number;
      // E[(t - X); t_i < X <= t], the mass at X <= 0 counted at 0
      const cost = lambda * survival + t * ((F[j] as number) - fi) - ((M[j] as number) - mi) + (value[j] as number);
      if (cost < best) {
        best = cost;
        arg = j;
      }
    }
    value[i] = arg < 0 ? 0 : best;
    next[i] = arg;
  };
  for (let i = n - 1; i >= 0; i--) solve(i, 1 - (F[i] as number), F[i] as number, M[i] as number);
  solve(n, 1, 0, 0);
  // walk the schedule from the start
  const chosen: number[] = [];
  let calls = 0;
  let lateness = 0;
  let fi = 0;
  let mi = 0;
  let survival = 1;
  for (let j = next[n] as number; j >= 0; j = next[j] as number) {
    const t = times[j] as number;
    chosen.push(t);
    calls += survival;
    lateness += t * ((F[j] as number) - fi) - ((M[j] as number) - mi);
    fi = F[j] as number;
    mi = M[j] as number;
    survival = 1 - fi;
  }
  return { lambda, times: chosen, calls, latenessMs: lateness };
}

/** Frontier points (calls, lateness) over a sweep of lambda, lower convex hull, by calls. */
export function frontier(dist: DurationDistribution, points = 1200): { calls: number; latenessMs: number }[] {
  const times = grid(dist, points);
  const raw: { calls: number; latenessMs: number }[] = [];
  for (let e = -1; e <= 5; e += 0.125) {
    const s = optimalSchedule(dist, 10 ** e, points, times);
    raw.push({ calls: s.calls, latenessMs: s.latenessMs });
  }
  raw.sort((a, b) => a.calls - b.calls || a.latenessMs - b.latenessMs);
  // lower convex hull (lateness falls as calls grow)
  const hull: { calls: number; latenessMs: number }[] = [];
  for (const p of raw) {
    while (hull.length >= 2) {
      const a = hull[hull.length - 2] as { calls: number; latenessMs: number };
      const b = hull[hull.length - 1] as { calls: number; latenessMs: number };
      const cross = (b.calls - a.calls) * (p.latenessMs - a.latenessMs) - (b.latenessMs - a.latenessMs) * (p.calls - a.calls);
      if (cross <= 0) hull.pop();
      else break;
    }
    hull.push(p);
  }
  return hull;
}

/** The least mean lateness at `calls` mean calls on the frontier (NaN outside its range). */
export function latenessAt(hull: readonly { calls: number; latenessMs: number }[], calls: number): number {
  for (let k = 1; k < hull.length; k++) {
    const a = hull[k - 1] as { calls: number; latenessMs: number };
    const b = hull[k] as { calls: number; latenessMs: number };
    if (calls >= a.calls && calls <= b.calls) return a.latenessMs + ((b.latenessMs - a.latenessMs) * (calls - a.calls)) / (b.calls - a.calls || 1);
  }
  const last = hull[hull.length - 1];
  return last && calls > last.calls ? last.latenessMs : Number.NaN;
}
