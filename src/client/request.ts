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
import { Agent, fetch as undiciFetch, type Dispatcher } from 'undici';
import type { z } from 'zod';
import {
  AbortError,
  ApiError,
  AuthenticationError,
  ConnectionError,
  ProtocolError,
  RateLimitError,
  RxVoiceError,
  TimeoutError,
  ValidationError,
  redact,
} from '../core/errors.js';
import type { FetchLike, ResolvedConfig } from './config.js';
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

/** Error codes of connection failures that prove the request never left. */
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT', 'EHOSTUNREACH', 'ENETUNREACH']);

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
  validate<S extends z.ZodType>(schema: S, input: unknown, endpoint: string, prefix: ReadonlyArray<string | number> = ['body']): z.infer<S> {
    const result = schema.safeParse(input);
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
    const attempts$ = this.#attempt(spec).pipe(
      retry({
        count: this.config.maxRetries,
        delay: (error: unknown, retryCount: number) => {
          const delayMs = this.#retryDelayFor(spec, error, retryCount - 1);
          if (delayMs === undefined) return throwError(() => error);
          return timer(delayMs, this.config.scheduler);
        },
      }),
    );
    const exchanged$ = attempts$.pipe(
      switchMap(
        ({ response, controller, clear }) =>
          new Observable<T>((subscriber) => {
            if (spec.stream) clear();
            const inner = defer(() => read(response, controller.signal)).subscribe({
              next: (v) => subscriber.next(v),
              error: (e: unknown) => {
                clear();
                subscriber.error(this.#mapReadError(e, spec, controller));
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
    return withSignal(exchanged$, spec.signal);
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

  /** GET/POST answering bytes, collected into one `Uint8Array`. */
  bytes(spec: RequestSpec): Observable<Uint8Array> {
    return this.exchange(spec, async (response) => new Uint8Array(await response.arrayBuffer()));
  }

  #retryDelayFor(spec: RequestSpec, error: unknown, attempt: number): number | undefined {
    // Only errors of the attempt (before the answer was handed over) reach here; `retryable`
    // is the rule, narrowed for creation calls to what surely did not cost credits.
    if (!(error instanceof RxVoiceError) || !error.retryable) return undefined;
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
      const headers: Record<string, string> = {
        'x-api-key': this.#apiKey,
        'user-agent': USER_AGENT,
        accept: spec.accept ?? 'application/json',
      };
      let body: string | FormData | undefined;
      if (spec.form) body = spec.form();
      else if (spec.json !== undefined) {
        body = JSON.stringify(spec.json);
        headers['content-type'] = 'application/json';
      }
      const init: Record<string, unknown> = { method: spec.method, headers, body, signal: controller.signal };
      if (this.#dispatcher) init['dispatcher'] = this.#dispatcher;

      const fail = (error: RxVoiceError): void => {
        clear();
        subscriber.error(error);
      };

      this.#fetch(this.#url(spec), init).then(
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
          if (timedOut) {
            fail(new TimeoutError(`${spec.endpoint} timed out after ${this.config.timeoutMs} ms`));
            return;
          }
          const codes = errorCodeChain(error);
          const notSent = codes.some((c) => NOT_SENT_CODES.has(c));
          const cause = sanitizeCause(error, this.#apiKey);
          fail(new ConnectionError(`${spec.endpoint}: could not reach the service (${codes[0] ?? cause.message})`, { cause, notSent }));
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
      return new AuthenticationError(`${spec.endpoint} answered ${status}${suffix}. Check the API key.`, { status });
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

async function readLimited(response: Response, limit: number): Promise<string> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    total += value.byteLength;
    if (total >= limit) {
      await reader.cancel().catch(() => undefined);
      break;
    }
  }
  return Buffer.concat(chunks).subarray(0, limit).toString('utf8');
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
