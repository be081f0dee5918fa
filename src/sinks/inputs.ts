/**
 * What the sinks accept, and the PCM assembler that turns segments and chunks into one
 * continuous, frame-aligned PCM stream of a single format.
 */
import type { SpokenSegment } from '../live/events.js';
import { isWav, parseWavHeader, type PcmFormat } from '../audio/wav.js';
import { blockAlign, describeFormat, isValidPcmFormat, sameFormat, unwrapWav, type PcmChunk } from '../audio/pcm.js';
import { SinkError } from './errors.js';

/** Anything a PCM sink (`toWavFile`, `toAudioDevice`) takes. */
export type PcmSinkInput = SpokenSegment | PcmChunk;

export function isSpokenSegment(value: unknown): value is SpokenSegment {
  return typeof value === 'object' && value !== null && 'audio' in value && 'segment_id' in value;
}

export function isPcmChunk(value: unknown): value is PcmChunk {
  return typeof value === 'object' && value !== null && 'pcm' in value && 'format' in value;
}

/** Whether a segment carries WAV audio (by its declared format, or by sniffing when none). */
export function segmentIsWav(segment: SpokenSegment): boolean {
  return segment.format === 'wav' || (segment.format === undefined && isWav(segment.audio));
}

/**
 * Turns a sequence of segments and PCM chunks into frame-aligned PCM of one format.
 *
 * - WAV segments are unwrapped (header dropped, PCM kept); a partial frame at the end
 *   of a segment (odd byte count for 16-bit) is dropped so later segments stay aligned.
 * - PCM chunks are parts of one continuous stream: a partial frame at the end of a
 *   chunk is carried over to the next chunk.
 * - The first input fixes the format; a different one later throws
 *   `SinkError('format_mismatch')`. Non-WAV segments throw `SinkError('unsupported_format')`.
 *
 * Pieces are views of the inputs (no copy), except the few bytes that join a carried
 * partial frame to the next chunk.
 */
export class PcmAssembler {
  format: PcmFormat | undefined;
  /** Bytes dropped because they did not make a whole frame. */
  droppedBytes = 0;
  private carry: Uint8Array | undefined;

  constructor(private readonly sinkName: string, initial?: PcmFormat) {
    if (initial) this.format = this.checkFormat(initial, 'options.format');
  }

  /** The whole-frame PCM pieces to write for `input`. */
  push(input: PcmSinkInput): Uint8Array[] {
    if (isPcmChunk(input)) return this.pushChunk(input);
    if (!isSpokenSegment(input)) {
      throw new SinkError('invalid_audio', `${this.sinkName} takes SpokenSegment or { pcm, format } values`);
    }
    if (!segmentIsWav(input)) {
      throw new SinkError(
        'unsupported_format',
        `${this.sinkName} writes WAV/PCM, but segment ${input.segment_id} is ${input.format ?? 'not WAV'}: ` +
          `use toFile() for compressed formats (mp3, flac, aac)`,
      );
    }
    const unwrapped = unwrapWav(input.audio);
    if (!unwrapped) {
      const tag = parseWavHeader(input.audio)?.formatTag;
      const why = tag === undefined ? 'not a readable WAV file (no fmt/data chunk)' : `a WAV file whose samples are not PCM (format tag ${tag}: 1 is integer PCM, 3 float)`;
      throw new SinkError('invalid_audio', `segment ${input.segment_id} is ${why}`);
    }
    const format = this.accept(unwrapped.format, `segment ${input.segment_id}`);
    this.dropCarry();
    const align = blockAlign(format);
    const whole = unwrapped.pcm.byteLength - (unwrapped.pcm.byteLength % align);
    this.droppedBytes += unwrapped.pcm.byteLength - whole;
    return whole > 0 ? [unwrapped.pcm.subarray(0, whole)] : [];
  }

  /** Drop a partial frame still carried (at the end of the stream). */
  end(): void {
    this.dropCarry();
  }

  private pushChunk(chunk: PcmChunk): Uint8Array[] {
    const format = this.accept(chunk.format, 'PCM chunk');
    const align = blockAlign(format);
    const pieces: Uint8Array[] = [];
    let pcm = chunk.pcm;
    if (this.carry) {
      const need = align - this.carry.byteLength;
      if (pcm.byteLength < need) {
        const joined = new Uint8Array(this.carry.byteLength + pcm.byteLength);
        joined.set(this.carry, 0);
        joined.set(pcm, this.carry.byteLength);
        this.carry = joined;
        return pieces;
      }
      const frame = new Uint8Array(align);
      frame.set(this.carry, 0);
      frame.set(pcm.subarray(0, need), this.carry.byteLength);
      pieces.push(frame);
      this.carry = undefined;
      pcm = pcm.subarray(need);
    }
    const rest = pcm.byteLength % align;
    const whole = pcm.byteLength - rest;
    if (whole > 0) pieces.push(pcm.subarray(0, whole));
    if (rest > 0) this.carry = pcm.slice(whole);
    return pieces;
  }

  private dropCarry(): void {
    if (this.carry) this.droppedBytes += this.carry.byteLength;
    this.carry = undefined;
  }

  private accept(format: PcmFormat, what: string): PcmFormat {
    if (!this.format) {
      this.format = this.checkFormat(format, what);
      return this.format;
    }
    if (!sameFormat(this.format, format)) {
      throw new SinkError(
        'format_mismatch',
        `${this.sinkName}: ${what} is ${describeFormat(format)} but the stream is ${describeFormat(this.format)}; ` +
          `resample upstream or write each format to its own file`,
      );
    }
    return this.format;
  }

  private checkFormat(format: PcmFormat, what: string): PcmFormat {
    if (!isValidPcmFormat(format)) {
      throw new SinkError('invalid_audio', `${this.sinkName}: ${what} has an unusable PCM format (${describeFormat(format)})`);
    }
    return { sampleRate: format.sampleRate, channels: format.channels, bitsPerSample: format.bitsPerSample, audioFormat: format.audioFormat };
  }
}
