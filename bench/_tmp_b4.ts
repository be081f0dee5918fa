import { llmStream, chunk } from './sse.js';
function t(name: string, f: () => void) { let best = Infinity; for (let i=0;i<8;i++){ const t0=performance.now(); f(); const d=performance.now()-t0; if(i>0) best=Math.min(best,d);} console.log(name, best.toFixed(1),'ms'); }
for (const multi of [false, true]) {
const bytes = llmStream(20*1024*1024, 1, multi); const chunks = chunk(bytes).map(c => Buffer.from(c.buffer, c.byteOffset, c.byteLength));
console.log('multilingual', multi);
let n = 0;
t('decode only', () => { const d = new TextDecoder(); for (const c of chunks) d.decode(c,{stream:true}); });
t('Buffer.indexOf loop', () => { for (const c of chunks) { let p = 0; while ((p = c.indexOf(10, p)) !== -1) p++; } });
t('U8.indexOf loop', () => { for (const c of chunks) { let p = 0; while ((p = Uint8Array.prototype.indexOf.call(c, 10, p)) !== -1) p++; } });
t('indexOf+utf8Slice per line', () => { for (const c of chunks) { let p = 0; let lf; while ((lf = c.indexOf(10, p)) !== -1) { if (lf > p) { const s = (c as any).utf8Slice(p + 6, lf); n += s.length; } p = lf + 1; } } });
t('indexOf+toString per line', () => { for (const c of chunks) { let p = 0; let lf; while ((lf = c.indexOf(10, p)) !== -1) { if (lf > p) { const s = c.toString('utf8', p + 6, lf); n += s.length; } p = lf + 1; } } });
}
