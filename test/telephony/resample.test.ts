import { describe, expect, it } from 'vitest';
import { resamplePcm } from '../../src/telephony/index.js';
import { ValidationError } from '../../src/live/index.js';

function tone(hz: number, rate: number, seconds = 0.5, amplitude = 10000): Int16Array {
  return Int16Array.from({ length: Math.round(rate * seconds) }, (_, i) => Math.round(amplitude * Math.sin((2 * Math.PI * hz * i) / rate)));
}
/** RMS level of `x` relative to a sine of `amplitude`, in dB (edges left out). */
function levelDb(x: Int16Array, amplitude = 10000): number {
  let sum = 0;
  const from = Math.floor(x.length / 10);
  const to = x.length - from;
  for (let i = from; i < to; i++) sum += x[i]! ** 2;
  return 20 * Math.log10(Math.sqrt(sum / (to - from)) / (amplitude / Math.SQRT2) + 1e-12);
}
/** Keeping every n-th sample: what a resampler without a filter does at an integer ratio. */
function decimate(x: Int16Array, n: number): Int16Array {
  return Int16Array.from({ length: Math.floor(x.length / n) }, (_, i) => x[i * n]!);
}

describe('resamplePcm', () => {
  it('keeps the length in time and the level of speech-band tones', () => {
    for (const hz of [300, 1000, 3000]) {
      const out = resamplePcm(tone(hz, 24000), 24000, 8000);
      expect(out.length).toBe(4000);
      expect(Math.abs(levelDb(out))).toBeLessThan(0.5);
    }
    const up = resamplePcm(tone(1000, 8000), 8000, 16000);
    expect(up.length).toBe(8000);
    expect(Math.abs(levelDb(up))).toBeLessThan(0.5);
  });

  it('filters what the lower rate cannot carry: a 6 kHz tone is gone at 8 kHz, where plain decimation aliases it to 2 kHz', () => {
    const input = tone(6000, 24000);
    expect(levelDb(resamplePcm(input, 24000, 8000))).toBeLessThan(-60);
    // control: the same tone decimated without a filter comes out at full level
    expect(levelDb(decimate(input, 3))).toBeGreaterThan(-1);
  });

  it('does not change its input, and copies at equal rates', () => {
    const input = tone(6000, 24000, 0.1);
    const copy = input.slice();
    resamplePcm(input, 24000, 8000);
    expect(input).toEqual(copy);
    const same = resamplePcm(input, 24000, 24000);
    expect(same).toEqual(input);
    expect(same).not.toBe(input);
  });

  it('a constant level comes out exactly (the filter passes 0 Hz at unity gain): rounded to the nearest sample value, not truncated', () => {
    for (const level of [1000, -1000, 12345, -12345]) {
      const out = resamplePcm(new Int16Array(2400).fill(level), 24000, 8000);
      expect(out.length).toBe(800);
      // away from the edges, where the filter starts and stops
      expect([...out.subarray(100, 700)].every((v) => v === level)).toBe(true);
    }
  });

  it('clips at full scale instead of wrapping: a full-scale square wave overshoots after filtering, yet keeps its sign', () => {
    // 500 Hz square, +32767 / -32768 at 24 kHz: 24 samples a half period
    const square = Int16Array.from({ length: 2400 }, (_, i) => (Math.floor(i / 24) % 2 === 0 ? 32767 : -32768));
    const out = resamplePcm(square, 24000, 8000);
    let checked = 0;
    for (let i = 10; i < out.length - 10; i++) {
      const around = square.subarray(3 * i - 6, 3 * i + 7);
      if (!around.every((v) => v === around[0])) continue; // near an edge of the square: either sign
      expect(Math.sign(out[i]!)).toBe(Math.sign(around[0]!));
      checked++;
    }
    expect(checked).toBeGreaterThan(300);
    // control: the filtered wave does reach past 16 bits, so clipping is what kept the sign
    expect(out.filter((v) => v === 32767).length).toBeGreaterThan(0);
    expect(out.filter((v) => v === -32768).length).toBeGreaterThan(0);
  });

  it('takes rates from 1000 to 384000 Hz, both ends included', () => {
    expect(resamplePcm(new Int16Array(1000), 1000, 8000).length).toBe(8000);
    expect(resamplePcm(new Int16Array(38_400), 384_000, 1000).length).toBeGreaterThan(90);
    expect(() => resamplePcm(new Int16Array(4), 999, 8000)).toThrow(ValidationError);
    expect(() => resamplePcm(new Int16Array(4), 8000, 384_001)).toThrow(ValidationError);
  });

  it('nothing 8 kHz cannot carry folds back: every tone from 4 kHz up, from 22.05, 24, 44.1 and 48 kHz, comes out at least 70 dB down (control: unfiltered linear interpolation folds it back whole)', () => {
    const linear = (x: Int16Array, from: number, to: number) =>
      Int16Array.from({ length: Math.floor((x.length * to) / from) }, (_, i) => {
        const at = (i * from) / to;
        const k = Math.floor(at);
        return Math.round((x[k] ?? 0) * (1 - (at - k)) + (x[k + 1] ?? x[k] ?? 0) * (at - k));
      });
    for (const from of [22050, 24000, 44100, 48000]) {
      // the transition band's edge first, where a filter at the Nyquist frequency itself lets most through
      for (const hz of [4000, 4050, 4100, 4200, 4400, 5000, 7000, from / 2 - 100]) {
        expect(levelDb(resamplePcm(tone(hz, from, 0.25), from, 8000)), `${from} Hz, ${hz} Hz tone`).toBeLessThan(-70);
      }
      expect(levelDb(linear(tone(4050, from, 0.25), from, 8000))).toBeGreaterThan(-2);
    }
  });

  it('speech passes unchanged: 300-3400 Hz within 0.05 dB down to 8 kHz and up from 8 to 16 kHz', () => {
    for (let hz = 300; hz <= 3400; hz += 100) {
      for (const [from, to] of [
        [24000, 8000],
        [22050, 8000],
        [8000, 16000],
        [8000, 48000],
      ] as const) {
        expect(Math.abs(levelDb(resamplePcm(tone(hz, from, 0.25), from, to))), `${from} -> ${to}, ${hz} Hz`).toBeLessThan(0.05);
      }
    }
  });

  it('gives round(length * to / from) samples, for ratios of small and of large terms', () => {
    for (const [n, from, to] of [
      [1000, 24000, 8000],
      [1001, 22050, 8000],
      [777, 8000, 16000],
      [44100, 44100, 7999],
      [5000, 383_999, 1000],
    ] as const) {
      expect(resamplePcm(new Int16Array(n).fill(500), from, to).length).toBe(Math.round((n * to) / from));
    }
    // a ratio of large terms (fractions rounded to fewer phases) still passes a constant exactly
    expect([...resamplePcm(new Int16Array(44100).fill(-777), 44100, 7999)].every((v) => v === -777)).toBe(true);
  });

  it('rejects rates that are not whole numbers of Hz in range', () => {
    for (const [a, b] of [
      [0, 8000],
      [8000, 44100.5],
      [8000, Number.NaN],
      [1e9, 8000],
    ] as const) {
      expect(() => resamplePcm(new Int16Array(4), a, b)).toThrow(ValidationError);
    }
  });
});
