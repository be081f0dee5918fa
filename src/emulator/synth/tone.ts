/**
 * The tone synthesizer: a deterministic stand-in for speech. Each word (split on
 * whitespace) becomes a sine burst of exactly `toneWordSeconds` seconds, with no gaps,
 * so audio length and word timestamps are exact: word i spans [i*w, (i+1)*w].
 */
import type { WordTimestamp } from '../../live/protocol.js';
import type { SynthRequest, SynthResult, Synthesizer } from '../types.js';

/** Default output rate of the tone synthesizer, Hz. */
export const TONE_DEFAULT_SAMPLE_RATE = 22050;

export interface ToneSynthesizerOptions {
  /** Seconds per word. */
  wordSeconds: number;
  /** Default sample rate when a request gives none. */
  sampleRate?: number;
}

/** Frequency of a word's burst: a stable hash of the word mapped to 220..880 Hz. */
function frequencyOf(word: string): number {
  let h = 2166136261;
  for (let i = 0; i < word.length; i++) {
    h ^= word.charCodeAt(i);
    h = Math.imul(h, 16777619);
  }
  return 220 + ((h >>> 0) % 661);
}

/** Split text into words on whitespace. */
export function splitWords(text: string): string[] {
  return text.split(/\s+/u).filter((w) => w.length > 0);
}

/** Create the deterministic tone synthesizer. */
export function createToneSynthesizer(options: ToneSynthesizerOptions): Synthesizer {
  const wordSeconds = options.wordSeconds;
  const defaultRate = options.sampleRate ?? TONE_DEFAULT_SAMPLE_RATE;
  return {
    name: 'tone',
    supportsLanguage: () => true,
    synthesize(request: SynthRequest): Promise<SynthResult> {
      const sampleRate = request.sampleRate ?? defaultRate;
      const words = splitWords(request.text);
      // Word i covers samples [round(i*w*rate), round((i+1)*w*rate)): boundaries never
      // drift, even when w*rate is not a whole number of samples.
      const boundary = (i: number): number => Math.round(i * wordSeconds * sampleRate);
      const pcm = new Int16Array(boundary(words.length));
      const timestamps: WordTimestamp[] = [];
      words.forEach((word, i) => {
        const f = frequencyOf(word);
        const base = boundary(i);
        const perWord = boundary(i + 1) - base;
        // Fade in/out over 5 ms so bursts do not click.
        const fade = Math.max(1, Math.min(Math.floor(perWord / 4), Math.round(0.005 * sampleRate)));
        for (let n = 0; n < perWord; n++) {
          const env = Math.min(1, (n + 1) / fade, (perWord - n) / fade);
          pcm[base + n] = Math.round(Math.sin((2 * Math.PI * f * n) / sampleRate) * 12000 * env);
        }
        timestamps.push({ word, start: i * wordSeconds, end: (i + 1) * wordSeconds });
      });
      return Promise.resolve({ pcm, sampleRate, words: timestamps });
    },
  };
}
