/**
 * One subscription of `speak` (session.ts). Elsewhere: close codes and socket errors in
 * `close-error.ts`, sockets and their events in `connection.ts`, the source's subscriber in
 * `text-subscriber.ts`, the boundary hold in `text-path.ts`, text frames in `server-frames.ts`, segment order in
 * `segment-order.ts`, the progress watch in `response-watch.ts`. Sections, in order:
 * - the socket: `open()`, its events (`onOpen`, `onMessage`), `closeSocket()`; text out:
 *   `pushText()` (through the boundary hold), `sendText()` (kept until `session.ready`);
 * - frames in: `onServerFrame()` by type, audio in `onAudioFrame()`;
 * - closes and socket errors: `onClose()`, `onSocketError()`;
 * - timeouts: `session.ready` (`readyTimeoutMs`), the service's progress (`onSilent`, `onStall`);
 * - protocol errors: `protocolError()` closes (1002) and cuts the socket off;
 * - endings: `retryOrFail()` reconnects or ends, `finish()` ends the output;
 * - the session's state is one `phase`.
 * @internal
 */
import type { Observable, Subscriber, Subscription } from 'rxjs';
import { liveSessionError, type LiveSessionError, type LiveSessionErrorCode, type ValidationError } from '../core/errors.js';
import { closeError, isRefusal } from './close-error.js';
import type { LiveSpeechEvent } from './events.js';
import { SpeechLedger } from './ledger.js';
import { nothingToSpeakError } from './nothing-to-speak.js';
import { newMetricsRecorder, reconnectCode, startStallFallback } from './features.js';
import type { SpeechMetricsRecorder } from './metrics.js';
import type { ReconnectingSession } from './reconnect.js';
import type { StallFallback, StalledSession } from './stall-fallback.js';
import { livePathHint, protocolViolation } from './node-socket.js';
import { ResponseWatch, type ResponseWatchHost } from './response-watch.js';
import { startFrame, type ResolvedSpeak, type WebSocketLike } from './options.js';
import { closeQuietly, cutOff, listen, newConnection, openSocket, OPEN, scrubKey, type Connection, type SocketErrorEvent, type SocketEventsHost } from './connection.js';
import { CloseCodes } from './protocol-constants.js';
import type { ClientFrame, ServerFrame } from './protocol.js';
import { parseServerFrame, readAudioFrame } from './server-frames.js';
import { segmentDone, segmentSkipped, segmentStart } from './segment-order.js';
import { BoundaryHold, type TextPathHost } from './text-path.js';
import { TextSubscriber } from './text-subscriber.js';
import type { SentenceSegmenter } from '../text/sentences.js';

/**
 * Where a subscription of `speak` is:
 * - `connecting`: a socket is opening, `session.start` sent, waiting for `session.ready`;
 * - `ready`: the session is ready, text flows;
 * - `done`: `session.done` arrived, waiting for the close;
 * - `backoff`: a connection was lost, waiting to reconnect;
 * - `fallback`: the session stalled; the socket is closed and the text is spoken another way;
 * - `finished`: the output completed or errored, or the subscriber unsubscribed.
 */
type Phase = 'connecting' | 'ready' | 'done' | 'backoff' | 'fallback' | 'finished';

/** One subscription of `speak`: started with the text source, stopped on unsubscribe. @internal */
export class LiveSession implements TextPathHost, SocketEventsHost, ResponseWatchHost, StalledSession, ReconnectingSession {
  phase: Phase = 'connecting';
  /** The socket in use; undefined once closed (events of closed sockets are ignored). */
  private connection: Connection | undefined;
  readonly ledger: SpeechLedger;
  /**
   * Text pushed before the first `session.ready`, to send (in order) once it comes; none
   * after it (a reconnect sends what the ledger holds): an open session keeps no array.
   */
  private outbox: string[] | undefined;
  textComplete = false;
  /** Whether the source pushed any text that is not whitespace. */
  private hasText = false;
  private textSubscription: Subscription | undefined;
  /** Client-side sentence boundaries (undefined when turned off). */
  private readonly boundaries: BoundaryHold | undefined;
  /** Sessions that became ready (the first emits `ready`, the others `reconnected`). */
  private readyCount = 0;
  /** Reconnect attempts since the last delivered segment. */
  attemptsInRow = 0;
  reconnectTimer: Subscription | undefined;
  /** Added to the server's segment ids, so that ids keep increasing across reconnects. */
  idOffset = 0;
  maxConsumerId = -1;
  /** Checks `responseTimeoutMs` (and `stall.afterMs`) while text waits to be spoken. */
  readonly responseWatch: ResponseWatch;
  /**
   * The key, in a private field: no `util.inspect` of anything reaches it (the resolved
   * options, the socket's options and the connection hold no copy once connected).
   */
  readonly #apiKey: string;
  readonly metrics: SpeechMetricsRecorder | undefined;
  /** The second way to speak, once the session stalled (`stall: { fallback: 'tts-stream' }`). */
  fallback: StallFallback | undefined;

  constructor(
    readonly options: ResolvedSpeak,
    private readonly subscriber: Subscriber<LiveSpeechEvent>,
    apiKey: string,
  ) {
    this.#apiKey = apiKey;
    const locale = options.locale;
    this.boundaries = options.clientBoundaries ? new BoundaryHold({ locale, holdMs: options.boundaryHoldMs, scheduler: options.scheduler }, this) : undefined;
    this.ledger = new SpeechLedger({ locale });
    this.metrics = options.metrics ? newMetricsRecorder(options.metrics, options.scheduler) : undefined;
    this.responseWatch = new ResponseWatch(options, this);
  }

  /**
   * Subscribe to the text, then open the socket (the text is produced while it connects):
   * a source that ends at once with nothing to speak opens no socket at all.
   */
  start(text$: Observable<string>): void {
    this.textSubscription = text$.subscribe(new TextSubscriber(this));
    if (this.phase !== 'finished') this.open();
  }

  /** The text source failed: the socket closes, the output errors with `'text_source'`. */
  textFailed(error: unknown): void {
    this.finish(this.error('text_source', `The text source failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error }));
  }

  /** The text source completed: what the gate holds goes out, then `text.done`. */
  textCompleted(): void {
    this.boundaries?.end();
    this.textComplete = true;
    // nothing to speak: the same local ValidationError as other bad input, nothing paid
    if (!this.hasText) return this.finish(nothingToSpeakError());
    if (this.phase === 'ready' && this.connection) {
      this.send(this.connection, { type: 'text.done' });
      this.responseWatch.watch(this.connection); // the service owes the rest, then session.done
    }
    if (this.phase === 'fallback') this.fallback?.end();
  }

  /** Teardown: unsubscribing closes the socket at once (1000) and clears every timer. */
  stop(): void {
    if (this.phase === 'finished') return;
    this.phase = 'finished';
    this.metrics?.end('unsubscribed');
    this.textSubscription?.unsubscribe();
    this.reconnectTimer?.unsubscribe();
    this.boundaries?.stop();
    this.responseWatch.stop();
    this.fallback?.stop();
    if (this.connection) this.closeSocket(this.connection, CloseCodes.normal);
  }

  // --- the socket ----------------------------------------------------------

  /** Open a socket; `session.start` goes out when it opens. */
  open(): void {
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
    const connection = newConnection(socket, options.scheduler.now(), this);
    this.connection = connection;
    listen(connection);
    connection.readyTimer = options.scheduler.schedule(() => this.onReadyTimeout(connection), options.readyTimeoutMs);
  }

  /** The socket opened: `session.start` goes out. */
  onOpen(connection: Connection): void {
    if (this.connection === connection) this.metrics?.opened();
    this.send(connection, startFrame(this.options.config));
  }

  /** A frame (a JSON text, or audio) on a socket; those of a socket no longer in use are ignored. */
  onMessage(connection: Connection, data: unknown): void {
    if (this.connection !== connection) return;
    this.responseWatch.noteProgress(connection, data);
    if (typeof data === 'string') this.onTextFrame(connection, data);
    else this.onAudioFrame(connection, data);
  }

  private closeSocket(connection: Connection, code: number, reason?: string): void {
    if (this.connection === connection) {
      this.connection = undefined;
      this.responseWatch.stop();
    }
    connection.readyTimer?.unsubscribe();
    closeQuietly(connection.socket, code, reason);
  }

  send(connection: Connection, frame: ClientFrame): void {
    if (this.connection !== connection || connection.socket.readyState !== OPEN) return;
    connection.socket.send(JSON.stringify(frame));
    if (frame.type !== 'session.start') connection.textSentAt = this.options.scheduler.now();
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
    const boundaries = this.boundaries;
    if (!boundaries) return this.sendText(text);
    if (this.phase === 'finished' || typeof text !== 'string') return;
    boundaries.push(text);
  }

  /** A piece of text to send: recorded in the ledger (with the gate's segmenter, if handed over), sent when ready, else kept. */
  sendText(text: string, segmenter?: SentenceSegmenter): void {
    if (this.phase === 'finished' || typeof text !== 'string' || text.length === 0) return;
    if (this.phase === 'fallback') return this.fallback?.push(text);
    const awaited = this.ledger.awaitsSentence();
    this.ledger.push(text, segmenter);
    if (this.phase === 'ready' && this.connection) {
      this.send(this.connection, { type: 'text.chunk', text });
      if (!awaited && this.ledger.awaitsSentence()) this.connection.sentenceDueAt = this.connection.textSentAt;
      this.responseWatch.watch(this.connection);
    } else if (this.readyCount === 0) (this.outbox ??= []).push(text);
  }

  // --- frames in -------------------------------------------------------------

  private onTextFrame(connection: Connection, data: string): void {
    const parsed = parseServerFrame(data, this.#apiKey);
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
        this.attemptsInRow = 0;
        this.emit({ type: 'segmentDone', segment_id: this.idOffset + frame.segment_id });
        return;
      }
      case 'segment.skipped': {
        const outOfOrder = segmentSkipped(connection, frame.segment_id);
        if (outOfOrder) return this.protocolError(connection, outOfOrder);
        const match = ledger.segmentSkipped(frame.segment_id, frame.text);
        const segment_id = this.consumerId(frame.segment_id);
        this.emit({ type: 'segmentSkipped', segment_id, text: frame.text });
        if (!match.matches) this.emit({ type: 'segmentMismatch', segment_id, sent: match.sent, reported: frame.text });
        return;
      }
      case 'session.error':
        connection.sessionError = this.scrub(frame.error);
        return;
      case 'session.done':
        // "All work is finished" (the contract: once the client ended its input) while the
        // input is still open, or while text the server echoed faithfully is still unspoken
        // (or a segment is open): completing would lose that text silently.
        if (!this.textComplete) return this.protocolError(connection, 'The server sent session.done before the input ended (text.done)');
        if (connection.inProgress !== undefined || (ledger.unspoken() !== '' && ledger.mismatches === 0)) {
          return this.protocolError(connection, 'The server sent session.done before all text was spoken');
        }
        this.phase = 'done';
        this.emit({ type: 'done' });
        return;
    }
  }

  private onReady(connection: Connection, session_id: string, run_id: number, echoed: Record<string, unknown> | undefined): void {
    connection.readyTimer?.unsubscribe();
    connection.readyTimer = undefined; // an open session keeps no spent timer (its subscriber and closure)
    this.phase = 'ready';
    this.readyCount++;
    if (this.readyCount === 1) {
      const pending = this.outbox ?? [];
      this.outbox = undefined;
      for (const text of pending) this.send(connection, { type: 'text.chunk', text });
      if (this.textComplete) this.send(connection, { type: 'text.done' });
      this.responseWatch.watch(connection);
      this.emit({ type: 'ready', session_id, run_id, config: echoed ?? { ...this.options.config } });
      return;
    }
    reconnectCode().resumeReconnected(this, connection, session_id, run_id);
  }

  private onAudioFrame(connection: Connection, data: unknown): void {
    if (connection.inProgress === undefined) return this.protocolError(connection, 'The server sent audio outside of a segment');
    const bytes = readAudioFrame(data);
    if (typeof bytes === 'string') return this.protocolError(connection, bytes);
    this.emit({ type: 'audio', segment_id: this.idOffset + connection.inProgress, bytes });
  }

  /** The id the consumer sees for a server segment id (increasing across reconnects). */
  private consumerId(serverId: number): number {
    const id = this.idOffset + serverId;
    this.maxConsumerId = Math.max(this.maxConsumerId, id);
    return id;
  }

  // --- closes and socket errors ----------------------------------------------

  onClose(connection: Connection, code: number, reason: string): void {
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

  onSocketError(connection: Connection, event: SocketErrorEvent): void {
    const message = event.message ?? (event.error instanceof Error ? event.error.message : undefined);
    if (message) connection.transportError = this.scrub(message);
    const broken = protocolViolation(event, this.options.maxPayload);
    if (broken !== undefined && this.connection === connection) this.protocolError(connection, broken);
  }

  // --- timeouts: session.ready and the service's progress ---------------------

  /**
   * The service owes this socket (the one in use) something: speech for text sent and not yet
   * delivered, or, once the input ended, `session.done` and the close after it.
   */
  waitsForSpeech(connection: Connection): boolean {
    return this.connection === connection && (this.phase === 'ready' || this.phase === 'done') && (this.textComplete || this.textWaits(connection));
  }

  /** Sent text not yet delivered: a segment open, or text no segment has covered. */
  private textWaits(connection: Connection): boolean {
    return connection.inProgress !== undefined || this.ledger.unspoken() !== '';
  }

  /**
   * Since when the service has owed this connection a segment: a sentence end sent and not
   * yet started at once (contract rule 1); trailing text without one after `idle_timeout` of
   * no text, or at once after `text.done` (rule 2).
   */
  speechDueAt(connection: Connection): number {
    if (this.ledger.awaitsSentence()) return connection.sentenceDueAt;
    return connection.textSentAt + (this.textComplete ? 0 : this.options.config.idle_timeout * 1000);
  }

  /** Nothing came for `responseTimeoutMs` while text waited: a timeout (a drop, for `reconnect`). */
  onSilent(connection: Connection, ms: number): void {
    this.closeSocket(connection, CloseCodes.normal);
    // a silent peer is not trusted to answer the close frame either
    cutOff(connection.socket);
    // everything was spoken; only the end (session.done, or the close after it) never came: nothing is lost
    if (this.textComplete && !this.textWaits(connection)) return this.finish();
    this.retryOrFail(this.error('timeout', `The service sent nothing for ${ms} ms while text waited to be spoken (responseTimeoutMs)`));
  }

  /**
   * No segment started for `stall.afterMs` while text waited: with `'error'`, a timeout; with
   * `'tts-stream'`, the socket is closed (nothing more is sent live; a sentence the service was
   * synthesizing without a `segment.start` yet may be paid on both paths)
   * and the text not begun, and all text after it, is spoken through `fallbackSpeech`.
   */
  onStall(connection: Connection, afterMs: number): void {
    // no text waits, only the session's end: not a stall of speech
    if (!this.textWaits(connection)) return this.onSilent(connection, afterMs);
    this.closeSocket(connection, CloseCodes.normal);
    cutOff(connection.socket);
    const speech = this.options.fallbackSpeech;
    if (this.options.stall?.fallback !== 'tts-stream' || speech === undefined) {
      return this.retryOrFail(this.error('timeout', `No audio started within ${afterMs} ms while text waited to be spoken (stall.afterMs)`));
    }
    this.phase = 'fallback';
    startStallFallback(this, speech, afterMs, this.options.locale);
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
    this.phase = 'backoff';
    reconnectCode().reconnectLater(this, policy);
  }

  finish(error?: LiveSessionError | ValidationError): void {
    if (this.phase === 'finished') return;
    this.metrics?.end(error === undefined ? 'complete' : 'error');
    this.stop();
    if (error === undefined) this.subscriber.complete();
    else this.subscriber.error(error);
  }

  // --- output, errors and the key ------------------------------------------------

  /** An event to the output; the metrics read the live session's (not those of the fallback, which has the phase). */
  emit(event: LiveSpeechEvent): void {
    if (this.phase === 'finished') return;
    if (this.phase !== 'fallback') this.metrics?.event(event);
    this.subscriber.next(event);
  }

  /** An error of this session, carrying the text not yet spoken. */
  error(
    code: LiveSessionErrorCode,
    message: string,
    options: { closeCode?: number; reason?: string | undefined; cause?: unknown; retryable?: boolean } = {},
  ): LiveSessionError {
    // text held by the boundary gate was never sent: it is unspoken too
    const unspoken = (this.fallback ?? this.ledger).unspoken();
    return liveSessionError(code, message, { ...options, unspoken: (unspoken + (this.boundaries?.held() ?? '')).trimStart() });
  }

  /** `message` without the API key (nor its encoded forms). */
  scrub(message: string): string {
    return scrubKey(message, this.#apiKey);
  }
}
