/**
 * `PcmFrameCutter` cuts PCM into the same frames as LiveKit's own `AudioByteStream` (the
 * peer it replaces in `synthesize()`), however the bytes are chunked.
 */
import { AudioByteStream, initializeLogger } from '@livekit/agents';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PcmFrameCutter } from '../../src/livekit/frame-cutter.js';

interface FrameLike {
  data: Int16Array;
  sampleRate: number;
  channels: number;
  samplesPerChannel: number;
}
const plain = (frames: FrameLike[]) => frames.map((f) => ({ data: [...f.data], sampleRate: f.sampleRate, channels: f.channels, samplesPerChannel: f.samplesPerChannel }));

/** `bytes` cut at `cuts` (sorted offsets). */
function chunks(bytes: Uint8Array, cuts: number[]): Uint8Array[] {
  const at = [...new Set(cuts.map((c) => c % (bytes.byteLength + 1)))].sort((a, b) => a - b);
  const out: Uint8Array[] = [];
  let from = 0;
  for (const to of [...at, bytes.byteLength]) {
    out.push(bytes.subarray(from, to));
    from = to;
  }
  return out;
}

initializeLogger({ pretty: false, level: 'error' }); // AudioByteStream logs a dropped half sample

describe('PcmFrameCutter against LiveKit AudioByteStream', () => {
  it('the same frames, in order, for any chunking, frame size and length (odd lengths included)', () => {
    let frames = 0;
    fc.assert(
      fc.property(
        fc.tuple(fc.integer({ min: 0, max: 1500 }), fc.nat()).map(([length, seed]) => Uint8Array.from({ length }, (_, i) => (seed + i * 131) & 255)),
        fc.array(fc.nat(), { maxLength: 12 }),
        fc.integer({ min: 1, max: 64 }),
        fc.constantFrom(8000, 16000, 22050, 48000),
        (bytes, cuts, frameSamples, sampleRate) => {
          const ours = new PcmFrameCutter(sampleRate, frameSamples);
          const peer = new AudioByteStream(sampleRate, 1, frameSamples);
          for (const chunk of chunks(bytes, cuts)) {
            // a view into a larger buffer at an odd offset, as a network chunk may be
            const shifted = new Uint8Array(chunk.byteLength + 1).fill(7);
            shifted.set(chunk, 1);
            const view = shifted.subarray(1);
            const a = plain(ours.write(view) as FrameLike[]);
            expect(a).toEqual(plain(peer.write(view) as FrameLike[]));
            frames += a.length;
          }
          expect(plain(ours.flush() as FrameLike[])).toEqual(plain(peer.flush() as FrameLike[]));
          // flushed, it starts afresh, as a new cutter: nothing of the first bytes comes again, not
          // even an odd byte left (AudioByteStream keeps that one and puts it before the next bytes)
          const again = bytes.subarray(0, frameSamples * 2 + 2);
          const fresh = new PcmFrameCutter(sampleRate, frameSamples);
          expect(plain([...ours.write(again), ...ours.flush()] as FrameLike[])).toEqual(plain([...fresh.write(again), ...fresh.flush()] as FrameLike[]));
        },
      ),
      { numRuns: 400 },
    );
    expect(frames).toBeGreaterThan(100); // frames were compared, not only empty lists
  });
});
