import { from } from 'rxjs';
import { corpus } from './segmentation.js';
import { segmentSentences } from '../src/operators/segmentSentences.js';
const text = corpus(2_000_000, (l) => l.startsWith('en'));
const toks: string[] = [];
for (let i = 0; i < text.length; i += 4) toks.push(text.slice(i, i + 4));
for (let r = 0; r < 6; r++) {
  const t0 = performance.now();
  let n = 0;
  from(toks).pipe(segmentSentences({ locale: 'en-us' })).subscribe(() => n++);
  console.log('ours', (performance.now() - t0).toFixed(0), 'ms', n);
}
