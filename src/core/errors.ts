/**
 * The error tree of rxvoice, in the style of openai-node: one base class with a stable
 * `code` and a `retryable` flag, and a few subclasses callers can `instanceof`.
 *
 * No error ever carries the API key: messages are built from status codes, server
 * messages (which are scrubbed with `redact`) and field names only.
 */
import type { ValidationIssue } from './schemas.js';

/** Stable machine-readable code of every {@link RxVoiceError}. */
export type RxVoiceErrorCode =
  | 'validation'
  | 'authentication'
  | 'rate_limit'
  | 'api'
  | 'connection'
  | 'timeout'
  | 'abort'
  | 'task_failed'
  | 'task_timeout'
  | 'payment_required'
  | 'session_rejected'
  | 'credits_exhausted'
  | 'session_error'
  | 'text_source'
  | 'segments_skipped'
  | 'protocol'
  | 'sse'
  | 'stream'
  | 'config'
  | 'sink'
  | 'segmentation'
  | 'redirect'
  | 'limit'
  | 'journal'
  | 'queue';

/** Options common to every error of the tree. */
export interface RxVoiceErrorOptions {
  cause?: unknown;
  retryable?: boolean;
}

/**
 * Base of every error rxvoice raises: `code` (stable, see {@link RxVoiceErrorCode}),
 * `retryable` (whether the same call may succeed later: the one retry rule, used by the
 * HTTP retries and the live reconnects) and `cause`. Never carries the API key.
 */
export class RxVoiceError extends Error {
  override name = 'RxVoiceError';
  readonly code: RxVoiceErrorCode;
  readonly retryable: boolean;

  constructor(code: RxVoiceErrorCode, message: string, options: RxVoiceErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.retryable = options.retryable ?? false;
  }
}

/** Invalid input, found locally before sending, or a 422 from the service: same shape either way. */
export class ValidationError extends RxVoiceError {
  override name = 'ValidationError';
  readonly issues: ValidationIssue[];
  /** 'local' when rejected before anything was sent, 'server' for a 422. */
  readonly source: 'local' | 'server';
  readonly endpoint: string | undefined;
  constructor(issues: ValidationIssue[], options: { source: 'local' | 'server'; endpoint?: string; cause?: unknown }) {
    const where = options.endpoint ? ` for ${options.endpoint}` : '';
    const summary = issues.map((i) => `${i.loc.join('.')}: ${i.msg}`).join('; ');
    const what = issues.length > 0 && issues.every((i) => i.loc[0] === 'options') ? 'options' : 'request';
    super('validation', `Invalid ${what}${where}: ${summary}`, { cause: options.cause });
    this.issues = issues;
    this.source = options.source;
    this.endpoint = options.endpoint;
  }
}

/** 401/403 over HTTP, or close code 4401 of the live session. */
export class AuthenticationError extends RxVoiceError {
  override name = 'AuthenticationError';
  readonly status: number | undefined;
  constructor(message: string, options: RxVoiceErrorOptions & { status?: number } = {}) {
    super('authentication', message, options);
    this.status = options.status;
  }
}

/** 429 from the service; `retryAfter` holds its `Retry-After` in seconds. Retryable. */
export class RateLimitError extends RxVoiceError {
  override name = 'RateLimitError';
  /** Seconds to wait, from `Retry-After`, when the service gave one. */
  readonly retryAfter: number | undefined;
  constructor(message: string, options: RxVoiceErrorOptions & { retryAfter?: number } = {}) {
    super('rate_limit', message, { retryable: true, ...options });
    this.retryAfter = options.retryAfter;
  }
}

/** Any other non-2xx HTTP answer. */
export class ApiError extends RxVoiceError {
  override name = 'ApiError';
  readonly status: number;
  readonly body: unknown;
  readonly requestId: string | undefined;
  /** Seconds to wait, from `Retry-After`, when the service gave one (e.g. with a 503). */
  readonly retryAfter: number | undefined;
  /**
   * `options.code`: `'payment_required'` for a 402 (the key's credits do not cover the call),
   * so that it is handled as a task that ended PAYMENT_REQUIRED is; `'api'` otherwise.
   */
  constructor(
    status: number,
    message: string,
    options: RxVoiceErrorOptions & { body?: unknown; requestId?: string; retryAfter?: number; code?: 'api' | 'payment_required' } = {},
  ) {
    super(options.code ?? 'api', message, { retryable: status === 408 || status === 429 || status >= 500, ...options });
    this.status = status;
    this.body = options.body;
    this.requestId = options.requestId;
    this.retryAfter = options.retryAfter;
  }
}

/** The service could not be reached, or the connection broke (HTTP or live). Retryable. */
export class ConnectionError extends RxVoiceError {
  override name = 'ConnectionError';
  /** Reason given with the close frame, for live sessions. */
  readonly reason: string | undefined;
  /**
   * True when the request surely never reached the service (connection refused, host not
   * found, connect timeout): even a call that costs credits may then be retried.
   */
  readonly notSent: boolean;
  constructor(message: string, options: RxVoiceErrorOptions & { reason?: string; notSent?: boolean } = {}) {
    super('connection', message, { retryable: true, ...options });
    this.reason = options.reason;
    this.notSent = options.notSent ?? false;
  }
}

/** An HTTP attempt exceeded `timeoutMs` (or a task its polling deadline). Retryable. */
export class TimeoutError extends RxVoiceError {
  override name = 'TimeoutError';
  constructor(message: string, options: RxVoiceErrorOptions = {}) {
    super('timeout', message, { retryable: true, ...options });
  }
}

/**
 * A streamed answer (`ttsStream`, `translateStream`) went silent after its headers for
 * longer than `streamIdleTimeoutMs`. Carries what arrived before: `received` (the text
 * of a translation stream, '' for audio) and `receivedBytes` (bytes of the body).
 */
export class StreamIdleError extends TimeoutError {
  override name = 'StreamIdleError';
  readonly endpoint: string;
  /** The idle limit that passed, ms. */
  readonly idleMs: number;
  /** Text received before the silence (translation stream); '' for audio streams. */
  readonly received: string;
  /** Bytes of the answer's body received before the silence. */
  readonly receivedBytes: number;
  constructor(endpoint: string, idleMs: number, received: string, receivedBytes: number) {
    super(`${endpoint}: the stream sent nothing for ${idleMs} ms (streamIdleTimeoutMs) after ${receivedBytes} bytes`);
    this.endpoint = endpoint;
    this.idleMs = idleMs;
    this.received = received;
    this.receivedBytes = receivedBytes;
  }
}

/** The caller aborted the call (its `AbortSignal`). Not retryable. */
export class AbortError extends RxVoiceError {
  override name = 'AbortError';
  constructor(message = 'The operation was aborted', options: RxVoiceErrorOptions = {}) {
    super('abort', message, options);
  }
}

/** Base of the terminal task statuses other than SUCCESS. */
export class TaskError extends RxVoiceError {
  override name = 'TaskError';
  readonly taskId: string;
  readonly status: 'ERROR' | 'TIMEOUT' | 'PAYMENT_REQUIRED';
  constructor(
    code: 'task_failed' | 'task_timeout' | 'payment_required',
    status: 'ERROR' | 'TIMEOUT' | 'PAYMENT_REQUIRED',
    taskId: string,
    message: string,
    options: RxVoiceErrorOptions = {},
  ) {
    super(code, message, options);
    this.taskId = taskId;
    this.status = status;
  }
}

/** Task ended in ERROR. */
export class TaskFailedError extends TaskError {
  override name = 'TaskFailedError';
  readonly serviceMessage: string | undefined;
  constructor(taskId: string, serviceMessage?: string) {
    super('task_failed', 'ERROR', taskId, `Task ${taskId} failed${serviceMessage ? `: ${serviceMessage}` : ''}. Resubmit it.`);
    this.serviceMessage = serviceMessage;
  }
}

/** Task ended in TIMEOUT. */
export class TaskTimeoutError extends TaskError {
  override name = 'TaskTimeoutError';
  constructor(taskId: string) {
    super('task_timeout', 'TIMEOUT', taskId, `Task ${taskId} exceeded the service's time limit. Split the work into smaller requests.`);
  }
}

/** Task ended in PAYMENT_REQUIRED. */
export class PaymentRequiredError extends TaskError {
  override name = 'PaymentRequiredError';
  constructor(taskId: string) {
    super('payment_required', 'PAYMENT_REQUIRED', taskId, `Task ${taskId} needs more credits. Add credits, then retry.`);
  }
}

/** What ended a live session badly: the `code` of a {@link LiveSessionError}. */
export type LiveSessionErrorCode =
  /** Close 4401: the key was refused. */
  | 'authentication'
  /** Close 4400 after `session.error`: bad `session.start`, forbidden voice, unsupported language. */
  | 'session_rejected'
  /** Close 4402: credits ran out mid-session. */
  | 'credits_exhausted'
  /**
   * Any other unclean close, or a clean close before `session.done` with text unspoken; or,
   * in a browser page, code the session loads when it starts (a language's sentence rules,
   * the metrics, the stall fallback) did not load, before any socket. Retryable.
   */
  | 'connection'
  /**
   * The service sent `session.error`, then closed with a code other than 4400/4401/4402
   * (e.g. 1011, internal error): the message is the service's. Retryable only when the
   * close code says to try again (1001, 1012, 1013, 4408, 4429).
   */
  | 'session_error'
  /** No `session.ready` within `readyTimeoutMs`. Retryable. */
  | 'timeout'
  /** The server broke the protocol (bad frame, frames out of order, audio too large). */
  | 'protocol'
  /** The text source (the caller's Observable) errored; its error is the `cause`. */
  | 'text_source'
  /** Segments the service skipped were not spoken (e.g. resubmissions ran out). */
  | 'segments_skipped';

/** Options of a {@link LiveSessionError}. */
export interface LiveSessionErrorOptions extends RxVoiceErrorOptions {
  /** The text pushed into the session and not delivered as audio ('' when none). */
  unspoken: string;
  /** Close code of the WebSocket, when a close ended the session. */
  closeCode?: number | undefined;
  /** Reason given with the close frame, if any. */
  reason?: string | undefined;
}

/**
 * A live speech session (`speak`) ended badly. `code` says how (see
 * {@link LiveSessionErrorCode}); `unspoken` holds the text pushed but not delivered as
 * audio, in order, so nothing is lost; `closeCode` the WebSocket close code when a close
 * ended the session. An error of the caller's own text source is never changed: it is
 * the `cause` of a `LiveSessionError` with code `'text_source'`.
 *
 * ## Example
 * ```ts
 * text$.pipe(speak(connection, { voice_id: 1 })).subscribe({
 *   error: (error: unknown) => {
 *     if (error instanceof LiveSessionError && error.retryable) console.log('say again:', error.unspoken);
 *   },
 * });
 * ```
 */
export class LiveSessionError extends RxVoiceError {
  override name = 'LiveSessionError';
  declare readonly code: LiveSessionErrorCode;
  /** Text pushed into the session and never delivered as audio ('' when none). */
  readonly unspoken: string;
  /** Close code of the WebSocket, when a close ended the session. */
  readonly closeCode: number | undefined;
  /** Reason given with the close frame, if any (scrubbed of the key). */
  readonly reason: string | undefined;

  constructor(code: LiveSessionErrorCode, message: string, options: LiveSessionErrorOptions) {
    super(code, message, { retryable: code === 'connection' || code === 'timeout', ...options });
    this.unspoken = options.unspoken;
    this.closeCode = options.closeCode;
    this.reason = options.reason;
  }
}

/** Live session closed with 4400 after `session.error`: a {@link LiveSessionError} with code `'session_rejected'`. */
export class SessionRejectedError extends LiveSessionError {
  override name = 'SessionRejectedError';
  constructor(message: string, options: LiveSessionErrorOptions) {
    super('session_rejected', message, { closeCode: 4400, ...options });
  }
}

/** Live session closed with 4402, credits ran out: a {@link LiveSessionError} with code `'credits_exhausted'`. */
export class CreditsExhaustedError extends LiveSessionError {
  override name = 'CreditsExhaustedError';
  constructor(message: string, options: LiveSessionErrorOptions) {
    super('credits_exhausted', message, { closeCode: 4402, ...options });
  }
}

/**
 * A {@link LiveSessionError} of the class its code has (`SessionRejectedError`,
 * `CreditsExhaustedError`, else `LiveSessionError` itself): to rebuild one with more
 * `unspoken` text (the original as `cause`) without changing the original.
 */
export function liveSessionError(code: LiveSessionErrorCode, message: string, options: LiveSessionErrorOptions): LiveSessionError {
  if (code === 'session_rejected') return new SessionRejectedError(message, options);
  if (code === 'credits_exhausted') return new CreditsExhaustedError(message, options);
  return new LiveSessionError(code, message, options);
}

/** The peer broke the protocol: a frame that does not parse, frames out of order, too large. */
export class ProtocolError extends RxVoiceError {
  override name = 'ProtocolError';
  constructor(message: string, options: RxVoiceErrorOptions = {}) {
    super('protocol', message, options);
  }
}

/**
 * The service answered a redirect that rxvoice does not follow, because it leads to
 * another origin or to plain http: following it would send the API key there. A
 * redirect is followed only to the same origin (same scheme, host and port). Not
 * retryable. `location` is the target's origin and path (never its query).
 */
export class RedirectError extends RxVoiceError {
  override name = 'RedirectError';
  /** HTTP status of the redirect (301, 302, 303, 307 or 308). */
  readonly status: number;
  /** Origin and path of the target (query and fragment left out), or undefined when the answer named none. */
  readonly location: string | undefined;
  constructor(status: number, location: string | undefined, message: string, options: RxVoiceErrorOptions = {}) {
    super('redirect', message, options);
    this.status = status;
    this.location = location;
  }
}

/**
 * A size or count limit of rxvoice was passed (`maxResponseBytes` of the client,
 * `maxSegmentBytes` of `concatSegments()`, ...): the operation stopped instead of
 * growing memory without bound. `option` names the setting that raises the limit.
 */
export class LimitExceededError extends RxVoiceError {
  override name = 'LimitExceededError';
  /** Name of the option holding the limit, e.g. `'maxResponseBytes'`. */
  readonly option: string;
  /** The limit's value. */
  readonly limit: number;
  constructor(option: string, limit: number, message: string, options: RxVoiceErrorOptions = {}) {
    super('limit', message, options);
    this.option = option;
    this.limit = limit;
  }
}

/**
 * Secrets shorter than this are not cut out of text: replacing every `e` of a message
 * would garble it (`Conn***ctionError`) and show the key. A text holding such a short
 * secret is withheld whole instead ({@link WITHHELD_TEXT}). Real API keys are far longer.
 */
export const MIN_REDACTED_SECRET_LENGTH = 8;

/** What {@link redact} gives instead of a text that holds a secret too short to cut out. */
export const WITHHELD_TEXT = '[text withheld: it could contain the API key]';

/**
 * Replace every occurrence of each secret in `text` with `***`, in each form an address or a
 * form body may carry it: as is, URI-encoded (either case of hex), form-encoded. A secret
 * shorter than {@link MIN_REDACTED_SECRET_LENGTH} is never replaced inside ordinary text:
 * when the text holds it, the whole text is withheld ({@link WITHHELD_TEXT}); otherwise the
 * text is returned as it is.
 */
export function redact(text: string, secrets: ReadonlyArray<string | undefined>): string {
  let out = text;
  for (const secret of secrets) {
    if (!secret) continue;
    const uri = encodeURIComponent(secret);
    const forms = [secret, uri, uri.replace(/%[0-9A-F]{2}/g, (hex) => hex.toLowerCase()), new URLSearchParams({ k: secret }).toString().slice(2)];
    for (const form of forms) {
      if (secret.length < MIN_REDACTED_SECRET_LENGTH) {
        if (out.includes(form)) return WITHHELD_TEXT;
      } else out = out.split(form).join('***');
    }
  }
  return out;
}
