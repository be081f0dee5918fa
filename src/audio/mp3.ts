/**
 * MP3 encoding through the optional pure-JS encoder `@breezystack/lamejs` (a port of
 * LAME). When the package is missing, `mp3Available()` is false and the emulator
 * rejects mp3 output with a clear message.
 */
import { concatBytes } from '../core/bytes.js';

interface LameEncoder {
  encodeBuffer(left: Int16Array): Int8Array | Uint8Array;
  flush(): Int8Array | Uint8Array;
}
interface LameModule {
  Mp3Encoder: new (channels: number, sampleRate: number, kbps: number) => LameEncoder;
}

/** Sample rates an MPEG-1/2/2.5 layer III stream can carry. */
export const MP3_SAMPLE_RATES = [8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000] as const;

/** The optional package that encodes mp3. */
export const LAME_PACKAGE = '@breezystack/lamejs';
let lame: LameModule | undefined;
let loading: Promise<boolean> | undefined;

/**
 * Load the optional encoder, once (the emulator does at start). Resolves whether it is
 * installed. An import, not a top-level await, so that `require('rxvoice/emulator')` works.
 */
export function loadMp3Encoder(): Promise<boolean> {
  // A variable specifier: the package is optional and ships no usable typings.
  loading ??= import(LAME_PACKAGE).then(
    (mod: Partial<LameModule> & { default?: Partial<LameModule> }) => {
      const ctor = mod.Mp3Encoder ?? mod.default?.Mp3Encoder;
      lame = ctor ? { Mp3Encoder: ctor } : undefined;
      return lame !== undefined;
    },
    () => false,
  );
  return loading;
}

/** Whether the optional MP3 encoder is installed and loaded ({@link loadMp3Encoder}). */
export function mp3Available(): boolean {
  return lame !== undefined;
}

/** The MP3 sample rate nearest to `rate` (an MP3 stream cannot carry any rate). */
export function nearestMp3SampleRate(rate: number): number {
  let best: number = MP3_SAMPLE_RATES[0];
  for (const r of MP3_SAMPLE_RATES) if (Math.abs(r - rate) < Math.abs(best - rate)) best = r;
  return best;
}

/**
 * Encode mono 16-bit PCM as a whole MP3 stream (CBR, 64 kbit/s at rates >= 32 kHz,
 * 48 kbit/s below). `sampleRate` must be one of {@link MP3_SAMPLE_RATES}.
 */
export function encodeMp3(pcm: Int16Array, sampleRate: number): Uint8Array {
  if (!lame) throw new Error(`mp3 encoding needs the optional package ${LAME_PACKAGE} (npm install ${LAME_PACKAGE})`);
  if (!(MP3_SAMPLE_RATES as readonly number[]).includes(sampleRate)) {
    throw new RangeError(`mp3 cannot carry ${sampleRate} Hz; use one of ${MP3_SAMPLE_RATES.join(', ')}`);
  }
  const encoder = new lame.Mp3Encoder(1, sampleRate, sampleRate >= 32000 ? 64 : 48);
  const parts: Uint8Array[] = [];
  const block = 1152 * 16;
  for (let i = 0; i < pcm.length; i += block) {
    const out = encoder.encodeBuffer(pcm.subarray(i, i + block));
    if (out.length > 0) parts.push(new Uint8Array(out.buffer, out.byteOffset, out.byteLength));
  }
  const tail = encoder.flush();
  if (tail.length > 0) parts.push(new Uint8Array(tail.buffer, tail.byteOffset, tail.byteLength));
  return concatBytes(parts);
}
