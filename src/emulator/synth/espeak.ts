/**
 * The espeak synthesizer: real speech from espeak-ng compiled to WASM (the optional
 * `espeak-ng` package, imported lazily here and nowhere else).
 *
 * The package is an Emscripten MODULARIZE factory that runs espeak's command line once
 * per instance. The 18 MB `.wasm` is compiled ONCE per process and every call only
 * instantiates it (through Emscripten's `instantiateWasm` hook), so functions compiled
 * by V8 on the first call are shared by the following ones.
 *
 * Word timings: espeak's command line reports none, so when they are asked for the
 * text is spoken once as SSML with a long `<break>` between words; the breaks are
 * found again as silences, each word's audio is cut out, and the words are joined
 * with short fixed pauses (longer after punctuation). The timings are then exact
 * sample counts of the audio we return. When fewer silences than breaks are found
 * (a word that makes no sound), each word is spoken on its own instead.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { WordTimestamp } from '../../live/protocol.js';
import { parseWavHeader } from '../../audio/wav.js';
import { resample } from '../../audio/pcm.js';
import type { SynthRequest, SynthResult, Synthesizer } from '../types.js';

/** Rate of espeak-ng's output, Hz. */
export const ESPEAK_SAMPLE_RATE = 22050;
/** espeak's default speed, words per minute (scaled by `speaking_rate`). */
export const ESPEAK_DEFAULT_WPM = 175;

/** Locale tag -> bundled espeak-ng voice. Only these languages are supported. */
export const ESPEAK_VOICES: Readonly<Record<string, string>> = {
  'en-us': 'en-us',
  'en-ca': 'en-us',
  'en-gb': 'en-gb',
  'en-au': 'en-gb',
  'en-ie': 'en-gb',
  'en-nz': 'en-gb',
  'fr-fr': 'fr-fr',
  'fr-ca': 'fr-fr',
  'fr-be': 'fr-be',
  'fr-ch': 'fr-ch',
  'de-de': 'de',
  'de-at': 'de',
  'de-ch': 'de',
  'es-es': 'es',
  'es-mx': 'es-419',
  'es-us': 'es-419',
  'es-ar': 'es-419',
  'it-it': 'it',
  'pt-br': 'pt-br',
  'pt-pt': 'pt',
  'nl-nl': 'nl',
  'nl-be': 'nl',
  'pl-pl': 'pl',
  'ru-ru': 'ru',
  'uk-ua': 'uk',
  'cs-cz': 'cs',
  'sk-sk': 'sk',
  'sv-se': 'sv',
  'da-dk': 'da',
  'nb-no': 'nb',
  'fi-fi': 'fi',
  'el-gr': 'el',
  'hu-hu': 'hu',
  'ro-ro': 'ro',
  'bg-bg': 'bg',
  'hr-hr': 'hr',
  'tr-tr': 'tr',
  'ar-sa': 'ar',
  'ar-ae': 'ar',
  'he-il': 'he',
  'hi-in': 'hi',
  'id-id': 'id',
  'ms-my': 'ms',
  'vi-vn': 'vi',
  'th-th': 'th',
  'ca-es': 'ca',
  'ja-jp': 'ja',
  'ko-kr': 'ko',
  'zh-cn': 'cmn',
  'zh-tw': 'cmn',
  'zh-hk': 'yue',
};

/**
 * The espeak voice for a language parameter, or undefined when unsupported (numeric ids
 * included): the tag's own voice, else the first voice of its language (`zh-hant`, `de-lu`).
 */
export function espeakVoiceFor(language: string): string | undefined {
  const tag = language.toLowerCase();
  const own = ESPEAK_VOICES[tag];
  if (own !== undefined) return own;
  const primary = /^([a-z]{2,3})-/.exec(tag)?.[1];
  if (primary === undefined) return undefined;
  const sibling = Object.keys(ESPEAK_VOICES).find((known) => known.startsWith(`${primary}-`));
  return sibling === undefined ? undefined : ESPEAK_VOICES[sibling];
}

interface EmscriptenFs {
  readFile(path: string): Uint8Array;
}
interface EspeakInstance {
  FS: EmscriptenFs;
}
interface EspeakModuleOptions {
  arguments: string[];
  print(text: string): void;
  printErr(text: string): void;
  instantiateWasm?(
    imports: WebAssembly.Imports,
    successCallback: (instance: WebAssembly.Instance, module: WebAssembly.Module) => void,
  ): object;
}
type EspeakFactory = (options: EspeakModuleOptions) => Promise<EspeakInstance>;

const ESPEAK_PACKAGE = 'espeak-ng';

/**
 * The emulator's espeak synthesizer needs the optional package `espeak-ng` (GPL-3.0),
 * which is missing or broken: install it (`npm install espeak-ng`) or start the emulator
 * with `synth: 'tone'`. `startEmulator({ synth: 'espeak' })` rejects with this error, at
 * start, never per session; with `synth` left out the emulator falls back to tones.
 */
export class EspeakUnavailableError extends Error {
  override name = 'EspeakUnavailableError';
  /** The package to install: `espeak-ng`. */
  readonly packageName = ESPEAK_PACKAGE;
  /** @param cause Why importing or compiling the package failed. */
  constructor(cause: unknown) {
    super(
      'the espeak synthesizer needs the optional package "espeak-ng" (npm install espeak-ng); ' +
        "or start the emulator with synth: 'tone'",
      { cause },
    );
  }
}

/**
 * A compiled `WebAssembly.Module`, named without the `WebAssembly` namespace in what this
 * module exports, so that a Node project whose `lib` has no DOM types type-checks against it.
 */
export type CompiledWasm = object;

interface LoadedEspeak {
  factory: EspeakFactory;
  module: WebAssembly.Module;
}

let loading: Promise<LoadedEspeak> | undefined;
const stats = { compiles: 0, compileMs: 0, calls: 0, callMs: 0 };

/**
 * Counters of the espeak module in this process: how many times the .wasm was compiled
 * (1 once loaded: it is reused), the compile time, and the number and total time of
 * synthesis runs (each one instantiates the compiled module).
 */
export function espeakModuleStats(): Readonly<typeof stats> {
  return { ...stats };
}

/** Import espeak-ng's Emscripten factory (its JavaScript part, without the .wasm). */
async function importFactory(): Promise<EspeakFactory> {
  // A variable specifier: the package is optional and ships no typings.
  const imported = (await import(ESPEAK_PACKAGE)) as { default?: unknown };
  const factory = imported.default;
  if (typeof factory !== 'function') throw new Error('espeak-ng has no default export factory');
  return factory as EspeakFactory;
}

/**
 * Import espeak-ng and compile its .wasm once per process (asynchronously: V8 compiles
 * off the event loop). Rejects with {@link EspeakUnavailableError} when the package is
 * missing or broken. The module can be handed to worker threads (`workerData`).
 */
export function loadEspeakModule(): Promise<CompiledWasm> {
  return loadEspeak().then((loaded) => loaded.module);
}

function loadEspeak(): Promise<LoadedEspeak> {
  loading ??= (async () => {
    try {
      const factory = await importFactory();
      const main = createRequire(import.meta.url).resolve(ESPEAK_PACKAGE);
      const wasmPath = path.join(path.dirname(main), 'espeak-ng.wasm');
      const bytes = await readFile(wasmPath);
      const started = performance.now();
      const module = await WebAssembly.compile(bytes);
      stats.compiles++;
      stats.compileMs += performance.now() - started;
      return { factory, module };
    } catch (error) {
      loading = undefined;
      throw new EspeakUnavailableError(error);
    }
  })();
  return loading;
}

export interface EspeakSynthesizerOptions {
  /** Pause between words when word timings are computed, seconds. Default 0.06. */
  wordPause?: number;
  /** espeak-ng's module compiled already (in another thread): only the factory is imported. */
  module?: CompiledWasm;
}

/** Frame length of the energy analysis, seconds. */
const FRAME_SECONDS = 0.01;
/** RMS below which a frame is silent (of full scale 32768). */
const SILENCE_RMS = 200;
/** The `<break>` placed between words; silences at least `GAP_MIN` long are breaks. */
const BREAK_MS = 250;
const GAP_MIN_SECONDS = 0.15;

/**
 * Create the espeak synthesizer (imports espeak-ng and compiles its module; rejects
 * with {@link EspeakUnavailableError} when the optional package is missing).
 */
export async function createEspeakSynthesizer(options: EspeakSynthesizerOptions = {}): Promise<Synthesizer> {
  const loaded: LoadedEspeak = options.module
    ? { factory: await importFactory().catch((error: unknown) => Promise.reject(new EspeakUnavailableError(error))), module: options.module }
    : await loadEspeak();
  const wordPause = options.wordPause ?? 0.06;
  // espeak runs synchronously inside each instance: one call at a time keeps memory bounded.
  let queue: Promise<unknown> = Promise.resolve();

  const run = (args: string[]): Promise<Int16Array> => {
    const job = queue.then(async () => {
      const started = performance.now();
      const errors: string[] = [];
      // A failed instantiation never calls Emscripten back: fail the call ourselves.
      let instantiationFailed: (error: unknown) => void = () => {};
      const failure = new Promise<never>((_, reject) => {
        instantiationFailed = reject;
      });
      const created = loaded.factory({
        arguments: ['-w', 'out.wav', ...args],
        print() {},
        printErr(text) {
          if (errors.length < 5) errors.push(text);
        },
        instantiateWasm(imports, successCallback) {
          WebAssembly.instantiate(loaded.module, imports).then(
            (wasm) => successCallback(wasm, loaded.module),
            (error: unknown) => instantiationFailed(error),
          );
          return {};
        },
      });
      const instance = await Promise.race([created, failure]);
      let bytes: Uint8Array;
      try {
        bytes = instance.FS.readFile('out.wav');
      } catch (error) {
        throw new Error(`espeak-ng produced no audio: ${errors.join('; ')}`, { cause: error });
      }
      const info = parseWavHeader(bytes);
      if (!info || info.bitsPerSample !== 16) throw new Error('espeak-ng produced an unreadable WAV');
      const data = bytes.subarray(info.dataOffset);
      const samples = Math.floor(data.byteLength / 2);
      const pcm = new Int16Array(samples);
      const view = new DataView(data.buffer, data.byteOffset, samples * 2);
      for (let i = 0; i < samples; i++) pcm[i] = view.getInt16(i * 2, true);
      stats.calls++;
      stats.callMs += performance.now() - started;
      return pcm;
    });
    queue = job.catch(() => undefined);
    return job;
  };

  const voiceArgs = (request: SynthRequest): string[] => {
    const base = espeakVoiceFor(request.language);
    if (!base) throw new Error(`language "${request.language}" is not supported by the espeak synthesizer`);
    const variant = request.voice.gender === 2 ? '+f3' : '';
    const rate = request.speakingRate ?? 1;
    const wpm = Math.max(80, Math.min(500, Math.round(ESPEAK_DEFAULT_WPM * rate)));
    return ['-v', base + variant, '-s', String(wpm)];
  };

  return {
    name: 'espeak',
    supportsLanguage: (language) => espeakVoiceFor(language) !== undefined,
    async synthesize(request) {
      const args = voiceArgs(request);
      const words = groupWords(request.text);
      let pcm: Int16Array;
      let timings: WordTimestamp[];
      if (!request.wordTimestamps || words.length === 0) {
        pcm = words.length === 0 ? new Int16Array(0) : await run([...args, '--', request.text]);
        timings = [];
      } else {
        const pieces = await wordAudio(words, args, run);
        ({ pcm, timings } = joinWords(words, pieces, wordPause, ESPEAK_SAMPLE_RATE));
      }
      const rate = request.sampleRate ?? ESPEAK_SAMPLE_RATE;
      if (rate !== ESPEAK_SAMPLE_RATE) pcm = resample(pcm, ESPEAK_SAMPLE_RATE, rate);
      return { pcm, sampleRate: rate, words: timings };
    },
  };
}

/**
 * Whitespace-separated words; tokens without a letter or digit (a lone dash, an
 * ellipsis) join the word before them (or after them, at the start).
 */
export function groupWords(text: string): string[] {
  const tokens = text.split(/\s+/u).filter((t) => t.length > 0);
  const words: string[] = [];
  let pendingPrefix = '';
  for (const token of tokens) {
    if (/[\p{L}\p{N}]/u.test(token)) {
      words.push(pendingPrefix ? `${pendingPrefix} ${token}` : token);
      pendingPrefix = '';
    } else if (words.length > 0) {
      words[words.length - 1] += ` ${token}`;
    } else {
      pendingPrefix = pendingPrefix ? `${pendingPrefix} ${token}` : token;
    }
  }
  if (pendingPrefix && words.length === 0) return [];
  return words;
}

/** Audio of each word, trimmed of silence: one SSML call with breaks, else one call per word. */
async function wordAudio(
  words: string[],
  args: string[],
  run: (args: string[]) => Promise<Int16Array>,
): Promise<Int16Array[]> {
  const ssml = `<speak>${words.map(escapeXml).join(` <break time="${BREAK_MS}ms"/> `)}</speak>`;
  const whole = await run(['-m', ...args, '--', ssml]);
  const regions = splitOnGaps(whole, words.length, ESPEAK_SAMPLE_RATE);
  if (regions) return regions.map(([start, end]) => trimSilence(whole.subarray(start, end), ESPEAK_SAMPLE_RATE));
  const pieces: Int16Array[] = [];
  for (const word of words) pieces.push(trimSilence(await run([...args, '--', word]), ESPEAK_SAMPLE_RATE));
  return pieces;
}

/** Join word audio with fixed pauses; timings are exact sample counts. */
function joinWords(
  words: string[],
  pieces: Int16Array[],
  wordPause: number,
  sampleRate: number,
): { pcm: Int16Array; timings: WordTimestamp[] } {
  const pauses = words.map((word, i) => (i === words.length - 1 ? 0 : Math.round(pauseAfter(word, wordPause) * sampleRate)));
  const total = pieces.reduce((n, p, i) => n + p.length + (pauses[i] ?? 0), 0);
  const pcm = new Int16Array(total);
  const timings: WordTimestamp[] = [];
  let offset = 0;
  pieces.forEach((piece, i) => {
    pcm.set(piece, offset);
    timings.push({ word: words[i] ?? '', start: offset / sampleRate, end: (offset + piece.length) / sampleRate });
    offset += piece.length + (pauses[i] ?? 0);
  });
  return { pcm, timings };
}

/** Pause after a word: longer after a clause or sentence mark. */
function pauseAfter(word: string, base: number): number {
  if (/[.!?…。！？]["')\]]*$/u.test(word)) return base + 0.25;
  if (/[,;:，、；：]["')\]]*$/u.test(word)) return base + 0.12;
  return base;
}

/** Whether each 10 ms frame is silent. */
function silentFrames(pcm: Int16Array, sampleRate: number): boolean[] {
  const frame = Math.max(1, Math.round(sampleRate * FRAME_SECONDS));
  const out: boolean[] = [];
  for (let i = 0; i < pcm.length; i += frame) {
    const end = Math.min(pcm.length, i + frame);
    let sum = 0;
    for (let j = i; j < end; j++) {
      const v = pcm[j] ?? 0;
      sum += v * v;
    }
    out.push(Math.sqrt(sum / (end - i)) < SILENCE_RMS);
  }
  return out;
}

/**
 * Sample ranges of `count` words separated by long silences (the `count - 1` longest
 * inner ones), or undefined when there are fewer than `count - 1`.
 */
function splitOnGaps(pcm: Int16Array, count: number, sampleRate: number): [number, number][] | undefined {
  const frame = Math.max(1, Math.round(sampleRate * FRAME_SECONDS));
  const silent = silentFrames(pcm, sampleRate);
  const minFrames = Math.round(GAP_MIN_SECONDS / FRAME_SECONDS);
  const first = silent.indexOf(false);
  if (first < 0) return undefined;
  let last = silent.length - 1;
  while (last >= 0 && silent[last]) last--;
  const gaps: [number, number][] = [];
  let runStart = -1;
  for (let i = first; i <= last + 1; i++) {
    const quiet = i <= last && silent[i] === true;
    if (quiet && runStart < 0) runStart = i;
    if (!quiet && runStart >= 0) {
      if (i - runStart >= minFrames) gaps.push([runStart, i]);
      runStart = -1;
    }
  }
  if (gaps.length < count - 1) return undefined;
  if (gaps.length > count - 1) {
    // A word with a long pause of its own: the inserted breaks are the longest silences.
    const longest = [...gaps].sort((a, b) => b[1] - b[0] - (a[1] - a[0]) || a[0] - b[0]).slice(0, count - 1);
    gaps.splice(0, gaps.length, ...longest.sort((a, b) => a[0] - b[0]));
  }
  const regions: [number, number][] = [];
  let start = first;
  for (const [gapStart, gapEnd] of gaps) {
    regions.push([start * frame, gapStart * frame]);
    start = gapEnd;
  }
  regions.push([start * frame, Math.min(pcm.length, (last + 1) * frame)]);
  return regions;
}

/** Cut leading and trailing silent frames. */
function trimSilence(pcm: Int16Array, sampleRate: number): Int16Array {
  const frame = Math.max(1, Math.round(sampleRate * FRAME_SECONDS));
  const silent = silentFrames(pcm, sampleRate);
  const first = silent.indexOf(false);
  if (first < 0) return pcm.slice(0, 0);
  let last = silent.length - 1;
  while (last > first && silent[last]) last--;
  return pcm.slice(first * frame, Math.min(pcm.length, (last + 1) * frame));
}

function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
