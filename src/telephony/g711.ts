/**
 * G.711, the codec of the telephone network: 16-bit PCM to 8-bit mu-law (North America,
 * Japan; Twilio Media Streams) or A-law (elsewhere) and back, sample by sample. The codes are
 * those of the `alawmulaw` package (the test compares every sample); they differ from the ITU-T
 * G.191 reference encoders only on the 127 negative samples of each law that sit exactly on a
 * step's edge, where the reference takes the magnitude as `~x` and this code as `-x`: the
 * neighbouring step, within the law's own quantizing error. Decoding is the reference's. Pure
 * functions, no I/O, any runtime.
 */

const MULAW_BIAS = 0x84;
const MULAW_CLIP = 32635;

/** Position of the highest set bit of `value` above bit 7, from 0 (the G.711 segment). */
function segmentOf(value: number): number {
  let segment = 0;
  for (let v = value >> 8; v > 0 && segment < 7; v >>= 1) segment++;
  return segment;
}

function mulawOfSample(sample: number): number {
  const sign = (sample >> 8) & 0x80;
  let magnitude = sign !== 0 ? -sample : sample;
  magnitude = Math.min(magnitude + MULAW_BIAS, MULAW_CLIP);
  const exponent = segmentOf(magnitude);
  const mantissa = (magnitude >> (exponent + 3)) & 0x0f;
  return ~(sign | (exponent << 4) | mantissa) & 0xff;
}

function sampleOfMulaw(code: number): number {
  const byte = ~code & 0xff;
  const exponent = (byte >> 4) & 0x07;
  const magnitude = (((byte & 0x0f) << 3) + MULAW_BIAS) << exponent;
  const sample = magnitude - MULAW_BIAS;
  return byte & 0x80 ? -sample : sample;
}

function alawOfSample(sample: number): number {
  const positive = sample >= 0;
  let magnitude = positive ? sample : -Math.max(sample, -32767);
  magnitude = Math.min(magnitude, 32635);
  const code = magnitude < 256 ? magnitude >> 4 : (segmentOf(magnitude) << 4) | ((magnitude >> (segmentOf(magnitude) + 3)) & 0x0f);
  return code ^ (positive ? 0xd5 : 0x55);
}

function sampleOfAlaw(code: number): number {
  const byte = code ^ 0x55;
  const exponent = (byte & 0x70) >> 4;
  let magnitude = (byte & 0x0f) << 4;
  magnitude = exponent === 0 ? magnitude + 8 : (magnitude + 0x108) << (exponent - 1);
  return byte & 0x80 ? magnitude : -magnitude;
}

function table(decode: (code: number) => number): Int16Array {
  const out = new Int16Array(256);
  for (let code = 0; code < 256; code++) out[code] = decode(code);
  return out;
}
const MULAW_TO_PCM = table(sampleOfMulaw);
const ALAW_TO_PCM = table(sampleOfAlaw);

/**
 * Encodes 16-bit PCM as G.711 mu-law, one byte a sample.
 *
 * ## Example
 * ```ts
 * import { encodeMulaw } from 'rxvoice/telephony';
 *
 * const payload = encodeMulaw(new Int16Array(160)); // 20 ms at 8 kHz: 160 bytes (0xFF: silence)
 * ```
 *
 * @param pcm Signed 16-bit samples.
 * @return The mu-law bytes.
 */
export function encodeMulaw(pcm: Int16Array): Uint8Array {
  const out = new Uint8Array(pcm.length);
  for (let i = 0; i < pcm.length; i++) out[i] = mulawOfSample(pcm[i]!);
  return out;
}

/**
 * Decodes G.711 mu-law bytes to 16-bit PCM.
 *
 * ## Example
 * ```ts
 * import { decodeMulaw } from 'rxvoice/telephony';
 *
 * const pcm = decodeMulaw(new Uint8Array([0xff, 0x00])); // Int16Array [0, -32124]
 * ```
 *
 * @param bytes mu-law bytes, one a sample.
 * @return Signed 16-bit samples.
 */
export function decodeMulaw(bytes: Uint8Array): Int16Array {
  const out = new Int16Array(bytes.length);
  for (let i = 0; i < bytes.length; i++) out[i] = MULAW_TO_PCM[bytes[i]!]!;
  return out;
}

/**
 * Encodes 16-bit PCM as G.711 A-law, one byte a sample.
 *
 * ## Example
 * ```ts
 * import { encodeAlaw } from 'rxvoice/telephony';
 *
 * const bytes = encodeAlaw(Int16Array.of(0, 1000, -1000));
 * ```
 *
 * @param pcm Signed 16-bit samples.
 * @return The A-law bytes.
 */
export function encodeAlaw(pcm: Int16Array): Uint8Array {
  const out = new Uint8Array(pcm.length);
  for (let i = 0; i < pcm.length; i++) out[i] = alawOfSample(pcm[i]!);
  return out;
}

/**
 * Decodes G.711 A-law bytes to 16-bit PCM.
 *
 * ## Example
 * ```ts
 * import { decodeAlaw } from 'rxvoice/telephony';
 *
 * const pcm = decodeAlaw(new Uint8Array([0xd5])); // Int16Array [8]
 * ```
 *
 * @param bytes A-law bytes, one a sample.
 * @return Signed 16-bit samples.
 */
export function decodeAlaw(bytes: Uint8Array): Int16Array {
  const out = new Int16Array(bytes.length);
  for (let i = 0; i < bytes.length; i++) out[i] = ALAW_TO_PCM[bytes[i]!]!;
  return out;
}
