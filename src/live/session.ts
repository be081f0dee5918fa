/**
 * The live speech session as an RxJS operator: text in, `LiveSpeechEvent`s out.
 *
 * One subscription is one {@link LiveSession}: one WebSocket session (or, with
 * `reconnect`, a chain of sessions that together speak the text exactly once). Where
 * things happen in it:
 * - the socket is opened in `open()` and closed in `closeSocket()`;
 * - text from the source goes out in `sendText()` (buffered until `session.ready`);
 * - server frames are parsed with the zod schemas of `protocol.ts` in `onTextFrame()`
 *   and handled, by type, in `onServerFrame()`; audio in `onAudioFrame()`;
 * - the session's state is one `phase`.
 */
import { SpeechMetricsRecorder, type SpeechMetricsObserver } from './metrics.js';
import { Observable, asyncScheduler, timer, type OperatorFunction, type SchedulerLike, type Subscriber, type Subscription } from 'rxjs';
import { WebSocket as NodeWebSocket } from 'ws';
import { backoffDelay } from '../core/backoff.js';
import { ValidationError, liveSessionError, redact, type LiveSessionError, type LiveSessionErrorCode } from '../core/errors.js';
import * as z from 'zod/mini';
import { flag, func, integerAtLeast, milliseconds, positiveMilliseconds } from '../core/options.js';
import { LIVE_TTS_PATH } from '../core/routes.js';
import type { ValidationIssue } from '../core/schemas.js';
import { toValidationIssues } from '../core/validation.js';
import type { LiveSpeechEvent } from './events.js';
import { SpeechLedger } from './ledger.js';
import { createBoundaryGate, type BoundaryGate } from '../text/boundaryGate.js';
import {
  CloseCodes,
  MAX_AUDIO_FRAME_BYTES,
  ServerFrameSchema,
  SessionConfigSchema,
  type ClientFrame,
  type ServerFrame,
  type SessionConfig,
  type SessionConfigInput,
} from './protocol.js';

// ---------------------------------------------------------------------------
// Transport
// ---------------------------------------------------------------------------

/**
 * The part of a WebSocket the session uses: the WHATWG API, which browsers, undici and
 * the `ws` package all implement.
 */
export interface WebSocketLike {
  readonly readyState: number;
  binaryType: string;
  /** Sends one JSON text frame. */
  send(data: string): void;
  /** Closes the connection (1000 when `code` is not given). */
  close(code?: number, reason?: string): void;
  /** Listens to `open`, `message` (text and binary frames), `close` and `error`. */
  addEventListener(type: 'open' | 'message' | 'close' | 'error', listener: (event: unknown) => void): void;
}

/**
 * A WebSocket constructor: `ws`'s (takes `{ headers }` as its third argument) or a
 * browser-style one (URL and protocols only).
 */
export type WebSocketConstructorLike = new (
  url: string,
  protocols?: string | string[],
  options?: { headers?: Record<string, string>; maxPayload?: number; closeTimeout?: number },
) => WebSocketLike;

const DefaultWebSocket: WebSocketConstructorLike = NodeWebSocket;

/** Where and how to connect. */
export interface LiveConnection {
  /** WebSocket base address (e.g. `ws://127.0.0.1:8080`), or the full live session address. */
  wsUrl: string;
  /**
   * The service's API key: sent as the `x-api-key` header when the constructor takes
   * headers, else as the `api_key` query parameter. Leave it out (or `''`) when the page
   * connects through `rxvoice/relay`, which adds the server's key: then nothing is sent.
   */
  apiKey?: string | undefined;
  /** WebSocket constructor; default the `ws` package. */
  WebSocket?: WebSocketConstructorLike | undefined;
  /**
   * Whether the constructor accepts `{ headers }` (third argument). When false the key is
   * sent as the `api_key` query parameter. Default: true for `ws` and for any constructor
   * declaring three parameters, false otherwise (browser-style).
   */
  headersSupported?: boolean | undefined;
  /** `wsUrl` is the full session address, used as given (`/live-tts/ws` not appended). */
  exactUrl?: boolean | undefined;
}

// ---------------------------------------------------------------------------
// Options
// ---------------------------------------------------------------------------

/** Reconnect policy after an abnormal close (off unless given). */
export interface ReconnectOptions {
  /**
   * Reconnection attempts allowed in a row (the first connection is not one): each new
   * session opened after an abnormal close counts one, a segment delivered (its
   * `segmentDone`) resets the count to 0; when a drop comes with the count at
   * `maxAttempts`, the error is passed on. 0: never reconnect. An integer, 0 to 1000.
   */
  maxAttempts: number;
  /** Delay before the first attempt, ms (doubles each attempt). Default 250. */
  baseDelayMs?: number;
  /** Largest delay, ms. Default 5000. */
  maxDelayMs?: number;
  /**
   * Random source in [0, 1) for the jitter (each delay is drawn from the upper half of
   * the exponential one, so sessions dropped together do not reconnect in lockstep).
   * Default `Math.random`; tests pass a fixed one.
   */
  random?: () => number;
}

/**
 * Options of a live session: the `session.start` configuration plus client options.
 *
 * `output_format` defaults to `'wav'` in rxvoice (the service itself defaults to `mp3`),
 * so that segments are playable PCM and `wordTimeline()` can measure them exactly.
 */
export type SpeakOptions = SessionConfigInput & {
  /** Reconnect without loss after an abnormal close (1006 and the like). Off by default. */
  reconnect?: ReconnectOptions | undefined;
  /** Scheduler for the ready timeout and reconnect delays (virtual time in tests). */
  scheduler?: SchedulerLike | undefined;
  /** How long to wait for `session.ready` after connecting, ms. Default 10000. */
  readyTimeoutMs?: number | undefined;
  /**
   * Largest WebSocket message accepted from the server, bytes (`ws`'s `maxPayload`; a
   * browser-style constructor cannot be told). A larger one ends the session with a
   * `'protocol'` error as soon as its header arrives, before it is buffered. Default 1 MiB
   * ({@link DEFAULT_LIVE_MAX_PAYLOAD}); audio frames are at most 64 KiB.
   */
  maxPayload?: number | undefined;
  /**
   * Client-side sentence boundaries (default true): a `text.chunk` never ends just after a
   * stop unless that stop ends a sentence (`"The U.S."` waits for `" Government"`), so the
   * service's segments are the sentences whatever the token split. An undecided stop waits
   * for the next token, at most `boundaryHoldMs`, or the end of the text; words without a
   * stop go out at once. Set false for text that is already segmented (each string then
   * goes out as it comes).
   */
  clientBoundaries?: boolean | undefined;
  /** Longest wait of an undecided stop for the next token, ms (then it is sent). Default 250. */
  boundaryHoldMs?: number | undefined;
  /**
   * While text waits to be spoken, how long the service may make no progress (no JSON
   * frame, and less than 0.25 s of audio) before the session
   * ends with a `'timeout'` error carrying `unspoken` (retryable: `reconnect` treats it as a
   * drop), ms. Catches a service silent after `session.ready` or mid-segment, trickling a
   * frame byte by byte or tiny audio frames, or a half-open TCP connection. Timed on `scheduler`; where the WebSocket has pings (`ws`), one is sent
   * each third of it while waiting (a dead peer then fails faster). Default 15 000
   * ({@link DEFAULT_RESPONSE_TIMEOUT_MS}).
   */
  responseTimeoutMs?: number | undefined;
  /**
   * After the session closes its socket (unsubscribe, end), how long to wait for the
   * server's close frame before the socket is cut, ms (`ws`'s `closeTimeout`; a
   * browser-style constructor cannot be told). Default 1000 ({@link DEFAULT_CLOSE_GRACE_MS}).
   */
  closeGraceMs?: number | undefined;
  /**
   * Receives the session's timing metrics as data (`SpeechMetrics`): one
   * `segment` report per delivered or skipped segment, one `session` report when the
   * session ends (complete, error or unsubscribe), then `complete`. Off by default.
   */
  metrics?: SpeechMetricsObserver | undefined;
};

/** Default `maxPayload` of the live session's WebSocket: 1 MiB. */
export const DEFAULT_LIVE_MAX_PAYLOAD = 1024 * 1024;

/** Default `responseTimeoutMs`: 15 s of silence while text waits to be spoken ends the session. */
export const DEFAULT_RESPONSE_TIMEOUT_MS = 15_000;

/**
 * Audio that counts as progress for `responseTimeoutMs`, seconds of sound: a service must
 * send a JSON frame or this much audio within the timeout (a real one sends far more).
 */
export const PROGRESS_AUDIO_SECONDS = 0.25;

/** Default `closeGraceMs`: a server ignoring the close frame is cut off after 1 s. */
export const DEFAULT_CLOSE_GRACE_MS = 1000;

/**
 * Close codes after a `session.error` that say the same request may succeed later: going
 * away (1001), restarting (1012), try again later (1013), idle (4408), too many sessions
 * (4429). After any other (1011, internal error, ...) the error is not retryable.
 */
const RETRY_AFTER_SESSION_ERROR: ReadonlySet<number> = new Set([1001, 1012, 1013, CloseCodes.idleTimeout, CloseCodes.tooManySessions]);

/** rxvoice's default output format for live sessions (the service's own default is mp3). */
export const DEFAULT_LIVE_OUTPUT_FORMAT = 'wav' as const;

/** The client options of {@link SpeakOptions} (everything but the `session.start` configuration and `scheduler`). */
const ClientOptionsSchema = z.object({
  reconnect: z.optional(
    z.object({
      maxAttempts: integerAtLeast(0).check(z.maximum(1000, { error: 'must be at most 1000' })),
      baseDelayMs: z._default(milliseconds(), 250),
      maxDelayMs: z._default(milliseconds(), 5000),
      random: z._default(func<() => number>(), () => Math.random),
    }),
  ),
  readyTimeoutMs: z._default(positiveMilliseconds(), 10_000),
  maxPayload: z._default(integerAtLeast(1), DEFAULT_LIVE_MAX_PAYLOAD),
  clientBoundaries: z._default(flag(), true),
  boundaryHoldMs: z._default(milliseconds().check(z.maximum(60_000, { error: 'must be at most 60000 ms' })), 250),
  responseTimeoutMs: z._default(positiveMilliseconds(), DEFAULT_RESPONSE_TIMEOUT_MS),
  closeGraceMs: z._default(milliseconds(), DEFAULT_CLOSE_GRACE_MS),
});

/** Options checked and completed with their defaults, and where to connect (never the key: see {@link LiveSession}). */
interface ResolvedSpeak extends z.output<typeof ClientOptionsSchema> {
  config: SessionConfig;
  scheduler: SchedulerLike;
  metrics: SpeechMetricsObserver | undefined;
  url: string;
  /** Whether the key goes in the `x-api-key` header (else it is in the `url`'s query). */
  headersSupported: boolean;
  WebSocket: WebSocketConstructorLike;
}

/**
 * The live session address for a base (or full) WebSocket address, with `api_key` in the
 * query when given; undefined when it is not a ws(s):// (or http(s)://) address.
 */
function sessionUrl(wsUrl: string, queryKey: string | undefined, exact = false): string | undefined {
  let url: URL;
  try {
    url = new URL(wsUrl);
  } catch {
    return undefined;
  }
  if (url.protocol === 'http:') url.protocol = 'ws:';
  if (url.protocol === 'https:') url.protocol = 'wss:';
  if (url.protocol !== 'ws:' && url.protocol !== 'wss:') return undefined;
  if (!exact && !url.pathname.endsWith(LIVE_TTS_PATH)) url.pathname = url.pathname.replace(/\/+$/, '') + LIVE_TTS_PATH;
  if (queryKey !== undefined) url.searchParams.set('api_key', queryKey);
  return url.toString();
}

/**
 * For a handshake answered 404: the live path is not where it was looked for (the
 * service does not publish it), say which option sets it. The query (a key) is left out.
 */
function livePathHint(detail: string | undefined, url: string): string {
  if (detail === undefined || !/\b404\b/.test(detail)) return '';
  const where = new URL(url);
  return (
    `. No live session at ${where.origin}${where.pathname}: set the live address ` +
    "(createClient's `liveUrl`, or speak's `wsUrl`) to the service's live WebSocket path"
  );
}

/** Check the options with their schemas: the resolved session, or a ValidationError with every issue found. */
function resolve(connection: LiveConnection, options: SpeakOptions): ResolvedSpeak {
  const { reconnect, scheduler, readyTimeoutMs, maxPayload, clientBoundaries, boundaryHoldMs, responseTimeoutMs, closeGraceMs, metrics, ...configInput } = options;
  const issues: ValidationIssue[] = [];
  const config = SessionConfigSchema.safeParse({ output_format: DEFAULT_LIVE_OUTPUT_FORMAT, ...configInput });
  if (!config.success) issues.push(...toValidationIssues(config.error, configInput, ['session.start']));
  const clientInput = { reconnect, readyTimeoutMs, maxPayload, clientBoundaries, boundaryHoldMs, responseTimeoutMs, closeGraceMs };
  const client = ClientOptionsSchema.safeParse(clientInput);
  if (!client.success) issues.push(...toValidationIssues(client.error, clientInput, ['options']));
  const Ctor = connection.WebSocket ?? DefaultWebSocket;
  const headersSupported = connection.headersSupported ?? (Ctor === DefaultWebSocket || Ctor.length >= 3);
  const url = sessionUrl(connection.wsUrl, headersSupported || !connection.apiKey ? undefined : connection.apiKey, connection.exactUrl);
  if (url === undefined) issues.push({ loc: ['connection', 'wsUrl'], msg: 'must be a ws:// or wss:// address', type: 'url_parsing' });
  if (!config.success || !client.success || url === undefined) {
    throw new ValidationError(issues, { source: 'local', endpoint: LIVE_TTS_PATH });
  }
  return {
    ...client.data,
    config: config.data,
    scheduler: scheduler ?? asyncScheduler,
    metrics,
    url,
    headersSupported,
    WebSocket: Ctor,
  };
}

/** Where and how a session connects, and the exact `session.start` frame (JSON text) it sends. */
export interface SessionPlan {
  url: string;
  headers: Record<string, string> | undefined;
  maxPayload: number;
  /** `ws`'s `closeTimeout` for the socket (see `closeGraceMs`). */
  closeGraceMs: number;
  WebSocket: WebSocketConstructorLike;
  startFrame: string;
}

/**
 * The {@link SessionPlan} of a session with these options, for warm sessions (warm.ts),
 * which must start exactly as the session would. Throws the `ValidationError` that
 * `speak` would throw.
 *
 * @internal
 */
export function sessionPlan(connection: LiveConnection, options: SpeakOptions): SessionPlan {
  const resolved = resolve(connection, options);
  const { url, maxPayload, closeGraceMs, WebSocket } = resolved;
  const headers = resolved.headersSupported ? keyHeader(connection.apiKey ?? '') : undefined;
  return { url, headers, maxPayload, closeGraceMs, WebSocket, startFrame: JSON.stringify(startFrame(resolved.config)) };
}

/** The `x-api-key` header, or no header without a key (a connection through the relay). */
function keyHeader(apiKey: string): Record<string, string> {
  return apiKey === '' ? {} : { 'x-api-key': apiKey };
}

function startFrame(config: SessionConfig): ClientFrame {
  return { type: 'session.start', ...config };
}

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
  const resolved = resolve(connection, options);
  return (text$) =>
    new Observable<LiveSpeechEvent>((subscriber) => {
      const session = new LiveSession(resolved, subscriber, connection.apiKey ?? '');
      session.start(text$);
      return () => session.stop();
    });
}

/**
 * Where a subscription of {@link speak} is:
 * - `connecting`: a socket is opening, `session.start` sent, waiting for `session.ready`;
 * - `ready`: the session is ready, text flows;
 * - `done`: `session.done` arrived, waiting for the close;
 * - `backoff`: a connection was lost, waiting to reconnect;
 * - `finished`: the output completed or errored, or the subscriber unsubscribed.
 */
type Phase = 'connecting' | 'ready' | 'done' | 'backoff' | 'finished';

/** One WebSocket of a session, and what the server said on it. */
interface Connection {
  socket: WebSocketLike;
  /** Last segment id seen from the server on this socket (-1 before any). */
  lastServerId: number;
  /** Server id of the segment started and not yet done. */
  inProgress: number | undefined;
  /** The message of a `session.error` (scrubbed). */
  sessionError: string | undefined;
  /** The message of the socket's last error event (scrubbed). */
  transportError: string | undefined;
  readyTimer: Subscription | undefined;
  /** Scheduler time of the server's last progress (for `responseTimeoutMs`): a JSON frame, or enough audio. */
  lastFrameAt: number;
  /** Audio bytes received since the last progress (a trickle of tiny frames is not progress). */
  audioSinceProgress: number;
}

const OPEN = 1;

/** One subscription of {@link speak}. */
class LiveSession {
  private phase: Phase = 'connecting';
  /** The socket in use; undefined once closed (events of closed sockets are ignored). */
  private connection: Connection | undefined;
  private readonly ledger: SpeechLedger;
  /** Text pushed before the first `session.ready`, to send (in order) once it comes. */
  private outbox: string[] = [];
  private textComplete = false;
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
  /** Checks `responseTimeoutMs` while text waits to be spoken (undefined when nothing waits). */
  private responseWatch: Subscription | undefined;
  /**
   * The key, in a private field: no `util.inspect` of anything reaches it (the resolved
   * options, the socket's options and the connection hold no copy once connected).
   */
  readonly #apiKey: string;
  private readonly metrics: SpeechMetricsRecorder | undefined;

  constructor(
    private readonly options: ResolvedSpeak,
    private readonly subscriber: Subscriber<LiveSpeechEvent>,
    apiKey: string,
  ) {
    this.#apiKey = apiKey;
    // a numeric language id (deprecated) says nothing of the script: the default rules apply
    const language = options.config.language;
    this.gate = options.clientBoundaries ? createBoundaryGate(typeof language === 'string' ? { locale: language } : {}) : undefined;
    const idle = options.config.idle_timeout;
    this.ledger = new SpeechLedger({
      locale: typeof language === 'string' ? language : undefined,
      idleTimeoutMs: typeof idle === 'number' ? idle * 1000 : undefined,
    });
    this.metrics = options.metrics ? new SpeechMetricsRecorder(options.metrics, options.scheduler) : undefined;
  }

  /** Open the socket, then subscribe to the text (so that it is produced while the socket connects). */
  start(text$: Observable<string>): void {
    this.open();
    if (this.phase === 'finished') return;
    this.textSubscription = text$.subscribe({
      next: (text) => this.pushText(text),
      error: (error: unknown) =>
        this.finish(this.error('text_source', `The text source failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error })),
      complete: () => {
        this.holdTimer?.unsubscribe();
        for (const chunk of this.gate?.end() ?? []) this.sendText(chunk);
        this.textComplete = true;
        if (this.phase === 'ready' && this.connection) this.send(this.connection, { type: 'text.done' });
      },
    });
  }

  /** Teardown: unsubscribing closes the socket at once (1000) and clears every timer. */
  stop(): void {
    if (this.phase === 'finished') return;
    this.phase = 'finished';
    this.metrics?.end('unsubscribed');
    this.textSubscription?.unsubscribe();
    this.reconnectTimer?.unsubscribe();
    this.holdTimer?.unsubscribe();
    this.stopResponseWatch();
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
      socket = options.headersSupported
        ? new options.WebSocket(options.url, undefined, {
            headers: keyHeader(this.#apiKey),
            maxPayload: options.maxPayload,
            closeTimeout: options.closeGraceMs,
          })
        : new options.WebSocket(options.url);
    } catch (cause) {
      // no `cause`: its message may hold the address (and a query key)
      const message = this.scrub(cause instanceof Error ? cause.message : String(cause));
      this.retryOrFail(this.error('connection', `Could not open the live session: ${message}`));
      return;
    }
    if (socket.binaryType !== 'nodebuffer') socket.binaryType = 'arraybuffer';
    const connection: Connection = {
      socket,
      lastServerId: -1,
      inProgress: undefined,
      sessionError: undefined,
      transportError: undefined,
      readyTimer: undefined,
      lastFrameAt: options.scheduler.now(),
      audioSinceProgress: 0,
    };
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
      this.noteProgress(connection, data);
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
      this.stopResponseWatch();
    }
    connection.readyTimer?.unsubscribe();
    try {
      connection.socket.close(code, reason);
    } catch {
      // Browsers only allow 1000 and 3000-4999.
      try {
        connection.socket.close(CloseCodes.normal);
      } catch {
        // already closed
      }
    }
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
  private pushText(text: string): void {
    // Timed when the source pushes it: a stop held by the gate counts as latency.
    if (this.phase !== 'finished' && typeof text === 'string' && text.length > 0) this.metrics?.textPushed(text);
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
    this.ledger.push(text, this.options.scheduler.now());
    if (this.phase === 'ready' && this.connection) {
      this.send(this.connection, { type: 'text.chunk', text });
      this.watchResponse(this.connection);
    } else this.outbox.push(text);
  }

  // --- frames in -------------------------------------------------------------

  private onTextFrame(connection: Connection, data: string): void {
    let json: unknown;
    try {
      json = JSON.parse(data);
    } catch {
      this.protocolError(connection, 'The server sent a text frame that is not JSON');
      return;
    }
    const parsed = ServerFrameSchema.safeParse(json);
    if (!parsed.success) {
      const type = json !== null && typeof json === 'object' ? (json as { type?: unknown }).type : undefined;
      this.protocolError(connection, `The server sent an invalid frame${typeof type === 'string' ? ` (${this.scrub(type).slice(0, 64)})` : ''}`);
      return;
    }
    this.onServerFrame(connection, parsed.data);
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
        if (connection.inProgress !== undefined)
          return this.protocolError(connection, `segment.start ${frame.segment_id} before segment.done ${connection.inProgress}`);
        if (frame.segment_id !== connection.lastServerId + 1) return this.outOfOrder(connection, frame.segment_id);
        connection.lastServerId = frame.segment_id;
        connection.inProgress = frame.segment_id;
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
      case 'segment.done':
        if (connection.inProgress !== frame.segment_id)
          return this.protocolError(connection, `segment.done ${frame.segment_id} for a segment not started`);
        connection.inProgress = undefined;
        ledger.segmentDelivered(frame.segment_id);
        this.metrics?.segmentDone();
        this.attemptsInRow = 0;
        this.emit({ type: 'segmentDone', segment_id: this.idOffset + frame.segment_id });
        return;
      case 'segment.skipped':
        if (connection.inProgress !== undefined && connection.inProgress !== frame.segment_id)
          return this.protocolError(connection, `segment.skipped ${frame.segment_id} while segment ${connection.inProgress} is in progress`);
        if (connection.inProgress === undefined && frame.segment_id !== connection.lastServerId + 1) return this.outOfOrder(connection, frame.segment_id);
        connection.lastServerId = frame.segment_id;
        connection.inProgress = undefined;
        const match = ledger.segmentSkipped(frame.segment_id, frame.text);
        const segment_id = this.consumerId(frame.segment_id);
        this.metrics?.segmentSkipped(segment_id, frame.text);
        this.emit({ type: 'segmentSkipped', segment_id, text: frame.text });
        if (!match.matches) this.emit({ type: 'segmentMismatch', segment_id, sent: match.sent, reported: frame.text });
        return;
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
      this.watchResponse(connection);
      this.emit({ type: 'ready', session_id, run_id, config: echoed ?? { ...this.options.config } });
      return;
    }
    // A reconnect: everything not yet delivered (sent or buffered) goes again, once.
    this.outbox = [];
    const resent = this.ledger.resend(this.options.scheduler.now());
    this.metrics?.reconnected(resent);
    if (resent.length > 0) this.send(connection, { type: 'text.chunk', text: resent });
    if (this.textComplete) this.send(connection, { type: 'text.done' });
    this.watchResponse(connection);
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

  // --- endings ---------------------------------------------------------------

  private onClose(connection: Connection, code: number, reason: string): void {
    if (this.connection !== connection) return;
    this.connection = undefined;
    this.stopResponseWatch();
    connection.readyTimer?.unsubscribe();
    const allDelivered = this.textComplete && this.ledger.unspoken() === '' && connection.inProgress === undefined;
    const cleanEnd = code === CloseCodes.normal && (this.phase === 'done' || allDelivered);
    // A connection lost after every text was delivered: nothing is missing, complete.
    const refused = code === CloseCodes.invalidKey || code === CloseCodes.rejected || code === CloseCodes.creditsExhausted || code === CloseCodes.forbidden;
    const lostAfterAll = this.readyCount > 0 && allDelivered && !refused;
    if (cleanEnd || lostAfterAll) return this.finish();
    const why = this.scrub(reason);
    const close = { closeCode: code, reason: why || undefined };
    switch (code) {
      case CloseCodes.invalidKey:
        return this.finish(this.error('authentication', 'The live session rejected the API key (close 4401)', close));
      case CloseCodes.rejected:
        return this.finish(this.error('session_rejected', `The live session was rejected: ${connection.sessionError ?? (why || 'no reason given')}`, close));
      case CloseCodes.forbidden:
        // a relay refusing this page's origin: asking again cannot change the answer
        return this.finish(this.error('session_rejected', `The live session was refused (close 4403${why ? `: ${why}` : ''})`, close));
      case CloseCodes.creditsExhausted: {
        const detail = connection.sessionError ? `: ${connection.sessionError}` : '';
        return this.finish(this.error('credits_exhausted', `Credits ran out during the live session${detail}`, close));
      }
      default: {
        if (connection.sessionError !== undefined) {
          // the service said what went wrong: its message, not a bare close code
          const retryable = RETRY_AFTER_SESSION_ERROR.has(code);
          const message = `The live session failed: ${connection.sessionError} (close ${code}${why ? `: ${why}` : ''})`;
          return this.retryOrFail(this.error('session_error', message, { ...close, retryable }));
        }
        const detail = why || connection.transportError;
        const how = code === CloseCodes.normal ? 'before session.done' : 'abnormally';
        const message = `The live session closed ${how} (code ${code}${detail ? `: ${detail}` : ''})${livePathHint(detail, this.options.url)}`;
        return this.retryOrFail(this.error('connection', message, close));
      }
    }
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

  // --- response timeout -------------------------------------------------------

  /**
   * Start watching for `responseTimeoutMs` of silence, if text waits to be spoken and no
   * watch runs: the silence counts from now. Checked each third of the timeout.
   */
  private watchResponse(connection: Connection): void {
    if (this.responseWatch !== undefined || !this.waitsForSpeech(connection)) return;
    connection.lastFrameAt = this.options.scheduler.now();
    const every = this.options.responseTimeoutMs / 3;
    this.responseWatch = timer(every, every, this.options.scheduler).subscribe(() => this.checkResponse(connection));
  }

  /**
   * Progress of the service, for `responseTimeoutMs`: any JSON frame (a segment event), or
   * audio adding up to `PROGRESS_AUDIO_SECONDS` of sound. Counted in audio time, not
   * frames, so a trickle of tiny frames cannot hold a session open forever.
   */
  private noteProgress(connection: Connection, data: unknown): void {
    if (typeof data !== 'string') {
      connection.audioSinceProgress += toBytes(data)?.byteLength ?? 0;
      if (connection.audioSinceProgress < this.progressAudioBytes) return;
    }
    connection.audioSinceProgress = 0;
    connection.lastFrameAt = this.options.scheduler.now();
  }

  /** Bytes of `PROGRESS_AUDIO_SECONDS` of audio: exact for 16-bit WAV, a 128 kbit/s estimate for compressed formats. */
  private get progressAudioBytes(): number {
    const { output_format, sample_rate } = this.options.config;
    const bytesPerSecond = output_format === 'wav' ? (sample_rate ?? 16_000) * 2 : 16_000;
    return Math.ceil(bytesPerSecond * PROGRESS_AUDIO_SECONDS);
  }

  private stopResponseWatch(): void {
    this.responseWatch?.unsubscribe();
    this.responseWatch = undefined;
  }

  /** Text was pushed and not yet delivered as audio, on the socket in use, ready. */
  private waitsForSpeech(connection: Connection): boolean {
    return this.connection === connection && this.phase === 'ready' && (connection.inProgress !== undefined || this.ledger.unspoken() !== '');
  }

  private checkResponse(connection: Connection): void {
    if (!this.waitsForSpeech(connection)) return this.stopResponseWatch();
    const ms = this.options.responseTimeoutMs;
    if (this.options.scheduler.now() - connection.lastFrameAt < ms) {
      // a ping keeps intermediaries open and makes a dead TCP peer fail sooner
      try {
        (connection.socket as { ping?: () => void }).ping?.();
      } catch {
        // closing meanwhile: the close event says what happened
      }
      return;
    }
    this.stopResponseWatch();
    this.closeSocket(connection, CloseCodes.normal);
    // a silent peer is not trusted to answer the close frame either
    (connection.socket as { terminate?: () => void }).terminate?.();
    this.retryOrFail(this.error('timeout', `The service sent nothing for ${ms} ms while text waited to be spoken (responseTimeoutMs)`));
  }

  private onReadyTimeout(connection: Connection): void {
    if (this.connection !== connection || this.phase !== 'connecting') return;
    this.closeSocket(connection, CloseCodes.normal);
    this.retryOrFail(this.error('timeout', `No session.ready within ${this.options.readyTimeoutMs} ms`));
  }

  /**
   * A segment id that is not the next one (the service numbers a session's segments 0, 1,
   * 2, ...): a segment may be missing, so nothing after it can be mapped onto the text.
   */
  private outOfOrder(connection: Connection, segment_id: number): void {
    const expected = connection.lastServerId + 1;
    this.protocolError(connection, `Segment id ${segment_id} does not follow ${connection.lastServerId} (expected ${expected})`);
  }

  private protocolError(connection: Connection, message: string): void {
    if (this.connection !== connection) return;
    this.closeSocket(connection, 1002, 'protocol error');
    // A peer that broke the protocol is not trusted to answer the close frame (`ws`
    // would keep the socket, and read what it still sends, for 30 s): cut it off.
    (connection.socket as { terminate?: () => void }).terminate?.();
    this.finish(this.error('protocol', message));
  }

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

  private finish(error?: LiveSessionError): void {
    if (this.phase === 'finished') return;
    this.metrics?.end(error === undefined ? 'complete' : 'error');
    this.stop();
    if (error === undefined) this.subscriber.complete();
    else this.subscriber.error(error);
  }

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
    return liveSessionError(code, message, { ...options, unspoken: this.ledger.unspoken() + (this.gate?.held() ?? '') });
  }

  private scrub(text: string): string {
    const apiKey = this.#apiKey;
    return redact(text, [apiKey, encodeURIComponent(apiKey), new URLSearchParams({ k: apiKey }).toString().slice(2)]);
  }
}

function toBytes(data: unknown): Uint8Array | undefined {
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  // ws hands a fresh Buffer per message: a plain Uint8Array view on it, no copy (a view,
  // not the Buffer itself, so that `.slice()` copies as it does on any Uint8Array).
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  return undefined;
}
