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
 *    `sentenceEndingChunk` in text/chunkEnd.ts for the few stops that wait: `Dr.`, initials...);
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
 *
 * The session's parts, one idea a file: live-start.ts (the client's frames read),
 * live-text.ts (text to segments), live-queue.ts (the segments and their two cursors),
 * live-synthesis.ts, live-frames.ts (frames out), live-timers.ts, live-sessions.ts (the
 * registry of open sessions, `liveSessionsPerKey`).
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { WebSocket, type RawData } from 'ws';
import { CloseCodes } from '../live/protocol.js';
import type { Faults } from './options.js';
import { LiveFrameWriter } from './live-frames.js';
import { synthesizeSegment, type SynthesisJob } from './live-synthesis.js';
import { admitSession, releaseSession, type LiveSessionStats } from './live-sessions.js';
import { SegmentQueue } from './live-queue.js';
import { SessionTimers } from './live-timers.js';
import { LiveText } from './live-text.js';
import { acceptSessionStart, rawToString, readSessionFrame, type ResolvedSessionConfig } from './live-start.js';
import type { EmulatorContext, LiveConnectionHandler } from './types.js';

// Names that moved to the live-*.ts files stay importable from here.
export { DEFAULT_LIVE_SAMPLE_RATE, type ResolvedSessionConfig } from './live-start.js';
export { liveSessionStats, type LiveSessionStats } from './live-sessions.js';
export { SYNTHESIS_RETRIES } from './live-synthesis.js';
export { SEND_HIGH_WATER_BYTES } from './live-frames.js';

/** Reasons sent with the emulator's closes. */
const CLOSE_REASONS: Record<number, string> = {
  [CloseCodes.creditsExhausted]: 'insufficient credits',
  [CloseCodes.rejected]: 'session rejected',
  [CloseCodes.idleTimeout]: 'idle timeout',
  [CloseCodes.tooManySessions]: 'too many sessions',
};
/** Close code used when the emulator shuts down under a live session. */
const CLOSE_GOING_AWAY = 1001;

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

/** Resolves on the next turn of the event loop, after pending I/O. */
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

class LiveSession {
  private phase: 'awaiting-start' | 'starting' | 'ready' | 'ending' | 'closed' = 'awaiting-start';
  private readonly timers = new SessionTimers();
  private startTimer: NodeJS.Timeout | undefined;
  /** `liveIdleTimeoutMs`: no frame in or out for that long closes the session (4408). */
  private quietTimer: NodeJS.Timeout | undefined;
  /** Reading of the socket paused (too much text waiting). */
  private readingPaused = false;
  private unregisterClose: (() => void) | undefined;
  private readonly faults: Faults;
  /** Frames out (with the `dropAfterFrames` fault and the send buffer's back-pressure). */
  private readonly writer: LiveFrameWriter;

  private config!: ResolvedSessionConfig;
  /** Received text, cut into segments (created when the session is ready). */
  private text: LiveText | undefined;
  /** What synthesis reads of the session (built once, when the session is ready). */
  private synthesisJob!: SynthesisJob;
  private runData: LiveRunData | undefined;

  /** The segments, the next to synthesize and the next to send. */
  private readonly queue = new SegmentQueue();
  /** Segments charged so far (for the `creditsAfterSegments` fault). */
  private chargedSegments = 0;
  private inputEnded = false;
  private sending = false;
  /** A segment became ready while frames were going out: look again. */
  private pumpRequested = false;
  /** Text frames that came while the session was starting, handled once it is ready. */
  private readonly early: string[] = [];

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
      pendingTextChars: this.queue.unsentChars + (this.text?.pendingChars ?? 0),
      readingPaused: this.readingPaused,
      idleFlushArmed: this.text?.idleFlushArmed ?? false,
      segments: this.queue.size,
      sent: this.queue.sent,
    };
  }

  start(): void {
    if (this.context.closing) {
      this.socket.close(CLOSE_GOING_AWAY, 'emulator closing');
      return;
    }
    if (!admitSession(this.context, this.apiKey, this)) {
      const limit = this.context.options.liveSessionsPerKey;
      this.socket.on('error', () => undefined);
      this.fail(`too many live sessions open for this API key (at most ${limit})`, CloseCodes.tooManySessions);
      return;
    }
    this.unregisterClose = this.context.onClose(() => {
      if (this.phase === 'closed') return;
      this.cleanup();
      if (this.socket.readyState === WebSocket.OPEN) this.socket.close(CLOSE_GOING_AWAY, 'emulator closing');
      else this.socket.terminate();
    });
    const startTimeout = this.context.options.liveStartTimeoutMs;
    this.startTimer = this.timers.set(() => {
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
        this.timers.clear(this.startTimer);
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

  private async onStart(data: RawData, isBinary: boolean): Promise<void> {
    const start = await acceptSessionStart(data, isBinary, this.context);
    if (this.phase !== 'starting') return; // client went away meanwhile
    if ('reject' in start) return this.reject(start.reject);
    const { config, voice, language, synth } = start;
    this.config = config;
    this.text = new LiveText(language, config.idle_timeout * 1000, this.timers, {
      piece: (piece) => this.addSegment(piece),
      idle: () => this.flushPending(),
    });
    this.synthesisJob = {
      synth,
      voice,
      language,
      config,
      faults: this.faults,
      retryBaseMs: this.context.options.retryBaseMs,
      isLive: () => this.isLive(),
      sleep: (ms) => this.timers.sleep(ms),
      log: (line) => this.log(line),
    };
    const sessionId = randomUUID();
    this.runData = { source: 'live', session_id: sessionId, config, segments: [] };
    const run = this.context.createRun('text-to-speech', this.apiKey, this.runData);
    this.phase = 'ready';
    this.sendJson({ type: 'session.ready', session_id: sessionId, run_id: run.run_id, config });
    this.log(`session ${sessionId} ready (voice ${voice.id}, ${language}, ${config.output_format} ${config.sample_rate} Hz)`);
    for (const text of this.early.splice(0)) {
      if (this.phase === 'ready') this.onFrame(text);
    }
  }

  private onFrame(text: string): void {
    const frame = readSessionFrame(text);
    if (frame === 'text.done') this.endInput();
    // Contract rule 1: a complete sentence leaves at once, also when it ends the chunk (no
    // idle timer for it); only trailing text without a boundary waits for idle_timeout.
    else if (frame) this.text?.push(frame.text);
  }

  /** Turn buffered text without a boundary into a segment (whitespace-only stays). */
  private flushPending(): void {
    if (this.phase !== 'ready' && this.phase !== 'ending') return;
    this.text?.flush();
  }

  private endInput(): void {
    if (this.phase !== 'ready') return;
    this.text?.stopIdleTimer();
    this.flushPending();
    this.inputEnded = true;
    this.phase = 'ending';
    this.maybeFinish();
  }

  /** A piece of text becomes a segment; whitespace-only pieces lead the next segment. */
  private addSegment(piece: string): void {
    if (!this.queue.add(piece)) return;
    this.applyBackpressure();
    this.schedule();
  }

  // ---------------------------------------------------------------------------
  // Synthesis
  // ---------------------------------------------------------------------------

  /** Start synthesis of waiting segments within the concurrency window. */
  private schedule(): void {
    const window = this.context.options.concurrency;
    while (this.isLive()) {
      const segment = this.queue.nextToSynthesize(window);
      if (!segment) return;
      const limit = this.faults.creditsAfterSegments;
      const charged =
        (limit === undefined || this.chargedSegments < limit) &&
        this.context.credits.charge(this.apiKey, this.context.options.prices.speechSegment);
      if (!charged) {
        this.queue.creditsRanOut(segment);
        this.pump();
        return;
      }
      this.chargedSegments++;
      this.queue.started(segment);
      void synthesizeSegment(segment, this.synthesisJob).then(() => {
        this.queue.finished();
        this.pump();
        this.schedule();
      });
    }
  }

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
      const creditsFailedAt = this.queue.sendingReachedCreditsFailure();
      if (creditsFailedAt !== undefined) {
        this.fail(
          `insufficient credits: segment ${creditsFailedAt} and the text after it were not synthesized`,
          CloseCodes.creditsExhausted,
        );
        return;
      }
      const segment = this.queue.nextToDeliver();
      if (!segment) return;
      // One segment per turn of the event loop: other sessions and HTTP requests run in
      // between. The first ready segment goes out at once: waiting a turn before it put
      // every session's answer behind the rest of the loop's I/O (the queue of issue 33).
      if (!first) {
        await nextTurn();
        if (!this.isLive()) return;
      }
      first = false;
      const skipped = segment.state === 'skipped';
      const sent = skipped
        ? this.writer.skipped(segment)
        : await this.writer.segment(segment, this.config.word_timestamps === true);
      if (!sent) return;
      const status = skipped ? 'skipped' : 'delivered';
      this.runData?.segments.push({ segment_id: segment.id, text: segment.text, status });
      // Release the audio: memory stays bounded by the concurrency window.
      this.queue.delivered(segment);
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
    const waiting = this.queue.unsentChars + (this.text?.pendingChars ?? 0);
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
    this.timers.clear(this.quietTimer);
    const idleMs = this.context.options.liveIdleTimeoutMs;
    this.quietTimer = this.timers.set(() => {
      this.quietTimer = undefined;
      this.fail(`no frame in or out for ${idleMs / 1000} s: the idle session is closed`, CloseCodes.idleTimeout);
    }, idleMs);
  }

  /** After every segment went out and input ended: session.done, close 1000. */
  private maybeFinish(): void {
    if (this.phase !== 'ending' || !this.inputEnded || this.sending) return;
    if (this.queue.creditsFailed || !this.queue.allSent()) return;
    if (!this.sendJson({ type: 'session.done' })) return;
    this.phase = 'closed';
    this.socket.close(CloseCodes.normal, 'session done');
    this.cleanup();
  }

  private sendJson(frame: object): boolean {
    return this.writer.json(frame, this.phase !== 'awaiting-start' && this.phase !== 'starting');
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
      this.socket.close(code, CLOSE_REASONS[code] ?? 'internal error');
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
    this.timers.clearAll();
    this.startTimer = undefined;
    this.text?.stopIdleTimer();
    this.early.length = 0;
    this.queue.releaseAudio();
    this.unregisterClose?.();
    this.unregisterClose = undefined;
    this.quietTimer = undefined;
    releaseSession(this.context, this.apiKey, this); // nothing when it was never admitted
  }

  // ---------------------------------------------------------------------------
  // Logging
  // ---------------------------------------------------------------------------

  private log(line: string): void {
    if (this.context.options.log) process.stderr.write(`[rxvoice emulator] live: ${line}\n`);
  }
}
