/**
 * The live speech session as an RxJS operator: text in, `LiveSpeechEvent`s out.
 *
 * One subscription is one {@link LiveSession}: one WebSocket session (or, with
 * `reconnect`, a chain of sessions that together speak the text exactly once). Its
 * options and their resolution are in `options.ts`; what a close code means in
 * `close-error.ts`; opening, closing and cutting off a socket in `connection.ts`; reading a
 * text frame in `server-frames.ts`. Where things happen in the session (sections of the class, in order):
 * - the socket: opened in `open()`, closed in `closeSocket()`;
 * - text out: from the source in `pushText()` (through the boundary gate), out in
 *   `sendText()` (buffered until `session.ready`);
 * - frames in: read as the schemas of `protocol.ts` decide (`server-frames.ts`) and
 *   handled, by type, in `onServerFrame()`; audio in `onAudioFrame()`;
 * - closes and socket errors: `onClose()`, `onSocketError()`;
 * - timeouts: `session.ready` (`readyTimeoutMs`) and the service's progress
 *   (`responseTimeoutMs`, watched in `response-watch.ts`);
 * - protocol errors: `protocolError()` closes (1002) and cuts the socket off;
 * - endings: `retryOrFail()` reconnects or ends, `finish()` ends the output;
 * - the session's state is one `phase`.
 */
import { Observable, timer, type Observer, type OperatorFunction, type Subscriber, type Subscription } from 'rxjs';
import { backoffDelay } from '../core/backoff.js';
import { liveSessionError, redact, type LiveSessionError, type LiveSessionErrorCode, type ValidationError } from '../core/errors.js';
import { createBoundaryGate, type BoundaryGate } from '../text/boundaryGate.js';
import { closeError, isRefusal, livePathHint } from './close-error.js';
import type { LiveSpeechEvent } from './events.js';
import { SpeechLedger } from './ledger.js';
import { nothingToSpeakError } from './nothing-to-speak.js';
import { SpeechMetricsRecorder } from './metrics.js';
import { StallFallback } from './stall-fallback.js';
import { ResponseWatch } from './response-watch.js';
import { resolveSpeak, startFrame, type LiveConnection, type ResolvedSpeak, type SpeakOptions, type WebSocketLike } from './options.js';
import { closeQuietly, cutOff, newConnection, openSocket, OPEN, toBytes, type Connection } from './connection.js';
import { CloseCodes, MAX_AUDIO_FRAME_BYTES } from './protocol-constants.js';
import type { ClientFrame, ServerFrame } from './protocol.js';
import { parseServerFrame } from './server-frames.js';
import { segmentDone, segmentSkipped, segmentStart } from './segment-order.js';

// The options moved to options.ts: their names stay importable from here.
export {
  DEFAULT_CLOSE_GRACE_MS,
  DEFAULT_LIVE_MAX_PAYLOAD,
  DEFAULT_LIVE_OUTPUT_FORMAT,
  DEFAULT_RESPONSE_TIMEOUT_MS,
  PROGRESS_AUDIO_SECONDS,
  sessionPlan,
  type LiveConnection,
  type ReconnectOptions,
  type SessionPlan,
  type SpeakOptions,
  type WebSocketConstructorLike,
  type WebSocketLike,
} from './options.js';


// ---------------------------------------------------------------------------
// The operator
// ---------------------------------------------------------------------------

/**
 * Speaks a stream of text over one live session and emits what the service sends back.
 *
 * <span class="informal">Text in (tokens, sentences, anything), ordered speech events out:
 * `ready`, then per segment `segmentStart`, `audio`..., `segmentDone` (or `segmentSkipped`),
 * and `done`.</span>
 *
 * Bad options throw a {@link ValidationError} at once, when `speak` is called (nothing
 * is sent, no connection made). Subscribing opens the WebSocket, sends `session.start` and subscribes to the
 * text source at once (so that an LLM starts producing while the socket connects). Text
 * that arrives before `session.ready` is buffered and sent, in order, right after it.
 * Text goes out in `text.chunk`s as it comes, except that a chunk never ends just after a
 * stop that is not certain to end a sentence (`clientBoundaries`, on by default: `"See Dr."`
 * waits for the next token, at most `boundaryHoldMs`); with `clientBoundaries: false` each
 * non-empty string becomes one `text.chunk` (empty strings are skipped). When the text source completes,
 * `text.done` is sent; the output completes after `session.done` and a clean close.
 *
 * ```
 * text:   --a--b------c--|
 * speak:  r-----s-aa-d-----s-a-d-(D|)
 * ```
 * (r = ready, s = segmentStart, a = audio, d = segmentDone, D = done)
 *
 * Errors: every error of a session is a {@link LiveSessionError} carrying `unspoken`
 * (the text pushed but not yet delivered as audio, in order, leading whitespace
 * trimmed; text of skipped segments is not in it, it was reported on its
 * `segmentSkipped` event) and `closeCode` when a close caused it; its `code` says what
 * happened:
 * - close 4401: `'authentication'`; 4400: `'session_rejected'` (a `SessionRejectedError`,
 *   message of the `session.error`); 4402: `'credits_exhausted'` (a `CreditsExhaustedError`);
 * - a `session.error` then a close with another code (1011, ...): `'session_error'`, the
 *   service's message in the error's; retryable only for 1001, 1012, 1013, 4408 and 4429
 *   (going away, restarting, try again later, idle, too many sessions);
 * - any other unclean close (1006, ...), or a clean close before `session.done` with
 *   text still unspoken: `'connection'`, with `closeCode` and `reason` (retryable). A
 *   connection lost after the text source completed and every text was delivered
 *   completes normally instead (nothing is missing; no `done` event then);
 * - a frame that breaks the protocol (bad JSON, unknown frame, audio outside a segment,
 *   an audio frame over 64 KiB, segment ids out of order (a session's segments are
 *   numbered 0, 1, 2, ...; any other id means a segment is missing), a message over `maxPayload`,
 *   a WebSocket-level violation, `session.done` while text is still unspoken):
 *   `'protocol'`, and the socket is closed (1002) and cut off;
 * - no `session.ready` within `readyTimeoutMs`, or, while text waits to be spoken, no
 *   progress for `responseTimeoutMs` (15 s by default; a JSON frame or 0.25 s of audio is
 *   progress, a trickle of tiny frames is not): `'timeout'` (retryable, so
 *   `reconnect` treats it as a drop);
 * - the text source errors: the socket is closed and the output errors with
 *   `'text_source'`, the source's own error (unchanged) as `cause`.
 *
 * Unsubscribing (e.g. `takeUntil(userStartedTalking$)` for barge-in) closes the socket
 * at once with 1000, unsubscribes the text source and clears every timer; nothing more
 * is emitted. A server that does not answer the close frame is cut off after
 * `closeGraceMs` (1 s by default; `ws` only, a browser closes on its own terms).
 *
 * Reconnect (option `reconnect`, off by default): after an abnormal close (code
 * `'connection'` or a ready timeout, never 4400/4401/4402), a new session is opened
 * after an exponential backoff with jitter (`baseDelayMs` doubling up to `maxDelayMs`,
 * each delay drawn from its upper half, through `scheduler`); once it is ready a
 * `reconnected` event is emitted (no second `ready`),
 * and exactly the text not yet delivered is sent again, in order, as one `text.chunk`
 * (which text a segment covered is decided from the text sent, by the contract's
 * segmentation rule, never from the service's wording of it: a `segmentMismatch` event
 * reports a segment whose reported text differs)
 * (then `text.done` again if it had been sent); new text then flows as before. Text
 * pushed during the outage is kept and sent with it. `maxAttempts` counts attempts in a
 * row: a delivered segment resets the count. Segments already delivered are not spoken
 * twice. The segment that was receiving audio when the connection dropped is abandoned: its partial audio
 * was emitted but no `segmentDone` follows; its text is spoken again as a later segment.
 * `concatSegments()` drops such partial segments. The server numbers the segments of a
 * new session from 0 again; rxvoice shifts them so that the `segment_id`s the consumer
 * sees keep increasing across reconnects (they may jump over an abandoned id).
 *
 * The API key goes in the `x-api-key` header, or, for a browser-style WebSocket
 * constructor (no headers), in the `api_key` query parameter.
 *
 * ## Example
 * ```ts
 * tokens$.pipe(
 *   speak({ wsUrl, apiKey }, { voice_id: 1, language: 'en-us', word_timestamps: true }),
 *   takeUntil(userStartedTalking$),
 *   concatSegments(),
 * ).subscribe((segment) => play(segment.audio));
 * ```
 *
 * @param connection Where to connect: `wsUrl`, `apiKey` (left out through `rxvoice/relay`), optional WebSocket constructor.
 * @param options The `session.start` configuration (`voice_id` required; `output_format`
 * defaults to `'wav'` here, the service's default is mp3) and client options
 * (`reconnect`, `scheduler`, `readyTimeoutMs`, `maxPayload`, `responseTimeoutMs`, `closeGraceMs`).
 * @return A function that returns an Observable of {@link LiveSpeechEvent}s for a text
 * source.
 * @throws {ValidationError} At once, for bad options or a `wsUrl` that is not a ws(s) address.
 */
export function speak(connection: LiveConnection, options: SpeakOptions): OperatorFunction<string, LiveSpeechEvent> {
  const resolved = resolveSpeak(connection, options);
  return (text$) =>
    new Observable<LiveSpeechEvent>((subscriber) => {
      const session = new LiveSession(resolved, subscriber, connection.apiKey ?? '');
      session.start(text$);
      return () => session.stop();
    });
}

// ---------------------------------------------------------------------------
// The session: one subscription of speak
// ---------------------------------------------------------------------------

/**
 * Where a subscription of {@link speak} is:
 * - `connecting`: a socket is opening, `session.start` sent, waiting for `session.ready`;
 * - `ready`: the session is ready, text flows;
 * - `done`: `session.done` arrived, waiting for the close;
 * - `backoff`: a connection was lost, waiting to reconnect;
 * - `fallback`: the session stalled; the socket is closed and the text is spoken another way;
 * - `finished`: the output completed or errored, or the subscriber unsubscribed.
 */
type Phase = 'connecting' | 'ready' | 'done' | 'backoff' | 'fallback' | 'finished';

/** One subscription of {@link speak}. */
class LiveSession {
  private phase: Phase = 'connecting';
  /** The socket in use; undefined once closed (events of closed sockets are ignored). */
  private connection: Connection | undefined;
  private readonly ledger: SpeechLedger;
  /** Text pushed before the first `session.ready`, to send (in order) once it comes. */
  private outbox: string[] = [];
  private textComplete = false;
  /** Whether the source pushed any text that is not whitespace. */
  private hasText = false;
  private textSubscription: Subscription | undefined;
  /** Client-side sentence boundaries (undefined when turned off) and its hold timer. */
  private readonly gate: BoundaryGate | undefined;
  private holdTimer: Subscription | undefined;
  /** Sessions that became ready (the first emits `ready`, the others `reconnected`). */
  private readyCount = 0;
  /** Reconnect attempts since the last delivered segment. */
  private attemptsInRow = 0;
  private reconnectTimer: Subscription | undefined;
  /** Added to the server's segment ids, so that ids keep increasing across reconnects. */
  private idOffset = 0;
  private maxConsumerId = -1;
  /** Checks `responseTimeoutMs` (and `stall.afterMs`) while text waits to be spoken. */
  private readonly responseWatch: ResponseWatch;
  /**
   * The key, in a private field: no `util.inspect` of anything reaches it (the resolved
   * options, the socket's options and the connection hold no copy once connected).
   */
  readonly #apiKey: string;
  private readonly metrics: SpeechMetricsRecorder | undefined;
  /** The second way to speak, once the session stalled (`stall: { fallback: 'tts-stream' }`). */
  private fallback: StallFallback | undefined;

  constructor(
    private readonly options: ResolvedSpeak,
    private readonly subscriber: Subscriber<LiveSpeechEvent>,
    apiKey: string,
  ) {
    this.#apiKey = apiKey;
    // a numeric language id (deprecated) says nothing of the script: the default rules apply
    const language = options.config.language;
    this.gate = options.clientBoundaries ? createBoundaryGate(typeof language === 'string' ? { locale: language } : {}) : undefined;
    this.ledger = new SpeechLedger({ locale: typeof language === 'string' ? language : undefined });
    this.metrics = options.metrics ? new SpeechMetricsRecorder(options.metrics, options.scheduler) : undefined;
    this.responseWatch = new ResponseWatch(options, {
      waitsForSpeech: (connection) => this.waitsForSpeech(connection),
      stalled: (connection, afterMs) => this.onStall(connection, afterMs),
      silent: (connection, ms) => this.onSilent(connection, ms),
    });
  }

  /**
   * Subscribe to the text, then open the socket (the text is produced while it connects):
   * a source that ends at once with nothing to speak opens no socket at all.
   */
  start(text$: Observable<string>): void {
    this.textSubscription = text$.subscribe(new TextObserver(this));
    if (this.phase !== 'finished') this.open();
  }

  /** The text source failed: the socket closes, the output errors with `'text_source'`. */
  textFailed(error: unknown): void {
    this.finish(this.error('text_source', `The text source failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error }));
  }

  /** The text source completed: what the gate holds goes out, then `text.done`. */
  textCompleted(): void {
    this.holdTimer?.unsubscribe();
    for (const chunk of this.gate?.end() ?? []) this.sendText(chunk);
    this.textComplete = true;
    // nothing to speak: the same local ValidationError as other bad input, nothing paid
    if (!this.hasText) return this.finish(nothingToSpeakError());
    if (this.phase === 'ready' && this.connection) this.send(this.connection, { type: 'text.done' });
    if (this.phase === 'fallback') this.fallback?.end();
  }

  /** Teardown: unsubscribing closes the socket at once (1000) and clears every timer. */
  stop(): void {
    if (this.phase === 'finished') return;
    this.phase = 'finished';
    this.metrics?.end('unsubscribed');
    this.textSubscription?.unsubscribe();
    this.reconnectTimer?.unsubscribe();
    this.holdTimer?.unsubscribe();
    this.responseWatch.stop();
    this.fallback?.stop();
    if (this.connection) this.closeSocket(this.connection, CloseCodes.normal);
  }

  // --- the socket ----------------------------------------------------------

  /** Open a socket; `session.start` goes out when it opens. */
  private open(): void {
    if (this.phase === 'finished') return;
    this.phase = 'connecting';
    const options = this.options;
    let socket: WebSocketLike;
    try {
      socket = openSocket(options, this.#apiKey);
    } catch (cause) {
      // no `cause`: its message may hold the address (and a query key)
      const message = this.scrub(cause instanceof Error ? cause.message : String(cause));
      this.retryOrFail(this.error('connection', `Could not open the live session: ${message}`));
      return;
    }
    const connection = newConnection(socket, options.scheduler.now());
    this.connection = connection;
    // Listeners are never removed: once the socket is not the current one they do
    // nothing (ws emits 'error' on a socket closed while connecting, which must stay handled).
    socket.addEventListener('open', () => {
      if (this.connection === connection) this.metrics?.opened();
      this.send(connection, startFrame(options.config));
    });
    socket.addEventListener('message', (event) => {
      if (this.connection !== connection) return;
      const data = (event as { data: unknown }).data;
      this.responseWatch.noteProgress(connection, data);
      if (typeof data === 'string') this.onTextFrame(connection, data);
      else this.onAudioFrame(connection, data);
    });
    socket.addEventListener('close', (event) => {
      const { code, reason } = event as { code?: number; reason?: string };
      this.onClose(connection, code ?? 1006, reason ?? '');
    });
    socket.addEventListener('error', (event) => this.onSocketError(connection, event as { message?: string; error?: unknown }));
    connection.readyTimer = timer(options.readyTimeoutMs, options.scheduler).subscribe(() => this.onReadyTimeout(connection));
  }

  private closeSocket(connection: Connection, code: number, reason?: string): void {
    if (this.connection === connection) {
      this.connection = undefined;
      this.responseWatch.stop();
    }
    connection.readyTimer?.unsubscribe();
    closeQuietly(connection.socket, code, reason);
  }

  private send(connection: Connection, frame: ClientFrame): void {
    if (this.connection !== connection || connection.socket.readyState !== OPEN) return;
    connection.socket.send(JSON.stringify(frame));
  }

  // --- text out --------------------------------------------------------------

  /**
   * A token from the source: through the boundary gate (what it releases is sent; an
   * undecided stop waits for the next token or `boundaryHoldMs`), or sent as it is.
   */
  pushText(text: string): void {
    // Timed when the source pushes it: a stop held by the gate counts as latency.
    if (this.phase !== 'finished' && typeof text === 'string' && text.length > 0) this.metrics?.textPushed(text);
    if (typeof text === 'string' && text.trim() !== '') this.hasText = true;
    const gate = this.gate;
    if (!gate) return this.sendText(text);
    if (this.phase === 'finished' || typeof text !== 'string') return;
    for (const chunk of gate.feed(text)) this.sendText(chunk);
    this.holdTimer?.unsubscribe();
    this.holdTimer = undefined;
    if (gate.held() !== '') {
      this.holdTimer = timer(this.options.boundaryHoldMs, this.options.scheduler).subscribe(() => {
        this.holdTimer = undefined;
        for (const chunk of gate.flush()) this.sendText(chunk);
      });
    }
  }

  /** A piece of text to send: recorded in the ledger, sent when ready, else kept. */
  private sendText(text: string): void {
    if (this.phase === 'finished' || typeof text !== 'string' || text.length === 0) return;
    if (this.phase === 'fallback') return this.fallback?.push(text);
    this.ledger.push(text);
    if (this.phase === 'ready' && this.connection) {
      this.send(this.connection, { type: 'text.chunk', text });
      this.responseWatch.watch(this.connection);
    } else this.outbox.push(text);
  }

  // --- frames in -------------------------------------------------------------

  private onTextFrame(connection: Connection, data: string): void {
    const parsed = parseServerFrame(data, (text) => this.scrub(text));
    if ('error' in parsed) return this.protocolError(connection, parsed.error);
    this.onServerFrame(connection, parsed.frame);
  }

  private onServerFrame(connection: Connection, frame: ServerFrame): void {
    if (this.phase === 'connecting' && frame.type !== 'session.ready' && frame.type !== 'session.error') {
      this.protocolError(connection, `The server sent ${frame.type} before session.ready`);
      return;
    }
    const ledger = this.ledger;
    switch (frame.type) {
      case 'session.ready':
        if (this.phase !== 'connecting') return this.protocolError(connection, 'The server sent session.ready twice');
        this.onReady(connection, frame.session_id, frame.run_id, frame.config);
        return;
      case 'segment.start': {
        const outOfOrder = segmentStart(connection, frame.segment_id);
        if (outOfOrder) return this.protocolError(connection, outOfOrder);
        const match = ledger.segmentStarted(frame.segment_id, frame.text);
        const segment_id = this.consumerId(frame.segment_id);
        this.metrics?.segmentStarted(segment_id, frame.text);
        this.emit(
          frame.word_timestamps
            ? { type: 'segmentStart', segment_id, text: frame.text, word_timestamps: frame.word_timestamps }
            : { type: 'segmentStart', segment_id, text: frame.text },
        );
        if (!match.matches) this.emit({ type: 'segmentMismatch', segment_id, sent: match.sent, reported: frame.text });
        return;
      }
      case 'segment.done': {
        const outOfOrder = segmentDone(connection, frame.segment_id);
        if (outOfOrder) return this.protocolError(connection, outOfOrder);
        ledger.segmentDelivered(frame.segment_id);
        this.metrics?.segmentDone();
        this.attemptsInRow = 0;
        this.emit({ type: 'segmentDone', segment_id: this.idOffset + frame.segment_id });
        return;
      }
      case 'segment.skipped': {
        const outOfOrder = segmentSkipped(connection, frame.segment_id);
        if (outOfOrder) return this.protocolError(connection, outOfOrder);
        const match = ledger.segmentSkipped(frame.segment_id, frame.text);
        const segment_id = this.consumerId(frame.segment_id);
        this.metrics?.segmentSkipped(segment_id, frame.text);
        this.emit({ type: 'segmentSkipped', segment_id, text: frame.text });
        if (!match.matches) this.emit({ type: 'segmentMismatch', segment_id, sent: match.sent, reported: frame.text });
        return;
      }
      case 'session.error':
        connection.sessionError = this.scrub(frame.error);
        return;
      case 'session.done':
        // "All work is finished" while text the server echoed faithfully is still
        // unspoken (or a segment is open): completing would lose that text silently.
        if (connection.inProgress !== undefined || (ledger.unspoken() !== '' && ledger.stats().mismatches === 0)) {
          return this.protocolError(connection, 'The server sent session.done before all text was spoken');
        }
        this.phase = 'done';
        this.emit({ type: 'done' });
        return;
    }
  }

  private onReady(connection: Connection, session_id: string, run_id: number, echoed: Record<string, unknown> | undefined): void {
    connection.readyTimer?.unsubscribe();
    this.phase = 'ready';
    this.readyCount++;
    if (this.readyCount === 1) {
      this.metrics?.ready();
      const pending = this.outbox;
      this.outbox = [];
      for (const text of pending) this.send(connection, { type: 'text.chunk', text });
      if (this.textComplete) this.send(connection, { type: 'text.done' });
      this.responseWatch.watch(connection);
      this.emit({ type: 'ready', session_id, run_id, config: echoed ?? { ...this.options.config } });
      return;
    }
    // A reconnect: everything not yet delivered (sent or buffered) goes again, once.
    this.outbox = [];
    const resent = this.ledger.resend();
    this.metrics?.reconnected(resent);
    if (resent.length > 0) this.send(connection, { type: 'text.chunk', text: resent });
    if (this.textComplete) this.send(connection, { type: 'text.done' });
    this.responseWatch.watch(connection);
    this.emit({ type: 'reconnected', attempt: this.attemptsInRow, session_id, run_id, resent });
  }

  private onAudioFrame(connection: Connection, data: unknown): void {
    if (connection.inProgress === undefined) return this.protocolError(connection, 'The server sent audio outside of a segment');
    const bytes = toBytes(data);
    if (!bytes) return this.protocolError(connection, 'The server sent a binary frame of an unsupported type');
    if (bytes.byteLength > MAX_AUDIO_FRAME_BYTES) {
      return this.protocolError(connection, `The server sent an audio frame of ${bytes.byteLength} bytes (at most ${MAX_AUDIO_FRAME_BYTES})`);
    }
    this.metrics?.audio(bytes.byteLength);
    this.emit({ type: 'audio', segment_id: this.idOffset + connection.inProgress, bytes });
  }

  /** The id the consumer sees for a server segment id (increasing across reconnects). */
  private consumerId(serverId: number): number {
    const id = this.idOffset + serverId;
    this.maxConsumerId = Math.max(this.maxConsumerId, id);
    return id;
  }

  // --- closes and socket errors ----------------------------------------------

  private onClose(connection: Connection, code: number, reason: string): void {
    if (this.connection !== connection) return;
    this.connection = undefined;
    this.responseWatch.stop();
    connection.readyTimer?.unsubscribe();
    const allDelivered = this.textComplete && this.ledger.unspoken() === '' && connection.inProgress === undefined;
    const cleanEnd = code === CloseCodes.normal && (this.phase === 'done' || allDelivered);
    // A connection lost after every text was delivered: nothing is missing, complete.
    const lostAfterAll = this.readyCount > 0 && allDelivered && !isRefusal(code);
    if (cleanEnd || lostAfterAll) return this.finish();
    const { code: errorCode, message, ...options } = closeError(code, this.scrub(reason), connection.sessionError, connection.transportError);
    const hint = errorCode === 'connection' ? livePathHint(connection.transportError, this.options.url) : '';
    const error = this.error(errorCode, message + hint, options);
    // a refusal ends the session: asking again cannot change the answer
    return isRefusal(code) ? this.finish(error) : this.retryOrFail(error);
  }

  private onSocketError(connection: Connection, event: { message?: string; error?: unknown }): void {
    const message = event.message ?? (event.error instanceof Error ? event.error.message : undefined);
    if (message) connection.transportError = this.scrub(message);
    // `ws` reports a peer breaking the WebSocket protocol (a message over
    // maxPayload, a bad opcode, invalid UTF-8...) with a WS_ERR_* code.
    const code = (event.error as { code?: unknown } | undefined)?.code;
    if (typeof code === 'string' && code.startsWith('WS_ERR_') && this.connection === connection) {
      this.protocolError(
        connection,
        code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH'
          ? `The server sent a message larger than maxPayload (${this.options.maxPayload} bytes)`
          : `The server broke the WebSocket protocol (${code})`,
      );
    }
  }

  // --- timeouts: session.ready and the service's progress ---------------------

  /** Text was pushed and not yet delivered as audio, on the socket in use, ready. */
  private waitsForSpeech(connection: Connection): boolean {
    return this.connection === connection && this.phase === 'ready' && (connection.inProgress !== undefined || this.ledger.unspoken() !== '');
  }

  /** Nothing came for `responseTimeoutMs` while text waited: a timeout (a drop, for `reconnect`). */
  private onSilent(connection: Connection, ms: number): void {
    this.closeSocket(connection, CloseCodes.normal);
    // a silent peer is not trusted to answer the close frame either
    cutOff(connection.socket);
    this.retryOrFail(this.error('timeout', `The service sent nothing for ${ms} ms while text waited to be spoken (responseTimeoutMs)`));
  }

  /**
   * No segment started for `stall.afterMs` while text waited: with `'error'`, a timeout; with
   * `'tts-stream'`, the socket is closed (nothing more is sent live, so nothing is paid twice)
   * and the text not begun, and all text after it, is spoken through `fallbackSpeech`.
   */
  private onStall(connection: Connection, afterMs: number): void {
    this.closeSocket(connection, CloseCodes.normal);
    cutOff(connection.socket);
    const speech = this.options.fallbackSpeech;
    if (this.options.stall?.fallback !== 'tts-stream' || speech === undefined) {
      return this.retryOrFail(this.error('timeout', `No audio started within ${afterMs} ms while text waited to be spoken (stall.afterMs)`));
    }
    this.phase = 'fallback';
    const language = this.options.config.language;
    this.fallback = new StallFallback(speech, this.maxConsumerId + 1, afterMs, typeof language === 'string' ? language : undefined, {
      emit: (event) => this.emit(event),
      done: () => {
        this.emit({ type: 'done' });
        this.finish();
      },
      failed: (cause, unspoken) =>
        this.finish(
          liveSessionError('connection', `The live session stalled and its fallback failed: ${cause instanceof Error ? this.scrub(cause.message) : 'unknown error'}`, {
            cause,
            unspoken: unspoken + (this.gate?.held() ?? ''),
          }),
        ),
    });
    // everything sent live and not begun (no segment is in progress), then what comes
    const unspoken = this.ledger.unspoken();
    this.ledger.abortInProgress();
    if (unspoken !== '') this.fallback.push(unspoken);
    if (this.textComplete) this.fallback.end();
  }

  private onReadyTimeout(connection: Connection): void {
    if (this.connection !== connection || this.phase !== 'connecting') return;
    this.closeSocket(connection, CloseCodes.normal);
    this.retryOrFail(this.error('timeout', `No session.ready within ${this.options.readyTimeoutMs} ms`));
  }

  // --- protocol errors ---------------------------------------------------------

  private protocolError(connection: Connection, message: string): void {
    if (this.connection !== connection) return;
    this.closeSocket(connection, 1002, 'protocol error');
    // A peer that broke the protocol is not trusted to answer the close frame (`ws`
    // would keep the socket, and read what it still sends, for 30 s): cut it off.
    cutOff(connection.socket);
    this.finish(this.error('protocol', message));
  }

  // --- endings: reconnect or finish ----------------------------------------------

  /** Reconnect after a retryable error when the policy allows another attempt; else end with it. */
  private retryOrFail(error: LiveSessionError): void {
    if (this.phase === 'finished') return;
    const policy = this.options.reconnect;
    if (!policy || !error.retryable || this.attemptsInRow >= policy.maxAttempts) return this.finish(error);
    this.attemptsInRow++;
    this.ledger.abortInProgress();
    this.idOffset = this.maxConsumerId + 1;
    this.phase = 'backoff';
    const delay = backoffDelay(this.attemptsInRow - 1, policy, policy.random);
    this.reconnectTimer = timer(delay, this.options.scheduler).subscribe(() => this.open());
  }

  private finish(error?: LiveSessionError | ValidationError): void {
    if (this.phase === 'finished') return;
    this.metrics?.end(error === undefined ? 'complete' : 'error');
    this.stop();
    if (error === undefined) this.subscriber.complete();
    else this.subscriber.error(error);
  }

  // --- output, errors and the key ------------------------------------------------

  private emit(event: LiveSpeechEvent): void {
    if (this.phase !== 'finished') this.subscriber.next(event);
  }

  /** An error of this session, carrying the text not yet spoken. */
  private error(
    code: LiveSessionErrorCode,
    message: string,
    options: { closeCode?: number; reason?: string | undefined; cause?: unknown; retryable?: boolean } = {},
  ): LiveSessionError {
    // text held by the boundary gate was never sent: it is unspoken too
    const unspoken = this.fallback ? this.fallback.unspoken() : this.ledger.unspoken();
    return liveSessionError(code, message, { ...options, unspoken: unspoken + (this.gate?.held() ?? '') });
  }

  private scrub(text: string): string {
    const apiKey = this.#apiKey;
    return redact(text, [apiKey, encodeURIComponent(apiKey), new URLSearchParams({ k: apiKey }).toString().slice(2)]);
  }
}

/**
 * The text source's observer: forwards to the session (prototype methods, no closures built
 * per session). The session is in a private field: the source holds this observer, and
 * `util.inspect` of the source must not reach the session's socket (its headers hold the key).
 */
class TextObserver implements Observer<string> {
  readonly #session: LiveSession;

  constructor(session: LiveSession) {
    this.#session = session;
  }

  next(text: string): void {
    this.#session.pushText(text);
  }

  error(error: unknown): void {
    this.#session.textFailed(error);
  }

  complete(): void {
    this.#session.textCompleted();
  }
}

