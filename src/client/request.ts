/**
 * The HTTP transport of the client: one cold Observable per exchange, undici with a
 * keep-alive Agent, `x-api-key` on every request, errors mapped to the error tree,
 * retries with exponential backoff and jitter (honouring `Retry-After`).
 *
 * Retry rules:
 * - idempotent calls (GET, and the bulk-result POSTs): retried on connection failures,
 *   timeouts and 408 / 429 / 5xx;
 * - creation calls (they cost credits): retried only when the request surely did not
 *   reach the service: the connection was refused / the host not found / the connect
 *   timed out, or the service answered 429.
 *
 * Reading the body of an idempotent call is part of its attempt: a body cut off or
 * stalled (past `timeoutMs`) before anything was handed out is retried like a connection
 * failure, so a paid result is not lost to one broken download. Creation calls are never
 * repeated once sent.
 *
 * Redirects are handled here, not by fetch: a redirect is followed (at most
 * {@link MAX_REDIRECTS} hops) only when it stays on the same origin (scheme, host and
 * port) as the request; any other (another host, or https to http) ends the call with a
 * `RedirectError`, so the key never travels to another origin or in clear text. A
 * redirect answer to a multipart upload is never followed (a `RedirectError`): the
 * upload streams from disk and is not kept for a second send.
 *
 * Unsubscribing aborts the request in flight. Errors never carry request headers, and
 * every message is scrubbed of the key.
 */
import {
  Observable,
  defer,
  retry,
  switchMap,
  throwError,
  timer,
  type ObservableInput,
} from 'rxjs';
import type { Readable } from 'node:stream';
import { Agent, fetch as undiciFetch, type Dispatcher } from 'undici';
import { z } from 'zod';
import {
  AbortError,
  ApiError,
  AuthenticationError,
  ConnectionError,
  LimitExceededError,
  ProtocolError,
  RateLimitError,
  RedirectError,
  RxVoiceError,
  TimeoutError,
  ValidationError,
  redact,
} from '../core/errors.js';
import { refusedKeyMessage, unreachableMessage, type FetchLike, type ResolvedConfig } from './config.js';
import { ErrorBodySchema, ValidationErrorBodySchema, type ValidationIssue } from '../core/schemas.js';
import { toValidationIssues } from '../core/validation.js';
import { backoffDelay } from '../core/backoff.js';

export type HttpMethod = 'GET' | 'POST';

/** One exchange with the service. */
export interface RequestSpec {
  method: HttpMethod;
  /** Path from `routes` (never hard-coded). */
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  /** JSON body (serialized), or a factory of a multipart body (called once per attempt). */
  json?: unknown;
  form?: () => FormData;
  /** `'idempotent'` (GET, bulk results) or `'creation'` (costs credits). */
  kind: 'idempotent' | 'creation';
  /** Human name of the endpoint for messages, e.g. `POST /text-to-sound`. */
  endpoint: string;
  /** Streaming answer: the timeout covers the wait for headers only. */
  stream?: boolean;
  accept?: string;
  signal?: AbortSignal | undefined;
}

/** Per-call options every method takes. */
export interface CallOptions {
  /** Aborts the call (the Observable errors with `AbortError`). */
  signal?: AbortSignal | undefined;
}

const USER_AGENT = 'rxvoice/0.1.0';
const MAX_ERROR_BODY_BYTES = 64 * 1024;
/**
 * Largest JSON answer read (every JSON answer of the service is small: ids, statuses,
 * addresses, voice lists): a peer sending more is cut off with a `ProtocolError` instead
 * of growing memory without bound.
 */
export const MAX_JSON_BODY_BYTES = 16 * 1024 * 1024;

/** Redirect hops followed (same origin only) before the call fails with a `RedirectError`. */
export const MAX_REDIRECTS = 5;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/** Errors of a body that failed after values were handed out: never retried (they would repeat). */
const afterValues = new WeakSet<object>();

/** Gates of creation calls, by the signal the call was made with: see {@link holdLastByteUntil}. */
const lastByteGates = new WeakMap<AbortSignal, () => Promise<void>>();

/**
 * Hold back the last byte of the creation call made with `signal` (its `CallOptions`
 * signal) until `gate` resolves: the request cannot be whole at the service before
 * `gate` has run, and if the process dies before, the service never got it. The batch
 * journal fsyncs its `sent` record here, so "no `sent` record" proves "never received"
 * and resuming creates the job with no risk of paying twice. Works on the client's
 * undici dispatcher (an interceptor around the request body, the `content-length`
 * kept); with a custom `fetch` and no dispatcher, `gate` runs before the call instead
 * (it then marks a call as sent a little early: safe, never late). `gate` may run more
 * than once (a same-origin 307/308 resends the body); make it idempotent. When `gate`
 * rejects, the request is abandoned before its last byte.
 *
 * @internal for the batch runner; not part of the public API.
 */
export function holdLastByteUntil(signal: AbortSignal, gate: () => Promise<void>): void {
  lastByteGates.set(signal, gate);
}

/** An undici interceptor that sends a request body whole but its last byte, then waits for `gate`. */
function lastByteInterceptor(gate: () => Promise<void>): Dispatcher.DispatcherComposeInterceptor {
  // undici takes an async iterable body (lib/core/request.js), though its types list only Readable.
  return (dispatch) => (options, handler) => dispatch({ ...options, body: gatedBody(options.body, gate) as unknown as Readable }, handler);
}

async function* gatedBody(body: unknown, gate: () => Promise<void>): AsyncGenerator<Uint8Array> {
  let held: Uint8Array | undefined;
  const chunks: AsyncIterable<unknown> | Iterable<unknown> =
    body === null || body === undefined
      ? []
      : typeof body === 'string' || body instanceof Uint8Array
        ? [body]
        : (body as AsyncIterable<unknown>);
  for await (const chunk of chunks) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Uint8Array);
    if (bytes.byteLength === 0) continue;
    if (held) yield held;
    held = bytes;
  }
  if (held && held.byteLength > 1) yield held.subarray(0, held.byteLength - 1);
  await gate();
  if (held) yield held.subarray(held.byteLength - 1);
}

/** Error codes of connection failures that prove the request never left. */
export const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT', 'EHOSTUNREACH', 'ENETUNREACH']);

function errorCodeChain(error: unknown): string[] {
  const codes: string[] = [];
  let cur: unknown = error;
  for (let depth = 0; depth < 6 && cur && typeof cur === 'object'; depth += 1) {
    const code = (cur as { code?: unknown }).code;
    if (typeof code === 'string') codes.push(code);
    const errors = (cur as { errors?: unknown }).errors;
    if (Array.isArray(errors)) for (const e of errors) codes.push(...errorCodeChain(e));
    cur = (cur as { cause?: unknown }).cause;
  }
  return codes;
}

/** A plain copy of a low-level error: name, message and code only (no sockets, no headers). */
function sanitizeCause(error: unknown, secret: string): Error {
  const codes = errorCodeChain(error);
  let message = error instanceof Error ? error.message : String(error);
  const inner = error instanceof Error && error.cause instanceof Error ? error.cause.message : undefined;
  if (inner && inner !== message) message = `${message}: ${inner}`;
  const copy = new Error(redact(message, [secret]));
  copy.name = error instanceof Error ? error.name : 'Error';
  if (codes[0]) (copy as Error & { code?: string }).code = codes[0];
  copy.stack = undefined;
  return copy;
}

/** Delay before retry number `attempt` (0-based): the service's `Retry-After` (capped) when given, else {@link backoffDelay}. */
export function retryDelay(
  attempt: number,
  options: { baseDelayMs: number; maxDelayMs: number; maxRetryAfterMs: number },
  random: () => number,
  retryAfterSeconds?: number,
): number {
  if (retryAfterSeconds !== undefined && Number.isFinite(retryAfterSeconds) && retryAfterSeconds >= 0) {
    return Math.min(retryAfterSeconds * 1000, options.maxRetryAfterMs);
  }
  return backoffDelay(attempt, options, random);
}

/** Parse `Retry-After`: seconds, or an HTTP date. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, (date - now) / 1000);
}

/**
 * The transport. Holds the key in a private field; nothing it exposes contains it.
 * Other parts of the library (live session, translation stream) use `exchange` for
 * HTTP and `authHeaders()` / `apiKey()` for the WebSocket.
 */
export class HttpTransport {
  readonly #apiKey: string;
  readonly #ownedAgent: Agent | undefined;
  readonly #dispatcher: Dispatcher | undefined;
  readonly #fetch: FetchLike;
  readonly #warned = new Set<string>();
  /** Kinds of the runs our own task Observables produced (bounded), for local bulk checks. */
  readonly #runKinds = new Map<number, string>();
  readonly config: ResolvedConfig;

  constructor(config: ResolvedConfig, apiKey: string) {
    this.config = config;
    this.#apiKey = apiKey;
    if (config.dispatcher) {
      this.#dispatcher = config.dispatcher;
    } else if (!config.fetch) {
      this.#ownedAgent = new Agent({ keepAliveTimeout: 10_000, keepAliveMaxTimeout: 60_000, connections: 16 });
      this.#dispatcher = this.#ownedAgent;
    }
    this.#fetch = config.fetch ?? (undiciFetch as unknown as FetchLike);
  }

  /** The API key, for the live WebSocket (`x-api-key` header or `api_key` query). */
  apiKey(): string {
    return this.#apiKey;
  }

  /** Headers with the key, for transports other than `exchange` (WebSocket). */
  authHeaders(): Record<string, string> {
    return { 'x-api-key': this.#apiKey, 'user-agent': USER_AGENT };
  }

  /** Replace the key in any text with `***`. */
  redact(text: string): string {
    return redact(text, [this.#apiKey]);
  }

  /** Emit a deprecation warning once per `id`. */
  warnOnce(id: string, message: string): void {
    if (this.#warned.has(id)) return;
    this.#warned.add(id);
    this.config.warn(message, `RXVOICE_DEPRECATED_${id.toUpperCase().replace(/[^A-Z0-9]+/g, '_')}`);
  }

  /** Remember that `runId` came from a task of `family` (kept for the last 10 000 runs). */
  rememberRun(runId: number, family: string): void {
    this.#runKinds.delete(runId);
    this.#runKinds.set(runId, family);
    if (this.#runKinds.size > 10_000) {
      const oldest = this.#runKinds.keys().next();
      if (!oldest.done) this.#runKinds.delete(oldest.value);
    }
  }

  /** The family of a run produced by this client's task Observables, if known. */
  runFamily(runId: number): string | undefined {
    return this.#runKinds.get(runId);
  }

  /** Close the keep-alive agent owned by the client (no-op for injected dispatchers). */
  async close(): Promise<void> {
    await this.#ownedAgent?.close();
  }

  /** Validate `input` with `schema` locally; throws `ValidationError` (`source: 'local'`). */
  validate<S extends z.core.$ZodType>(schema: S, input: unknown, endpoint: string, prefix: ReadonlyArray<string | number> = ['body']): z.infer<S> {
    const result = z.safeParse(schema, input);
    if (!result.success) {
      throw new ValidationError(toValidationIssues(result.error, input, prefix), { source: 'local', endpoint });
    }
    return result.data;
  }

  /**
   * One exchange: sends `spec` (with retries), then hands the 2xx answer to `read`,
   * whose values the Observable emits. Unsubscribing aborts the request (and the body).
   */
  exchange<T>(spec: RequestSpec, read: (response: Response, signal: AbortSignal) => ObservableInput<T>): Observable<T> {
    const once$ = this.#attempt(spec).pipe(
      switchMap(
        ({ response, controller, clear }) =>
          new Observable<T>((subscriber) => {
            if (spec.stream) clear();
            let emitted = false;
            const inner = defer(() => read(response, controller.signal)).subscribe({
              next: (v) => {
                emitted = true;
                subscriber.next(v);
              },
              error: (e: unknown) => {
                clear();
                const error = this.#mapReadError(e, spec, controller);
                if (emitted && error !== null && typeof error === 'object') afterValues.add(error);
                subscriber.error(error);
              },
              complete: () => {
                clear();
                subscriber.complete();
              },
            });
            return () => {
              clear();
              inner.unsubscribe();
              controller.abort();
            };
          }),
      ),
    );
    // The body is part of the attempt: a read that fails before handing anything out is
    // retried by the same rules as the request (so never for a creation call once sent).
    const retried$ = once$.pipe(
      retry({
        count: this.config.maxRetries,
        delay: (error: unknown, retryCount: number) => {
          const delayMs = this.#retryDelayFor(spec, error, retryCount - 1);
          if (delayMs === undefined) return throwError(() => error);
          return timer(delayMs, this.config.scheduler);
        },
      }),
    );
    return withSignal(retried$, spec.signal);
  }

  /** GET/POST answering JSON, parsed with `schema`. */
  json<S extends z.ZodType>(spec: RequestSpec, schema: S): Observable<z.infer<S>> {
    return this.exchange(spec, async (response) => {
      const text = await readLimited(response, MAX_JSON_BODY_BYTES + 1);
      if (Buffer.byteLength(text, 'utf8') > MAX_JSON_BODY_BYTES) {
        throw new ProtocolError(`${spec.endpoint} answered a JSON body larger than ${MAX_JSON_BODY_BYTES} bytes`);
      }
      let body: unknown;
      try {
        body = text === '' ? undefined : JSON.parse(text);
      } catch {
        throw new ProtocolError(`${spec.endpoint} answered a body that is not JSON`);
      }
      const parsed = schema.safeParse(body);
      if (!parsed.success) {
        const where = parsed.error.issues.map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`).join('; ');
        throw new ProtocolError(`${spec.endpoint} answered an unexpected body: ${this.redact(where)}`);
      }
      return parsed.data as z.infer<S>;
    });
  }

  /**
   * GET/POST answering bytes, collected into one `Uint8Array` of at most
   * `maxResponseBytes` (past it: `LimitExceededError`). A JSON answer where bytes are
   * expected is a `ProtocolError` carrying the service's message.
   */
  bytes(spec: RequestSpec): Observable<Uint8Array> {
    const limit = this.config.maxResponseBytes;
    return this.exchange(spec, async (response) => {
      await this.#refuseJson(spec, response);
      const tooLarge = (): LimitExceededError =>
        new LimitExceededError(
          'maxResponseBytes',
          limit,
          `${spec.endpoint} answered more than maxResponseBytes (${limit} bytes); raise the client option maxResponseBytes, or stream the result to a sink`,
        );
      const declared = Number(response.headers.get('content-length') ?? NaN);
      if (declared > limit) {
        await response.body?.cancel().catch(() => undefined);
        throw tooLarge();
      }
      const { bytes, over } = await readUpTo(response, limit);
      if (over) throw tooLarge();
      return bytes;
    });
  }

  /**
   * GET/POST answering bytes, emitted chunk by chunk as they arrive (for a sink such as
   * `toFile`; nothing is accumulated, so `maxResponseBytes` does not apply). A JSON
   * answer where bytes are expected is a `ProtocolError`. A failure before the first
   * chunk is retried by the transport's rules; after it, the Observable errors.
   */
  byteStream(spec: RequestSpec): Observable<Uint8Array> {
    return this.exchange(spec, (response) =>
      defer(async () => {
        await this.#refuseJson(spec, response);
        return response;
      }).pipe(switchMap((checked) => bodyBytes(checked))),
    );
  }

  /** Error with a `ProtocolError` (carrying the service's message) when a byte answer is JSON. */
  async #refuseJson(spec: RequestSpec, response: Response): Promise<void> {
    const type = response.headers.get('content-type');
    if (type === null || !/^\s*application\/([\w.+-]*\+)?json\b/i.test(type)) return;
    const text = await readLimited(response, MAX_ERROR_BODY_BYTES);
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // keep the text
    }
    const message = this.redact(messageOf(body) ?? '');
    throw new ProtocolError(`${spec.endpoint} answered JSON where audio was expected${message ? `: ${message}` : ''}`);
  }

  #retryDelayFor(spec: RequestSpec, error: unknown, attempt: number): number | undefined {
    // `retryable` is the rule, narrowed for creation calls to what surely did not cost
    // credits; a body that failed after handing values out is never repeated.
    if (!(error instanceof RxVoiceError) || !error.retryable || afterValues.has(error)) return undefined;
    if (spec.kind === 'creation' && !(error instanceof RateLimitError) && !(error instanceof ConnectionError && error.notSent)) return undefined;
    const retryAfter = error instanceof RateLimitError || error instanceof ApiError ? error.retryAfter : undefined;
    return retryDelay(attempt, this.config.retry, this.config.random, retryAfter);
  }

  #url(spec: RequestSpec): string {
    let url = `${this.config.baseUrl}${spec.path}`;
    if (spec.query) {
      const params = new URLSearchParams();
      for (const [k, v] of Object.entries(spec.query)) if (v !== undefined) params.set(k, String(v));
      const qs = params.toString();
      if (qs) url += `?${qs}`;
    }
    return url;
  }

  /** One attempt: emits the 2xx response (with its controller) or errors with a mapped error. */
  #attempt(spec: RequestSpec): Observable<{ response: Response; controller: AbortController; clear: () => void }> {
    return new Observable((subscriber) => {
      const controller = new AbortController();
      let timedOut = false;
      let handle: ReturnType<typeof setTimeout> | undefined = setTimeout(() => {
        timedOut = true;
        controller.abort();
      }, this.config.timeoutMs);
      const clear = (): void => {
        if (handle !== undefined) clearTimeout(handle);
        handle = undefined;
      };
      let handedOver = false;
      const fail = (error: RxVoiceError): void => {
        clear();
        subscriber.error(error);
      };

      this.#send(spec, controller.signal).then(
        async (response) => {
          if (subscriber.closed) return;
          if (response.ok) {
            handedOver = true;
            subscriber.next({ response, controller, clear });
            subscriber.complete();
            return;
          }
          let error: RxVoiceError;
          try {
            error = await this.#statusError(spec, response);
          } catch (readError) {
            if (subscriber.closed) return;
            error = timedOut
              ? new TimeoutError(`${spec.endpoint} timed out after ${this.config.timeoutMs} ms`)
              : new ConnectionError(`${spec.endpoint}: the connection failed while reading the error answer`, {
                  cause: sanitizeCause(readError, this.#apiKey),
                });
          }
          if (!subscriber.closed) fail(error);
        },
        (error: unknown) => {
          if (subscriber.closed) return;
          if (error instanceof RxVoiceError) {
            fail(error);
            return;
          }
          if (timedOut) {
            fail(new TimeoutError(`${spec.endpoint} timed out after ${this.config.timeoutMs} ms`));
            return;
          }
          const codes = errorCodeChain(error);
          const notSent = codes.some((c) => NOT_SENT_CODES.has(c));
          const cause = sanitizeCause(error, this.#apiKey);
          fail(new ConnectionError(unreachableMessage(spec.endpoint, this.config.baseUrl, codes[0] ?? cause.message), { cause, notSent }));
        },
      );
      return () => {
        if (!handedOver) {
          clear();
          controller.abort();
        }
      };
    });
  }

  /**
   * Send `spec`, following redirects only within the origin of the request (the body is
   * rebuilt for a 307/308; a 303, or a 301/302 after a POST, continues as a GET without
   * body, as fetch does). A redirect elsewhere rejects with a `RedirectError`.
   */
  async #send(spec: RequestSpec, signal: AbortSignal): Promise<Response> {
    let url = new URL(this.#url(spec));
    let method: HttpMethod = spec.method;
    let withBody = true;
    for (let hop = 0; ; hop += 1) {
      const headers: Record<string, string> = {
        'x-api-key': this.#apiKey,
        'user-agent': USER_AGENT,
        accept: spec.accept ?? 'application/json',
      };
      let body: string | FormData | undefined;
      if (withBody && spec.form) body = spec.form();
      else if (withBody && spec.json !== undefined) {
        body = JSON.stringify(spec.json);
        headers['content-type'] = 'application/json';
      }
      // A multipart body is sent with redirect 'error': with any other mode, fetch keeps a
      // copy of a streamed body for a possible redirect (it clones the request, teeing the
      // body), so an upload streamed from disk would be held whole in memory. A redirect
      // answer to an upload is then a RedirectError, not followed.
      const upload = body !== undefined && typeof body !== 'string';
      const init: Record<string, unknown> = { method, headers, body, signal, redirect: upload ? 'error' : 'manual' };
      if (this.#dispatcher) init['dispatcher'] = this.#dispatcher;
      const gate = spec.kind === 'creation' && body !== undefined && spec.signal ? lastByteGates.get(spec.signal) : undefined;
      if (gate && this.#dispatcher && typeof this.#dispatcher.compose === 'function') init['dispatcher'] = this.#dispatcher.compose(lastByteInterceptor(gate));
      else if (gate) await gate();
      const response = await this.#fetch(url.href, init).catch((error: unknown) => {
        if (upload && (error as { cause?: { message?: unknown } } | null)?.cause?.message === 'unexpected redirect') {
          throw new RedirectError(0, undefined, `${spec.endpoint} answered a redirect to an upload: not followed (an upload is streamed once, never re-sent elsewhere)`);
        }
        throw error;
      });
      const opaque = response.type === 'opaqueredirect';
      if (!opaque && !REDIRECT_STATUSES.has(response.status)) return response;
      await response.body?.cancel().catch(() => undefined);
      const status = opaque ? 0 : response.status;
      const location = response.headers.get('location');
      let target: URL | undefined;
      try {
        target = location === null ? undefined : new URL(location, url);
      } catch {
        target = undefined;
      }
      const shown = target ? this.redact(`${target.origin}${target.pathname}`) : undefined;
      const rule = `a redirect is followed only within ${url.origin}, so the API key never goes to another origin or over plain http`;
      if (!target || target.origin !== url.origin) {
        const where = shown ? `redirecting to ${shown}` : 'a redirect without a usable Location';
        throw new RedirectError(status, shown, `${spec.endpoint} answered ${status || 'a redirect'} ${where}: not followed (${rule})`);
      }
      if (hop >= MAX_REDIRECTS) {
        throw new RedirectError(status, shown, `${spec.endpoint}: more than ${MAX_REDIRECTS} redirects, last to ${shown}`);
      }
      if (status === 303 || ((status === 301 || status === 302) && method === 'POST')) {
        method = 'GET';
        withBody = false;
      }
      url = target;
    }
  }

  async #statusError(spec: RequestSpec, response: Response): Promise<RxVoiceError> {
    const text = await readLimited(response, MAX_ERROR_BODY_BYTES);
    let body: unknown = text;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch {
      // keep text
    }
    const status = response.status;
    const rawRequestId = response.headers.get('x-request-id');
    const requestId = rawRequestId === null ? undefined : this.redact(rawRequestId);
    if (status === 422) {
      const parsed = ValidationErrorBodySchema.safeParse(body);
      const issues: ValidationIssue[] = parsed.success
        ? parsed.data.detail.map((i) => ({
            // every string the service sends back is scrubbed, field names included
            loc: i.loc.map((part) => (typeof part === 'string' ? this.redact(part) : part)),
            msg: this.redact(i.msg),
            type: this.redact(i.type),
          }))
        : [{ loc: ['body'], msg: 'the service rejected the request', type: 'value_error' }];
      return new ValidationError(issues, { source: 'server', endpoint: spec.endpoint });
    }
    const serviceMessage = this.redact(messageOf(body) ?? response.statusText ?? '');
    const suffix = serviceMessage ? `: ${serviceMessage}` : '';
    if (status === 401 || status === 403) {
      return new AuthenticationError(refusedKeyMessage(spec.endpoint, status, serviceMessage, this.config.baseUrl), { status });
    }
    if (status === 429) {
      const retryAfter = parseRetryAfter(response.headers.get('retry-after'));
      return new RateLimitError(`${spec.endpoint} answered 429 (rate limited)${suffix}`, retryAfter === undefined ? {} : { retryAfter });
    }
    const retryAfter = parseRetryAfter(response.headers.get('retry-after'));
    return new ApiError(status, `${spec.endpoint} answered ${status}${suffix}`, {
      body: scrubBody(body, this.#apiKey),
      ...(requestId ? { requestId } : {}),
      ...(retryAfter === undefined ? {} : { retryAfter }),
    });
  }

  #mapReadError(error: unknown, spec: RequestSpec, controller: AbortController): unknown {
    if (error instanceof RxVoiceError) return error;
    if (controller.signal.aborted) {
      return new TimeoutError(`${spec.endpoint} timed out after ${this.config.timeoutMs} ms`);
    }
    return new ConnectionError(`${spec.endpoint}: the connection failed while reading the answer`, {
      cause: sanitizeCause(error, this.#apiKey),
    });
  }
}

function messageOf(body: unknown): string | undefined {
  if (typeof body === 'string') return body.slice(0, 500) || undefined;
  const parsed = ErrorBodySchema.safeParse(body);
  if (parsed.success) return parsed.data.error;
  if (body && typeof body === 'object') {
    const o = body as Record<string, unknown>;
    for (const key of ['message', 'detail', 'error']) {
      if (typeof o[key] === 'string') return o[key];
    }
  }
  return undefined;
}

function scrubBody(body: unknown, secret: string): unknown {
  if (body === undefined) return undefined;
  try {
    return JSON.parse(redact(JSON.stringify(body), [secret])) as unknown;
  } catch {
    return undefined;
  }
}

/** The chunks of a response body; unsubscribing cancels the body. */
export function bodyBytes(response: Response): Observable<Uint8Array> {
  return new Observable<Uint8Array>((subscriber) => {
    const body = response.body;
    if (!body) {
      subscriber.complete();
      return undefined;
    }
    const reader = body.getReader();
    let stopped = false;
    const pump = async (): Promise<void> => {
      for (;;) {
        const { done, value } = await reader.read();
        if (stopped) return;
        if (done) break;
        subscriber.next(value);
      }
      subscriber.complete();
    };
    pump().catch((error: unknown) => {
      if (!stopped) subscriber.error(error);
    });
    return () => {
      stopped = true;
      reader.cancel().catch(() => undefined);
    };
  });
}

/**
 * Read the body up to `limit` bytes into one array of its exact size; `over` is true
 * (and reading stopped, the body cancelled) when the body held more.
 */
async function readUpTo(response: Response, limit: number): Promise<{ bytes: Uint8Array; over: boolean }> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  let over = false;
  if (response.body) {
    const reader = response.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      total += value.byteLength;
      if (total > limit) {
        over = true;
        await reader.cancel().catch(() => undefined);
        break;
      }
    }
  }
  const bytes = new Uint8Array(Math.min(total, limit));
  let offset = 0;
  for (const chunk of chunks) {
    const piece = chunk.subarray(0, bytes.byteLength - offset);
    bytes.set(piece, offset);
    offset += piece.byteLength;
  }
  return { bytes, over };
}

async function readLimited(response: Response, limit: number): Promise<string> {
  const { bytes } = await readUpTo(response, limit);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
}

/**
 * Make `source` error with `AbortError` when `signal` aborts (and unsubscribe from it,
 * which aborts the request in flight).
 */
export function withSignal<T>(source: Observable<T>, signal: AbortSignal | undefined): Observable<T> {
  if (!signal) return source;
  return new Observable<T>((subscriber) => {
    if (signal.aborted) {
      subscriber.error(new AbortError());
      return undefined;
    }
    const onAbort = (): void => subscriber.error(new AbortError());
    signal.addEventListener('abort', onAbort, { once: true });
    const inner = source.subscribe(subscriber);
    return () => {
      signal.removeEventListener('abort', onAbort);
      inner.unsubscribe();
    };
  });
}
