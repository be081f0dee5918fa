/**
 * Facts about audio the CLI prints: the duration of a WAV file or segment.
 */
import { parseWavHeader } from '../audio/wav.js';

/** Seconds of audio in WAV `bytes` (the PCM actually present), or undefined when not WAV. */
export function audioSeconds(bytes: Uint8Array): number | undefined {
  const info = parseWavHeader(bytes);
  if (!info) return undefined;
  const frame = (info.channels * info.bitsPerSample) / 8;
  if (frame <= 0 || info.sampleRate <= 0) return undefined;
  const present = Math.max(0, bytes.byteLength - info.dataOffset);
  const data = Math.min(info.dataBytes, present);
  return Math.floor(data / frame) / info.sampleRate;
}
