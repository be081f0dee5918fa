/**
 * Sample-rate conversion of 16-bit PCM with an anti-aliasing low-pass filter, on the
 * `wave-resampler` package (cubic interpolation; a 16th-order Butterworth filter run
 * forward and backward, so no phase shift): a tone above the new Nyquist frequency comes
 * out at least 65 dB down (22.05 or 24 to 8 kHz: sweep in `bench/telephony-resample.ts`).
 */
import * as waveResampler from 'wave-resampler';
import { ValidationError } from '../core/errors.js';

type Resample = typeof waveResampler.resample;
/** The package ships CommonJS to Node (its namespace has only `default`) and ES modules to bundlers. */
const resample: Resample =
  (waveResampler as unknown as { default?: { resample: Resample } }).default?.resample ?? waveResampler.resample;

/**
 * Converts 16-bit PCM from one sample rate to another, low-pass filtered so nothing above
 * the lower rate's Nyquist frequency folds back as aliasing.
 *
 * <span class="informal">Speech at 22.05 or 24 kHz down to the telephone's 8 kHz, or a
 * caller's 8 kHz up to a recognizer's 16 kHz. One whole buffer at a time: resample a
 * segment, not 20 ms frames (each call filters its own edges).</span>
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
 * @return New samples at `toRate` (a copy when the rates are equal), clipped to 16 bits.
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
  // the package filters its input in place: give it a copy
  const out = resample(Float64Array.from(pcm), fromRate, toRate);
  const samples = new Int16Array(out.length);
  for (let i = 0; i < out.length; i++) samples[i] = Math.max(-32768, Math.min(32767, Math.round(out[i]!)));
  return samples;
}
