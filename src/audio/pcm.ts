/**
 * PCM helpers shared by the sinks: raw PCM chunks with their format, frame alignment,
 * WAV unwrapping (header off, PCM out) and streaming WAV headers.
 */
import { parseWavHeader, wavDataBytes, wavHeader, WAV_HEADER_BYTES, type PcmFormat, type WavInfo } from './wav.js';

/** Raw PCM bytes (little-endian, interleaved) with the format that describes them. */
export interface PcmChunk {
  pcm: Uint8Array;
  format: PcmFormat;
}

/** Bytes of one frame: one sample of every channel. */
export function blockAlign(format: PcmFormat): number {
  return (format.channels * format.bitsPerSample) / 8;
}

/** Bytes of PCM per second of audio. */
export function byteRate(format: PcmFormat): number {
  return format.sampleRate * blockAlign(format);
}

/** Seconds of audio in `bytes` bytes of PCM in `format`. */
export function pcmSeconds(bytes: number, format: PcmFormat): number {
  const rate = byteRate(format);
  return rate > 0 ? bytes / rate : 0;
}

/** Whether two formats describe the same PCM layout. */
export function sameFormat(a: PcmFormat, b: PcmFormat): boolean {
  return (
    a.sampleRate === b.sampleRate &&
    a.channels === b.channels &&
    a.bitsPerSample === b.bitsPerSample &&
    a.audioFormat === b.audioFormat
  );
}

/** `22050 Hz, 1 ch, 16-bit int` */
export function describeFormat(format: PcmFormat): string {
  const kind = format.audioFormat === 3 ? 'float' : 'int';
  return `${format.sampleRate} Hz, ${format.channels} ch, ${format.bitsPerSample}-bit ${kind}`;
}

/** Whether `format` is one a WAV writer can describe (positive rate and channels, whole bytes per sample). */
export function isValidPcmFormat(format: PcmFormat): boolean {
  return (
    Number.isInteger(format.sampleRate) &&
    format.sampleRate > 0 &&
    Number.isInteger(format.channels) &&
    format.channels > 0 &&
    format.bitsPerSample > 0 &&
    format.bitsPerSample % 8 === 0 &&
    (format.audioFormat === 1 || format.audioFormat === 3)
  );
}

/** A WAV file split into its format and a view (no copy) of its PCM bytes. */
export interface UnwrappedWav {
  format: PcmFormat;
  pcm: Uint8Array;
  info: WavInfo;
}

/**
 * Take a whole WAV file apart: its format and a view of its PCM. The declared data size
 * is trusted only when it fits in the bytes present; a streaming placeholder
 * (0, 0x7FFFFFFF, 0xFFFFFFFF or any size past the end) means "the bytes present".
 * Returns undefined when `bytes` is not a WAV file with `fmt ` and `data` chunks, or its
 * samples are not PCM (integer or float: an A-law or mu-law file is not unwrapped as PCM).
 */
export function unwrapWav(bytes: Uint8Array): UnwrappedWav | undefined {
  const info = parseWavHeader(bytes);
  if (!info || info.dataOffset > bytes.byteLength || (info.formatTag !== 1 && info.formatTag !== 3)) return undefined;
  const size = wavDataBytes(info, bytes.byteLength - info.dataOffset);
  const format: PcmFormat = {
    sampleRate: info.sampleRate,
    channels: info.channels,
    bitsPerSample: info.bitsPerSample,
    audioFormat: info.audioFormat,
  };
  return { format, pcm: bytes.subarray(info.dataOffset, info.dataOffset + size), info };
}

/** The RIFF and data size placeholder of a WAV stream whose length is not known. */
export const STREAMING_WAV_SIZE = 0xffffffff;

/**
 * A WAV header for a stream of unknown length: RIFF and data sizes (and a float header's
 * frame count) are 0xFFFFFFFF, which aplay, sox, ffmpeg and most decoders read as "until
 * the end".
 */
export function streamingWavHeader(format: PcmFormat): Uint8Array {
  const header = wavHeader(format, 0);
  const view = new DataView(header.buffer, header.byteOffset, header.byteLength);
  view.setUint32(4, STREAMING_WAV_SIZE, true);
  view.setUint32(header.byteLength - 4, STREAMING_WAV_SIZE, true);
  if (header.byteLength > WAV_HEADER_BYTES) view.setUint32(FACT_FRAMES_AT, STREAMING_WAV_SIZE, true);
  return header;
}

/** Where a float header's `fact` chunk keeps its frame count. */
const FACT_FRAMES_AT = 46;

/** Patch the sizes of a header made by `wavHeader` in place: RIFF (counting the pad byte of odd data), data, and a float header's frames. */
export function patchWavSizes(header: Uint8Array, dataBytes: number): Uint8Array {
  const view = new DataView(header.buffer, header.byteOffset, header.byteLength);
  const pad = dataBytes % 2;
  view.setUint32(4, header.byteLength - 8 + dataBytes + pad, true);
  view.setUint32(header.byteLength - 4, dataBytes, true);
  if (header.byteLength > WAV_HEADER_BYTES) view.setUint32(FACT_FRAMES_AT, Math.floor(dataBytes / (view.getUint16(32, true) || 1)), true);
  return header;
}

/**
 * Resample mono 16-bit PCM from `from` Hz to `to` Hz by linear interpolation. Returns
 * the input itself when the rates are equal. Output length is `round(length * to / from)`.
 */
export function resample(pcm: Int16Array, from: number, to: number): Int16Array {
  if (from === to || pcm.length === 0) return pcm;
  if (!(from > 0) || !(to > 0)) throw new RangeError(`invalid sample rates ${from} -> ${to}`);
  const length = Math.round((pcm.length * to) / from);
  const out = new Int16Array(length);
  const step = from / to;
  const last = pcm.length - 1;
  for (let i = 0; i < length; i++) {
    const x = i * step;
    const i0 = Math.min(Math.floor(x), last);
    const i1 = Math.min(i0 + 1, last);
    const t = x - i0;
    const a = pcm[i0] ?? 0;
    const b = pcm[i1] ?? 0;
    out[i] = Math.round(a + (b - a) * t);
  }
  return out;
}
