import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { createWavStreamDecoder, type WavStreamDecoder } from '../../src/audio/wavStream.js';
import { parseWavHeader, wavHeader, type PcmFormat } from '../../src/audio/wav.js';
import { unwrapWav } from '../../src/audio/pcm.js';

const ascii = (text: string): number[] => [...text].map((c) => c.charCodeAt(0));
const u32 = (n: number): number[] => [n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, (n >>> 24) & 0xff];
const u16 = (n: number): number[] => [n & 0xff, (n >>> 8) & 0xff];
/** A RIFF chunk: id, size, body, and the pad byte an odd body takes. */
const chunk = (id: string, body: number[], size = body.length): number[] => [...ascii(id), ...u32(size), ...body, ...(body.length % 2 ? [0] : [])];
/** A data chunk of a stream of unknown length: a placeholder size, the samples to the end (no pad byte). */
const streamedData = (body: number[], placeholder: number): number[] => [...ascii('data'), ...u32(placeholder), ...body];
/** A `fmt ` body of 16 bytes (or the 40 of WAVE_FORMAT_EXTENSIBLE, when `subFormat` is given). */
const fmtBody = (tag: number, channels: number, rate: number, bits: number, subFormat?: number): number[] => {
  const align = (channels * bits) / 8;
  const base = [...u16(tag), ...u16(channels), ...u32(rate), ...u32(rate * align), ...u16(align), ...u16(bits)];
  if (subFormat === undefined) return base;
  // cbSize 22, valid bits, channel mask, then the sub-format GUID (its first 2 bytes are the real tag)
  return [...base, ...u16(22), ...u16(bits), ...u32(0), ...u16(subFormat), 0, 0, 0, 0, 0x10, 0, 0x80, 0, 0, 0xaa, 0, 0x38, 0x9b, 0x71];
};
/** A WAV file of the chunks given (RIFF size filled in). */
const riff = (...chunks: number[][]): Uint8Array => {
  const body = [...ascii('WAVE'), ...chunks.flat()];
  return Uint8Array.from([...ascii('RIFF'), ...u32(body.length), ...body]);
};

/** Feeds `bytes` in pieces of the sizes in `cuts` (then the rest); all the samples of channel `channel` that came out. */
function feedInPieces(bytes: Uint8Array, cuts: readonly number[], decoder: WavStreamDecoder = createWavStreamDecoder()): number[][] {
  const channels: number[][] = [];
  let at = 0;
  for (const cut of [...cuts, bytes.length]) {
    const end = Math.min(bytes.length, at + cut);
    const out = decoder.feed(bytes.subarray(at, end));
    out?.channels.forEach((samples, c) => (channels[c] ??= []).push(...samples));
    at = end;
    if (at >= bytes.length) break;
  }
  return channels;
}

describe('the streamed WAV decoder, fed in arbitrary pieces', () => {
  const formats: readonly Omit<PcmFormat, 'sampleRate' | 'channels'>[] = [
    { bitsPerSample: 8, audioFormat: 1 },
    { bitsPerSample: 16, audioFormat: 1 },
    { bitsPerSample: 24, audioFormat: 1 },
    { bitsPerSample: 32, audioFormat: 1 },
    { bitsPerSample: 32, audioFormat: 3 },
  ];
  /** Chunks a file may hold before its data: odd-sized (with their pad byte), empty, or a big `fmt ` tail. */
  const extraChunk = fc.oneof(
    fc.uint8Array({ maxLength: 9 }).map((b) => chunk('LIST', [...b])),
    fc.constant(chunk('fact', u32(1234))),
    fc.uint8Array({ maxLength: 5 }).map((b) => chunk('JUNK', [...b])),
  );

  it('gives the same samples whatever the pieces (empty ones too), with other chunks skipped, any declared data size, a chunk after the data', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...formats),
        fc.integer({ min: 1, max: 3 }),
        fc.uint8Array({ maxLength: 200 }),
        fc.array(extraChunk, { maxLength: 3 }),
        fc.constantFrom<'exact' | number>('exact', 0, 0xffffffff),
        fc.oneof(fc.constant([]), extraChunk),
        fc.array(fc.integer({ min: 0, max: 60 }), { maxLength: 30 }),
        (format, channels, raw, extras, declared, trailer, cuts) => {
          const align = (channels * format.bitsPerSample) / 8;
          const pcm = [...raw.subarray(0, raw.length - (raw.length % align))];
          const fmt = fmtBody(format.audioFormat, channels, 16000, format.bitsPerSample);
          // a declared size may be followed by its pad byte and another chunk; a placeholder runs to the end
          // (as does a declared 0: an empty data chunk reads as a stream's placeholder, so no chunk after it here)
          const data = declared === 'exact' ? [...chunk('data', pcm), ...(pcm.length > 0 ? trailer : [])] : streamedData(pcm, declared);
          const file = riff(chunk('fmt ', fmt), ...extras, data);
          const whole = feedInPieces(file, []);
          expect(feedInPieces(file, cuts)).toEqual(whole);
          // the whole file's samples are those of its data chunk alone, in a canonical file
          const canonical = Uint8Array.from([...wavHeader({ ...format, channels, sampleRate: 16000 }, pcm.length), ...pcm]);
          const reference = feedInPieces(canonical, []);
          expect(whole).toEqual(reference);
          expect(reference.map((c) => c.length)).toEqual(pcm.length === 0 ? [] : Array(channels).fill(pcm.length / align));
        },
      ),
    );
  });

  it('reads the header split at every byte, and 16-bit samples split between their two bytes', () => {
    const samples = [1000, -1000, 32767, -32768, 1, -1];
    const data = samples.flatMap((s) => u16(s & 0xffff));
    const file = riff(chunk('fmt ', fmtBody(1, 1, 8000, 16)), chunk('LIST', ascii('INFOx')), chunk('data', data));
    const expected = [samples.map((s) => s / 32768)];
    const headerLength = file.length - data.length;
    for (let cut = 0; cut <= headerLength + 1; cut++) expect(feedInPieces(file, [cut]), `cut at ${cut}`).toEqual(expected);
    // one byte at a time: every sample arrives in two pieces; at odd offsets into the data: a piece of 3 then 2s
    expect(feedInPieces(file, Array<number>(file.length).fill(1))).toEqual(expected);
    expect(feedInPieces(file, [headerLength + 3, 2, 2, 2, 2, 2])).toEqual(expected);
  });

  it('ignores what follows the data chunk (its pad byte, a chunk after it) unless its size is a streaming placeholder', () => {
    // 8-bit mono, 3 samples: the pad byte (0x00) would decode as -1, a full-scale click
    const data = [0x80, 0xc0, 0x40];
    const fmt = chunk('fmt ', fmtBody(1, 1, 8000, 8));
    const trailing = chunk('LIST', [...ascii('INFO'), 0x7f, 0x7f, 0x7f, 0x7f]);
    const expected = [[0, 0.5, -0.5]];
    const withTrailer = riff(fmt, chunk('data', data), trailing);
    fc.assert(fc.property(fc.array(fc.integer({ min: 0, max: 7 }), { maxLength: 20 }), (cuts) => {
      expect(feedInPieces(withTrailer, cuts)).toEqual(expected);
    }));
    // the whole-file reader agrees
    expect([...unwrapWav(withTrailer)!.pcm]).toEqual(data);
    // control: a placeholder size (0 or 0xFFFFFFFF, as a stream of unknown length declares) means "until the end"
    for (const placeholder of [0, 0xffffffff]) {
      const streamed = riff(fmt, streamedData([...data, 0x00], placeholder));
      expect(feedInPieces(streamed, [50, 1])).toEqual([[0, 0.5, -0.5, -1]]);
    }
  });
});

describe('the streamed WAV decoder refuses what it cannot play', () => {
  const pcm16 = (channels: number, bits = 16, tag = 1): Uint8Array =>
    riff(chunk('fmt ', fmtBody(tag, channels, 8000, bits)), chunk('data', Array<number>(Math.ceil((channels * bits) / 8)).fill(0)));

  it('a file not starting with RIFF, as soon as its first 4 bytes are in', () => {
    expect(() => createWavStreamDecoder().feed(Uint8Array.from(ascii('ID3\u0004')))).toThrow('not a WAV file');
    const decoder = createWavStreamDecoder();
    expect(decoder.feed(Uint8Array.from(ascii('RIF')))).toBeUndefined();
    expect(() => decoder.feed(Uint8Array.from(ascii('X')))).toThrow('not a WAV file');
    // control: RIFF's first 4 bytes wait for the rest
    expect(createWavStreamDecoder().feed(Uint8Array.from(ascii('RIFF')))).toBeUndefined();
  });

  it('a header without a data chunk in maxHeaderBytes: waits up to that many bytes, refuses one more', () => {
    const head = Uint8Array.from([...ascii('RIFF'), ...u32(1000), ...ascii('WAVE'), ...chunk('JUNK', Array<number>(80).fill(0))]);
    const decoder = createWavStreamDecoder(head.length + 4);
    expect(decoder.feed(head)).toBeUndefined();
    expect(decoder.feed(new Uint8Array(4))).toBeUndefined();
    expect(() => decoder.feed(new Uint8Array(1))).toThrow(`no WAV data chunk in the first ${head.length + 4} bytes`);
  });

  it('1 to 32 channels, no more', () => {
    expect(createWavStreamDecoder().feed(pcm16(32))?.channels).toHaveLength(32);
    expect(() => createWavStreamDecoder().feed(pcm16(33))).toThrow('invalid WAV header: 33 channels at 8000 Hz');
  });

  it('integer samples of 8, 16, 24 or 32 bits only', () => {
    for (const bits of [8, 16, 24, 32]) expect(createWavStreamDecoder().feed(pcm16(1, bits))?.frames).toBe(1);
    for (const bits of [12, 40, 64]) expect(() => createWavStreamDecoder().feed(pcm16(1, bits))).toThrow(`unsupported WAV format 1 with ${bits} bits`);
    expect(() => createWavStreamDecoder().feed(pcm16(1, 64, 3))).toThrow('unsupported WAV format 3 with 64 bits');
  });

  it('A-law and mu-law files (tags 6 and 7) are refused, not played as 8-bit PCM noise', () => {
    expect(() => createWavStreamDecoder().feed(pcm16(1, 8, 7))).toThrow('unsupported WAV format 7 with 8 bits per sample');
    expect(() => createWavStreamDecoder().feed(pcm16(1, 8, 6))).toThrow('unsupported WAV format 6 with 8 bits per sample');
    expect(() => createWavStreamDecoder().feed(pcm16(1, 16, 2))).toThrow('unsupported WAV format 2');
    // the whole-file reader does not unwrap them as PCM either (control: the same file with tag 1 is)
    expect(unwrapWav(pcm16(1, 8, 7))).toBeUndefined();
    expect(unwrapWav(pcm16(1, 8, 1))?.format).toEqual({ sampleRate: 8000, channels: 1, bitsPerSample: 8, audioFormat: 1 });
  });

  it('WAVE_FORMAT_EXTENSIBLE is read by its sub-format: PCM as integers, IEEE float as floats, mu-law refused', () => {
    const extensible = (subFormat: number, bits: number, data: number[]): Uint8Array =>
      riff(chunk('fmt ', fmtBody(0xfffe, 1, 8000, bits, subFormat)), chunk('data', data));
    expect(feedInPieces(extensible(1, 16, [0x00, 0x40]), [30])).toEqual([[0.5]]);
    // 0x3E800000 is 0.25 as a float; read as an integer it would be 0x3E800000 / 2^31
    expect(feedInPieces(extensible(3, 32, [0, 0, 0x80, 0x3e]), [61])).toEqual([[0.25]]);
    expect(parseWavHeader(extensible(3, 32, [0, 0, 0, 0]))).toMatchObject({ audioFormat: 3, formatTag: 3 });
    expect(() => createWavStreamDecoder().feed(extensible(7, 8, [0]))).toThrow('unsupported WAV format 7');
  });

  it('a data chunk before any fmt chunk is no header', () => {
    const file = riff(chunk('data', [0, 0]), chunk('fmt ', fmtBody(1, 1, 8000, 16)));
    expect(parseWavHeader(file)).toBeUndefined();
    // control: the same chunks in order are
    expect(parseWavHeader(riff(chunk('fmt ', fmtBody(1, 1, 8000, 16)), chunk('data', [0, 0])))).toMatchObject({ dataOffset: 44, dataBytes: 2 });
  });
});
