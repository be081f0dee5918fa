/**
 * Media the emulator produces for task results: deterministic sound effects and music,
 * synthesized speech for whole texts, transcripts and subtitle files.
 */
import { createSentenceSegmenter } from '../text/sentences.js';
import type { DialogueItem, Voice } from '../core/schemas.js';
import { resample } from '../audio/pcm.js';
import { parseWavHeader } from '../audio/wav.js';
import { pseudoLocalize } from './pseudo.js';
import { mulberry32 } from './random.js';
import { DEFAULT_VOICE_ID, resolveLanguage, type EmulatorState } from './state.js';

/** Sample rate of generated sound effects and music, Hz. */
export const GENERATED_AUDIO_SAMPLE_RATE = 22050;
/** Length of a generated music clip, seconds (the contract: a fixed-length clip). */
export const MUSIC_CLIP_SECONDS = 10;

function hashString(text: string): number {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 16777619);
  }
  return h >>> 0;
}

/**
 * A sound effect for `prompt`: low-passed noise shaped into bursts, deterministic for a
 * prompt, exactly `seconds` long.
 */
export function generateSound(prompt: string, seconds: number, sampleRate = GENERATED_AUDIO_SAMPLE_RATE): Int16Array {
  const random = mulberry32(hashString(`sound:${prompt}`));
  const length = Math.round(seconds * sampleRate);
  const out = new Int16Array(length);
  const smoothing = 0.05 + random() * 0.5;
  const burstSeconds = 0.2 + random() * 0.8;
  const burst = Math.max(1, Math.round(burstSeconds * sampleRate));
  let lowPassed = 0;
  for (let n = 0; n < length; n++) {
    lowPassed += smoothing * (random() * 2 - 1 - lowPassed);
    const phase = (n % burst) / burst;
    const envelope = Math.exp(-4 * phase) * Math.min(1, phase * 50);
    out[n] = Math.round(lowPassed * envelope * 24000);
  }
  return out;
}

/** A music clip for `prompt`: notes of a pentatonic scale, deterministic for a prompt. */
export function generateMusic(prompt: string, seconds = MUSIC_CLIP_SECONDS, sampleRate = GENERATED_AUDIO_SAMPLE_RATE): Int16Array {
  const random = mulberry32(hashString(`music:${prompt}`));
  const length = Math.round(seconds * sampleRate);
  const out = new Int16Array(length);
  const root = 196 + Math.floor(random() * 100);
  const scale = [0, 2, 4, 7, 9, 12];
  const beat = Math.round((0.25 + random() * 0.25) * sampleRate);
  for (let start = 0; start < length; start += beat) {
    const step = scale[Math.floor(random() * scale.length)] ?? 0;
    const frequency = root * 2 ** (step / 12);
    const end = Math.min(length, start + beat);
    for (let n = start; n < end; n++) {
      const t = (n - start) / sampleRate;
      const envelope = Math.exp(-3 * t) * Math.min(1, (n - start) / 100);
      const sample = Math.sin(2 * Math.PI * frequency * t) + 0.3 * Math.sin(4 * Math.PI * frequency * t);
      out[n] = Math.round(sample * envelope * 12000);
    }
  }
  return out;
}

/** Split text into sentences with the shared segmenter. */
export function sentencesOf(text: string, language: string): string[] {
  const segmenter = createSentenceSegmenter({ locale: resolveLanguage(language) });
  return [...segmenter.feed(text), ...segmenter.end()].filter((s) => s.trim().length > 0);
}

/** Voice to speak with: the given one when known, else the default voice. */
export function voiceOrDefault(state: EmulatorState, voiceId: number | undefined): Voice {
  const voice = (voiceId !== undefined ? state.voice(voiceId) : undefined) ?? state.voice(DEFAULT_VOICE_ID);
  if (!voice) throw new Error('the default voice is missing');
  return voice;
}

/**
 * Speak a whole text, sentence by sentence, into one PCM buffer. Empty text gives half
 * a second of silence. Languages the synthesizer does not speak fall back to `en-us`.
 */
export async function synthesizeText(
  state: EmulatorState,
  text: string,
  language: string,
  voice: Voice,
  sampleRate?: number,
): Promise<{ pcm: Int16Array; sampleRate: number }> {
  const synth = await state.synthesizer();
  const locale = resolveLanguage(language);
  const spoken = synth.supportsLanguage(locale) ? locale : 'en-us';
  const pieces: Int16Array[] = [];
  let rate = sampleRate;
  for (const sentence of sentencesOf(text, spoken)) {
    const result = await synth.synthesize({ text: sentence.trim(), language: spoken, voice, sampleRate: rate, wordTimestamps: false });
    rate ??= result.sampleRate;
    pieces.push(resample(result.pcm, result.sampleRate, rate));
  }
  rate ??= GENERATED_AUDIO_SAMPLE_RATE;
  if (pieces.length === 0) return { pcm: new Int16Array(Math.round(rate / 2)), sampleRate: rate };
  const pcm = new Int16Array(pieces.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const piece of pieces) {
    pcm.set(piece, offset);
    offset += piece.length;
  }
  return { pcm, sampleRate: rate };
}

/** Seconds a sentence takes to say, estimated from its words (for transcripts). */
const SECONDS_PER_WORD = 0.35;

/**
 * A transcript of a text: one dialogue item per sentence; a line `Name: text` is spoken
 * by `Name`, anything else by `Narrator`. Times in seconds, back to back.
 */
export function transcriptOf(text: string, language: string): DialogueItem[] {
  const items: DialogueItem[] = [];
  let time = 0;
  for (const line of text.split(/\r?\n/)) {
    const match = /^\s*([\p{L}][\p{L} .'-]{0,40}):\s+(.*)$/u.exec(line);
    const speaker = match?.[1]?.trim() ?? 'Narrator';
    const body = match?.[2] ?? line;
    for (const sentence of sentencesOf(body, language)) {
      const clean = sentence.trim();
      const words = clean.split(/\s+/).filter(Boolean).length;
      const end = round3(time + Math.max(1, words) * SECONDS_PER_WORD);
      items.push({ start: round3(time), end, text: clean, speaker });
      time = end;
    }
  }
  return items;
}

function round3(value: number): number {
  return Math.round(value * 1000) / 1000;
}

/** Length of the fixed dialogue `heardTranscript` returns, in seconds. */
export const HEARD_DIALOGUE_SECONDS = 7;

/**
 * The transcript the emulator "hears" in any uploaded media: a fixed three-line dialogue
 * (`Welcome back to the show.`, ...), pseudo-localized for a language other than English,
 * over 0 to 7 s. Given the media's duration (a WAV's), a shorter media has the times
 * scaled to fit it, so no segment ends after the audio does.
 */
export function heardTranscript(language: string, durationSeconds?: number): DialogueItem[] {
  const locale = resolveLanguage(language);
  const scale = durationSeconds !== undefined && durationSeconds < HEARD_DIALOGUE_SECONDS ? durationSeconds / HEARD_DIALOGUE_SECONDS : 1;
  const fit = (seconds: number): number => Math.min(round3(seconds * scale), durationSeconds ?? Infinity);
  const lines: DialogueItem[] = [
    { start: 0, end: 2.1, text: 'Welcome back to the show.', speaker: 'Speaker 1' },
    { start: 2.1, end: 4.4, text: 'Thanks, it is good to be here.', speaker: 'Speaker 2' },
    { start: 4.4, end: HEARD_DIALOGUE_SECONDS, text: 'Let us talk about what you built this year.', speaker: 'Speaker 1' },
  ].map((item) => ({ ...item, start: fit(item.start), end: fit(item.end) }));
  if (locale.startsWith('en-')) return lines;
  return lines.map((item) => ({ ...item, text: pseudoLocalize(item.text, locale) }));
}

/** Duration of an uploaded media in seconds when it is a WAV (from its header), else undefined. */
export function mediaDurationSeconds(bytes: Uint8Array): number | undefined {
  const info = parseWavHeader(bytes);
  if (info === undefined) return undefined;
  const bytesPerSecond = info.sampleRate * info.channels * (info.bitsPerSample / 8);
  if (!(bytesPerSecond > 0)) return undefined;
  // a streamed WAV declares 0xFFFFFFFF: the bytes present are the audio
  const dataBytes = Math.min(info.dataBytes, bytes.byteLength - info.dataOffset);
  return Math.max(0, dataBytes) / bytesPerSecond;
}

/** Translate a transcript by pseudo-localization. */
export function translateTranscript(items: DialogueItem[], targetLanguage: string): DialogueItem[] {
  return items.map((item) => ({ ...item, text: pseudoLocalize(item.text, targetLanguage) }));
}

function timestamp(seconds: number, separator: ',' | '.'): string {
  const ms = Math.round(seconds * 1000);
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = Math.floor((ms % 60_000) / 1000);
  const pad = (n: number, w = 2): string => String(n).padStart(w, '0');
  return `${pad(h)}:${pad(m)}:${pad(s)}${separator}${pad(ms % 1000, 3)}`;
}

/** A subtitle file (SRT or WebVTT) of a transcript. */
export function subtitlesOf(items: DialogueItem[], format: 'srt' | 'vtt'): string {
  if (format === 'vtt') {
    return `WEBVTT\n\n${items.map((item) => `${timestamp(item.start, '.')} --> ${timestamp(item.end, '.')}\n<v ${item.speaker}>${item.text}\n`).join('\n')}`;
  }
  return items.map((item, i) => `${i + 1}\n${timestamp(item.start, ',')} --> ${timestamp(item.end, ',')}\n${item.text}\n`).join('\n');
}
