/**
 * Shared helpers of the benchmarks: statistics, seeded randomness, test text, memory
 * sampling, and the minimal hand-written `ws` client that is the peer of `client.speak`.
 */
import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Subject, type OperatorFunction } from 'rxjs';
import { WebSocket } from 'ws';
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
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
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
 * `count` sentences of `words` words each, ending in `!` plus a space, so that the
 * service's segmenter closes each one at once (a `.` waits for the next word).
 */
export function sentences(count: number, words = 6, salt = 0): string[] {
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const ws: string[] = [];
    for (let w = 0; w < words; w++) ws.push(WORDS[(i * 7 + w * 3 + salt) % WORDS.length] as string);
    const first = ws[0] as string;
    ws[0] = first.charAt(0).toUpperCase() + first.slice(1);
    out.push(`${ws.join(' ')} number ${i}! `);
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

/** A live session, hand-written on `ws`: JSON frames, no validation, no ledger. */
export function peerSession(
  wsUrl: string,
  apiKey: string,
  texts: readonly string[],
  mode: SessionMode,
  hooks: SessionHooks = {},
): Promise<SessionResult> {
  return new Promise((resolve, reject) => {
    const t0 = now();
    let ttfa = -1;
    let sentAt = 0;
    let next = 0;
    const sentenceMs: number[] = [];
    const segments: SessionResult['segments'] = [];
    let current: SessionResult['segments'][number] | undefined;
    let done = false;
    let sessionDone = false;
    const socket = new WebSocket(wsUrl, { headers: { 'x-api-key': apiKey } });
    const send = (frame: object): void => socket.send(JSON.stringify(frame));
    const push = (): void => {
      sentAt = now();
      send({ type: 'text.chunk', text: texts[next++] });
    };
    const end = (): void => {
      if (hooks.holdOpen) void hooks.holdOpen.then(() => send({ type: 'text.done' }));
      else send({ type: 'text.done' });
    };
    socket.on('open', () => send({ type: 'session.start', voice_id: 1, language: 'en-us', output_format: 'wav' }));
    socket.on('message', (data, isBinary) => {
      if (isBinary) {
        if (ttfa < 0) ttfa = now() - t0;
        if (current) current.bytes += (data as Buffer).byteLength;
        return;
      }
      const frame = JSON.parse((data as Buffer).toString()) as { type: string; segment_id?: number; text?: string; error?: string };
      switch (frame.type) {
        case 'session.ready':
          hooks.onReady?.();
          if (mode === 'pingpong') push();
          else {
            for (const text of texts) send({ type: 'text.chunk', text });
            next = texts.length;
            if (hooks.onSegments === undefined) end();
          }
          return;
        case 'segment.start':
          current = { id: frame.segment_id ?? -1, text: frame.text ?? '', bytes: 0 };
          segments.push(current);
          return;
        case 'segment.done':
          current = undefined;
          if (mode === 'pingpong') {
            sentenceMs.push(now() - sentAt);
            if (next < texts.length) push();
            else end();
          } else if (segments.length === texts.length && hooks.onSegments) {
            hooks.onSegments();
            end();
          }
          return;
        case 'segment.skipped':
          segments.push({ id: frame.segment_id ?? -1, text: frame.text ?? '', bytes: -1 });
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
      if (sessionDone && code === 1000) resolve({ ttfaMs: ttfa, sentenceMs, totalMs: now() - t0, segments });
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
  extra: { readyTimeoutMs?: number } = {},
): Promise<SessionResult> {
  return new Promise((resolve, reject) => {
    const t0 = now();
    let ttfa = -1;
    let sentAt = 0;
    let next = 0;
    const sentenceMs: number[] = [];
    const segments: SessionResult['segments'] = [];
    let current: SessionResult['segments'][number] | undefined;
    const text$ = new Subject<string>();
    const push = (): void => {
      sentAt = now();
      text$.next(texts[next++] as string);
    };
    const end = (): void => {
      if (hooks.holdOpen) void hooks.holdOpen.then(() => text$.complete());
      else text$.complete();
    };
    text$.pipe(client.speak({ voice_id: 1, language: 'en-us', output_format: 'wav', ...extra })).subscribe({
      next: (event) => {
        switch (event.type) {
          case 'audio':
            if (ttfa < 0) ttfa = now() - t0;
            if (current) current.bytes += event.bytes.byteLength;
            return;
          case 'segmentStart':
            current = { id: event.segment_id, text: event.text, bytes: 0 };
            segments.push(current);
            return;
          case 'segmentDone':
            current = undefined;
            if (mode === 'pingpong') {
              sentenceMs.push(now() - sentAt);
              if (next < texts.length) push();
              else end();
            } else if (segments.length === texts.length && hooks.onSegments) {
              hooks.onSegments();
              end();
            }
            return;
          case 'segmentSkipped':
            segments.push({ id: event.segment_id, text: event.text, bytes: -1 });
            return;
          case 'ready':
            hooks.onReady?.();
            return;
          default:
            return;
        }
      },
      error: (error: unknown) => reject(error instanceof Error ? error : new Error(String(error))),
      complete: () => resolve({ ttfaMs: ttfa, sentenceMs, totalMs: now() - t0, segments }),
    });
    if (mode === 'pingpong') push();
    else {
      for (const text of texts) text$.next(text);
      next = texts.length;
      if (hooks.onSegments === undefined) end();
    }
  });
}
