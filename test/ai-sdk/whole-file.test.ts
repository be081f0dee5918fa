/**
 * `wholeFile`, the audio `generateSpeech` returns: the streamed chunks joined, and a WAV's
 * sizes made true behind a canonical 44-byte header. Whatever the chunking, the header
 * (streaming placeholders, true sizes, or a longer header with a LIST chunk) and trailing
 * bytes past a declared size, it gives the same bytes as the reference: a fresh canonical
 * header, then the PCM. Other formats are the chunks joined.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { streamingWavHeader } from '../../src/audio/pcm.js';
import { wavHeader, type PcmFormat } from '../../src/audio/wav.js';
import { wholeFile } from '../../src/ai-sdk/speech-model.js';
import { concatBytes } from '../../src/core/bytes.js';

const FORMAT: PcmFormat = { sampleRate: 22050, channels: 1, bitsPerSample: 16, audioFormat: 1 };

/** A header with a LIST chunk between `fmt ` and `data` (data at offset 56), data size `size`. */
function listHeader(size: number): Uint8Array {
  const canonical = wavHeader(FORMAT, size);
  const list = new Uint8Array([0x4c, 0x49, 0x53, 0x54, 4, 0, 0, 0, 0x49, 0x4e, 0x46, 0x4f]); // 'LIST', 4, 'INFO'
  return concatBytes([canonical.subarray(0, 36), list, canonical.subarray(36)]);
}

/** Cuts `bytes` at the given points (sorted, deduplicated) into chunks. */
function chunked(bytes: Uint8Array, cuts: number[]): Uint8Array[] {
  const points = [...new Set(cuts.map((c) => c % (bytes.byteLength + 1)))].sort((a, b) => a - b);
  const out: Uint8Array[] = [];
  let at = 0;
  for (const p of [...points, bytes.byteLength]) {
    out.push(bytes.slice(at, p));
    at = p;
  }
  return out;
}

describe('wholeFile', () => {
  it('any header kind, chunking and trailing bytes: a canonical header with true sizes, then the PCM', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 0, maxLength: 400 }),
        fc.constantFrom('streaming', 'true', 'list'),
        fc.nat({ max: 9 }),
        fc.array(fc.nat(), { maxLength: 8 }),
        (pcm, kind, extra, cuts) => {
          const header = kind === 'streaming' ? streamingWavHeader(FORMAT) : kind === 'true' ? wavHeader(FORMAT, pcm.byteLength) : listHeader(pcm.byteLength);
          // trailing bytes past the data chunk only where a size says where the data ends
          const trailing = kind === 'streaming' ? new Uint8Array(0) : new Uint8Array(extra).fill(9);
          const file = concatBytes([header, pcm, trailing]);
          // a declared data size of 0 reads as "unknown" (unwrapWav): the data then runs to the end
          const data = pcm.byteLength === 0 ? trailing : pcm;
          const expected = concatBytes([wavHeader(FORMAT, data.byteLength), data]);
          expect(wholeFile('wav', chunked(file, cuts))).toEqual(expected);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('other formats (and bytes that are not a WAV): the chunks joined as they are', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.array(fc.nat(), { maxLength: 6 }), fc.constantFrom('mp3', 'wav', 'pcm_s16le'), (bytes, cuts, format) => {
        fc.pre(format !== 'wav' || bytes[0] !== 0x52); // not 'R' of RIFF
        expect(wholeFile(format as 'mp3', chunked(bytes, cuts))).toEqual(bytes);
      }),
    );
  });
});
