/**
 * The client's text work per sentence of `bench/session-cost.ts`, alone (no socket, no
 * emulator): what a live session with client boundaries does with one sentence, the boundary
 * gate (`holdWords`), its idle flush (the hold timer's), the ledger's `push` and the
 * segment's `segmentStarted` / `segmentDelivered`. `--own-model` runs the ledger's own model
 * over the text (no hand-over of the gate's segmenter), as before the hand-over.
 *
 * - warm (default): 50,000 sentences through one gate and ledger, 3 runs after a warm-up;
 * - `--cold`: the bench's pattern in a fresh process, 500 gates and ledgers, a first sentence
 *   each, then CPU of 3 more each (1,500), where the optimizing compiler's first work on this
 *   code lands (`process.cpuUsage` counts its threads); run it a few times, it is noisy.
 * - `--tokens`: each sentence said as word tokens (split before their spaces), an LLM's
 *   stream; `--sessions=N` says the sentences round the N sessions' gates and ledgers in turn
 *   (default 1), so that segmenters go from one session to another through the spares.
 *   Its garbage: `node --import tsx --trace-gc-nvp bench/tools/text-path-cost.ts ...`, the
 *   `allocated=` fields summed (docs/performance.md, round 12).
 *
 * npx tsx bench/tools/text-path-cost.ts [sentences=50000] [--own-model] [--cold] [--tokens] [--sessions=N]
 */
import { SpeechLedger } from '../../src/live/ledger.js';
import { createBoundaryGate, type BoundaryGate } from '../../src/text/boundaryGate.js';
import { sentences } from '../util.js';

const ownModel = process.argv.includes('--own-model');
const asTokens = process.argv.includes('--tokens');
const sessionCount = Number(/^--sessions=(\d+)$/.exec(process.argv.find((a) => a.startsWith('--sessions=')) ?? '')?.[1] ?? 1);
const label = `${ownModel ? 'own model' : 'hand-over'}${asTokens ? ', word tokens' : ''}${sessionCount > 1 ? `, ${sessionCount} sessions` : ''}`;

interface Session {
  gate: BoundaryGate;
  ledger: SpeechLedger;
  id: number;
}

const open = (): Session => ({ gate: createBoundaryGate({ locale: 'en-us', holdWords: true }), ledger: new SpeechLedger({ locale: 'en-us' }), id: 0 });

/** One sentence as the session says it: through the gate, flushed whole at the hold's end, spoken. */
function say(session: Session, text: string): void {
  for (const token of asTokens ? (text.match(/\s*\S+\s*$|\s*\S+/g) ?? [text]) : [text]) for (const chunk of session.gate.feed(token)) session.ledger.push(chunk);
  const flushed = session.gate.flushWhole();
  if (flushed) session.ledger.push(flushed.text, ownModel ? undefined : flushed.segmenter);
  session.ledger.segmentStarted(session.id, text.trim());
  session.ledger.segmentDelivered(session.id++);
  if (session.ledger.unspoken() !== '') throw new Error('the ledger lost track of the text');
}

function cpuUs(work: () => void): number {
  const t0 = process.cpuUsage();
  work();
  const cpu = process.cpuUsage(t0);
  return cpu.user + cpu.system;
}

if (process.argv.includes('--cold')) {
  const texts = sentences(2000, 6, 7);
  const sessions = Array.from({ length: 500 }, open);
  sessions.forEach((session, i) => say(session, texts[i] as string));
  const us = cpuUs(() => {
    for (let k = 1; k <= 3; k++) sessions.forEach((session, i) => say(session, texts[i + k * 500] as string));
  });
  console.log(`${label}, cold: ${(us / 1500).toFixed(1)} us a sentence (1,500 after 500, fresh process)`);
} else {
  const count = Number(process.argv.find((a) => /^\d+$/.test(a)) ?? 50000);
  const texts = sentences(count, 6, 7);
  const run = (): number => {
    const sessions = Array.from({ length: sessionCount }, open);
    return cpuUs(() => texts.forEach((text, i) => say(sessions[i % sessionCount] as Session, text))) / count;
  };
  run(); // warm-up
  const runs = [run(), run(), run()].sort((a, b) => a - b);
  console.log(`${label}: ${runs.map((us) => us.toFixed(2)).join(' / ')} us a sentence (3 runs of ${count}, sorted)`);
}
