/**
 * The live speech session as an RxJS operator: text in, `LiveSpeechEvent`s out.
 *
 * One subscription is one WebSocket session (or, with `reconnect`, a chain of sessions
 * that together speak the text exactly once). See {@link speak}.
 */
import {
  Observable,
  asyncScheduler,
  timer,
  type OperatorFunction,
  type SchedulerLike,
  type Subscriber,
  type Subscription,
  type Unsubscribable,
} from 'rxjs';
import { WebSocket as NodeWebSocket } from 'ws';
import { z } from 'zod';
import {
  AuthenticationError,
  ConnectionError,
  CreditsExhaustedError,
  ProtocolError,
  RxVoiceError,
  SessionRejectedError,
  TimeoutError,
  ValidationError,
  redact,
} from '../core/errors.js';
import { backoffDelay } from '../core/backoff.js';
import { routes } from '../core/routes.js';
import type { ValidationIssue } from '../core/schemas.js';
import { toValidationIssues } from '../core/validation.js';
import type { LiveSpeechEvent } from './events.js';
import { SpeechLedger } from './ledger.js';
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
  send(data: string): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: 'open' | 'message' | 'close' | 'error', listener: (event: unknown) => void): void;
}

/**
 * A WebSocket constructor: `ws`'s (takes `{ headers }` as its third argument) or a
 * browser-style one (URL and protocols only).
 */
export type WebSocketConstructorLike = new (
  url: string,
  protocols?: string | string[],
  options?: { headers?: Record<string, string>; maxPayload?: number },
) => WebSocketLike;

const DefaultWebSocket: WebSocketConstructorLike = NodeWebSocket;
/** `ws`'s class, for its own event API; undefined in a browser bundle (`ws` stubbed out). */
const IsNodeWebSocket: typeof NodeWebSocket | undefined = typeof NodeWebSocket === 'function' ? NodeWebSocket : undefined;

/** Where and how to connect. */
export interface LiveConnection {
  /** WebSocket base address (e.g. `ws://127.0.0.1:8080`), or the full live session address. */
  wsUrl: string;
  apiKey: string;
  /** WebSocket constructor; default the `ws` package. */
  WebSocket?: WebSocketConstructorLike | undefined;
  /**
   * Whether the constructor accepts `{ headers }` (third argument). When false the key is
   * sent as the `api_key` query parameter. Default: true for `ws` and for any constructor
   * declaring three parameters, false otherwise (browser-style).
   */
  headersSupported?: boolean | undefined;
}

// ---------------------------------------------------------------------------
// Options
// ---------------------------------------------------------------------------

/** Reconnect policy after an abnormal close (off unless given). */
export interface ReconnectOptions {
  /** Attempts in a row without a delivered segment in between; then the error is passed on. */
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
   * `ProtocolError` as soon as its header arrives, before it is buffered. Default 1 MiB
   * ({@link DEFAULT_LIVE_MAX_PAYLOAD}); audio frames are at most 64 KiB.
   */
  maxPayload?: number | undefined;
};

/** Default `maxPayload` of the live session's WebSocket: 1 MiB. */
export const DEFAULT_LIVE_MAX_PAYLOAD = 1024 * 1024;

const ClientOptionsSchema = z.object({
  reconnect: z
    .object({
      maxAttempts: z.int().min(0).max(1000),
      baseDelayMs: z.number().nonnegative().default(250),
      maxDelayMs: z.number().nonnegative().default(5000),
      random: z.custom<() => number>((value) => typeof value === 'function').default(() => Math.random),
    })
    .optional(),
  readyTimeoutMs: z.number().positive().default(10_000),
  maxPayload: z.int().positive().default(DEFAULT_LIVE_MAX_PAYLOAD),
});

/** rxvoice's default output format for live sessions (the service's own default is mp3). */
export const DEFAULT_LIVE_OUTPUT_FORMAT = 'wav' as const;

interface ResolvedSpeak {
  config: SessionConfig;
  reconnect: { maxAttempts: number; baseDelayMs: number; maxDelayMs: number; random: () => number } | undefined;
  readyTimeoutMs: number;
  maxPayload: number;
  scheduler: SchedulerLike;
  url: string;
  headers: Record<string, string> | undefined;
  WebSocket: WebSocketConstructorLike;
  apiKey: string;
}

/** Parsed configurations by {@link configKey} (successes only; frozen, shared). */
const configCache = new Map<string, SessionConfig>();
const CONFIG_CACHE_SIZE = 32;

/**
 * A key that tells configurations apart exactly when they hold only primitives (keys in
 * order, each value's type and value, `-0` apart from `0`); undefined otherwise.
 */
function configKey(input: Record<string, unknown>): string | undefined {
  let key = '';
  for (const name in input) {
    if (!Object.hasOwn(input, name)) return undefined;
    const value = input[name];
    const type = typeof value;
    if (value !== null && type !== 'string' && type !== 'number' && type !== 'boolean' && type !== 'undefined') return undefined;
    key += `${JSON.stringify(name)}:${type === 'number' && Object.is(value, -0) ? '-0' : type === 'string' ? JSON.stringify(value) : String(value)}|${type};`;
  }
  return key;
}

/**
 * `SessionConfigSchema.safeParse`, remembered for configurations of primitives: a client
 * speaks with the same few configurations again and again, and the zod parse cost about
 * 15 µs a `speak()` (see bench/live-overhead.ts). The schema is pure (constant defaults),
 * so the same input always gives the same output; the result is frozen and only read.
 */
function parseConfig(input: Record<string, unknown>): { success: true; data: SessionConfig } | ReturnType<typeof SessionConfigSchema.safeParse> {
  const key = configKey(input);
  if (key !== undefined) {
    const cached = configCache.get(key);
    if (cached !== undefined) return { success: true, data: cached };
  }
  const result = SessionConfigSchema.safeParse(input);
  if (result.success && key !== undefined) {
    if (configCache.size >= CONFIG_CACHE_SIZE) configCache.clear();
    configCache.set(key, Object.freeze(result.data));
  }
  return result;
}

let lastUrl: { wsUrl: string; queryKey: string | undefined; url: string | undefined } | undefined;

/**
 * The live session address for a base (or full) WebSocket address, with `api_key` in the
 * query when given; undefined when it is not a ws(s):// (or http(s)://) address. The
 * last answer without a key is kept (a client speaks to one address).
 */
function sessionUrl(wsUrl: string, queryKey: string | undefined): string | undefined {
  if (lastUrl !== undefined && lastUrl.wsUrl === wsUrl && lastUrl.queryKey === queryKey) return lastUrl.url;
  let url: URL | undefined;
  try {
    url = new URL(wsUrl);
    if (url.protocol === 'http:') url.protocol = 'ws:';
    if (url.protocol === 'https:') url.protocol = 'wss:';
    if (url.protocol !== 'ws:' && url.protocol !== 'wss:') throw new Error('not a WebSocket address');
  } catch {
    url = undefined;
  }
  if (url !== undefined) {
    if (!url.pathname.endsWith(routes.liveTts)) url.pathname = url.pathname.replace(/\/+$/, '') + routes.liveTts;
    if (queryKey !== undefined) url.searchParams.set('api_key', queryKey);
  }
  const result = url?.toString();
  // never kept with a key in it
  lastUrl = queryKey === undefined ? { wsUrl, queryKey, url: result } : undefined;
  return result;
}

function resolve(connection: LiveConnection, options: SpeakOptions): ResolvedSpeak | ValidationError {
  const { reconnect, scheduler, readyTimeoutMs, maxPayload, ...configInput } = options;
  const issues: ValidationIssue[] = [];
  const configResult = parseConfig({ output_format: DEFAULT_LIVE_OUTPUT_FORMAT, ...configInput });
  if (!configResult.success) issues.push(...toValidationIssues(configResult.error, configInput, ['session.start']));
  const clientInput = { reconnect, readyTimeoutMs, maxPayload };
  // The usual case checked by hand with the schema's rules (no reconnect; a finite
  // positive timeout; a positive safe-integer maxPayload); anything else goes to zod.
  const clientResult: { success: true; data: z.output<typeof ClientOptionsSchema> } | z.ZodSafeParseResult<z.output<typeof ClientOptionsSchema>> =
    reconnect === undefined &&
    (readyTimeoutMs === undefined || (typeof readyTimeoutMs === 'number' && Number.isFinite(readyTimeoutMs) && readyTimeoutMs > 0)) &&
    (maxPayload === undefined || (typeof maxPayload === 'number' && Number.isSafeInteger(maxPayload) && maxPayload > 0))
      ? {
          success: true,
          data: { reconnect: undefined, readyTimeoutMs: readyTimeoutMs ?? 10_000, maxPayload: maxPayload ?? DEFAULT_LIVE_MAX_PAYLOAD },
        }
      : ClientOptionsSchema.safeParse(clientInput);
  if (!clientResult.success) issues.push(...toValidationIssues(clientResult.error, clientInput, ['options']));
  const Ctor = connection.WebSocket ?? DefaultWebSocket;
  const headersSupported = connection.headersSupported ?? (Ctor === DefaultWebSocket || Ctor.length >= 3);
  const url = sessionUrl(connection.wsUrl, headersSupported ? undefined : connection.apiKey);
  if (url === undefined) issues.push({ loc: ['connection', 'wsUrl'], msg: 'must be a ws:// or wss:// address', type: 'url_parsing' });
  if (issues.length > 0 || !configResult.success || !clientResult.success || url === undefined) {
    return new ValidationError(issues, { source: 'local', endpoint: routes.liveTts });
  }
  return {
    config: configResult.data,
    reconnect: clientResult.data.reconnect,
    readyTimeoutMs: clientResult.data.readyTimeoutMs,
    maxPayload: clientResult.data.maxPayload,
    scheduler: scheduler ?? asyncScheduler,
    url,
    headers: headersSupported ? { 'x-api-key': connection.apiKey } : undefined,
    WebSocket: Ctor,
    apiKey: connection.apiKey,
  };
}

// ---------------------------------------------------------------------------
// The operator
// ---------------------------------------------------------------------------

const OPEN = 1;

interface Attempt {
  socket: WebSocketLike;
  ready: boolean;
  disposed: boolean;
  /** Last segment id seen from the server in this session (-1 before any). */
  lastServerId: number;
  /** Server id of the segment started and not yet done. */
  inProgress: number | undefined;
  sessionError: string | undefined;
  sessionDone: boolean;
  textDoneSent: boolean;
  transportError: string | undefined;
  readyTimer: Subscription | undefined;
}

interface MessageEventLike {
  data: unknown;
}
interface CloseEventLike {
  code?: number;
  reason?: string;
}
interface ErrorEventLike {
  message?: string;
  error?: unknown;
}

/**
 * The frames of a session checked by hand with the rules of their zod schemas
 * (`SessionReadyFrameSchema`, `SegmentStartFrameSchema` without word timestamps,
 * `SegmentDoneFrameSchema`, `SegmentSkippedFrameSchema`, `SessionErrorFrameSchema`,
 * `SessionDoneFrameSchema`: `segment_id` a safe non-negative integer, `run_id` a safe
 * integer, strings strings) and rebuilt with only their fields, as zod would. Anything
 * unusual (word timestamps, a `config` that is not a plain record or has an own
 * `__proto__` key, any other frame) returns undefined and goes through `ServerFrameSchema`.
 * A hot path: a zod parse costs about 2 µs a segment frame (two frames a sentence) and
 * about 25 µs for `session.ready` with its `config` record (see bench/live-overhead.ts).
 * Exported for the equivalence test only (test/live-frames.test.ts).
 *
 * @internal
 */
export function fastServerFrame(json: unknown): ServerFrame | undefined {
  if (json === null || typeof json !== 'object') return undefined;
  const frame = json as {
    type?: unknown;
    segment_id?: unknown;
    text?: unknown;
    word_timestamps?: unknown;
    session_id?: unknown;
    run_id?: unknown;
    config?: unknown;
    error?: unknown;
  };
  const type = frame.type;
  if (type === 'segment.start' || type === 'segment.done' || type === 'segment.skipped') {
    const id = frame.segment_id;
    if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 0) return undefined;
    if (type === 'segment.done') return { type, segment_id: id };
    if (typeof frame.text !== 'string') return undefined;
    if (type === 'segment.skipped') return { type, segment_id: id, text: frame.text };
    if (frame.word_timestamps === undefined) return { type, segment_id: id, text: frame.text };
    return undefined;
  }
  if (type === 'session.ready') {
    const { session_id, run_id, config } = frame;
    if (typeof session_id !== 'string' || typeof run_id !== 'number' || !Number.isSafeInteger(run_id)) return undefined;
    if (config === undefined) return 'config' in frame ? undefined : { type, session_id, run_id };
    if (!isPlainRecord(config)) return undefined;
    return { type, session_id, run_id, config };
  }
  if (type === 'session.done') return { type };
  if (type === 'session.error') return typeof frame.error === 'string' ? { type, error: frame.error } : undefined;
  return undefined;
}

/**
 * A plain object (`Object.prototype` or null prototype) whose own keys are all
 * enumerable strings, none `__proto__`: what `z.record(z.string(), z.unknown())` copies
 * key for key (JSON.parse only builds such objects, but may add an own `__proto__`).
 */
function isPlainRecord(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return false;
  if (Object.hasOwn(value, '__proto__')) return false;
  const keys = Reflect.ownKeys(value);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string | symbol;
    if (typeof key !== 'string' || !Object.prototype.propertyIsEnumerable.call(value, key)) return false;
  }
  return true;
}

function toBytes(data: unknown): Uint8Array | undefined {
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  // ws hands a fresh Buffer per message: a plain Uint8Array view on it, no copy (a view,
  // not the Buffer itself, so that `.slice()` copies as it does on any Uint8Array).
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  return undefined;
}

/**
 * Speaks a stream of text over one live session and emits what the service sends back.
 *
 * <span class="informal">Text in (tokens, sentences, anything), ordered speech events out:
 * `ready`, then per segment `segmentStart`, `audio`..., `segmentDone` (or `segmentSkipped`),
 * and `done`.</span>
 *
 * Subscribing validates the options (a {@link ValidationError} before anything is sent,
 * no connection made), opens the WebSocket, sends `session.start` and subscribes to the
 * text source at once (so that an LLM starts producing while the socket connects). Text
 * that arrives before `session.ready` is buffered and sent, in order, right after it;
 * each non-empty string becomes one `text.chunk` (empty strings are skipped). When the text source completes,
 * `text.done` is sent; the output completes after `session.done` and a clean close.
 *
 * ```
 * text:   --a--b------c--|
 * speak:  r-----s-aa-d-----s-a-d-(D|)
 * ```
 * (r = ready, s = segmentStart, a = audio, d = segmentDone, D = done)
 *
 * Errors (all {@link RxVoiceError}s carry `unspoken`, the text pushed but not yet
 * delivered as audio, in order, leading whitespace trimmed, and `closeCode` when a close
 * caused them; text of skipped segments is not in `unspoken`, it was reported on its
 * `segmentSkipped` event):
 * - close 4401: `AuthenticationError`; 4400: `SessionRejectedError` (message of the
 *   `session.error`); 4402: `CreditsExhaustedError`;
 * - any other unclean close (1006, ...), or a clean close before `session.done` with
 *   text still unspoken: `ConnectionError` with `closeCode` and `reason` (retryable). A
 *   connection lost after the text source completed and every text was delivered
 *   completes normally instead (nothing is missing; no `done` event then);
 * - a frame that breaks the protocol (bad JSON, unknown frame, audio outside a segment,
 *   an audio frame over 64 KiB, out-of-order segment ids, a message over `maxPayload`,
 *   a WebSocket-level violation, `session.done` while text is still unspoken):
 *   `ProtocolError`, and the socket is closed (1002) and cut off;
 * - no `session.ready` within `readyTimeoutMs`: `TimeoutError`;
 * - the text source errors: the socket is closed and its error is passed on, with
 *   `unspoken` set on it when it is an object.
 *
 * Unsubscribing (e.g. `takeUntil(userStartedTalking$)` for barge-in) closes the socket
 * at once with 1000, unsubscribes the text source and clears every timer; nothing more
 * is emitted.
 *
 * Reconnect (option `reconnect`, off by default): after an abnormal close (a
 * `ConnectionError` or a ready timeout, never 4400/4401/4402), a new session is opened
 * after an exponential backoff with jitter (`baseDelayMs` doubling up to `maxDelayMs`,
 * each delay drawn from its upper half, through `scheduler`); once it is ready a `reconnected` event is emitted (no second `ready`),
 * and exactly the text not yet delivered is sent again, in order, as one `text.chunk`
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
 * @param connection Where to connect: `wsUrl`, `apiKey`, optional WebSocket constructor.
 * @param options The `session.start` configuration (`voice_id` required; `output_format`
 * defaults to `'wav'` here, the service's default is mp3) and client options
 * (`reconnect`, `scheduler`, `readyTimeoutMs`, `maxPayload`).
 * @return A function that returns an Observable of {@link LiveSpeechEvent}s for a text
 * source.
 */
export function speak(connection: LiveConnection, options: SpeakOptions): OperatorFunction<string, LiveSpeechEvent> {
  const resolved = resolve(connection, options);
  return (text$) =>
    new Observable<LiveSpeechEvent>((subscriber) => {
      if (resolved instanceof ValidationError) {
        subscriber.error(resolved);
        return undefined;
      }
      return new LiveSession(resolved, subscriber).start(text$);
    });
}

/** State of the ready timeout: the session and the attempt it guards. */
interface ReadyTimeoutState {
  session: LiveSession;
  attempt: Attempt;
}

function readyTimeout(state: ReadyTimeoutState | undefined): void {
  if (state) state.session.onReadyTimeout(state.attempt);
}

/** The text source's observer of one subscription (methods, not closures). */
class TextObserver {
  constructor(private readonly session: LiveSession) {}
  next(text: string): void {
    this.session.onText(text);
  }
  error(error: unknown): void {
    this.session.onTextError(error);
  }
  complete(): void {
    this.session.onTextComplete();
  }
}

/**
 * One subscription of {@link speak}: a class rather than a closure per handler (a
 * subscription creates one object, not two dozen functions).
 */
class LiveSession {
  private readonly config: SessionConfig;
  private readonly scheduler: SchedulerLike;
  private readonly ledger = new SpeechLedger();
  /** Text pushed while no session was ready, to send (in order) once one is. */
  private outbox: string[] = [];
  private textComplete = false;
  private finished = false;
  private everReady = false;
  /** Reconnect attempts since the last delivered segment. */
  private attemptsInRow = 0;
  private idOffset = 0;
  private maxConsumerId = -1;
  private current: Attempt | undefined;
  private textSubscription: Subscription | undefined;
  private reconnectTimer: Subscription | undefined;

  constructor(
    private readonly resolved: ResolvedSpeak,
    private readonly subscriber: Subscriber<LiveSpeechEvent>,
  ) {
    this.config = resolved.config;
    this.scheduler = resolved.scheduler;
  }

  start(text$: Observable<string>): Unsubscribable | undefined {
    this.connect();
    if (this.finished) return undefined;
    this.textSubscription = text$.subscribe(new TextObserver(this));
    return this;
  }

  /** Teardown: unsubscribing closes the socket at once and clears every timer. */
  unsubscribe(): void {
    if (!this.finished) {
      this.finished = true;
      this.textSubscription?.unsubscribe();
      this.reconnectTimer?.unsubscribe();
      if (this.current && !this.current.disposed) this.closeSocket(this.current, CloseCodes.normal);
    }
  }

  onText(text: string): void {
    if (this.finished || typeof text !== 'string' || text.length === 0) return;
    this.ledger.push(text);
    const attempt = this.current;
    if (attempt && attempt.ready && !attempt.disposed) this.send(attempt, { type: 'text.chunk', text });
    else this.outbox.push(text);
  }

  onTextError(error: unknown): void {
    if (error instanceof RxVoiceError) error.unspoken = this.ledger.unspoken();
    else if (error !== null && typeof error === 'object' && Object.isExtensible(error)) {
      (error as { unspoken?: string }).unspoken = this.ledger.unspoken();
    }
    this.finish(error);
  }

  onTextComplete(): void {
    this.textComplete = true;
    const attempt = this.current;
    if (attempt && attempt.ready && !attempt.disposed) this.sendTextDone(attempt);
  }

  private scrub(text: string): string {
    const apiKey = this.resolved.apiKey;
    return redact(text, [apiKey, encodeURIComponent(apiKey), new URLSearchParams({ k: apiKey }).toString().slice(2)]);
  }

  private emit(event: LiveSpeechEvent): boolean {
    if (this.finished) return false;
    this.subscriber.next(event);
    return !this.finished;
  }

  private send(attempt: Attempt, frame: ClientFrame): void {
    if (attempt.disposed || attempt.socket.readyState !== OPEN) return;
    attempt.socket.send(JSON.stringify(frame));
  }

  private closeSocket(attempt: Attempt, code: number, reason?: string): void {
    attempt.disposed = true;
    attempt.readyTimer?.unsubscribe();
    try {
      attempt.socket.close(code, reason);
    } catch {
      // Browsers only allow 1000 and 3000-4999.
      try {
        attempt.socket.close(CloseCodes.normal);
      } catch {
        // already closed
      }
    }
  }

  private finish(error?: unknown): void {
    if (this.finished) return;
    this.finished = true;
    this.textSubscription?.unsubscribe();
    this.reconnectTimer?.unsubscribe();
    if (this.current && !this.current.disposed) this.closeSocket(this.current, CloseCodes.normal);
    if (error === undefined) this.subscriber.complete();
    else this.subscriber.error(error);
  }

  private withUnspoken<E extends RxVoiceError>(error: E): E {
    error.unspoken = this.ledger.unspoken();
    return error;
  }

  private protocolError(attempt: Attempt, message: string): void {
    if (attempt.disposed) return;
    this.closeSocket(attempt, 1002, 'protocol error');
    // A peer that broke the protocol is not trusted to answer the close frame (`ws`
    // would keep the socket, and read what it still sends, for 30 s): cut it off.
    (attempt.socket as { terminate?: () => void }).terminate?.();
    this.finish(this.withUnspoken(new ProtocolError(message)));
  }

  private sendTextDone(attempt: Attempt): void {
    this.send(attempt, { type: 'text.done' });
    attempt.textDoneSent = true;
  }

  private onReady(attempt: Attempt, session_id: string, run_id: number, echoed: Record<string, unknown> | undefined): void {
    attempt.ready = true;
    if (!this.everReady) {
      this.everReady = true;
      const pending = this.outbox;
      this.outbox = [];
      for (const text of pending) this.send(attempt, { type: 'text.chunk', text });
      if (this.textComplete) this.sendTextDone(attempt);
      // after the text went out (the timer can only fire later, and checks `ready`)
      attempt.readyTimer?.unsubscribe();
      this.emit({ type: 'ready', session_id, run_id, config: echoed ?? { ...this.config } });
      return;
    }
    attempt.readyTimer?.unsubscribe();
    // A reconnect: everything not yet delivered (sent or buffered) goes again, once.
    this.outbox = [];
    const resent = this.ledger.unspoken();
    if (resent.length > 0) this.send(attempt, { type: 'text.chunk', text: resent });
    if (this.textComplete) this.sendTextDone(attempt);
    this.emit({ type: 'reconnected', attempt: this.attemptsInRow, session_id, run_id, resent });
  }

  private onTextFrame(attempt: Attempt, data: string): void {
    let json: unknown;
    try {
      json = JSON.parse(data);
    } catch {
      this.protocolError(attempt, 'The server sent a text frame that is not JSON');
      return;
    }
    let frame = fastServerFrame(json);
    if (frame === undefined) {
      const parsed = ServerFrameSchema.safeParse(json);
      if (!parsed.success) {
        const type = json !== null && typeof json === 'object' ? (json as { type?: unknown }).type : undefined;
        this.protocolError(attempt, `The server sent an invalid frame${typeof type === 'string' ? ` (${this.scrub(type).slice(0, 64)})` : ''}`);
        return;
      }
      frame = parsed.data;
    }
    if (frame.type !== 'session.ready' && frame.type !== 'session.error' && !attempt.ready) {
      this.protocolError(attempt, `The server sent ${frame.type} before session.ready`);
      return;
    }
    const ledger = this.ledger;
    switch (frame.type) {
      case 'session.ready':
        if (attempt.ready) return this.protocolError(attempt, 'The server sent session.ready twice');
        this.onReady(attempt, frame.session_id, frame.run_id, frame.config);
        return;
      case 'segment.start': {
        if (attempt.inProgress !== undefined)
          return this.protocolError(attempt, `segment.start ${frame.segment_id} before segment.done ${attempt.inProgress}`);
        if (frame.segment_id <= attempt.lastServerId)
          return this.protocolError(attempt, `Segment id ${frame.segment_id} does not follow ${attempt.lastServerId}`);
        attempt.lastServerId = frame.segment_id;
        attempt.inProgress = frame.segment_id;
        ledger.segmentStarted(frame.segment_id, frame.text);
        const segment_id = this.idOffset + frame.segment_id;
        this.maxConsumerId = Math.max(this.maxConsumerId, segment_id);
        this.emit(
          frame.word_timestamps
            ? { type: 'segmentStart', segment_id, text: frame.text, word_timestamps: frame.word_timestamps }
            : { type: 'segmentStart', segment_id, text: frame.text },
        );
        return;
      }
      case 'segment.done':
        if (attempt.inProgress !== frame.segment_id)
          return this.protocolError(attempt, `segment.done ${frame.segment_id} for a segment not started`);
        attempt.inProgress = undefined;
        ledger.segmentDelivered(frame.segment_id);
        this.attemptsInRow = 0;
        this.emit({ type: 'segmentDone', segment_id: this.idOffset + frame.segment_id });
        return;
      case 'segment.skipped': {
        if (attempt.inProgress !== undefined && attempt.inProgress !== frame.segment_id)
          return this.protocolError(attempt, `segment.skipped ${frame.segment_id} while segment ${attempt.inProgress} is in progress`);
        if (attempt.inProgress === undefined && frame.segment_id <= attempt.lastServerId)
          return this.protocolError(attempt, `Segment id ${frame.segment_id} does not follow ${attempt.lastServerId}`);
        attempt.lastServerId = frame.segment_id;
        attempt.inProgress = undefined;
        ledger.segmentSkipped(frame.segment_id, frame.text);
        const segment_id = this.idOffset + frame.segment_id;
        this.maxConsumerId = Math.max(this.maxConsumerId, segment_id);
        this.emit({ type: 'segmentSkipped', segment_id, text: frame.text });
        return;
      }
      case 'session.error':
        attempt.sessionError = this.scrub(frame.error);
        return;
      case 'session.done':
        // "All work is finished" while text the server echoed faithfully is still
        // unspoken (or a segment is open): completing would lose that text silently.
        if (attempt.inProgress !== undefined || (ledger.hasUnspoken() && ledger.mismatchCount === 0)) {
          return this.protocolError(attempt, 'The server sent session.done before all text was spoken');
        }
        attempt.sessionDone = true;
        this.emit({ type: 'done' });
        return;
    }
  }

  private onBinaryFrame(attempt: Attempt, data: unknown): void {
    if (attempt.inProgress === undefined) {
      this.protocolError(attempt, 'The server sent audio outside of a segment');
      return;
    }
    const bytes = toBytes(data);
    if (!bytes) {
      this.protocolError(attempt, 'The server sent a binary frame of an unsupported type');
      return;
    }
    if (bytes.byteLength > MAX_AUDIO_FRAME_BYTES) {
      this.protocolError(attempt, `The server sent an audio frame of ${bytes.byteLength} bytes (at most ${MAX_AUDIO_FRAME_BYTES})`);
      return;
    }
    this.emit({ type: 'audio', segment_id: this.idOffset + attempt.inProgress, bytes });
  }

  private retryOrFail(error: RxVoiceError): void {
    const policy = this.resolved.reconnect;
    if (this.finished) return;
    if (!policy || !error.retryable || this.attemptsInRow >= policy.maxAttempts) {
      this.finish(this.withUnspoken(error));
      return;
    }
    this.attemptsInRow++;
    this.ledger.abortInProgress();
    this.idOffset = this.maxConsumerId + 1;
    const delay = backoffDelay(this.attemptsInRow - 1, policy, policy.random);
    this.reconnectTimer = timer(delay, this.scheduler).subscribe(() => {
      this.reconnectTimer = undefined;
      this.connect();
    });
  }

  onReadyTimeout(attempt: Attempt): void {
    if (attempt.disposed || attempt.ready) return;
    this.closeSocket(attempt, CloseCodes.normal);
    this.retryOrFail(new TimeoutError(`No session.ready within ${this.resolved.readyTimeoutMs} ms`));
  }

  private onClose(attempt: Attempt, code: number, reason: string): void {
    if (attempt.disposed) return;
    attempt.disposed = true;
    attempt.readyTimer?.unsubscribe();
    const ledger = this.ledger;
    const allDelivered = this.textComplete && !ledger.hasUnspoken() && attempt.inProgress === undefined;
    const cleanEnd = code === CloseCodes.normal && (attempt.sessionDone || allDelivered);
    // A connection lost after every text was delivered: nothing is missing, complete.
    const lostAfterAll =
      this.everReady &&
      allDelivered &&
      code !== CloseCodes.invalidKey &&
      code !== CloseCodes.rejected &&
      code !== CloseCodes.creditsExhausted;
    if (cleanEnd || lostAfterAll) {
      this.finish();
      return;
    }
    const why = this.scrub(reason);
    const options = { closeCode: code, unspoken: ledger.unspoken() };
    switch (code) {
      case CloseCodes.invalidKey:
        this.finish(new AuthenticationError('The live session rejected the API key (close 4401)', options));
        return;
      case CloseCodes.rejected:
        this.finish(new SessionRejectedError(`The live session was rejected: ${attempt.sessionError ?? (why || 'no reason given')}`, options));
        return;
      case CloseCodes.creditsExhausted:
        this.finish(new CreditsExhaustedError(`Credits ran out during the live session${attempt.sessionError ? `: ${attempt.sessionError}` : ''}`, options));
        return;
      default: {
        const detail = why || attempt.transportError;
        this.retryOrFail(
          new ConnectionError(
            `The live session closed ${code === CloseCodes.normal ? 'before session.done' : 'abnormally'} (code ${code}${detail ? `: ${detail}` : ''})`,
            { ...options, reason: why || undefined },
          ),
        );
      }
    }
  }

  private onSocketError(attempt: Attempt, event: ErrorEventLike): void {
    const message = event.message ?? (event.error instanceof Error ? event.error.message : undefined);
    if (message) attempt.transportError = this.scrub(message);
    // `ws` reports a peer breaking the WebSocket protocol (a message over
    // maxPayload, a bad opcode, invalid UTF-8...) with a WS_ERR_* code.
    const code = (event.error as { code?: unknown } | undefined)?.code;
    if (typeof code === 'string' && code.startsWith('WS_ERR_') && !attempt.disposed && !this.finished) {
      this.protocolError(
        attempt,
        code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH'
          ? `The server sent a message larger than maxPayload (${this.resolved.maxPayload} bytes)`
          : `The server broke the WebSocket protocol (${code})`,
      );
    }
  }

  private connect(): void {
    if (this.finished) return;
    const resolved = this.resolved;
    let socket: WebSocketLike;
    try {
      socket = resolved.headers
        ? new resolved.WebSocket(resolved.url, undefined, { headers: resolved.headers, maxPayload: resolved.maxPayload })
        : new resolved.WebSocket(resolved.url);
    } catch (cause) {
      this.retryOrFail(
        // no `cause`: the original message may hold the address (and a query key)
        new ConnectionError(`Could not open the live session: ${this.scrub(cause instanceof Error ? cause.message : String(cause))}`),
      );
      return;
    }
    if (socket.binaryType !== 'nodebuffer') socket.binaryType = 'arraybuffer';
    const attempt: Attempt = {
      socket,
      ready: false,
      disposed: false,
      lastServerId: -1,
      inProgress: undefined,
      sessionError: undefined,
      sessionDone: false,
      textDoneSent: false,
      transportError: undefined,
      readyTimer: undefined,
    };
    this.current = attempt;
    // Listeners are never removed: after disposal they do nothing (ws emits 'error'
    // on a socket closed while connecting, which must stay handled).
    const onOpen = (): void => {
      if (attempt.disposed) return;
      this.send(attempt, { type: 'session.start', ...this.config });
    };
    if (IsNodeWebSocket !== undefined && socket instanceof IsNodeWebSocket) {
      // `ws` itself: its own events, without the per-message MessageEvent (and the
      // wrapper) that its WHATWG addEventListener builds (a hot path: every frame).
      // Same data: text frames as strings, binary ones as Buffers.
      socket.on('open', onOpen);
      socket.on('message', (data: Buffer, isBinary: boolean) => {
        if (attempt.disposed || this.finished) return;
        if (isBinary) this.onBinaryFrame(attempt, data);
        else this.onTextFrame(attempt, data.toString());
      });
      socket.on('close', (code: number, reason: Buffer) => {
        this.onClose(attempt, code, reason.toString());
      });
    } else {
      socket.addEventListener('open', onOpen);
      socket.addEventListener('message', ((event: MessageEventLike) => {
        if (attempt.disposed || this.finished) return;
        if (typeof event.data === 'string') this.onTextFrame(attempt, event.data);
        else this.onBinaryFrame(attempt, event.data);
      }) as (event: unknown) => void);
      socket.addEventListener('close', ((event: CloseEventLike) => {
        this.onClose(attempt, event.code ?? 1006, event.reason ?? '');
      }) as (event: unknown) => void);
    }
    socket.addEventListener('error', ((event: ErrorEventLike) => {
      this.onSocketError(attempt, event);
    }) as (event: unknown) => void);
    // Through the scheduler directly (what `timer()` does underneath, without its
    // Observable and subscriber).
    attempt.readyTimer = this.scheduler.schedule<ReadyTimeoutState>(readyTimeout, resolved.readyTimeoutMs, { session: this, attempt });
  }
}
