/**
 * SSE parsing throughput: rxvoice `parseSse()` against `eventsource-parser`, both fed the
 * same UTF-8 byte chunks (1 to 4 KiB) of realistic LLM-style event streams, both delivering
 * events through an Observable. Run: `npx tsx bench/sse.ts`.
 */
import { Observable, from, type Subscriber } from 'rxjs';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { parseSse } from '../src/operators/parseSse.js';
import type { BenchRow } from './types.js';
import { seeded, throughputRow } from './util.js';
import { pathToFileURL } from 'node:url';

const ENGLISH = ['the', 'quick', 'brown', 'fox', 'jumps', 'over', 'lazy', 'dog', 'stream', 'token', ',', '.', '\\n'];
const MULTILINGUAL = [...ENGLISH, 'Привет', 'café', '日本語', 'naïve', '😀', 'résumé'];

/** `bytes` of OpenAI-style chat completion chunks, one event per token. */
export function llmStream(bytes: number, seed = 1, multilingual = false): Uint8Array {
  const WORDS = multilingual ? MULTILINGUAL : ENGLISH;
  const random = seeded(seed);
  const parts: string[] = [];
  let size = 0;
  let i = 0;
  while (size < bytes) {
    const word = WORDS[Math.floor(random() * WORDS.length)] ?? 'x';
    const line =
      `data: {"id":"chatcmpl-9x8Yz${i % 1000}","object":"chat.completion.chunk","created":1732262400,` +
      `"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":" ${word}"},"finish_reason":null}]}\n\n`;
    parts.push(line);
    size += line.length;
    i++;
  }
  parts.push('data: [DONE]\n\n');
  return new TextEncoder().encode(parts.join(''));
}

/** Split into chunks of 1 to 4 KiB. */
export function chunk(bytes: Uint8Array, seed = 2): Uint8Array[] {
  const random = seeded(seed);
  const out: Uint8Array[] = [];
  let pos = 0;
  while (pos < bytes.length) {
    const n = 1024 + Math.floor(random() * 3073);
    out.push(bytes.subarray(pos, pos + n));
    pos += n;
  }
  return out;
}

type PeerEvent = EventSourceMessage;

/** eventsource-parser as an operator the way its EventSourceParserStream feeds it. */
function peerParse(source: Observable<Uint8Array>): Observable<PeerEvent> {
  return new Observable((subscriber: Subscriber<PeerEvent>) => {
    const decoder = new TextDecoder();
    const parser = createParser({
      // its own event objects, as they are (`event` undefined for the default type)
      onEvent: (e) => subscriber.next(e),
    });
    return source.subscribe({
      next: (c) => parser.feed(decoder.decode(c, { stream: true })),
      error: (e) => subscriber.error(e),
      complete: () => {
        parser.feed(decoder.decode());
        subscriber.complete();
      },
    });
  });
}

function time(run: () => number): { ms: number; events: number } {
  const t0 = performance.now();
  const events = run();
  return { ms: performance.now() - t0, events };
}

function countOurs(chunks: Uint8Array[]): number {
  let n = 0;
  let chars = 0;
  from(chunks)
    .pipe(parseSse())
    .subscribe((e) => {
      n++;
      chars += e.data.length;
    });
  return n + (chars & 0);
}

function countPeer(chunks: Uint8Array[]): number {
  let n = 0;
  let chars = 0;
  peerParse(from(chunks)).subscribe((e) => {
    n++;
    chars += e.data.length;
  });
  return n + (chars & 0);
}

function measure(name: string, bytes: Uint8Array, rounds: number): BenchRow {
  const chunks = chunk(bytes);
  const mb = bytes.length / (1024 * 1024);
  let bestOurs = Infinity;
  let bestPeer = Infinity;
  let eventsOurs = 0;
  let eventsPeer = 0;
  // alternate, the first round warms both up, keep the best of each
  for (let r = 0; r < rounds; r++) {
    const a = time(() => countOurs(chunks));
    const b = time(() => countPeer(chunks));
    eventsOurs = a.events;
    eventsPeer = b.events;
    if (r > 0) {
      bestOurs = Math.min(bestOurs, a.ms);
      bestPeer = Math.min(bestPeer, b.ms);
    }
  }
  if (eventsOurs !== eventsPeer) throw new Error(`event counts differ: ${eventsOurs} vs ${eventsPeer}`);
  return throughputRow(
    name,
    mb,
    bestOurs,
    bestPeer,
    `${mb.toFixed(1)} MB, ${chunks.length} chunks of 1-4 KiB, ${eventsOurs} events, best of ${rounds - 1}`,
  );
}

export async function run(options: { megabytes?: number; rounds?: number } = {}): Promise<BenchRow[]> {
  const megabytes = options.megabytes ?? 20;
  const rounds = options.rounds ?? 11;
  const size = megabytes * 1024 * 1024;
  return [
    measure('parseSse vs eventsource-parser: LLM SSE, English (ASCII) tokens', llmStream(size, 1, false), rounds),
    measure('parseSse vs eventsource-parser: LLM SSE, multilingual UTF-8 tokens', llmStream(size, 1, true), rounds),
  ];
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const rows = await run();
  console.table(rows);
}
