/**
 * `PhoneFramer` plays every channel of a segment's WAV: a stereo segment is mixed to one
 * channel (the mean), so speech on either side is heard on the call.
 */
import { describe, expect, it } from 'vitest';
import { wavHeader } from '../../src/audio/wav.js';
import { PhoneFramer, type PhoneItem } from '../../src/telephony/phone-frames.js';

/** A 16-bit WAV at 8 kHz of the given channels (equal lengths), interleaved. */
function wav(channels: Int16Array[]): Uint8Array {
  const frames = channels[0]!.length;
  const data = new Int16Array(frames * channels.length);
  for (let i = 0; i < frames; i++) for (let c = 0; c < channels.length; c++) data[i * channels.length + c] = channels[c]![i]!;
  const header = wavHeader({ sampleRate: 8000, channels: channels.length, bitsPerSample: 16, audioFormat: 1 }, data.byteLength);
  const out = new Uint8Array(header.length + data.byteLength);
  out.set(header);
  out.set(new Uint8Array(data.buffer), header.length);
  return out;
}

/** A 440 Hz tone of 50 ms at 8 kHz, peak `amplitude`. */
function tone(amplitude: number): Int16Array {
  return Int16Array.from({ length: 400 }, (_, i) => Math.round(amplitude * Math.sin((2 * Math.PI * 440 * i) / 8000)));
}

/** The mu-law bytes of a segment's media frames. */
function played(audio: Uint8Array): number[] {
  const items: PhoneItem[] = new PhoneFramer().push({ segment_id: 0, text: 'A tone.', word_timestamps: [], audio, format: 'wav' });
  return items.flatMap((item) => (item.kind === 'media' ? [...item.bytes] : []));
}

const silence = new Int16Array(400);

describe('PhoneFramer: channels', () => {
  it('mixes a stereo segment to one channel: speech on the right alone is heard, at half its level', () => {
    const right = played(wav([silence, tone(8000).map((sample) => 2 * sample)]));
    expect(right).toEqual(played(wav([tone(8000)])));
    // control: the left channel alone is silence (0xff), which is what playing the first channel gave
    expect(played(wav([silence])).every((byte) => byte === 0xff)).toBe(true);
    expect(right.some((byte) => byte !== 0xff)).toBe(true);
  });

  it('a stereo segment with the same speech on both sides plays as its mono version', () => {
    expect(played(wav([tone(12000), tone(12000)]))).toEqual(played(wav([tone(12000)])));
  });
});
