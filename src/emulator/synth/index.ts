/**
 * The emulator's speech synthesizers: `tone` (deterministic, exact timings, for tests)
 * and `espeak` (real speech through espeak-ng compiled to WASM, an optional dependency
 * imported lazily).
 */
import type { ResolvedEmulatorOptions } from '../options.js';
import type { Synthesizer } from '../types.js';
import { createToneSynthesizer } from './tone.js';
import { createSynthPool, workerEntry } from './pool.js';

export { createToneSynthesizer, splitWords, TONE_DEFAULT_SAMPLE_RATE } from './tone.js';

/**
 * Load a synthesizer by name. `tone` resolves at once; `espeak` imports espeak-ng and
 * compiles its WASM module once (rejects with an `EspeakUnavailableError` when the
 * optional package is missing or broken), then synthesizes in a pool of
 * `options.synthThreads` worker threads (0: on the event loop).
 */
export async function loadSynthesizer(
  name: 'espeak' | 'tone',
  options: ResolvedEmulatorOptions,
): Promise<Synthesizer> {
  if (name === 'tone') return createToneSynthesizer({ wordSeconds: options.toneWordSeconds });
  const { createEspeakSynthesizer, espeakVoiceFor, loadEspeakModule } = await import('./espeak.js');
  if (options.synthThreads === 0) return createEspeakSynthesizer();
  // compiled here once (off the event loop), instantiated in each thread
  const module = await loadEspeakModule();
  return createSynthPool({
    name: 'espeak',
    threads: options.synthThreads,
    entry: workerEntry('espeak-worker'),
    workerData: module,
    warm: true,
    supportsLanguage: (language) => espeakVoiceFor(language) !== undefined,
  });
}

/** The warning of an emulator that falls back to tones (one line). */
export function espeakFallbackWarning(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | undefined)?.cause;
  const missing = cause?.code === 'ERR_MODULE_NOT_FOUND' || cause?.code === 'MODULE_NOT_FOUND';
  const why = missing ? 'is not installed' : `could not be loaded (${String(cause?.message ?? error).split('\n')[0]})`;
  return `rxvoice emulator: espeak-ng ${why}, so it speaks tones (one beep per word) instead of speech; for real speech: npm install espeak-ng`;
}

/**
 * The synthesizer an emulator starts with: `synth` as asked (`'espeak'` rejects with an
 * `EspeakUnavailableError` when espeak-ng cannot be loaded), or, with `synth` left out,
 * espeak when it loads and else tone, after one line to `options.warn` (stderr by default).
 */
export async function startSynthesizer(options: ResolvedEmulatorOptions): Promise<Synthesizer> {
  if (options.synth === 'tone') return loadSynthesizer('tone', options);
  const { EspeakUnavailableError } = await import('./espeak.js');
  try {
    return await loadSynthesizer('espeak', options);
  } catch (error) {
    if (options.synth === 'espeak' || !(error instanceof EspeakUnavailableError)) throw error;
    const warn = options.warn ?? ((line: string) => process.stderr.write(`${line}\n`));
    warn(espeakFallbackWarning(error));
    return loadSynthesizer('tone', options);
  }
}
