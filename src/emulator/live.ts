/**
 * The emulator's live speech session (`/live-tts/ws`), called by server.ts once the API
 * key was checked.
 *
 * Life of a session:
 * 1. The first frame must be a valid `session.start` (JSON text frame). Anything else,
 *    an unknown voice, an unsupported language or an output format the emulator
 *    cannot encode: `session.error`, then close 4400. No first frame within
 *    `options.liveStartTimeoutMs` (10 s by default): the same.
 * 2. `session.ready { session_id, run_id, config }`; `config` is the parsed
 *    configuration with `output_format` and `sample_rate` resolved.
 * 3. `text.chunk` feeds a sentence segmenter: each complete sentence becomes a segment
 *    at once, also one that ends the chunk (decided as if the text ended there, see
 *    {@link sentenceEndingChunk} for the few stops that wait: `Dr.`, initials...);
 *    text without a boundary becomes one after `idle_timeout` seconds with no
 *    new text. Whitespace-only text is never a segment: it stays buffered and leads
 *    the next segment (or is dropped at the very end).
 * 4. Segments synthesize concurrently (at most `options.concurrency` in flight, and at
 *    most that many waiting to be sent), credits charged just before each synthesis,
 *    each attempt retried 3 times with exponential backoff before `segment.skipped`.
 *    Frames leave strictly in segment order: `segment.start`, binary frames of at most
 *    64 KiB (concatenated: one playable file), `segment.done`.
 * 5. `text.done` (or nothing more to do after it): `session.done`, close 1000. When
 *    credits run out at segment N, segments before N are still delivered, then one
 *    `session.error` and close 4402.
 *
 * Fairness (one client cannot slow the rest): the session yields to the event loop
 * between segments (other sessions and HTTP requests run in between); binary frames wait
 * for the socket to drain past {@link SEND_HIGH_WATER_BYTES}; while more than
 * `options.livePendingTextChars` of received text wait to be spoken, the socket is not
 * read (TCP backpressure on the client) until half of it went out; a session where no
 * frame came in and none went out for `options.liveIdleTimeoutMs` gets a
 * `session.error` and close 4408; and each key holds at most `options.liveSessionsPerKey`
 * sessions (one more: `session.error`, close 4429). Close codes 4408 and 4429 are the
 * emulator's choice (the contract shows no others), after HTTP 408 and 429.
 *
 * Faults (`options.faults`, per key): failSynthesis, failSynthesisMatching,
 * synthesisLatencyMs, creditsAfterSegments, dropAfterFrames (the TCP socket is
 * destroyed with no close frame).
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { WebSocket, type RawData } from 'ws';
import { canEncode, missingEncoderHint, encodedSampleRate } from '../audio/encode.js';
import {
  CloseCodes,
  MAX_AUDIO_FRAME_BYTES,
  TextChunkFrameSchema,
  type SessionConfig,
} from '../live/protocol.js';
import { createSentenceSegmenter, type SentenceSegmenter } from '../text/sentences.js';
import { sentenceEndingChunk } from '../text/chunkEnd.js';
import type { Faults } from './options.js';
import { LiveFrameWriter } from './live-frames.js';
import { synthesizeSegment, type LiveSegment, type SynthesisJob } from './live-synthesis.js';
import { openSessions, type LiveSessionStats, type OpenLiveSession } from './live-sessions.js';
import { rawToString, readSessionStart } from './live-start.js';
import { resolveLanguage } from './state.js';
import type { EmulatorContext, LiveConnectionHandler, Synthesizer } from './types.js';
import type { Voice } from '../core/schemas.js';

/** Sample rate when `session.start` gives none (both synthesizers' native rate). */
export const DEFAULT_LIVE_SAMPLE_RATE = 22050;
/** Reasons sent with the emulator's closes. */
const CLOSE_REASONS: Record<number, string> = {
  [CloseCodes.creditsExhausted]: 'insufficient credits',
  [CloseCodes.rejected]: 'session rejected',
  [CloseCodes.idleTimeout]: 'idle timeout',
  [CloseCodes.tooManySessions]: 'too many sessions',
};
/** Close code used when the emulator shuts down under a live session. */
const CLOSE_GOING_AWAY = 1001;

/** The configuration echoed in `session.ready`: output format and rate resolved. */
export type ResolvedSessionConfig = SessionConfig & { sample_rate: number };

type Segment = LiveSegment;

/** Data of the text-to-speech run a live session creates. */
export interface LiveRunData {
  source: 'live';
  session_id: string;
  config: ResolvedSessionConfig;
  segments: { segment_id: number; text: string; status: 'delivered' | 'skipped' }[];
}

/**
 * Serve one live speech session on an authenticated WebSocket.
 *
 * @param socket The accepted WebSocket (the `ws` package).
 * @param _request The upgrade request (unused; the key was checked by the server).
 * @param apiKey The key the client presented; charged for credits, never logged.
 * @param context Shared emulator state.
 */
export const handleLiveConnection: LiveConnectionHandler = (socket, _request: IncomingMessage, apiKey, context) => {
  new LiveSession(socket, apiKey, context).start();
};

// The registry of open sessions moved to live-sessions.ts: its names stay importable from here.
export { liveSessionStats, type LiveSessionStats } from './live-sessions.js';
// Synthesis (retries, faults) moved to live-synthesis.ts: its constant stays importable from here.
export { SYNTHESIS_RETRIES } from './live-synthesis.js';
// Frames out moved to live-frames.ts: its constant stays importable from here.
export { SEND_HIGH_WATER_BYTES } from './live-frames.js';

/** Resolves on the next turn of the event loop, after pending I/O. */
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

class LiveSession {
  private phase: 'awaiting-start' | 'starting' | 'ready' | 'ending' | 'closed' = 'awaiting-start';
  private readonly timers = new Set<NodeJS.Timeout>();
  private startTimer: NodeJS.Timeout | undefined;
  private idleTimer: NodeJS.Timeout | undefined;
  /** `liveIdleTimeoutMs`: no frame in or out for that long closes the session (4408). */
  private quietTimer: NodeJS.Timeout | undefined;
  /** Counted in `openSessions` (released once, at cleanup). */
  private counted = false;
  /** Characters of received text not yet sent as segments (segmenter buffer aside). */
  private unsentChars = 0;
  /** Reading of the socket paused (too much text waiting). */
  private readingPaused = false;
  private unregisterClose: (() => void) | undefined;
  private readonly faults: Faults;
  /** Frames out (with the `dropAfterFrames` fault and the send buffer's back-pressure). */
  private readonly writer: LiveFrameWriter;

  private config!: ResolvedSessionConfig;
  private voice!: Voice;
  private language = 'en-us';
  private synth!: Synthesizer;
  private segmenter!: SentenceSegmenter;
  private runData: LiveRunData | undefined;

  private readonly segments: Segment[] = [];
  /** Index of the next segment to synthesize (charged just before). */
  private nextToStart = 0;
  /** Index of the next segment whose frames go out. */
  private nextToSend = 0;
  private inFlight = 0;
  private chargedSegments = 0;
  /** Segment id at which credits ran out. */
  private creditsFailedAt: number | undefined;
  private inputEnded = false;
  private sending = false;
  /** A segment became ready while frames were going out: look again. */
  private pumpRequested = false;
  /** Whitespace-only text waiting to lead the next segment. */
  private whitespace = '';

  constructor(
    private readonly socket: WebSocket,
    private readonly apiKey: string,
    private readonly context: EmulatorContext,
  ) {
    this.faults = context.faultsFor(apiKey);
    this.writer = new LiveFrameWriter(socket, this.faults, {
      isLive: () => this.isLive(),
      dropped: () => this.cleanup(),
      log: (line) => this.log(line),
    });
  }

  stats(): LiveSessionStats {
    return {
      pendingTextChars: this.unsentChars + (this.segmenter?.pending().length ?? 0),
      readingPaused: this.readingPaused,
      idleFlushArmed: this.idleTimer !== undefined,
      segments: this.segments.length,
      sent: this.nextToSend,
    };
  }

  start(): void {
    if (this.context.closing) {
      this.socket.close(CLOSE_GOING_AWAY, 'emulator closing');
      return;
    }
    const perKey = openSessions.get(this.context) ?? new Map<string, Set<OpenLiveSession>>();
    openSessions.set(this.context, perKey);
    const open = perKey.get(this.apiKey) ?? new Set<OpenLiveSession>();
    const limit = this.context.options.liveSessionsPerKey;
    if (open.size >= limit) {
      this.socket.on('error', () => undefined);
      this.fail(`too many live sessions open for this API key (at most ${limit})`, CloseCodes.tooManySessions);
      return;
    }
    open.add(this);
    perKey.set(this.apiKey, open);
    this.counted = true;
    this.unregisterClose = this.context.onClose(() => {
      if (this.phase === 'closed') return;
      this.cleanup();
      if (this.socket.readyState === WebSocket.OPEN) this.socket.close(CLOSE_GOING_AWAY, 'emulator closing');
      else this.socket.terminate();
    });
    const startTimeout = this.context.options.liveStartTimeoutMs;
    this.startTimer = this.setTimer(() => {
      if (this.phase === 'awaiting-start') this.reject(`no session.start within ${startTimeout / 1000} s`);
    }, startTimeout);
    this.touch();
    this.socket.on('message', (data, isBinary) => {
      this.touch();
      this.onMessage(data, isBinary);
    });
    this.socket.on('close', () => this.cleanup());
    this.socket.on('error', () => this.cleanup());
  }

  // ---------------------------------------------------------------------------
  // Incoming frames
  // ---------------------------------------------------------------------------

  private onMessage(data: RawData, isBinary: boolean): void {
    switch (this.phase) {
      case 'awaiting-start':
        this.clearTimer(this.startTimer);
        this.phase = 'starting';
        void this.onStart(data, isBinary).catch((error: unknown) => {
          // The synthesizer could not be loaded: a server-side failure (1011).
          this.fail(`session could not start: ${error instanceof Error ? error.message : String(error)}`, 1011);
        });
        return;
      case 'ready':
        if (isBinary) return; // no binary frames from the client; ignored
        this.onFrame(rawToString(data));
        return;
      default:
        // While starting, the session is not ready yet: frames are not expected (the
        // client must wait for session.ready); after text.done, more text is ignored.
        if (this.phase === 'starting' && !isBinary) this.early.push(rawToString(data));
        return;
    }
  }

  private readonly early: string[] = [];

  private async onStart(data: RawData, isBinary: boolean): Promise<void> {
    const first = readSessionStart(data, isBinary);
    if ('reject' in first) return this.reject(first.reject);
    const { config } = first;

    const voice = this.context.voice(config.voice_id);
    if (!voice) return this.reject(`voice ${config.voice_id} is not available`);
    if (!canEncode(config.output_format)) {
      return this.reject(
        `output_format "${config.output_format}" is not supported by the emulator; use "wav"` +
          (canEncode('mp3') ? ' or "mp3"' : '') +
          missingEncoderHint(config.output_format),
      );
    }
    const synth = await this.context.synthesizer();
    if (this.phase !== 'starting') return; // client went away meanwhile
    const language = resolveLanguage(config.language);
    if (!synth.supportsLanguage(language)) {
      return this.reject(`language "${config.language}" is not supported by the ${synth.name} synthesizer`);
    }

    const sampleRate = encodedSampleRate(config.output_format, config.sample_rate ?? DEFAULT_LIVE_SAMPLE_RATE);
    this.config = { ...config, sample_rate: sampleRate };
    this.voice = voice;
    this.language = language;
    this.synth = synth;
    this.segmenter = createSentenceSegmenter({ locale: language });
    this.synthesisJob = {
      synth,
      voice,
      language,
      config: this.config,
      faults: this.faults,
      retryBaseMs: this.context.options.retryBaseMs,
      isLive: () => this.isLive(),
      sleep: (ms) => this.sleep(ms),
      log: (line) => this.log(line),
    };
    const sessionId = randomUUID();
    this.runData = { source: 'live', session_id: sessionId, config: this.config, segments: [] };
    const run = this.context.createRun('text-to-speech', this.apiKey, this.runData);
    this.phase = 'ready';
    this.sendJson({ type: 'session.ready', session_id: sessionId, run_id: run.run_id, config: this.config });
    this.log(`session ${sessionId} ready (voice ${voice.id}, ${language}, ${this.config.output_format} ${sampleRate} Hz)`);
    for (const text of this.early.splice(0)) {
      if (this.phase === 'ready') this.onFrame(text);
    }
  }

  private onFrame(text: string): void {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      return; // not JSON: ignored mid-session
    }
    const type = typeof json === 'object' && json !== null ? (json as { type?: unknown }).type : undefined;
    if (type === 'text.chunk') {
      const parsed = TextChunkFrameSchema.safeParse(json);
      if (parsed.success) this.pushText(parsed.data.text);
    } else if (type === 'text.done') {
      this.endInput();
    }
    // Anything else (a second session.start, unknown types) is ignored.
  }

  private pushText(text: string): void {
    if (text.length === 0) return;
    // Contract rule 1: a complete sentence leaves at once, also when it ends the chunk (no
    // idle timer for it); only trailing text without a boundary waits for idle_timeout.
    for (const sentence of this.segmenter.feed(text)) this.addSegment(sentence);
    for (const sentence of sentenceEndingChunk(this.segmenter)) this.addSegment(sentence);
    this.clearTimer(this.idleTimer);
    this.idleTimer = undefined;
    if (this.segmenter.pending().trim().length > 0) {
      this.idleTimer = this.setTimer(() => {
        this.idleTimer = undefined;
        this.flushPending();
      }, this.config.idle_timeout * 1000);
    }
  }

  /** Turn buffered text without a boundary into a segment (whitespace-only stays). */
  private flushPending(): void {
    if (this.phase !== 'ready' && this.phase !== 'ending') return;
    if (this.segmenter.pending().trim().length === 0) return;
    const rest = this.segmenter.end();
    this.segmenter = createSentenceSegmenter({ locale: this.language });
    for (const piece of rest) this.addSegment(piece);
  }

  private endInput(): void {
    if (this.phase !== 'ready') return;
    this.clearTimer(this.idleTimer);
    this.idleTimer = undefined;
    this.flushPending();
    this.inputEnded = true;
    this.phase = 'ending';
    this.maybeFinish();
  }

  /** A piece of text becomes a segment; whitespace-only pieces lead the next segment. */
  private addSegment(piece: string): void {
    if (piece.trim().length === 0) {
      this.whitespace += piece;
      return;
    }
    const text = this.whitespace + piece;
    this.whitespace = '';
    this.segments.push({ id: this.segments.length, text, state: 'waiting' });
    this.unsentChars += text.length;
    this.applyBackpressure();
    this.schedule();
  }

  // ---------------------------------------------------------------------------
  // Synthesis
  // ---------------------------------------------------------------------------

  /** Start synthesis of waiting segments within the concurrency window. */
  private schedule(): void {
    const window = this.context.options.concurrency;
    while (
      this.isLive() &&
      this.creditsFailedAt === undefined &&
      this.nextToStart < this.segments.length &&
      this.inFlight < window &&
      this.nextToStart - this.nextToSend < window
    ) {
      const segment = this.segments[this.nextToStart];
      if (!segment) break;
      const limit = this.faults.creditsAfterSegments;
      const charged =
        (limit === undefined || this.chargedSegments < limit) &&
        this.context.credits.charge(this.apiKey, this.context.options.prices.speechSegment);
      if (!charged) {
        this.creditsFailedAt = segment.id;
        this.pump();
        return;
      }
      this.chargedSegments++;
      this.nextToStart++;
      this.inFlight++;
      segment.state = 'synthesizing';
      void this.synthesize(segment).then(() => {
        this.inFlight--;
        this.pump();
        this.schedule();
      });
    }
  }

  private synthesize(segment: Segment): Promise<void> {
    return synthesizeSegment(segment, this.synthesisJob);
  }

  /** What synthesis reads of the session (built once, when the session is ready). */
  private synthesisJob!: SynthesisJob;

  // ---------------------------------------------------------------------------
  // Outgoing frames, strictly in segment order
  // ---------------------------------------------------------------------------

  private pump(): void {
    if (this.sending) {
      this.pumpRequested = true;
      return;
    }
    this.sending = true;
    this.pumpRequested = false;
    void this.sendReady()
      .catch(() => this.cleanup())
      .finally(() => {
        this.sending = false;
        if (!this.isLive()) return;
        if (this.pumpRequested) {
          this.pump();
          return;
        }
        this.schedule();
        this.maybeFinish();
      });
  }

  private async sendReady(): Promise<void> {
    let first = true;
    while (this.isLive()) {
      const segment = this.segments[this.nextToSend];
      if (this.creditsFailedAt !== undefined && this.nextToSend >= this.creditsFailedAt) {
        this.fail(
          `insufficient credits: segment ${this.creditsFailedAt} and the text after it were not synthesized`,
          CloseCodes.creditsExhausted,
        );
        return;
      }
      if (!segment || (segment.state !== 'ready' && segment.state !== 'skipped')) return;
      // One segment per turn of the event loop: other sessions and HTTP requests run in
      // between. The first ready segment goes out at once: waiting a turn before it put
      // every session's answer behind the rest of the loop's I/O (the queue of issue 33).
      if (!first) {
        await nextTurn();
        if (!this.isLive()) return;
      }
      first = false;
      if (segment.state === 'skipped') {
        if (!this.sendJson({ type: 'segment.skipped', segment_id: segment.id, text: segment.text })) return;
        this.runData?.segments.push({ segment_id: segment.id, text: segment.text, status: 'skipped' });
      } else {
        const start: Record<string, unknown> = { type: 'segment.start', segment_id: segment.id, text: segment.text };
        if (this.config.word_timestamps && segment.words) start.word_timestamps = segment.words;
        if (!this.sendJson(start)) return;
        const audio = segment.audio ?? new Uint8Array(0);
        for (let offset = 0; offset < audio.byteLength; offset += MAX_AUDIO_FRAME_BYTES) {
          if (!(await this.sendBinary(audio.subarray(offset, offset + MAX_AUDIO_FRAME_BYTES)))) return;
        }
        if (!this.sendJson({ type: 'segment.done', segment_id: segment.id })) return;
        this.runData?.segments.push({ segment_id: segment.id, text: segment.text, status: 'delivered' });
      }
      // Release the audio: memory stays bounded by the concurrency window.
      segment.audio = undefined;
      segment.words = undefined;
      this.nextToSend++;
      this.unsentChars -= segment.text.length;
      this.touch();
      this.applyBackpressure();
      this.schedule();
    }
  }

  /**
   * Stop reading the socket while more than `livePendingTextChars` of text wait to be
   * spoken; read again once at most half of that waits.
   */
  private applyBackpressure(): void {
    if (!this.isLive()) return;
    const limit = this.context.options.livePendingTextChars;
    const waiting = this.unsentChars + (this.segmenter?.pending().length ?? 0);
    if (!this.readingPaused && waiting > limit) {
      this.readingPaused = true;
      this.socket.pause();
    } else if (this.readingPaused && waiting <= limit / 2) {
      this.readingPaused = false;
      this.socket.resume();
    }
  }

  /** A frame came in or went out: the session is not idle; restart the idle clock. */
  private touch(): void {
    this.clearTimer(this.quietTimer);
    const idleMs = this.context.options.liveIdleTimeoutMs;
    this.quietTimer = this.setTimer(() => {
      this.quietTimer = undefined;
      this.fail(`no frame in or out for ${idleMs / 1000} s: the idle session is closed`, CloseCodes.idleTimeout);
    }, idleMs);
  }

  /** After every segment went out and input ended: session.done, close 1000. */
  private maybeFinish(): void {
    if (this.phase !== 'ending' || !this.inputEnded || this.sending) return;
    if (this.creditsFailedAt !== undefined) return;
    if (this.nextToSend < this.segments.length) return;
    if (!this.sendJson({ type: 'session.done' })) return;
    this.phase = 'closed';
    this.socket.close(CloseCodes.normal, 'session done');
    this.cleanup();
  }

  private sendJson(frame: object): boolean {
    return this.writer.json(frame, this.phase !== 'awaiting-start' && this.phase !== 'starting');
  }

  private sendBinary(chunk: Uint8Array): Promise<boolean> {
    return this.writer.binary(chunk);
  }

  // ---------------------------------------------------------------------------
  // Endings
  // ---------------------------------------------------------------------------

  /** `session.error`, then close 4400 (before the session is ready). */
  private reject(message: string): void {
    this.fail(message, CloseCodes.rejected);
  }

  /** One `session.error`, then close with `code`. */
  private fail(message: string, code: number): void {
    if (this.phase === 'closed') return;
    if (this.socket.readyState === WebSocket.OPEN) {
      this.socket.send(JSON.stringify({ type: 'session.error', error: message }));
      this.socket.close(
        code,
        CLOSE_REASONS[code] ?? 'internal error',
      );
    }
    this.log(`session closed ${code}: ${message}`);
    this.cleanup();
  }

  private isLive(): boolean {
    return this.phase !== 'closed';
  }

  /** Stop everything: timers cleared, pending synthesis results ignored. */
  private cleanup(): void {
    this.phase = 'closed';
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.startTimer = undefined;
    this.idleTimer = undefined;
    this.early.length = 0;
    for (const segment of this.segments) {
      segment.audio = undefined;
      segment.words = undefined;
    }
    this.unregisterClose?.();
    this.unregisterClose = undefined;
    this.quietTimer = undefined;
    if (this.counted) {
      this.counted = false;
      const perKey = openSessions.get(this.context);
      const open = perKey?.get(this.apiKey);
      open?.delete(this);
      if (open?.size === 0) perKey?.delete(this.apiKey);
    }
  }

  // ---------------------------------------------------------------------------
  // Timers and logging
  // ---------------------------------------------------------------------------

  private setTimer(fn: () => void, ms: number): NodeJS.Timeout {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      fn();
    }, ms);
    this.timers.add(timer);
    return timer;
  }

  private clearTimer(timer: NodeJS.Timeout | undefined): void {
    if (timer === undefined) return;
    clearTimeout(timer);
    this.timers.delete(timer);
  }

  /** Resolves after `ms`; never resolves when the session is torn down first. */
  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.setTimer(resolve, ms));
  }

  private log(line: string): void {
    if (this.context.options.log) process.stderr.write(`[rxvoice emulator] live: ${line}\n`);
  }
}
