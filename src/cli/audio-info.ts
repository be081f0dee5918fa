/**
 * Facts about audio the CLI prints: the duration of a WAV file or segment.
 */
import { parseWavHeader, wavDataBytes } from '../audio/wav.js';

/** Seconds of audio in WAV `bytes` (the PCM actually present), or undefined when not WAV. */
export function audioSeconds(bytes: Uint8Array): number | undefined {
  const info = parseWavHeader(bytes);
  if (!info) return undefined;
  const frame = (info.channels * info.bitsPerSample) / 8;
  if (frame <= 0 || info.sampleRate <= 0) return undefined;
  // a streamed header's size (0, 0xFFFFFFFF) is the bytes present
  return Math.floor(wavDataBytes(info, bytes.byteLength - info.dataOffset) / frame) / info.sampleRate;
}
