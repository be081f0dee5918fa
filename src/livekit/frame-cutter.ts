/**
 * Raw 16-bit mono PCM bytes, as they arrive, cut into LiveKit `AudioFrame`s of a fixed
 * number of samples: what LiveKit's `AudioByteStream` does (the same frames, proven in
 * `test/livekit/frame-cutter.test.ts`), without its cost: `AudioByteStream.write` copies
 * its whole buffer and every new byte through array spreads on each call, which was most
 * of `synthesize()`'s CPU time (a cutter copies each byte once).
 */
import { AudioFrame as RtcAudioFrame } from '@livekit/rtc-node';
import type { AudioFrame } from './peer.js';

/** Cuts PCM bytes into frames of `frameSamples` samples (see the file's summary). */
export class PcmFrameCutter {
  readonly #sampleRate: number;
  readonly #frameBytes: number;
  /** The start of the next frame: fewer than `#frameBytes` bytes. */
  #pending: Uint8Array;
  #filled = 0;

  constructor(sampleRate: number, frameSamples: number) {
    this.#sampleRate = sampleRate;
    this.#frameBytes = frameSamples * 2;
    this.#pending = new Uint8Array(this.#frameBytes);
  }

  /** The whole frames that `bytes` completes, in order. */
  write(bytes: Uint8Array): AudioFrame[] {
    const frames: AudioFrame[] = [];
    let at = 0;
    if (this.#filled > 0) {
      const take = Math.min(bytes.byteLength, this.#frameBytes - this.#filled);
      this.#pending.set(bytes.subarray(0, take), this.#filled);
      this.#filled += take;
      at = take;
      if (this.#filled < this.#frameBytes) return frames;
      frames.push(this.#frame(this.#pending));
      this.#pending = new Uint8Array(this.#frameBytes);
      this.#filled = 0;
    }
    for (; at + this.#frameBytes <= bytes.byteLength; at += this.#frameBytes) {
      frames.push(this.#frame(bytes.slice(at, at + this.#frameBytes)));
    }
    this.#pending.set(bytes.subarray(at), 0);
    this.#filled = bytes.byteLength - at;
    return frames;
  }

  /**
   * The last, shorter frame of what is left, if any. Like `AudioByteStream`, an odd number
   * of bytes left (half a sample) is dropped whole.
   */
  flush(): AudioFrame[] {
    const left = this.#filled;
    this.#filled = 0;
    if (left === 0 || left % 2 !== 0) return [];
    return [this.#frame(this.#pending.slice(0, left))];
  }

  /** A frame over `bytes` (its own buffer, starting at offset 0). */
  #frame(bytes: Uint8Array): AudioFrame {
    return new RtcAudioFrame(new Int16Array(bytes.buffer, 0, bytes.byteLength >> 1), this.#sampleRate, 1, bytes.byteLength >> 1);
  }
}
