/**
 * Aliasing of `resamplePcm` (rxvoice/telephony), measured with a sine sweep: tones of
 * 100 Hz to just under the input's Nyquist frequency, every 100 Hz, resampled from 22.05
 * and 24 kHz (the service's usual rates) to the telephone's 8 kHz. Reports, in dB relative
 * to the input tone, the loudest output of a tone the 8 kHz stream cannot carry (at or above
 * 4.4 kHz; 4.0-4.4 kHz is the filter's transition band) and the weakest of a speech-band tone
 * (300-3400 Hz), against plain decimation / linear interpolation with no filter. Not part of
 * `npm run bench` (an accuracy figure). Run alone: `npx tsx bench/telephony-resample.ts`.
 */
import { resamplePcm } from '../src/telephony/index.js';

function tone(hz: number, rate: number): Int16Array {
  return Int16Array.from({ length: rate }, (_, i) => Math.round(10000 * Math.sin((2 * Math.PI * hz * i) / rate)));
}
function levelDb(x: Int16Array): number {
  let sum = 0;
  for (let i = 400; i < x.length - 400; i++) sum += x[i]! ** 2;
  return 20 * Math.log10(Math.sqrt(sum / (x.length - 800)) / (10000 / Math.SQRT2) + 1e-12);
}
/** Linear interpolation with no filter: the peer. */
function linear(x: Int16Array, from: number, to: number): Int16Array {
  const n = Math.floor((x.length * to) / from);
  return Int16Array.from({ length: n }, (_, i) => {
    const at = (i * from) / to;
    const k = Math.floor(at);
    const f = at - k;
    return Math.round((x[k] ?? 0) * (1 - f) + (x[k + 1] ?? x[k] ?? 0) * f);
  });
}

console.log('from -> to | worst stopband (>= 4.4 kHz) ours / unfiltered | worst passband (300-3400 Hz) ours / unfiltered');
for (const from of [22050, 24000]) {
  let stopOurs = -Infinity;
  let stopPeer = -Infinity;
  let passOurs = 0;
  let passPeer = 0;
  for (let hz = 100; hz < from / 2; hz += 100) {
    const input = tone(hz, from);
    const ours = levelDb(resamplePcm(input, from, 8000));
    const peer = levelDb(linear(input, from, 8000));
    if (hz >= 4400) {
      stopOurs = Math.max(stopOurs, ours);
      stopPeer = Math.max(stopPeer, peer);
    }
    if (hz >= 300 && hz <= 3400) {
      passOurs = Math.min(passOurs, ours);
      passPeer = Math.min(passPeer, peer);
    }
  }
  console.log(`${from} -> 8000 | ${stopOurs.toFixed(1)} dB / ${stopPeer.toFixed(1)} dB | ${passOurs.toFixed(2)} dB / ${passPeer.toFixed(2)} dB`);
}
