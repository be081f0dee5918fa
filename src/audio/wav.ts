/**
 * WAV (RIFF/WAVE) header reading and writing, and PCM helpers. Shared by the emulator
 * (which encodes synthesized PCM), the client (which reads segment audio) and the sinks.
 */

export interface PcmFormat {
  sampleRate: number;
  channels: number;
  /** 16, 24 or 32 for integer PCM; 32 for float. */
  bitsPerSample: number;
  /** 1 = integer PCM, 3 = IEEE float. */
  audioFormat: 1 | 3;
}

/** The header of integer PCM: 44 bytes. */
export const WAV_HEADER_BYTES = 44;
/** The header of IEEE float: 58 bytes (an 18-byte `fmt ` chunk and a `fact` chunk, which a format other than integer PCM needs). */
const FLOAT_WAV_HEADER_BYTES = 58;

/** The length of {@link wavHeader}'s header for `format`. */
export function wavHeaderBytes(format: Pick<PcmFormat, 'audioFormat'>): number {
  return format.audioFormat === 3 ? FLOAT_WAV_HEADER_BYTES : WAV_HEADER_BYTES;
}

/**
 * A canonical WAV header for `dataBytes` bytes of PCM: 44 bytes for integer PCM; for IEEE
 * float, 58 (its `fmt ` chunk with a `cbSize` of 0, then a `fact` chunk with the frames).
 */
export function wavHeader(format: PcmFormat, dataBytes: number): Uint8Array {
  const float = format.audioFormat === 3;
  const length = wavHeaderBytes(format);
  const header = new Uint8Array(length);
  const view = new DataView(header.buffer);
  const blockAlign = (format.channels * format.bitsPerSample) / 8;
  writeAscii(header, 0, 'RIFF');
  view.setUint32(4, length - 8 + dataBytes, true);
  writeAscii(header, 8, 'WAVE');
  writeAscii(header, 12, 'fmt ');
  view.setUint32(16, float ? 18 : 16, true);
  view.setUint16(20, format.audioFormat, true);
  view.setUint16(22, format.channels, true);
  view.setUint32(24, format.sampleRate, true);
  view.setUint32(28, format.sampleRate * blockAlign, true);
  view.setUint16(32, blockAlign, true);
  view.setUint16(34, format.bitsPerSample, true);
  if (float) {
    // cbSize (0) at 36, then the fact chunk: the frames the data holds
    writeAscii(header, 38, 'fact');
    view.setUint32(42, 4, true);
    view.setUint32(46, blockAlign > 0 ? Math.floor(dataBytes / blockAlign) : 0, true);
  }
  writeAscii(header, length - 8, 'data');
  view.setUint32(length - 4, dataBytes, true);
  return header;
}

/**
 * The PCM bytes a WAV file holds, given its header and the bytes present after the data
 * chunk's start: the declared size when it fits, else (a streaming placeholder: 0, 0x7FFFFFFF,
 * 0xFFFFFFFF, or any size past the end) the bytes present.
 */
export function wavDataBytes(info: Pick<WavInfo, 'dataBytes'>, present: number): number {
  const available = Math.max(0, present);
  return info.dataBytes === 0 || info.dataBytes > available ? available : info.dataBytes;
}

/** A whole WAV file from 16-bit mono samples. */
export function encodeWav16(samples: Int16Array, sampleRate: number): Uint8Array {
  const data = new Uint8Array(samples.buffer, samples.byteOffset, samples.byteLength);
  const out = new Uint8Array(WAV_HEADER_BYTES + data.byteLength);
  out.set(wavHeader({ sampleRate, channels: 1, bitsPerSample: 16, audioFormat: 1 }, data.byteLength), 0);
  out.set(data, WAV_HEADER_BYTES);
  return out;
}

export interface WavInfo extends PcmFormat {
  /** Offset of the first PCM byte. */
  dataOffset: number;
  /** Declared size of the data chunk (may be a placeholder like 0xFFFFFFFF for streams). */
  dataBytes: number;
  /**
   * The `fmt ` chunk's format tag as read (1 = integer PCM, 3 = IEEE float, 6 = A-law,
   * 7 = mu-law, ...; a WAVE_FORMAT_EXTENSIBLE header gives its sub-format's tag).
   * `audioFormat` is only meaningful when this is 1 or 3.
   */
  formatTag: number;
}

/** The format tag of WAVE_FORMAT_EXTENSIBLE, whose real format is the first 2 bytes of its sub-format GUID. */
const WAVE_FORMAT_EXTENSIBLE = 0xfffe;

/**
 * Parse a WAV header: walks the RIFF chunks to `fmt ` and `data`. Returns undefined when
 * `bytes` does not start with a complete WAV header (e.g. too short, or not RIFF/WAVE).
 */
export function parseWavHeader(bytes: Uint8Array): WavInfo | undefined {
  if (bytes.byteLength < 12) return undefined;
  if (readAscii(bytes, 0, 4) !== 'RIFF' || readAscii(bytes, 8, 4) !== 'WAVE') return undefined;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let offset = 12;
  let format: (PcmFormat & { formatTag: number }) | undefined;
  while (offset + 8 <= bytes.byteLength) {
    const id = readAscii(bytes, offset, 4);
    const size = view.getUint32(offset + 4, true);
    const body = offset + 8;
    if (id === 'fmt ') {
      if (body + 16 > bytes.byteLength) return undefined;
      let formatTag = view.getUint16(body, true);
      if (formatTag === WAVE_FORMAT_EXTENSIBLE && size >= 40) {
        if (body + 26 > bytes.byteLength) return undefined;
        formatTag = view.getUint16(body + 24, true);
      }
      format = {
        formatTag,
        audioFormat: formatTag === 3 ? 3 : 1,
        channels: view.getUint16(body + 2, true),
        sampleRate: view.getUint32(body + 4, true),
        bitsPerSample: view.getUint16(body + 14, true),
      };
    } else if (id === 'data') {
      if (!format) return undefined;
      return { ...format, dataOffset: body, dataBytes: size };
    }
    offset = body + size + (size % 2);
  }
  return undefined;
}

export function isWav(bytes: Uint8Array): boolean {
  return bytes.byteLength >= 12 && readAscii(bytes, 0, 4) === 'RIFF' && readAscii(bytes, 8, 4) === 'WAVE';
}

function writeAscii(target: Uint8Array, offset: number, text: string): void {
  for (let i = 0; i < text.length; i++) target[offset + i] = text.charCodeAt(i);
}

function readAscii(bytes: Uint8Array, offset: number, length: number): string {
  let s = '';
  for (let i = 0; i < length; i++) s += String.fromCharCode(bytes[offset + i] ?? 0);
  return s;
}
