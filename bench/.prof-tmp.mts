import { corpus } from './segmentation.js';
import { createSentenceSegmenter } from '../src/text/sentences.js';
const text = corpus(2_000_000, (l) => l.startsWith('en'));
const toks: string[] = [];
for (let i = 0; i < text.length; i += 4) toks.push(text.slice(i, i + 4));
for (let r = 0; r < 5; r++) {
  const t0 = performance.now();
  const s = createSentenceSegmenter({ locale: 'en-us' });
  let n = 0;
  for (const t of toks) n += s.feed(t).length;
  n += s.end().length;
  console.log('core', (performance.now() - t0).toFixed(0), 'ms', n);
}
