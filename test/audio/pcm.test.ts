import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { isValidPcmFormat, patchWavSizes, pcmSeconds, resample, streamingWavHeader, STREAMING_WAV_SIZE, unwrapWav } from '../../src/audio/pcm.js';
import { parseWavHeader, wavHeader, type PcmFormat } from '../../src/audio/wav.js';
import { audioSeconds } from '../../src/cli/audio-info.js';
import { segmentDuration } from '../../src/operators/wordTimeline.js';

const mono16: PcmFormat = { sampleRate: 8000, channels: 1, bitsPerSample: 16, audioFormat: 1 };
const u32At = (bytes: Uint8Array, offset: number): number => new DataView(bytes.buffer, bytes.byteOffset).getUint32(offset, true);

describe('PCM formats', () => {
  it('a WAV writer can describe whole positive rates and channel counts, whole bytes per sample', () => {
    expect(isValidPcmFormat(mono16)).toBe(true);
    expect(isValidPcmFormat({ ...mono16, sampleRate: 8000.5 })).toBe(false);
    expect(isValidPcmFormat({ ...mono16, sampleRate: 0 })).toBe(false);
    expect(isValidPcmFormat({ ...mono16, channels: 0 })).toBe(false);
    expect(isValidPcmFormat({ ...mono16, channels: 1.5 })).toBe(false);
    expect(isValidPcmFormat({ ...mono16, bitsPerSample: 12 })).toBe(false);
    expect(isValidPcmFormat({ ...mono16, bitsPerSample: 0 })).toBe(false);
  });

  it('seconds of PCM: bytes over the byte rate, 0 (not Infinity or NaN) for a format without one', () => {
    expect(pcmSeconds(16000, mono16)).toBe(1);
    expect(pcmSeconds(12000, { ...mono16, channels: 2, bitsPerSample: 24 })).toBe(0.25);
    expect(pcmSeconds(100, { ...mono16, sampleRate: 0 })).toBe(0);
    expect(pcmSeconds(0, { ...mono16, channels: 0 })).toBe(0);
  });
});

describe('WAV sizes', () => {
  it('a streaming header declares 0xFFFFFFFF for both the RIFF and the data size', () => {
    const header = streamingWavHeader(mono16);
    expect([u32At(header, 4), u32At(header, 40)]).toEqual([STREAMING_WAV_SIZE, STREAMING_WAV_SIZE]);
    expect(parseWavHeader(header)).toMatchObject({ ...mono16, dataOffset: 44, dataBytes: STREAMING_WAV_SIZE });
  });

  it('patched sizes: the data size as is, the RIFF size counting the pad byte of odd data', () => {
    expect([u32At(patchWavSizes(wavHeader(mono16, 0), 100), 4), u32At(patchWavSizes(wavHeader(mono16, 0), 100), 40)]).toEqual([136, 100]);
    const odd = patchWavSizes(wavHeader({ ...mono16, bitsPerSample: 8 }, 0), 101);
    expect([u32At(odd, 4), u32At(odd, 40)]).toEqual([138, 101]);
  });

  it('unwrapping trusts a declared data size that fits, and reads the bytes present for one that does not', () => {
    const file = Uint8Array.from([...wavHeader(mono16, 4), 1, 2, 3, 4, 9, 9]);
    expect([...unwrapWav(file)!.pcm]).toEqual([1, 2, 3, 4]);
    expect([...unwrapWav(Uint8Array.from([...wavHeader(mono16, 6), 1, 2, 3, 4]))!.pcm]).toEqual([1, 2, 3, 4]);
    expect([...unwrapWav(Uint8Array.from([...wavHeader(mono16, 0), 1, 2]))!.pcm]).toEqual([1, 2]);
  });

  it('an IEEE float header is 58 bytes: an 18-byte fmt chunk (cbSize 0) and a fact chunk with the frames, as a format other than integer PCM needs; integer PCM stays 44 (control)', () => {
    const float: PcmFormat = { sampleRate: 24000, channels: 2, bitsPerSample: 32, audioFormat: 3 };
    const ascii = (bytes: Uint8Array, at: number) => String.fromCharCode(...bytes.subarray(at, at + 4));
    const u16At = (bytes: Uint8Array, at: number) => new DataView(bytes.buffer, bytes.byteOffset).getUint16(at, true);
    const header = wavHeader(float, 800);
    expect(header.length).toBe(58);
    expect([ascii(header, 12), u32At(header, 16), u16At(header, 20), u16At(header, 36)]).toEqual(['fmt ', 18, 3, 0]);
    expect([ascii(header, 38), u32At(header, 42), u32At(header, 46)]).toEqual(['fact', 4, 100]); // 800 bytes of 8-byte frames
    expect([ascii(header, 50), u32At(header, 54), u32At(header, 4)]).toEqual(['data', 800, 850]);
    expect(parseWavHeader(header)).toMatchObject({ ...float, dataOffset: 58, dataBytes: 800 });
    // patched and streamed sizes land where this header keeps them
    const patched = patchWavSizes(wavHeader(float, 0), 801);
    expect([u32At(patched, 4), u32At(patched, 46), u32At(patched, 54)]).toEqual([852, 100, 801]);
    const streamed = streamingWavHeader(float);
    expect([u32At(streamed, 4), u32At(streamed, 46), u32At(streamed, 54)]).toEqual([STREAMING_WAV_SIZE, STREAMING_WAV_SIZE, STREAMING_WAV_SIZE]);
    const file = Uint8Array.from([...wavHeader(float, 16), ...new Uint8Array(16)]);
    expect(unwrapWav(file)!.pcm.byteLength).toBe(16);
    expect(wavHeader(mono16, 100).length).toBe(44);
    expect(u32At(wavHeader(mono16, 100), 16)).toBe(16);
  });

  it("the CLI's duration, a segment's duration and unwrapping read a declared size alike: exact, short, past the end, or a streaming placeholder (0, 0x7FFFFFFF, 0xFFFFFFFF)", () => {
    const pcm = new Uint8Array(1600); // 0.1 s of 8 kHz 16-bit mono
    for (const [declared, seconds] of [
      [1600, 0.1],
      [800, 0.05],
      [3200, 0.1],
      [0, 0.1],
      [0x7fffffff, 0.1],
      [STREAMING_WAV_SIZE, 0.1],
    ] as const) {
      const file = Uint8Array.from([...wavHeader(mono16, declared), ...pcm]);
      const segment = { segment_id: 0, text: 'x', word_timestamps: [], audio: file, format: 'wav' as const };
      expect([audioSeconds(file), segmentDuration(segment), pcmSeconds(unwrapWav(file)!.pcm.byteLength, mono16)], String(declared)).toEqual([seconds, seconds, seconds]);
    }
  });
});

describe('resample (linear interpolation)', () => {
  it('puts the points between two samples on the line joining them', () => {
    expect([...resample(Int16Array.from([0, 1000, -1000]), 8000, 16000)]).toEqual([0, 500, 1000, 0, -1000, -1000]);
    expect([...resample(Int16Array.from([0, 300, 600, 900]), 16000, 8000)]).toEqual([0, 600]);
  });

  it('any rates: round(length * to / from) samples, each between its two neighbours in the input', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: -32768, max: 32767 }), { minLength: 1, maxLength: 200 }),
        fc.integer({ min: 4000, max: 48000 }),
        fc.integer({ min: 4000, max: 48000 }),
        (samples, from, to) => {
          const input = Int16Array.from(samples);
          const out = resample(input, from, to);
          expect(out.length).toBe(from === to ? input.length : Math.round((input.length * to) / from));
          out.forEach((value, i) => {
            const x = (i * from) / to;
            const i0 = Math.min(Math.floor(x), input.length - 1);
            const a = input[i0]!;
            const b = input[Math.min(i0 + 1, input.length - 1)]!;
            const t = x - i0;
            expect(Math.abs(value - (a + (b - a) * t))).toBeLessThanOrEqual(0.5 + 1e-9);
          });
        },
      ),
    );
  });

  it('refuses rates that are not positive; returns its input at equal rates', () => {
    const input = Int16Array.from([1, 2, 3]);
    expect(resample(input, 8000, 8000)).toBe(input);
    expect(() => resample(input, 0, 8000)).toThrow(RangeError);
    expect(() => resample(input, 8000, -1)).toThrow('invalid sample rates 8000 -> -1');
  });
});
