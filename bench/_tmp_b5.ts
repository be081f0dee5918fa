import { llmStream, chunk } from './sse.js';
import { createSseParser } from '../src/text/sse.js';
import { createParser } from 'eventsource-parser';
const bytes = llmStream(20*1024*1024, 1, true); const chunks = chunk(bytes);
function t(name: string, f: () => void) { let best = Infinity; for (let i=0;i<10;i++){ const t0=performance.now(); f(); const d=performance.now()-t0; if(i>0) best=Math.min(best,d);} console.log(name, best.toFixed(1),'ms'); }
let n = 0;
for (let k = 0; k < 2; k++) {
t('ours bytes', () => { const p = createSseParser({ onEvent: () => { n++; } }); for (const s of chunks) p.feed(s); p.end(); });

}
