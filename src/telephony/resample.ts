/**
 * Sample-rate conversion of 16-bit PCM: band-limited interpolation with a Kaiser-windowed
 * sinc (as `sox` and libsamplerate do), its pass band flat to 85% of the lower rate's Nyquist
 * frequency and its stop band from that frequency on, at least 70 dB down: 300-3400 Hz speech
 * passes 8 kHz unchanged, and nothing the 8 kHz stream cannot carry folds back into it
 * (sweeps in `bench/telephony-resample.ts`, against `sox` when it is installed).
 */
import { ValidationError } from '../core/errors.js';

/** The pass band's edge, a fraction of the lower rate's Nyquist frequency (3,400 of 4,000 Hz at 8 kHz). */
const PASS_EDGE = 0.85;
/** The stop band's attenuation the window is designed for, dB. */
const STOP_DB = 75;
/** The kernel's half width, in samples of the lower rate: Kaiser's length for `STOP_DB` over a transition of `1 - PASS_EDGE` of Nyquist. */
const HALF_WIDTH = Math.ceil((STOP_DB - 8) / (2.285 * 2 * Math.PI * ((1 - PASS_EDGE) / 2)) / 2);
/** Table steps a sample of the lower rate (the kernel between them is interpolated). */
const STEPS = 512;
/** The cutoff, a fraction of the lower rate's Nyquist frequency: the middle of the transition band. */
const CUTOFF = (1 + PASS_EDGE) / 2;

let kernel: Float64Array | undefined;

/** The windowed sinc at 0, 1/STEPS, ... HALF_WIDTH samples of the lower rate (one side: it is symmetric), made once. */
function kernelTable(): Float64Array {
  if (kernel) return kernel;
  const beta = 0.1102 * (STOP_DB - 8.7);
  const table = new Float64Array(HALF_WIDTH * STEPS + 2);
  for (let i = 0; i < table.length; i++) {
    const u = i / STEPS;
    const x = Math.PI * CUTOFF * u;
    const sinc = u === 0 ? 1 : Math.sin(x) / x;
    const r = u / HALF_WIDTH;
    table[i] = r >= 1 ? 0 : (sinc * besselI0(beta * Math.sqrt(1 - r * r))) / besselI0(beta);
  }
  return (kernel = table);
}

/** The modified Bessel function of the first kind, order 0 (its power series). */
function besselI0(x: number): number {
  let sum = 1;
  let term = 1;
  for (let k = 1; term > 1e-12 * sum; k++) {
    term *= (x / (2 * k)) ** 2;
    sum += term;
  }
  return sum;
}

/** One phase of a conversion: the weights of the input samples from `base + start` on. */
interface Phase {
  start: number;
  weights: Float64Array;
}

/** The filters of the last `KEPT_FILTERS` pairs of rates converted (a call's `from -> to`), oldest first. */
const filters = new Map<string, { phases: Phase[]; stride: { up: number; down: number } }>();

const KEPT_FILTERS = 8;
/** Weights a pair of rates keeps at most (8 MB): past it, an output's fraction of a sample is rounded to fewer phases. */
const MAX_WEIGHTS = 1 << 20;

/**
 * The weights of `fromRate -> toRate`, made once a pair: the output sample `i` falls at input
 * sample `i * up / down` (the rates' ratio in lowest terms), so `down` phases repeat (or, for
 * a ratio of large terms, fewer: the fraction rounded to one of them, a small part of a
 * sample of the lower rate); each is the kernel at its distances from the input samples it
 * reaches, scaled to the lower rate and divided by their sum (0 Hz passes exactly).
 */
function filterFor(fromRate: number, toRate: number): { phases: Phase[]; stride: { up: number; down: number } } {
  const key = `${fromRate}:${toRate}`;
  const known = filters.get(key);
  if (known) return known;
  const table = kernelTable();
  const divisor = gcd(fromRate, toRate);
  const stride = { up: fromRate / divisor, down: toRate / divisor };
  // input samples a sample of the lower rate spans (1 when going up)
  const span = fromRate / Math.min(fromRate, toRate);
  const reach = HALF_WIDTH * span;
  const count = Math.min(stride.down, Math.max(1, Math.floor(MAX_WEIGHTS / (2 * reach + 1))));
  const phases: Phase[] = [];
  for (let phase = 0; phase < count; phase++) {
    const fraction = phase / count;
    const start = Math.ceil(fraction - reach);
    const weights = new Float64Array(Math.floor(fraction + reach) - start + 1);
    let total = 0;
    for (let j = 0; j < weights.length; j++) {
      const at = (Math.abs(fraction - (start + j)) / span) * STEPS;
      const index = Math.floor(at);
      weights[j] = table[index]! + (table[index + 1]! - table[index]!) * (at - index);
      total += weights[j]!;
    }
    for (let j = 0; j < weights.length; j++) weights[j] = weights[j]! / total;
    phases.push({ start, weights });
  }
  const filter = { phases, stride };
  if (filters.size >= KEPT_FILTERS) filters.delete(filters.keys().next().value!);
  filters.set(key, filter);
  return filter;
}

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}

/**
 * Converts 16-bit PCM from one sample rate to another, low-pass filtered so nothing above
 * the lower rate's Nyquist frequency folds back as aliasing.
 *
 * <span class="informal">Speech at 22.05 or 24 kHz down to the telephone's 8 kHz, or a
 * caller's 8 kHz up to a recognizer's 16 kHz. One whole buffer at a time: resample a
 * segment, not 20 ms frames (each call takes the samples beyond its edges as its first and
 * last ones).</span>
 *
 * Band-limited interpolation (a Kaiser-windowed sinc): flat (within 0.01 dB) up to 85% of
 * the lower rate's Nyquist frequency (3.4 kHz at 8 kHz), at least 70 dB down from that
 * frequency on (4 kHz at 8 kHz); a constant level comes out exactly.
 *
 * ## Example
 * ```ts
 * import { encodeMulaw, resamplePcm } from 'rxvoice/telephony';
 *
 * const speech = new Int16Array(22050); // one second at 22.05 kHz
 * const phone = encodeMulaw(resamplePcm(speech, 22050, 8000)); // 8000 mu-law bytes
 * ```
 *
 * @param pcm Signed 16-bit mono samples (not changed).
 * @param fromRate Their sample rate, Hz.
 * @param toRate The rate wanted, Hz.
 * @return New samples at `toRate`, `round(length * toRate / fromRate)` of them (a copy when the rates are equal), clipped to 16 bits.
 * @throws {ValidationError} When a rate is not a whole number of Hz from 1000 to 384000.
 */
export function resamplePcm(pcm: Int16Array, fromRate: number, toRate: number): Int16Array {
  const issues = [];
  for (const [name, rate] of [
    ['fromRate', fromRate],
    ['toRate', toRate],
  ] as const) {
    if (!Number.isInteger(rate) || rate < 1000 || rate > 384_000) {
      issues.push({ loc: [name], msg: 'must be a whole number of Hz from 1000 to 384000', type: 'value_error' });
    }
  }
  if (issues.length > 0) throw new ValidationError(issues, { source: 'local' });
  if (fromRate === toRate || pcm.length === 0) return pcm.slice();
  const { phases, stride } = filterFor(fromRate, toRate);
  const last = pcm.length - 1;
  const out = new Int16Array(Math.max(1, Math.round((pcm.length * toRate) / fromRate)));
  for (let i = 0; i < out.length; i++) {
    // output sample i falls at input sample i * up / down: its whole part, and its fraction's phase
    const step = i * stride.up;
    let base = Math.floor(step / stride.down);
    let phase = step % stride.down;
    if (phases.length < stride.down) {
      phase = Math.round((phase * phases.length) / stride.down);
      if (phase === phases.length) [base, phase] = [base + 1, 0];
    }
    const { start, weights } = phases[phase]!;
    const first = base + start;
    let sum = 0;
    if (first >= 0 && first + weights.length - 1 <= last) {
      for (let j = 0; j < weights.length; j++) sum += weights[j]! * pcm[first + j]!;
    } else {
      // near an edge: the samples beyond it are taken as the first and last ones
      for (let j = 0; j < weights.length; j++) {
        const k = first + j;
        sum += weights[j]! * pcm[k < 0 ? 0 : k > last ? last : k]!;
      }
    }
    const value = Math.round(sum);
    out[i] = value > 32767 ? 32767 : value < -32768 ? -32768 : value;
  }
  return out;
}
