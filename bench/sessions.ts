/**
 * The live sessions of the benchmarks, both sides: the minimal hand-written `ws` client that
 * is the peer of `client.speak`, our client's session, and the load generators (talking
 * processes, `GET /list-voices` callers). Apart from `util.ts`, which loads none of rxvoice,
 * rxjs or ws.
 */
import { Subject, lastValueFrom, type OperatorFunction } from 'rxjs';
import { WebSocket } from 'ws';
import { createClient } from '../src/index.js';
import type { LiveSpeechEvent } from '../src/live/events.js';
import { now, sleep } from './util.js';

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
