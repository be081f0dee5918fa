/**
 * SSE parsing throughput: rxvoice `parseSse()` against `eventsource-parser` fed the way its
 * own `EventSourceParserStream` feeds it (a streaming `TextDecoder`), both delivering events
 * through an Observable, on the same UTF-8 byte chunks.
 *
 * The grid: three scripts (ASCII English, accented Latin, CJK) times four chunk sizes
 * (64 B, 1 KiB, 16 KiB, 64 KiB). The streams are shaped like a translation stream: one
 * event per piece of one to four words (one to four characters in CJK), `id:` and `data:`
 * lines. The words come from the pragmatic-segmenter "Golden Rules" texts in
 * `shared/data/golden-rules.json` when present (see `golden-rules.ts`) (English; German, Spanish,
 * French, Italian, Danish; Chinese and Japanese), else from a few built-in sentences.
 * Run: `npx tsx bench/sse.ts`.
 */
import { pathToFileURL } from 'node:url';
import { Observable, from, type Subscriber } from 'rxjs';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { parseSse } from '../src/operators/parseSse.js';
import { encodeSseEvent } from '../src/text/sse-encode.js';
import { loadGoldenRules } from './golden-rules.js';
import type { BenchRow } from './types.js';
import { seeded, throughputRow } from './util.js';

type Script = 'ascii' | 'latin' | 'cjk';

const SCRIPTS: Record<Script, { label: string; langs: string[]; fallback: string }> = {
  ascii: {
    label: 'ASCII English',
    langs: ['en'],
    fallback: 'The quick brown fox jumps over the lazy dog. Streams carry translated text, piece by piece, as it is produced.',
  },
  latin: {
    label: 'accented Latin',
    langs: ['de', 'es', 'fr', 'it', 'da'],
    fallback: 'Über die Brücke gehen Mädchen. ¿Dónde está la estación? Le garçon a mangé à côté du château. Perché è già così?',
  },
  cjk: {
    label: 'CJK',
    langs: ['zh', 'ja'],
    fallback: '今天天气很好，我们去公园散步吧。東京は日本の首都です。彼は「こんにちは」と言いました。',
  },
};

export const CHUNK_SIZES = [64, 1024, 16 * 1024, 64 * 1024] as const;

/** The source text of a script: Golden Rules texts when present, else the built-in sample. */
function sourceText(script: Script): { text: string; from: string } {
  const { langs, fallback } = SCRIPTS[script];
  const text = (loadGoldenRules() ?? [])
    .filter((c) => langs.includes(c.lang))
    .map((c) => c.text)
    .join(' ');
  return text.length > 0 ? { text, from: `Golden Rules ${langs.join('/')}` } : { text: fallback, from: 'built-in sample' };
}

/** Tokens of a text: words with their trailing space, or single characters in CJK. */
function tokensOf(text: string, script: Script): string[] {
  if (script === 'cjk') return Array.from(text.replace(/\s+/g, ''));
  return text.split(/(?<=\s)/).filter((t) => t.length > 0);
}

/** About `bytes` of a translation-style event stream of `script` text. */
export function eventStream(bytes: number, script: Script, seed = 1): { bytes: Uint8Array; from: string } {
  const source = sourceText(script);
  const tokens = tokensOf(source.text, script);
  const random = seeded(seed);
  const parts: string[] = ['retry: 3000\n\n'];
  let size = 0;
  let pos = 0;
  for (let id = 0; size < bytes; id++) {
    const n = 1 + Math.floor(random() * 4);
    let piece = '';
    for (let k = 0; k < n; k++) piece += tokens[pos++ % tokens.length];
    const event = encodeSseEvent({ id: String(id), data: piece });
    parts.push(event);
    size += Buffer.byteLength(event);
  }
  return { bytes: new TextEncoder().encode(parts.join('')), from: source.from };
}

/** Split into chunks of exactly `size` bytes (the last one shorter). */
export function chunk(bytes: Uint8Array, size: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let pos = 0; pos < bytes.length; pos += size) out.push(bytes.subarray(pos, pos + size));
  return out;
}

/** eventsource-parser as an operator, the way its EventSourceParserStream feeds it. */
function peerParse(source: Observable<Uint8Array>): Observable<EventSourceMessage> {
  return new Observable((subscriber: Subscriber<EventSourceMessage>) => {
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

/**
 * CPU time of `run` (user + system, ms): the machine that runs `npm run bench` may be
 * shared, and time spent waiting for a core would be noise, not either parser's cost.
 */
function time(run: () => number): { ms: number; chars: number } {
  const before = process.cpuUsage();
  const chars = run();
  const spent = process.cpuUsage(before);
  return { ms: (spent.user + spent.system) / 1000, chars };
}

function countOurs(chunks: Uint8Array[]): number {
  let chars = 0;
  from(chunks)
    .pipe(parseSse())
    .subscribe((e) => {
      chars += e.data.length;
    });
  return chars;
}

function countPeer(chunks: Uint8Array[]): number {
  let chars = 0;
  peerParse(from(chunks)).subscribe((e) => {
    chars += e.data.length;
  });
  return chars;
}

function measure(script: Script, chunkSize: number, megabytes: number, rounds: number): BenchRow {
  const stream = eventStream(megabytes * 1024 * 1024, script);
  const chunks = chunk(stream.bytes, chunkSize);
  const mb = stream.bytes.length / (1024 * 1024);
  let bestOurs = Infinity;
  let bestPeer = Infinity;
  // alternate; the first round warms both up; keep the best of each
  for (let r = 0; r < rounds; r++) {
    const a = time(() => countOurs(chunks));
    const b = time(() => countPeer(chunks));
    if (a.chars !== b.chars) throw new Error(`event data differ: ${a.chars} vs ${b.chars} characters`);
    if (r > 0) {
      bestOurs = Math.min(bestOurs, a.ms);
      bestPeer = Math.min(bestPeer, b.ms);
    }
  }
  const size = chunkSize >= 1024 ? `${chunkSize / 1024} KiB` : `${chunkSize} B`;
  return throughputRow(
    `parseSse vs eventsource-parser: ${SCRIPTS[script].label}, ${size} chunks`,
    mb,
    bestOurs,
    bestPeer,
    `${mb.toFixed(1)} MB (${stream.from}), ${chunks.length} chunks, best CPU time of ${rounds - 1}`,
  );
}

export async function run(options: { megabytes?: number; rounds?: number } = {}): Promise<BenchRow[]> {
  const megabytes = options.megabytes ?? 2;
  const rounds = options.rounds ?? 7;
  const rows: BenchRow[] = [];
  for (const script of Object.keys(SCRIPTS) as Script[]) {
    for (const size of CHUNK_SIZES) rows.push(measure(script, size, megabytes, rounds));
  }
  return rows;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const rows = await run();
  console.table(rows);
}
