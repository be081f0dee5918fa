/**
 * The emulator's speech synthesizers: `tone` (deterministic, exact timings, for tests)
 * and `espeak` (real speech through espeak-ng compiled to WASM, an optional dependency
 * imported lazily).
 */
import type { ResolvedEmulatorOptions } from '../options.js';
import type { Synthesizer } from '../types.js';
import { createToneSynthesizer } from './tone.js';

export { createToneSynthesizer, splitWords, TONE_DEFAULT_SAMPLE_RATE } from './tone.js';

/**
 * Load a synthesizer by name. `tone` resolves at once; `espeak` imports espeak-ng and
 * compiles its WASM module once (the promise rejects with a clear message when the
 * optional package is missing).
 */
export async function loadSynthesizer(
  name: 'espeak' | 'tone',
  options: ResolvedEmulatorOptions,
): Promise<Synthesizer> {
  if (name === 'tone') return createToneSynthesizer({ wordSeconds: options.toneWordSeconds });
  const { createEspeakSynthesizer } = await import('./espeak.js');
  return createEspeakSynthesizer();
}
