/**
 * Faults injected into the emulator's live synthesis (`options.faults`, per key): which
 * attempt of which segment fails. (`dropAfterFrames` and `creditsAfterSegments` act where
 * frames go out and credits are charged, in live.ts.)
 */
import type { Faults } from './options.js';

/**
 * Throw when a fault says attempt `attempt` (0 for the first) of this segment fails:
 * `failSynthesis` by segment id, `failSynthesisMatching` by text.
 */
export function injectFailure(faults: Faults, segment: { id: number; text: string }, attempt: number): void {
  const bySegment = faults.failSynthesis;
  if (bySegment && attempt < bySegment.times) {
    if (bySegment.segments === 'all' || bySegment.segments.includes(segment.id)) {
      throw new Error('injected synthesis failure (connection to the synthesis engine lost)');
    }
  }
  const byText = faults.failSynthesisMatching;
  if (byText && attempt < byText.times && segment.text.includes(byText.text)) {
    throw new Error('injected synthesis failure (connection to the synthesis engine lost)');
  }
}
