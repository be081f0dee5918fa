/**
 * The client's text work per sentence of `bench/session-cost.ts`, alone (no socket, no
 * emulator): what a live session with client boundaries does with one sentence, the boundary
 * gate (`holdWords`), its idle flush (the hold timer's), the ledger's `push` and the
 * segment's `segmentStarted` / `segmentDelivered`. `--own-model` runs the ledger's own model
 * over the text (no hand-over of the gate's segmenter), as before the hand-over.
 *
 * npx tsx bench/tools/text-path-cost.ts [sentences=50000] [--own-model]
 */
import { SpeechLedger } from '../../src/live/ledger.js';
import { createBoundaryGate } from '../../src/text/boundaryGate.js';
import { sentences } from '../util.js';

const count = Number(process.argv.find((a) => /^\d+$/.test(a)) ?? 50000);
const ownModel = process.argv.includes('--own-model');
const texts = sentences(count, 6, 7);

function run(): number {
  const gate = createBoundaryGate({ locale: 'en-us', holdWords: true });
  const ledger = new SpeechLedger({ locale: 'en-us' });
  const t0 = process.cpuUsage();
  texts.forEach((text, id) => {
    for (const chunk of gate.feed(text)) ledger.push(chunk);
    const flushed = gate.flushWhole();
    if (flushed) ledger.push(flushed.text, ownModel ? undefined : flushed.segmenter);
    ledger.segmentStarted(id, text.trim());
    ledger.segmentDelivered(id);
  });
  const cpu = process.cpuUsage(t0);
  if (ledger.stats().mismatches !== 0 || ledger.unspoken() !== '') throw new Error('the ledger lost track of the text');
  return (cpu.user + cpu.system) / count;
}

run(); // warm-up
const runs = [run(), run(), run()].sort((a, b) => a - b);
console.log(`${ownModel ? 'own model' : 'hand-over'}: ${runs.map((us) => us.toFixed(2)).join(' / ')} us a sentence (3 runs of ${count}, sorted)`);
