/**
 * `resamplePcm` (rxvoice/telephony) measured with sine sweeps, against the `wave-resampler`
 * package (its implementation until 2026-11-28: cubic interpolation behind a Butterworth
 * low-pass at exactly the lower rate's Nyquist frequency), against `sox` (its `rate` effect,
 * when `sox` is installed) and against unfiltered linear interpolation.
 *
 * Down (22.05, 24, 44.1 and 48 kHz to the telephone's 8 kHz): tones every 50 Hz from 100 Hz
 * to just under the input's Nyquist frequency; the loudest output of a tone 8 kHz cannot carry
 * (at or above 4 kHz: any of it folds back into the band as aliasing) and the weakest of a
 * speech-band tone (300-3400 Hz), dB relative to the input tone. Up (8 to 16 kHz, a caller's
 * audio for a recognizer): the weakest speech-band tone. Then the time to convert one second.
 * Not part of `npm run bench` (an accuracy figure). Run alone: `npx tsx bench/telephony-resample.ts`.
 */
import { spawnSync } from 'node:child_process';
import * as waveResampler from 'wave-resampler';
import { resamplePcm } from '../src/telephony/index.js';

type Resampler = (x: Int16Array, from: number, to: number) => Int16Array;

function tone(hz: number, rate: number): Int16Array {
  return Int16Array.from({ length: rate }, (_, i) => Math.round(10000 * Math.sin((2 * Math.PI * hz * i) / rate)));
}
/** RMS level relative to the input tone, dB, the edges (a tenth each side) left out. */
function levelDb(x: Int16Array): number {
  let sum = 0;
  const edge = Math.floor(x.length / 10);
  for (let i = edge; i < x.length - edge; i++) sum += x[i]! ** 2;
  return 20 * Math.log10(Math.sqrt(sum / (x.length - 2 * edge)) / (10000 / Math.SQRT2) + 1e-12);
}
/** Linear interpolation with no filter. */
const linear: Resampler = (x, from, to) =>
  Int16Array.from({ length: Math.floor((x.length * to) / from) }, (_, i) => {
    const at = (i * from) / to;
    const k = Math.floor(at);
    const f = at - k;
    return Math.round((x[k] ?? 0) * (1 - f) + (x[k + 1] ?? x[k] ?? 0) * f);
  });
const waveResample = ((waveResampler as unknown as { default?: typeof waveResampler }).default ?? waveResampler).resample;
const wave: Resampler = (x, from, to) => Int16Array.from(waveResample(Float64Array.from(x), from, to), (v) => Math.max(-32768, Math.min(32767, Math.round(v))));
const haveSox = spawnSync('sox', ['--version']).status === 0;
/** `sox`'s `rate` effect (its default quality), raw 16-bit PCM through a pipe. */
const sox: Resampler = (x, from, to) => {
  const raw = ['-t', 'raw', '-e', 'signed-integer', '-b', '16', '-c', '1', '-L'];
  const run = spawnSync('sox', [...raw, '-r', String(from), '-', ...raw, '-r', String(to), '-', 'rate'], { input: Buffer.from(x.buffer, x.byteOffset, x.byteLength) });
  const bytes = run.stdout;
  return new Int16Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + (bytes.byteLength & ~1)));
};

const resamplers: Array<[string, Resampler]> = [
  ['rxvoice', resamplePcm],
  ['wave-resampler', wave],
  ...(haveSox ? ([['sox', sox]] as Array<[string, Resampler]>) : []),
  ['linear, no filter', linear],
];

console.log('down to 8 kHz: worst tone >= 4 kHz (aliasing) | worst tone 300-3400 Hz (pass band), dB');
for (const from of [22050, 24000, 44100, 48000]) {
  const cells: string[] = [];
  for (const [name, resample] of resamplers) {
    let stop = -Infinity;
    let pass = 0;
    for (let hz = 100; hz < from / 2; hz += 50) {
      const level = levelDb(resample(tone(hz, from), from, 8000));
      if (hz >= 4000) stop = Math.max(stop, level);
      if (hz >= 300 && hz <= 3400) pass = Math.min(pass, level);
    }
    cells.push(`${name} ${stop.toFixed(1)} | ${pass.toFixed(2)}`);
  }
  console.log(`${from} -> 8000: ${cells.join('; ')}`);
}
console.log('up, 8 to 16 kHz: worst tone 300-3400 Hz, dB');
console.log(
  resamplers
    .map(([name, resample]) => {
      let pass = 0;
      for (let hz = 300; hz <= 3400; hz += 50) pass = Math.min(pass, levelDb(resample(tone(hz, 8000), 8000, 16000)));
      return `${name} ${pass.toFixed(2)}`;
    })
    .join('; '),
);
console.log('ms to convert one second (median of 21), in this process');
for (const [from, to] of [
  [24000, 8000],
  [22050, 8000],
  [48000, 8000],
  [8000, 16000],
]) {
  const input = tone(1000, from!);
  const cells = resamplers
    .filter(([name]) => name !== 'sox') // a process a call: not comparable
    .map(([name, resample]) => {
      const times: number[] = [];
      for (let r = 0; r < 21; r++) {
        const t0 = performance.now();
        resample(input, from!, to!);
        times.push(performance.now() - t0);
      }
      return `${name} ${times.sort((a, b) => a - b)[10]!.toFixed(2)}`;
    });
  console.log(`${from} -> ${to}: ${cells.join('; ')}`);
}
