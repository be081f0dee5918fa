/**
 * An incremental WAV decoder: bytes in as they arrive (split anywhere), float samples per
 * channel out, so playback can start before a segment's file is complete. A pure core
 * (`feed`), no I/O and no Node built-in; browser code wraps it.
 */
import { parseWavHeader, type WavInfo } from './wav.js';
import { STREAMING_WAV_SIZE } from './pcm.js';

/** Samples decoded from one `feed`: one Float32Array per channel, values in [-1, 1]. */
export interface DecodedPcm {
  sampleRate: number;
  channels: Float32Array[];
  /** Samples per channel. */
  frames: number;
}

/** A WAV file fed in pieces (see {@link createWavStreamDecoder}). */
export interface WavStreamDecoder {
  /**
   * Feeds the next bytes of the file; returns the whole sample frames they complete
   * (undefined while the header is incomplete or no frame is complete yet). Bytes of a
   * frame split across pieces are kept until the rest arrives. Bytes past the data chunk's
   * declared size (its pad byte, a chunk after it) are not samples: ignored, unless the
   * size is a streaming placeholder (0 or 0xFFFFFFFF), which means "until the end".
   * @throws Error when the header is not a WAV header, its format is not PCM (8, 16, 24
   * or 32-bit integer, 32-bit float), or no header is found in `maxHeaderBytes`.
   */
  feed(bytes: Uint8Array): DecodedPcm | undefined;
  /** The header, once read. */
  readonly format: WavInfo | undefined;
}

/**
 * Makes a decoder for one WAV file arriving in pieces.
 * @param maxHeaderBytes Bytes searched for the `data` chunk before giving up (default 65536).
 * @returns A fresh decoder.
 */
export function createWavStreamDecoder(maxHeaderBytes = 64 * 1024): WavStreamDecoder {
  let format: WavInfo | undefined;
  /** Bytes not yet decoded: the header so far, or the start of a split frame. */
  let carry: Uint8Array = new Uint8Array(0);

  const join = (bytes: Uint8Array): Uint8Array => {
    if (carry.byteLength === 0) return bytes;
    const out = new Uint8Array(carry.byteLength + bytes.byteLength);
    out.set(carry, 0);
    out.set(bytes, carry.byteLength);
    return out;
  };

  /** Bytes of the data chunk still to come (a declared size of 0 or 0xFFFFFFFF: until the end). */
  let left = Infinity;

  return {
    get format() {
      return format;
    },
    feed(bytes) {
      let piece = bytes;
      if (format === undefined) {
        const data = join(bytes);
        const header = parseWavHeader(data);
        if (header === undefined) {
          if (data.byteLength >= 4 && String.fromCharCode(data[0]!, data[1]!, data[2]!, data[3]!) !== 'RIFF') throw new Error('not a WAV file');
          if (data.byteLength > maxHeaderBytes) throw new Error(`no WAV data chunk in the first ${maxHeaderBytes} bytes`);
          carry = data;
          return undefined;
        }
        checkFormat(header);
        format = header;
        if (header.dataBytes !== 0 && header.dataBytes !== STREAMING_WAV_SIZE) left = header.dataBytes;
        carry = new Uint8Array(0);
        piece = data.subarray(header.dataOffset);
      }
      // bytes past the declared data (its pad byte, a chunk after it) are not samples
      if (piece.byteLength > left) piece = piece.subarray(0, left);
      left -= piece.byteLength;
      const data = join(piece);
      const align = format.channels * (format.bitsPerSample / 8);
      const frames = Math.floor(data.byteLength / align);
      carry = data.slice(frames * align);
      if (frames === 0) return undefined;
      return { sampleRate: format.sampleRate, frames, channels: decode(data, frames, format) };
    },
  };
}

function checkFormat(format: WavInfo): void {
  const { formatTag, bitsPerSample, channels, sampleRate } = format;
  const pcmInt = formatTag === 1 && [8, 16, 24, 32].includes(bitsPerSample);
  const pcmFloat = formatTag === 3 && bitsPerSample === 32;
  if (!pcmInt && !pcmFloat) throw new Error(`unsupported WAV format ${formatTag} with ${bitsPerSample} bits per sample`);
  if (channels < 1 || channels > 32 || sampleRate < 1) throw new Error(`invalid WAV header: ${channels} channels at ${sampleRate} Hz`);
}

function decode(data: Uint8Array, frames: number, format: WavInfo): Float32Array[] {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const { channels, bitsPerSample, audioFormat } = format;
  const width = bitsPerSample / 8;
  const out = Array.from({ length: channels }, () => new Float32Array(frames));
  for (let frame = 0, offset = 0; frame < frames; frame++) {
    for (let channel = 0; channel < channels; channel++, offset += width) {
      let value: number;
      if (audioFormat === 3) value = view.getFloat32(offset, true);
      else if (width === 2) value = view.getInt16(offset, true) / 32768;
      else if (width === 1) value = (view.getUint8(offset) - 128) / 128;
      else if (width === 3) value = ((view.getUint8(offset) | (view.getUint8(offset + 1) << 8) | (view.getInt8(offset + 2) << 16)) / 8388608);
      else value = view.getInt32(offset, true) / 2147483648;
      out[channel]![frame] = value;
    }
  }
  return out;
}
