/**
 * The options of a live session and their resolution: what `speak` (session.ts) and warm
 * sessions (warm.ts) are given, checked with their zod schemas and completed with their
 * defaults once, when `speak` is called.
 *
 * - Transport: the WebSocket the session uses (`WebSocketLike`) and where it connects
 *   (`LiveConnection`);
 * - Options: `SpeakOptions` (the `session.start` configuration plus client options), their
 *   defaults and schema;
 * - Resolution: `resolveSpeak` (options to `ResolvedSpeak`, or a `ValidationError` with
 *   every issue) and `sessionPlan` (the exact address, headers and `session.start` frame).
 */
import type { SchedulerLike } from 'rxjs';
import { ValidationError } from '../core/errors.js';
import { LIVE_TTS_PATH } from '../core/routes.js';
import type { ValidationIssue } from '../core/schemas.js';
import { checkClientOptions, checkSessionConfig, type ClientOptions } from './checks.js';
import { hostTimers } from './host-timers.js';
import { NodeWebSocket } from './node-socket.js';
import type { SpeechMetricsObserver } from './metrics.js';
import type { FallbackSpeech } from './stall-fallback.js';

export type { FallbackSpeech } from './stall-fallback.js';
import type { ClientFrame, SessionConfig, SessionConfigInput } from './protocol.js';

// ---------------------------------------------------------------------------
// Transport
// ---------------------------------------------------------------------------

export type { WebSocketConstructorLike, WebSocketLike } from './socket-types.js';
import type { WebSocketConstructorLike } from './socket-types.js';

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
  /** WebSocket constructor; default the `ws` package in Node. A browser bundle has no default: pass the page's `WebSocket`. */
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

/** What to do when the live session stalls (see {@link SpeakOptions}'s `stall`). */
export interface StallOptions {
  /**
   * A sentence whose audio has not started this many ms after it was sent (or after the
   * previous segment ended) is a stall. Text without a sentence end counts from when the
   * service would flush it (`idle_timeout` after the last text, or at once after the text's
   * end): a sentence an LLM streams slowly is no stall. At most `responseTimeoutMs`.
   */
  afterMs: number;
  /**
   * `'tts-stream'`: speak that sentence and every later one over `POST /tts-stream` (one call
   * per sentence, same voice and settings, in order), and close the live session: a
   * `segmentFallback` event names each such sentence. `'error'`: end with a `'timeout'` error
   * after `afterMs` (what `responseTimeoutMs` does, sooner).
   */
  fallback: 'tts-stream' | 'error';
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
  /** Scheduler for the ready timeout, the boundary holds and reconnect delays (virtual time in tests). Default: wall-clock time and host timers, as `asyncScheduler`. */
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
   * for the next token, at most `boundaryHoldMs`, or the end of the text, and the words of its
   * sentence not yet sent wait with it (a sentence end is one `text.chunk`); words without a
   * stop after them go out at once. Set false for text that is already segmented (each string then
   * goes out as it comes).
   */
  clientBoundaries?: boolean | undefined;
  /**
   * Longest wait of an undecided stop for the next token, ms (then it is sent). Default 250.
   * The holds of every session on one scheduler share one timer: a hold due within a
   * sixteenth of this after another's end is sent with it (sooner, never later), so 1,000
   * sessions wake the process a few times a hold, not once a sentence each.
   */
  boundaryHoldMs?: number | undefined;
  /**
   * While text waits to be spoken, how long the service may make no progress (no JSON
   * frame, and less than 0.25 s of audio) before the session
   * ends with a `'timeout'` error carrying `unspoken` (retryable: `reconnect` treats it as a
   * drop), ms. Catches a service silent after `session.ready` or mid-segment, trickling a
   * frame byte by byte or tiny audio frames, or a half-open TCP connection. Timed on `scheduler`; where the WebSocket has pings (`ws`), one is sent
   * at each third of it in which the service made no progress (a dead peer then fails faster). Default 15 000
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
   * A stall is not silence: a session that accepted the text and sends no audio for
   * `stall.afterMs` falls back to `POST /tts-stream` (`fallback: 'tts-stream'`; needs
   * `fallbackSpeech`, which `client.speak` gives) or errors (`'error'`). Default: none (a
   * silent service errors after `responseTimeoutMs`). A segment already started stays live.
   */
  stall?: StallOptions | undefined;
  /**
   * How a sentence is spoken when the session falls back: its audio bytes in the session's
   * `output_format`. `client.speak` wires `POST /tts-stream` with the session's voice and
   * settings; give your own with `speak` from `rxvoice/live`.
   */
  fallbackSpeech?: FallbackSpeech | undefined;
  /**
   * Receives the session's timing metrics as data (`SpeechMetrics`): one
   * `segment` report per delivered or skipped segment, one `session` report when the
   * session ends (complete, error or unsubscribe), then `complete`. Off by default.
   */
  metrics?: SpeechMetricsObserver | undefined;
};

/** Default `maxPayload` of the live session's WebSocket: 1 MiB. */
export const DEFAULT_LIVE_MAX_PAYLOAD = 1_048_576;

/** Default `responseTimeoutMs`: 15 s of silence while text waits to be spoken ends the session. */
export const DEFAULT_RESPONSE_TIMEOUT_MS = 15_000;

/**
 * Audio that counts as progress for `responseTimeoutMs`, seconds of sound: a service must
 * send a JSON frame or this much audio within the timeout (a real one sends far more).
 */
export const PROGRESS_AUDIO_SECONDS = 0.25;

/** Default `closeGraceMs`: a server ignoring the close frame is cut off after 1 s. */
export const DEFAULT_CLOSE_GRACE_MS = 1000;

/** rxvoice's default output format for live sessions (the service's own default is mp3). */
export const DEFAULT_LIVE_OUTPUT_FORMAT = 'wav' as const;

// ---------------------------------------------------------------------------
// Resolution
// ---------------------------------------------------------------------------

/**
 * Options checked and completed with their defaults, and where to connect (never the
 * key: the session keeps it in a private field).
 *
 * @internal
 */
export interface ResolvedSpeak extends ClientOptions {
  config: SessionConfig;
  /** The locale of the sentence rules: the configuration's language tag (none for a numeric id, deprecated: the default rules). */
  locale: string | undefined;
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
  url.protocol = url.protocol.replace(/^http/, 'ws'); // http(s): is ws(s):
  if (!/^wss?:$/.test(url.protocol)) return undefined;
  if (!exact && !url.pathname.endsWith(LIVE_TTS_PATH)) url.pathname = url.pathname.replace(/\/+$/, '') + LIVE_TTS_PATH;
  if (queryKey !== undefined) url.searchParams.set('api_key', queryKey);
  return url.toString();
}

/**
 * Check the options with their schemas: the resolved session, or a ValidationError with
 * every issue found (thrown when `speak` is called, before anything is sent).
 *
 * @internal
 */
export function resolveSpeak(connection: LiveConnection, options: SpeakOptions): ResolvedSpeak {
  const issues: ValidationIssue[] = [];
  // plain checks that decide as SessionConfigSchema and ClientOptionsSchema (checks.ts): no
  // schema library in a page. Each reads its own keys and drops the others, as the schemas do.
  const config = checkSessionConfig({ output_format: DEFAULT_LIVE_OUTPUT_FORMAT, ...options }, issues, ['session.start']);
  const client = checkClientOptions(options, issues, ['options']);
  if (client !== undefined && client.stall?.fallback === 'tts-stream' && client.fallbackSpeech === undefined) {
    issues.push({ loc: ['options', 'fallbackSpeech'], msg: "is needed for stall.fallback 'tts-stream' (client.speak gives it)", type: 'missing' });
  }
  // `ws`'s in Node; none in a browser bundle (browser-socket.ts), where the page passes its own
  const Ctor = connection.WebSocket ?? NodeWebSocket;
  if (Ctor === undefined) issues.push({ loc: ['connection', 'WebSocket'], msg: "is needed where there is no `ws` package (a browser): pass the page's WebSocket", type: 'missing' });
  const headersSupported = connection.headersSupported ?? (Ctor === NodeWebSocket || (Ctor?.length ?? 0) >= 3);
  const url = sessionUrl(connection.wsUrl, headersSupported || !connection.apiKey ? undefined : connection.apiKey, connection.exactUrl);
  if (url === undefined) issues.push({ loc: ['connection', 'wsUrl'], msg: 'must be a ws:// or wss:// address', type: 'url_parsing' });
  if (config === undefined || client === undefined || url === undefined || Ctor === undefined || issues.length > 0) {
    throw new ValidationError(issues, { source: 'local', endpoint: LIVE_TTS_PATH });
  }
  // Every field named, in one order: every resolved session shares one object shape (a spread
  // of the checked options made a new chain of hidden classes per call, 1.4 KB a session).
  return {
    reconnect: client.reconnect,
    readyTimeoutMs: client.readyTimeoutMs,
    maxPayload: client.maxPayload,
    clientBoundaries: client.clientBoundaries,
    boundaryHoldMs: client.boundaryHoldMs,
    responseTimeoutMs: client.responseTimeoutMs,
    closeGraceMs: client.closeGraceMs,
    stall: client.stall,
    fallbackSpeech: client.fallbackSpeech,
    config,
    locale: typeof config.language === 'string' ? config.language : undefined,
    scheduler: options.scheduler ?? hostTimers,
    metrics: options.metrics,
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
  const resolved = resolveSpeak(connection, options);
  const { url, maxPayload, closeGraceMs, WebSocket } = resolved;
  const headers = resolved.headersSupported ? keyHeader(connection.apiKey ?? '') : undefined;
  return { url, headers, maxPayload, closeGraceMs, WebSocket, startFrame: JSON.stringify(startFrame(resolved.config)) };
}

/**
 * The `x-api-key` header, or no header without a key (a connection through the relay).
 *
 * @internal
 */
export function keyHeader(apiKey: string): Record<string, string> {
  return apiKey === '' ? {} : { 'x-api-key': apiKey };
}

/**
 * The `session.start` frame of a configuration.
 *
 * @internal
 */
export function startFrame(config: SessionConfig): ClientFrame {
  return { type: 'session.start', ...config };
}
