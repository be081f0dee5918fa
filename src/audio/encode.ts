/**
 * Encoding of mono 16-bit PCM into the output formats of the service: WAV, raw PCM in
 * every sample type and byte order of `/tts-stream`, and (when the optional pure-JS
 * MP3 encoder is installed) MP3. Used by the emulator; pure functions, no I/O.
 */
import type { LiveOutputFormat, TtsStreamFormat } from '../core/schemas.js';
import { encodeWav16 } from './wav.js';
import { resample } from './pcm.js';
import { encodeMp3, LAME_PACKAGE, mp3Available, nearestMp3SampleRate } from './mp3.js';

export { loadMp3Encoder } from './mp3.js';

/** Any output format named by the service (live session or `/tts-stream`). */
export type OutputFormat = TtsStreamFormat | LiveOutputFormat;

/** Thrown by {@link encodeAudio} for a format this build cannot encode. */
/** What to do about a format `canEncode` refuses: for mp3, the package to install. */
export function missingEncoderHint(format: string): string {
  return format === 'mp3' && !mp3Available() ? ` (mp3 needs the optional package ${LAME_PACKAGE}: npm install ${LAME_PACKAGE})` : '';
}

export class UnsupportedAudioFormatError extends Error {
  override name = 'UnsupportedAudioFormatError';
  readonly code = 'unsupported_format' as const;
  readonly format: string;
  constructor(format: string) {
    super(
      `audio format "${format}" cannot be encoded here: the emulator encodes wav, pcm_s16le, pcm_s16be, ` +
        `pcm_s32le, pcm_s32be, pcm_f32le, pcm_f32be${mp3Available() ? ' and mp3' : ''}`,
    );
    this.format = format;
  }
}

const PCM_FORMATS = new Set<string>(['pcm_s16le', 'pcm_s16be', 'pcm_s32le', 'pcm_s32be', 'pcm_f32le', 'pcm_f32be']);

/** Whether {@link encodeAudio} can encode `format`. */
export function canEncode(format: string): format is OutputFormat {
  if (format === 'wav' || PCM_FORMATS.has(format)) return true;
  if (format === 'mp3') return mp3Available();
  return false;
}

/** The sample rate the encoded `format` will actually carry for PCM at `sampleRate`. */
export function encodedSampleRate(format: OutputFormat, sampleRate: number): number {
  return format === 'mp3' ? nearestMp3SampleRate(sampleRate) : sampleRate;
}

/** MIME type of a format (for HTTP answers). */
export function mimeTypeOf(format: OutputFormat): string {
  switch (format) {
    case 'wav':
      return 'audio/wav';
    case 'mp3':
      return 'audio/mpeg';
    case 'flac':
      return 'audio/flac';
    case 'aac':
    case 'adts':
      return 'audio/aac';
    default:
      return 'application/octet-stream';
  }
}

/**
 * Encode mono 16-bit PCM as `format`. `wav` is a whole file (44-byte header + PCM);
 * `pcm_*` formats are raw samples (s16/s32 integers or f32 floats in [-1, 1), little or
 * big endian); `mp3` needs the optional encoder.
 *
 * @throws UnsupportedAudioFormatError when the format cannot be encoded.
 */
export function encodeAudio(pcm: Int16Array, sampleRate: number, format: OutputFormat): Uint8Array {
  switch (format) {
    case 'wav':
      return encodeWav16(pcm, sampleRate);
    case 'pcm_s16le':
    case 'pcm_s16be': {
      const little = format === 'pcm_s16le';
      const out = new Uint8Array(pcm.length * 2);
      const view = new DataView(out.buffer);
      for (let i = 0; i < pcm.length; i++) view.setInt16(i * 2, pcm[i] ?? 0, little);
      return out;
    }
    case 'pcm_s32le':
    case 'pcm_s32be': {
      const little = format === 'pcm_s32le';
      const out = new Uint8Array(pcm.length * 4);
      const view = new DataView(out.buffer);
      for (let i = 0; i < pcm.length; i++) view.setInt32(i * 4, (pcm[i] ?? 0) * 65536, little);
      return out;
    }
    case 'pcm_f32le':
    case 'pcm_f32be': {
      const little = format === 'pcm_f32le';
      const out = new Uint8Array(pcm.length * 4);
      const view = new DataView(out.buffer);
      for (let i = 0; i < pcm.length; i++) view.setFloat32(i * 4, (pcm[i] ?? 0) / 32768, little);
      return out;
    }
    case 'mp3':
      if (!mp3Available()) throw new UnsupportedAudioFormatError(format);
      {
        // MP3 carries only a few rates: resample to the nearest one.
        const rate = nearestMp3SampleRate(sampleRate);
        return encodeMp3(resample(pcm, sampleRate, rate), rate);
      }
    default:
      throw new UnsupportedAudioFormatError(format);
  }
}
