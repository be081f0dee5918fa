/**
 * Shared helpers of the benchmarks: statistics, seeded randomness, test text, memory
 * sampling, and the minimal hand-written `ws` client that is the peer of `client.speak`.
 */
import type { ChildProcess } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Subject, lastValueFrom, type OperatorFunction } from 'rxjs';
import { WebSocket } from 'ws';
import { createClient } from '../src/index.js';
import type { LiveSpeechEvent } from '../src/live/events.js';
import type { BenchRow } from './types.js';

/** True when `BENCH_QUICK=1`: fewer repetitions, smaller sizes. */
export const QUICK = process.env['BENCH_QUICK'] === '1' || process.env['BENCH_QUICK'] === 'true';

export const now = (): number => performance.now();

/** Median of a non-empty list (mean of the two middle values for even counts). */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** The p-th percentile (0..100), nearest rank. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] as number;
}

/** Deterministic PRNG in [0, 1) (mulberry32). */
export { mulberry32 as seeded } from '../src/emulator/random.js';

/**
 * The row of a throughput race on the same input: MB/s from `mb` and each side's best
 * time (one decimal), ratio ours / peer (two decimals).
 */
export function throughputRow(name: string, mb: number, bestOursMs: number, bestPeerMs: number, note: string): BenchRow {
  const ours = mb / (bestOursMs / 1000);
  const peer = mb / (bestPeerMs / 1000);
  return {
    name,
    ours: Math.round(ours * 10) / 10,
    peer: Math.round(peer * 10) / 10,
    unit: 'MB/s',
    ratio: Math.round((ours / peer) * 100) / 100,
    note,
  };
}

/** Round for display: 3 significant digits (integers above 1000 kept whole). */
export function round(value: number): number {
  if (!Number.isFinite(value)) return value;
  if (Math.abs(value) >= 1000) return Math.round(value);
  return Number(value.toPrecision(3));
}

/** A row, ratio = ours / peer (both rounded for display, ratio from the raw values). */
export function row(name: string, ours: number, peer: number, unit: string, note?: string, better?: 'lower' | 'higher'): BenchRow {
  // A zero peer makes the ratio meaningless: NaN (printed n/a, written null).
  const ratio = peer === 0 ? (ours === 0 ? 1 : Number.NaN) : ours / peer;
  const r: BenchRow = { name, ours: round(ours), peer: round(peer), unit, ratio: Number.isFinite(ratio) ? Number(ratio.toFixed(3)) : ratio };
  if (note !== undefined) r.note = note;
  if (better !== undefined) r.better = better;
  return r;
}

const WORDS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet', 'kilo', 'lima'];

/**
 * `count` sentences of `words` words each, ending in `!` plus `end` (a space by default).
 * With `end` a paragraph break (`'\n\n'`) each sentence is certain to be complete the moment
 * it is sent, whatever the service's segmenter makes of a `!` at the end of a chunk: the
 * ping-pong mode uses it, so that it never waits for `idle_timeout`.
 */
export function sentences(count: number, words = 6, salt = 0, end = ' '): string[] {
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const ws: string[] = [];
    for (let w = 0; w < words; w++) ws.push(WORDS[(i * 7 + w * 3 + salt) % WORDS.length] as string);
    const first = ws[0] as string;
    ws[0] = first.charAt(0).toUpperCase() + first.slice(1);
    out.push(`${ws.join(' ')} number ${i}!${end}`);
  }
  return out;
}

let gcFn: (() => void) | undefined;
/** Run a full garbage collection (enables `--expose-gc` at run time when needed). */
export function gc(): void {
  if (!gcFn) {
    const global = globalThis as { gc?: () => void };
    if (typeof global.gc === 'function') gcFn = global.gc;
    else {
      setFlagsFromString('--expose-gc');
      gcFn = runInNewContext('gc') as () => void;
    }
  }
  gcFn();
  gcFn();
}

/** Heap used and resident set size, bytes. */
export function memory(): { heap: number; rss: number } {
  const m = process.memoryUsage();
  return { heap: m.heapUsed, rss: m.rss };
}

export const MB = 1024 * 1024;

/** Yield to the event loop (let sockets and timers run). */
export const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

// ---------------------------------------------------------------------------
// The peer: a minimal hand-written live-session client on `ws`
// ---------------------------------------------------------------------------

/** What one live session delivered, the same shape for our client and the peer. */
export interface SessionResult {
  /** From the start of the session (socket creation) to the first audio byte, ms. */
  ttfaMs: number;
  /** Ping-pong mode: per sentence, from pushing its text to its `segment.done`, ms. */
  sentenceMs: number[];
  /** From start to the end of the session, ms. */
  totalMs: number;
  /** Segments in arrival order. */
  segments: { id: number; text: string; bytes: number }[];
}

/**
 * How the text goes in: `burst` pushes every sentence at once, then ends the input;
 * `pingpong` pushes the next sentence when the previous one's `segment.done` arrives.
 */
export type SessionMode = 'burst' | 'pingpong';

/** Callbacks of the concurrency benchmark. */
export interface SessionHooks {
  /** The session is ready (`session.ready`). */
  onReady?: () => void;
  /**
   * Burst mode: called once every sentence has been delivered; the input then stays
   * open (no `text.done`) until `holdOpen` resolves.
   */
  onSegments?: () => void;
  holdOpen?: Promise<void>;
}

/**
 * The bookkeeping shared by {@link peerSession} and {@link oursSession}: sends the text
 * by the mode (through `sendText` and `endInput`), times it, and collects the segments.
 */
function sessionTally(
  texts: readonly string[],
  mode: SessionMode,
  hooks: SessionHooks,
  sendText: (text: string) => void,
  endInput: () => void,
) {
  const t0 = now();
  let ttfa = -1;
  let sentAt = 0;
  let next = 0;
  const sentenceMs: number[] = [];
  const segments: SessionResult['segments'] = [];
  let current: SessionResult['segments'][number] | undefined;
  const push = (): void => {
    sentAt = now();
    sendText(texts[next++] as string);
  };
  const end = (): void => {
    if (hooks.holdOpen) void hooks.holdOpen.then(endInput);
    else endInput();
  };
  return {
    /** The session is ready for text: ping-pong pushes the first sentence, burst all of them. */
    start(): void {
      if (mode === 'pingpong') push();
      else {
        for (const text of texts) sendText(text);
        next = texts.length;
        if (hooks.onSegments === undefined) end();
      }
    },
    audio(bytes: number): void {
      if (ttfa < 0) ttfa = now() - t0;
      if (current) current.bytes += bytes;
    },
    segmentStart(id: number, text: string): void {
      current = { id, text, bytes: 0 };
      segments.push(current);
    },
    segmentDone(): void {
      current = undefined;
      if (mode === 'pingpong') {
        sentenceMs.push(now() - sentAt);
        if (next < texts.length) push();
        else end();
      } else if (segments.length === texts.length && hooks.onSegments) {
        hooks.onSegments();
        end();
      }
    },
    segmentSkipped(id: number, text: string): void {
      segments.push({ id, text, bytes: -1 });
    },
    result: (): SessionResult => ({ ttfaMs: ttfa, sentenceMs, totalMs: now() - t0, segments }),
  };
}

/** A live session, hand-written on `ws`: JSON frames, no validation, no ledger. */
export function peerSession(
  wsUrl: string,
  apiKey: string,
  texts: readonly string[],
  mode: SessionMode,
  hooks: SessionHooks = {},
): Promise<SessionResult> {
  return new Promise((resolve, reject) => {
    // Created first: the session's clock starts before the socket.
    const tally = sessionTally(
      texts,
      mode,
      hooks,
      (text) => send({ type: 'text.chunk', text }),
      () => send({ type: 'text.done' }),
    );
    let done = false;
    let sessionDone = false;
    const socket = new WebSocket(wsUrl, { headers: { 'x-api-key': apiKey } });
    const send = (frame: object): void => socket.send(JSON.stringify(frame));
    socket.on('open', () => send({ type: 'session.start', voice_id: 1, language: 'en-us', output_format: 'wav' }));
    socket.on('message', (data, isBinary) => {
      if (isBinary) {
        tally.audio((data as Buffer).byteLength);
        return;
      }
      const frame = JSON.parse((data as Buffer).toString()) as { type: string; segment_id?: number; text?: string; error?: string };
      switch (frame.type) {
        case 'session.ready':
          hooks.onReady?.();
          tally.start();
          return;
        case 'segment.start':
          tally.segmentStart(frame.segment_id ?? -1, frame.text ?? '');
          return;
        case 'segment.done':
          tally.segmentDone();
          return;
        case 'segment.skipped':
          tally.segmentSkipped(frame.segment_id ?? -1, frame.text ?? '');
          return;
        case 'session.error':
          done = true;
          reject(new Error(`session.error: ${frame.error}`));
          return;
        case 'session.done':
          sessionDone = true;
          return;
      }
    });
    socket.on('error', (error) => {
      if (!done) {
        done = true;
        reject(error);
      }
    });
    // Like `client.speak`, the session is over at the clean close after session.done.
    socket.on('close', (code) => {
      if (done) return;
      done = true;
      if (sessionDone && code === 1000) resolve(tally.result());
      else reject(new Error(`closed ${code} before session.done`));
    });
  });
}

/** Check that a session spoke exactly `texts`, in order; returns a problem or undefined. */
export function verifyOrder(result: SessionResult, texts: readonly string[]): string | undefined {
  if (result.segments.length !== texts.length) return `${result.segments.length} segments for ${texts.length} sentences`;
  for (let i = 0; i < texts.length; i++) {
    const segment = result.segments[i];
    if (!segment) return `segment ${i} missing`;
    if (segment.bytes <= 0) return `segment ${i} has no audio`;
    if (i > 0 && segment.id <= (result.segments[i - 1]?.id ?? -1)) return `segment ids out of order at ${i}`;
    if (segment.text.trim() !== (texts[i] as string).trim()) return `segment ${i} is "${segment.text.trim()}", expected "${(texts[i] as string).trim()}"`;
  }
  return undefined;
}

// ---------------------------------------------------------------------------
// Ours: the same session through `client.speak`
// ---------------------------------------------------------------------------

/** The part of the client the benchmarks use (keeps this file free of a hard import). */
export interface SpeakingClient {
  speak(options: { voice_id: number; language?: string; output_format?: 'wav'; readyTimeoutMs?: number }): OperatorFunction<string, LiveSpeechEvent>;
}

/** The same session as {@link peerSession}, through `client.speak` and a Subject of text. */
export function oursSession(
  client: SpeakingClient,
  texts: readonly string[],
  mode: SessionMode,
  hooks: SessionHooks = {},
  extra: { readyTimeoutMs?: number; clientBoundaries?: boolean } = {},
): Promise<SessionResult> {
  return new Promise((resolve, reject) => {
    const text$ = new Subject<string>();
    const tally = sessionTally(
      texts,
      mode,
      hooks,
      (text) => text$.next(text),
      () => text$.complete(),
    );
    text$.pipe(client.speak({ voice_id: 1, language: 'en-us', output_format: 'wav', ...extra })).subscribe({
      next: (event) => {
        switch (event.type) {
          case 'audio':
            tally.audio(event.bytes.byteLength);
            return;
          case 'segmentStart':
            tally.segmentStart(event.segment_id, event.text);
            return;
          case 'segmentDone':
            tally.segmentDone();
            return;
          case 'segmentSkipped':
            tally.segmentSkipped(event.segment_id, event.text);
            return;
          case 'ready':
            hooks.onReady?.();
            return;
          default:
            return;
        }
      },
      error: (error: unknown) => reject(error instanceof Error ? error : new Error(String(error))),
      complete: () => resolve(tally.result()),
    });
    tally.start();
  });
}

/** The value under `key` of the next IPC message from a child process that has it. */
export function nextMessage<T>(proc: ChildProcess, key: string): Promise<T> {
  return new Promise((resolve) => {
    const on = (message: unknown): void => {
      const m = message as Record<string, unknown>;
      if (key in m) {
        proc.off('message', on);
        resolve(m[key] as T);
      }
    };
    proc.on('message', on);
  });
}

/** `GET /list-voices`, one call after the other (20 ms apart), for `seconds`: each call's latency, ms. */
export async function listVoicesLatencies(address: { baseUrl: string; apiKey: string }, seconds: number): Promise<number[]> {
  const client = createClient({ apiKey: address.apiKey, baseUrl: address.baseUrl, maxRetries: 0 });
  const latencies: number[] = [];
  const end = now() + seconds * 1000;
  try {
    while (now() < end) {
      const started = now();
      await lastValueFrom(client.voices.list());
      latencies.push(now() - started);
      await sleep(20);
    }
  } finally {
    await client.close();
  }
  return latencies;
}

/**
 * The body of a child process that speaks: one raw live session per text, each sending
 * its text in `chunkChars` frames, then `text.done`, and reading every frame back. IPC:
 * `{ ready: true }` once every session sent its text; on `{ stop }` the sockets are cut
 * and the answer is `{ done: segments delivered so far }`.
 */
export function speakersChild(args: { wsUrl: string; apiKey: string; texts: readonly string[]; chunkChars: number }): void {
  let ready = 0;
  let done = 0;
  const sockets: WebSocket[] = [];
  for (const text of args.texts) {
    const ws = new WebSocket(args.wsUrl, { headers: { 'x-api-key': args.apiKey } });
    sockets.push(ws);
    ws.on('error', () => undefined);
    ws.on('open', () => ws.send(JSON.stringify({ type: 'session.start', voice_id: 1, output_format: 'wav' })));
    ws.on('message', (data, isBinary) => {
      if (isBinary) return;
      const frame = JSON.parse(String(data)) as { type: string };
      if (frame.type === 'segment.done') done += 1;
      else if (frame.type === 'session.ready') {
        for (let at = 0; at < text.length; at += args.chunkChars) ws.send(JSON.stringify({ type: 'text.chunk', text: text.slice(at, at + args.chunkChars) }));
        ws.send(JSON.stringify({ type: 'text.done' }));
        ready += 1;
        if (ready === args.texts.length) process.send?.({ ready: true });
      }
    });
  }
  process.on('message', (message: Record<string, unknown>) => {
    if (!message['stop']) return;
    for (const ws of sockets) ws.terminate();
    process.send?.({ done }, () => process.exit(0));
  });
}

/** Run one benchmark module on its own (`npx tsx bench/x.ts`): print its rows, or the error with exit code 1. */
export function runAlone(run: () => Promise<BenchRow[]>): void {
  run().then(
    (rows) => console.table(rows),
    (error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    },
  );
}
