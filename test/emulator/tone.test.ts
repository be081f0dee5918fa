import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LIBRARY_VOICES } from '../../src/emulator/state.js';
import { createToneSynthesizer } from '../../src/emulator/synth/tone.js';
import type { SynthRequest } from '../../src/emulator/types.js';

const request = (text: string, sampleRate: number): SynthRequest => ({ text, language: 'en-us', voice: LIBRARY_VOICES[0]!, sampleRate, wordTimestamps: false });

/** The tone synth's definition, sample by sample with `Math.sin` (what the recurrence must equal). */
function reference(text: string, wordSeconds: number, rate: number): Int16Array {
  const words = text.split(/\s+/u).filter((w) => w.length > 0);
  const boundary = (i: number): number => Math.round(i * wordSeconds * rate);
  const pcm = new Int16Array(boundary(words.length));
  words.forEach((word, i) => {
    let h = 2166136261;
    for (let j = 0; j < word.length; j++) {
      h ^= word.charCodeAt(j);
      h = Math.imul(h, 16777619);
    }
    const f = 220 + ((h >>> 0) % 661);
    const base = boundary(i);
    const perWord = boundary(i + 1) - base;
    const fade = Math.max(1, Math.min(Math.floor(perWord / 4), Math.round(0.005 * rate)));
    for (let n = 0; n < perWord; n++) {
      const env = Math.min(1, (n + 1) / fade, (perWord - n) / fade);
      pcm[base + n] = Math.round(Math.sin((2 * Math.PI * f * n) / rate) * 12000 * env);
    }
  });
  return pcm;
}

describe('tone synthesizer', () => {
  it('writes each burst equal to the Math.sin definition within one step, at any rate and word length', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.string({ minLength: 1, maxLength: 8 }).filter((w) => !/\s/u.test(w)), { minLength: 1, maxLength: 6 }),
        fc.constantFrom(8000, 16000, 22050, 24000, 44100, 48000),
        fc.double({ min: 0.001, max: 0.4, noNaN: true }),
        async (words, rate, wordSeconds) => {
          const text = words.join(' ');
          const { pcm } = await createToneSynthesizer({ wordSeconds }).synthesize(request(text, rate));
          const expected = reference(text, wordSeconds, rate);
          expect(pcm.length).toBe(expected.length);
          let worst = 0;
          for (let n = 0; n < pcm.length; n++) worst = Math.max(worst, Math.abs((pcm[n] as number) - (expected[n] as number)));
          // the recurrence may land on the other side of a .5 now and then: never more than one step
          expect(worst).toBeLessThanOrEqual(1);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('keeps the exact samples of a long burst (re-anchoring stops the recurrence drifting)', async () => {
    const text = 'alpha bravo';
    const { pcm } = await createToneSynthesizer({ wordSeconds: 2 }).synthesize(request(text, 48000));
    const expected = reference(text, 2, 48000);
    let differing = 0;
    for (let n = 0; n < pcm.length; n++) if (pcm[n] !== expected[n]) differing++;
    expect(pcm.length).toBe(192000);
    expect(differing).toBe(0);
  });
});
