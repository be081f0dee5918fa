import { beforeAll, describe, expect, it } from 'vitest';
import { encodeAudio, encodedSampleRate, loadMp3Encoder, mimeTypeOf } from '../../src/audio/encode.js';
import { MP3_SAMPLE_RATES, nearestMp3SampleRate } from '../../src/audio/mp3.js';

describe('what the emulator says of an encoded format', () => {
  it('its MIME type', () => {
    expect(mimeTypeOf('wav')).toBe('audio/wav');
    expect(mimeTypeOf('mp3')).toBe('audio/mpeg');
    expect(mimeTypeOf('flac')).toBe('audio/flac');
    expect(mimeTypeOf('aac')).toBe('audio/aac');
    expect(mimeTypeOf('adts')).toBe('audio/aac');
    expect(mimeTypeOf('pcm_s16le')).toBe('application/octet-stream');
  });

  it('its sample rate: mp3 moves to the nearest rate it can carry, the others keep the rate asked', () => {
    expect(encodedSampleRate('mp3', 22000)).toBe(22050);
    expect(encodedSampleRate('mp3', 7000)).toBe(8000);
    expect(encodedSampleRate('mp3', 96000)).toBe(48000);
    expect(encodedSampleRate('wav', 22000)).toBe(22000);
    expect(encodedSampleRate('pcm_f32le', 7000)).toBe(7000);
    for (const rate of MP3_SAMPLE_RATES) expect(nearestMp3SampleRate(rate)).toBe(rate);
  });
});

describe('mp3 encoding', () => {
  beforeAll(async () => {
    expect(await loadMp3Encoder()).toBe(true);
  });
  /** Bits per second of an mp3 of `seconds` of a tone at `rate`. */
  const bitrate = (rate: number, seconds = 2): number => {
    const pcm = Int16Array.from({ length: rate * seconds }, (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / rate)));
    return (encodeAudio(pcm, rate, 'mp3').byteLength * 8) / seconds;
  };

  it('is 64 kbit/s from 32 kHz up, 48 kbit/s below', () => {
    expect(Math.abs(bitrate(32000) - 64000)).toBeLessThan(3000);
    expect(Math.abs(bitrate(48000) - 64000)).toBeLessThan(3000);
    expect(Math.abs(bitrate(24000) - 48000)).toBeLessThan(3000);
  });
});
