/**
 * The cost of client-side sentence boundaries in a live session: at an LLM pace of 30
 * tokens/s (a virtual clock, one token each 33.3 ms, ~4 characters a token), how long after
 * a sentence's last character was produced is it sent in a `text.chunk`? Plain forwarding
 * sends every token at once (0 ms) but lets chunks end at stops that are not sentence ends
 * ("The U.S." | " Government"); the gate holds such a stop until the next token decides it.
 * Also counted: chunks that end just after a stop that does not end a sentence (the gate
 * must send none). Target: median wait at most one token interval.
 */
import { createBoundaryGate } from '../src/text/boundaryGate.js';
import { createSentenceSegmenter } from '../src/text/sentences.js';
import { SENTENCE_CASES } from '../test/text/sentenceCases.js';
import type { BenchRow } from './types.js';
import { median, percentile } from './util.js';

const INTERVAL_MS = 1000 / 30;
const STOP_AT_END = /[.!?;:…。！？｡．।॥؟։።፧။"'”’»)\]」』》]$/u;

function tokenize(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

interface Measure {
  waits: number[];
  badEnds: number;
  chunks: number;
}

/** Feed `tokens` at the LLM pace; `send` maps a token to the chunks sent at that moment. */
function measure(text: string, locale: string, tokens: string[], gate: boolean): Measure {
  // sentence ends of the whole text (offsets just after each sentence's last non-space character)
  const seg = createSentenceSegmenter({ locale });
  const sentences = [...seg.feed(text), ...seg.end()];
  const ends = new Set<number>();
  let at = 0;
  for (const s of sentences) {
    at += s.length;
    if (s.trim().length > 0) ends.add(at - (s.length - s.trimEnd().length));
  }
  const g = createBoundaryGate({ locale });
  const producedAt: number[] = []; // per character: when its token was produced
  const sentAt: number[] = []; // per character: when it went out in a chunk
  let produced = 0;
  let sent = 0;
  let badEnds = 0;
  let chunks = 0;
  const send = (chunk: string, time: number): void => {
    for (let i = 0; i < chunk.length; i++) sentAt[sent + i] = time;
    sent += chunk.length;
    chunks++;
    if (STOP_AT_END.test(chunk) && !ends.has(sent) && sent !== text.length) badEnds++;
  };
  tokens.forEach((token, k) => {
    const time = k * INTERVAL_MS;
    for (let i = 0; i < token.length; i++) producedAt[produced + i] = time;
    produced += token.length;
    for (const chunk of gate ? g.feed(token) : [token]) send(chunk, time);
  });
  const endTime = tokens.length * INTERVAL_MS;
  for (const chunk of gate ? g.end() : []) send(chunk, endTime);
  const waits: number[] = [];
  for (const end of ends) if (end < text.length) waits.push(sentAt[end - 1]! - producedAt[end - 1]!);
  return { waits, badEnds, chunks };
}

export async function run(): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  const groups: Array<[string, (l: string) => boolean]> = [
    ['English', (l) => l.startsWith('en')],
    ['12 languages', () => true],
  ];
  for (const [label, filter] of groups) {
    const ours: Measure = { waits: [], badEnds: 0, chunks: 0 };
    const plain: Measure = { waits: [], badEnds: 0, chunks: 0 };
    for (const size of [3, 4, 5]) {
      for (const c of SENTENCE_CASES.filter((x) => filter(x.locale))) {
        const text = c.pieces.join('');
        const tokens = tokenize(text, size);
        for (const [into, gate] of [[ours, true], [plain, false]] as const) {
          const m = measure(text, c.locale, tokens, gate);
          into.waits.push(...m.waits);
          into.badEnds += m.badEnds;
          into.chunks += m.chunks;
        }
      }
    }
    const med = median(ours.waits);
    rows.push({
      name: `live text.chunk: median wait from a sentence's last character to its chunk, 30 tokens/s, ${label} (gate vs plain forwarding)`,
      ours: Math.round(med * 10) / 10,
      peer: Math.round(median(plain.waits) * 10) / 10,
      unit: 'ms',
      ratio: Math.round((med / INTERVAL_MS) * 100) / 100,
      better: 'lower',
      note:
        `ratio = ours / one token interval (${INTERVAL_MS.toFixed(1)} ms; target <= 1); p90 ${percentile(ours.waits, 90).toFixed(1)} ms; ` +
        `${ours.waits.length} sentence ends, tokens of 3-5 chars; chunks ending after a stop that is no sentence end: ${ours.badEnds} vs ${plain.badEnds}`,
    });
  }
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) console.table(await run());
