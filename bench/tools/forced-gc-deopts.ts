/**
 * Does a full GC throw away the sentence engine's optimized code? Warms the engine (20,000
 * segmenters, a sentence each, dropped), then either calls `gc()` (what the heap measure of
 * `bench/session-cost.ts` does) or makes old-space garbage until ordinary mark-compacts run,
 * and prints V8's lines about our code being marked for deoptimization around it.
 *
 * node --expose-gc --import tsx --trace-deopt --trace-gc bench/tools/forced-gc-deopts.ts forced
 * node --expose-gc --import tsx --trace-deopt --trace-gc bench/tools/forced-gc-deopts.ts natural
 * node --expose-gc --import tsx --trace-deopt --trace-gc bench/tools/forced-gc-deopts.ts kept
 *
 * Seen (Node 20): `forced` marks the engine's `feed`, `advance`, `wordEndCut` and the tag
 * wrapper's `give` ("weak objects") at its Mark-Compact; `natural` runs two Mark-Compacts and
 * marks none of them; `kept` (the forced GC with one segmenter alive across it, made after the
 * warm-up) marks none of them either: the engine's hidden classes die with its last instance.
 */
import { createSentenceSegmenter } from '../../src/text/sentences.js';

const texts = Array.from({ length: 50 }, (_, i) => `Hello there my friend number ${i}! `);

function round(n: number): void {
  for (let i = 0; i < n; i++) {
    const segmenter = createSentenceSegmenter({ locale: 'en-us' });
    segmenter.feed(texts[i % texts.length] as string);
    segmenter.end();
  }
}

const forcedGc = (globalThis as { gc?: () => void }).gc;
round(20_000);
console.log('--- warm');
const mode = process.argv[2];
const kept = mode === 'kept' ? createSentenceSegmenter({ locale: 'en-us' }) : undefined;
if (mode === 'forced' || mode === 'kept') {
  if (!forcedGc) throw new Error('run with node --expose-gc');
  forcedGc();
} else {
  // ordinary GCs: old-space garbage (arrays that live a while, then are dropped)
  let keep: unknown[][] = [];
  for (let i = 0; i < 400; i++) {
    keep.push(new Array<unknown>(50_000).fill({ i }));
    if (keep.length > 40) keep = [];
  }
}
console.log('--- after the GC');
round(20_000);
if (kept) console.log('--- kept:', kept.pending() === '');
