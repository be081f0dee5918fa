/**
 * The tone synthesizer: a deterministic stand-in for speech. Each word (split on
 * whitespace) becomes a sine burst of exactly `toneWordSeconds` seconds, with no gaps,
 * so audio length and word timestamps are exact: word i spans [i*w, (i+1)*w].
 */
import type { WordTimestamp } from '../../live/protocol.js';
import type { SynthRequest, SynthResult, Synthesizer } from '../types.js';
import { espeakVoiceFor } from './espeak.js';

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

/**
 * One word's sine burst into `pcm[base, base + length)`, faded in and out over 5 ms so
 * bursts do not click. The sine comes from the rotation recurrence
 * `sin((n+1)w) = 2cos(w)sin(nw) - sin((n-1)w)` (one multiply a sample instead of a
 * `Math.sin`: the emulator's largest CPU cost under many live sessions), re-anchored on
 * `Math.sin` every 1024 samples so rounding never drifts.
 */
function writeBurst(pcm: Int16Array, base: number, length: number, frequency: number, sampleRate: number): void {
  const fade = Math.max(1, Math.min(Math.floor(length / 4), Math.round(0.005 * sampleRate)));
  const w = (2 * Math.PI * frequency) / sampleRate;
  const k = 2 * Math.cos(w);
  let previous = 0;
  let current = 0;
  for (let n = 0; n < length; n++) {
    if ((n & 1023) === 0) {
      previous = Math.sin(w * (n - 1));
      current = Math.sin(w * n);
    } else {
      const next = k * current - previous;
      previous = current;
      current = next;
    }
    const env = n < fade ? (n + 1) / fade : length - n < fade ? (length - n) / fade : 1;
    pcm[base + n] = Math.round(current * 12000 * env);
  }
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
    // the same languages as the espeak synth: an emulator refuses a language the same way whichever synth speaks
    supportsLanguage: (language) => espeakVoiceFor(language) !== undefined,
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
        writeBurst(pcm, base, perWord, f, sampleRate);
        timestamps.push({ word, start: i * wordSeconds, end: (i + 1) * wordSeconds });
      });
      return Promise.resolve({ pcm, sampleRate, words: timestamps });
    },
  };
}
