/**
 * The HTTP transport of the client: one cold Observable per exchange, undici with a
 * keep-alive Agent (both loaded and made by the first request: `undici.ts`), `x-api-key` on
 * every request, errors mapped to the error tree, retries with exponential backoff and
 * jitter (honouring `Retry-After`).
 *
 * Where each part of an exchange lives:
 * - what is sent: `spec.ts` (`RequestSpec`, `CallOptions`);
 * - sending, and following redirects within the origin only: `redirect.ts`; over undici's
 *   `dispatcher.request` unless a `fetch` is given (`dispatcher-fetch.ts`);
 * - the batch's last-byte gate (`RequestSpec.lastByteGate`): `last-byte.ts`;
 * - a non-2xx answer or a failure to the error tree: `http-errors.ts` (`statusError`);
 * - whether and when to try again: `retry-policy.ts` (`shouldRetry`, one policy for the
 *   client and the batch);
 * - body readers: `body.ts`;
 * - here: the attempt (its timeout), the retry loop, and the readers of JSON and bytes.
 *
 * Reading the body of an idempotent call is part of its attempt: a body cut off or
 * stalled (past `timeoutMs`) before anything was handed out is retried like a connection
 * failure, so a paid result is not lost to one broken download. Creation calls are never
 * repeated once sent.
 *
 * Unsubscribing aborts the request in flight. Errors never carry request headers, and
 * every message is scrubbed of the key.
 */
import { Observable, asyncScheduler, catchError, defer, retry, switchMap, throwError, timer, type ObservableInput } from 'rxjs';
import type { Agent, Dispatcher } from 'undici';
import { z } from 'zod';
import {
  AbortError,
  ApiError,
  ConnectionError,
  LimitExceededError,
  ProtocolError,
  RateLimitError,
  RxVoiceError,
  StreamIdleError,
  TimeoutError,
  ValidationError,
  redact,
} from '../core/errors.js';
import { toValidationIssues } from '../core/validation.js';
import { bodyBytes, cancelBody, readLimited, readUpTo } from './body.js';
import { dispatcherFetch } from './dispatcher-fetch.js';
import { loadUndici } from './undici.js';
import { unreachableMessage, type FetchLike, type ResolvedConfig } from './config.js';
import { messageOf, parseBody, sanitizeCause, statusError } from './http-errors.js';
import { sendFollowingRedirects, type SendContext } from './redirect.js';
import { errorCodes, retryDelay, shouldRetry, wasNotSent } from './retry-policy.js';
import type { RequestSpec } from './spec.js';

export type { CallOptions, GatedCallOptions, HttpMethod, RequestSpec } from './spec.js';
export type { LastByteGate } from './last-byte.js';
export { bodyBytes } from './body.js';
export { MAX_REDIRECTS } from './redirect.js';
export { NOT_SENT_CODES, parseRetryAfter, retryDelay } from './retry-policy.js';

const USER_AGENT = 'rxvoice/0.1.0';
const MAX_ERROR_BODY_BYTES = 64 * 1024;
/**
 * Largest JSON answer read (every JSON answer of the service is small: ids, statuses,
 * addresses, voice lists): a peer sending more is cut off with a `ProtocolError` instead
 * of growing memory without bound.
 */
export const MAX_JSON_BODY_BYTES = 16 * 1024 * 1024;

/** Errors of a body that failed after values were handed out: never retried (they would repeat). */
const afterValues = new WeakSet<object>();

/** A 2xx answer handed to the reader, with the attempt's controller and the clearing of its timeout. */
interface Answered {
  response: Response;
  controller: AbortController;
  clear: () => void;
}

/** How an attempt settled: the 2xx response, or the error its answer or failure maps to. */
type Settled = { response: Response } | { error: RxVoiceError };

/**
 * The transport. Holds the key in a private field; nothing it exposes contains it.
 * Other parts of the library (live session, translation stream) use `exchange` for
 * HTTP and `authHeaders()` / `apiKey()` for the WebSocket.
 */
export class HttpTransport {
  readonly #apiKey: string;
  /** The keep-alive agent the client owns (no `dispatcher` nor `fetch` given), made by the first request. */
  #ownedAgent: Promise<Agent> | undefined;
  #closed = false;
  readonly #dispatcher: Dispatcher | undefined;
  readonly #fetch: FetchLike;
  readonly #warned = new Set<string>();
  /** Kinds of the runs our own task Observables produced (bounded), for local bulk checks. */
  readonly #runKinds = new Map<number, string>();
  readonly config: ResolvedConfig;

  constructor(config: ResolvedConfig, apiKey: string) {
    this.config = config;
    this.#apiKey = apiKey;
    this.#dispatcher = config.dispatcher;
    // a given fetch is used as it is; else the dispatcher's `request` (faster), fetch where it cannot
    this.#fetch = config.fetch ?? dispatcherFetch(async (input, init) => ((await loadUndici()).fetch as unknown as FetchLike)(input, init));
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

  /**
   * Close the keep-alive agent owned by the client (no-op for injected dispatchers). Under
   * Bun, undici's `Agent` is a shim without `close` (nor `destroy`): its connections are
   * the runtime's own, and there is nothing of ours to close.
   */
  async close(): Promise<void> {
    this.#closed = true;
    // an agent whose undici failed to load was never made
    const agent: Partial<Pick<Agent, 'close' | 'destroy'>> | undefined = await this.#ownedAgent?.catch(() => undefined);
    if (typeof agent?.close === 'function') await agent.close();
    else if (typeof agent?.destroy === 'function') await agent.destroy();
  }

  /**
   * The dispatcher a request goes over: the one given, else the client's own agent (made now
   * the first time), else none (a given `fetch`). After `close()` the client's own sends
   * nothing (and no agent is made, whose keep-alive sockets would outlive the client): the
   * request fails at once, not retried.
   */
  async #dispatcherOf(endpoint: string): Promise<Dispatcher | undefined> {
    if (this.#dispatcher !== undefined || this.config.fetch !== undefined) return this.#dispatcher;
    if (this.#closed) throw new ConnectionError(`${endpoint}: the client is closed (client.close() was called); nothing was sent`, { notSent: true, retryable: false });
    this.#ownedAgent ??= loadUndici().then(({ Agent }) => new Agent({ keepAliveTimeout: 10_000, keepAliveMaxTimeout: 60_000, connections: 16 }));
    return this.#ownedAgent;
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
            // a reader completes with the body read to its end or cancelled (body.ts), so
            // there is nothing left to abort then: aborting anyway cost a DOMException and an
            // abort event through undici on every call (~0.1 ms of a generateSpeech)
            let completed = false;
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
                completed = true;
                clear();
                subscriber.complete();
              },
            });
            return () => {
              clear();
              inner.unsubscribe();
              if (!completed) controller.abort();
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
      catchError((error: unknown) => throwError(() => (spec.kind === 'creation' ? mayHaveCreated(error, spec.endpoint) : error))),
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
      await this.refuseJson(spec, response);
      const tooLarge = (): LimitExceededError =>
        new LimitExceededError(
          'maxResponseBytes',
          limit,
          `${spec.endpoint} answered more than maxResponseBytes (${limit} bytes); raise the client option maxResponseBytes, or stream the result to a sink`,
        );
      const declared = Number(response.headers.get('content-length') ?? NaN);
      if (declared > limit) {
        await cancelBody(response);
        throw tooLarge();
      }
      const { bytes, over } = await readUpTo(response, limit);
      if (over) throw tooLarge();
      return bytes;
    });
  }

  /** Error with a `ProtocolError` (carrying the service's message) when a byte answer is JSON. */
  async refuseJson(spec: Pick<RequestSpec, 'endpoint'>, response: Response): Promise<void> {
    const type = response.headers.get('content-type');
    if (type === null || !/^\s*application\/([\w.+-]*\+)?json\b/i.test(type)) return;
    const body = parseBody(await readLimited(response, MAX_ERROR_BODY_BYTES));
    const message = this.redact(messageOf(body) ?? '');
    throw new ProtocolError(`${spec.endpoint} answered JSON where audio was expected${message ? `: ${message}` : ''}`);
  }

  /** The delay before trying `spec` again after `error`, or undefined when the retry policy says no. */
  #retryDelayFor(spec: RequestSpec, error: unknown, attempt: number): number | undefined {
    const valuesHandedOut = error !== null && typeof error === 'object' && afterValues.has(error);
    if (!shouldRetry(error, { kind: spec.kind, valuesHandedOut })) return undefined;
    const retryAfter = error instanceof RateLimitError || error instanceof ApiError ? error.retryAfter : undefined;
    return retryDelay(attempt, this.config.retry, this.config.random, retryAfter);
  }

  #url(spec: RequestSpec): URL {
    const url = new URL(`${this.config.baseUrl}${spec.path}`);
    for (const [k, v] of Object.entries(spec.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    return url;
  }

  /**
   * One attempt: emits the 2xx response (with its controller) or errors with a mapped
   * error. Its timeout (`timeoutMs`) bounds real network I/O, so it runs in real time
   * (`asyncScheduler`), not on the client's `scheduler`, which drives the client's own
   * waits (retry delays, polling) and may be virtual while requests stay real.
   */
  #attempt(spec: RequestSpec): Observable<Answered> {
    return new Observable<Answered>((subscriber) => {
      const controller = new AbortController();
      let timedOut = false;
      const timeout = timer(this.config.timeoutMs, asyncScheduler).subscribe(() => {
        timedOut = true;
        // a TimeoutError as the reason: the fetch (a traced one, rxvoice/otel) fails with it,
        // not with the AbortError of a caller's cancel
        controller.abort(new DOMException(`timed out after ${this.config.timeoutMs} ms`, 'TimeoutError'));
      });
      const clear = (): void => timeout.unsubscribe();
      let handedOver = false;
      void this.#settle(spec, controller.signal, () => timedOut).then((settled) => {
        if (subscriber.closed) return;
        if ('error' in settled) {
          clear();
          subscriber.error(settled.error);
          return;
        }
        handedOver = true;
        subscriber.next({ response: settled.response, controller, clear });
        subscriber.complete();
      });
      return () => {
        if (handedOver) return;
        clear();
        controller.abort();
      };
    });
  }

  /** Send `spec` and settle: the 2xx response, or the error of its answer or failure (never rejects). */
  async #settle(spec: RequestSpec, signal: AbortSignal, timedOut: () => boolean): Promise<Settled> {
    let response: Response;
    try {
      response = await sendFollowingRedirects(spec, this.#url(spec), signal, await this.#sendContext(spec.endpoint));
    } catch (error) {
      return { error: this.#sendError(spec, error, timedOut()) };
    }
    if (response.ok) return { response };
    try {
      const body = parseBody(await readLimited(response, MAX_ERROR_BODY_BYTES));
      const { status, statusText, headers } = response;
      return { error: statusError(spec.endpoint, { status, statusText, headers, body }, (text) => this.redact(text)) };
    } catch (readError) {
      if (timedOut()) return { error: this.#timeoutError(spec) };
      const cause = sanitizeCause(readError, (text) => this.redact(text));
      return { error: new ConnectionError(`${spec.endpoint}: the connection failed while reading the error answer`, { cause }) };
    }
  }

  /** What a request is sent with: built per call, so that no object holds the key longer. */
  async #sendContext(endpoint: string): Promise<SendContext> {
    return { fetch: this.#fetch, dispatcher: await this.#dispatcherOf(endpoint), headers: this.authHeaders(), scrub: (text) => this.redact(text) };
  }

  /** A request that failed before an answer: a redirect refused, the timeout, or a connection failure (`notSent` when it surely never left). */
  #sendError(spec: RequestSpec, error: unknown, timedOut: boolean): RxVoiceError {
    if (error instanceof RxVoiceError) return error;
    if (timedOut) return this.#timeoutError(spec);
    const cause = sanitizeCause(error, (text) => this.redact(text));
    const reason = errorCodes(error)[0] ?? cause.message;
    if (wasNotSent(error)) return new ConnectionError(unreachableMessage(spec.endpoint, this.config.baseUrl, reason), { cause, notSent: true });
    return new ConnectionError(`${spec.endpoint}: the connection to ${new URL(this.config.baseUrl).host} failed after the request was sent (${reason})`, { cause });
  }

  #timeoutError(spec: RequestSpec): TimeoutError {
    return new TimeoutError(`${spec.endpoint} timed out after ${this.config.timeoutMs} ms`);
  }

  #mapReadError(error: unknown, spec: RequestSpec, controller: AbortController): unknown {
    if (error instanceof RxVoiceError) return error;
    if (controller.signal.aborted) return this.#timeoutError(spec);
    return new ConnectionError(`${spec.endpoint}: the connection failed while reading the answer`, {
      cause: sanitizeCause(error, (text) => this.redact(text)),
    });
  }
}

/**
 * The final error of a creation call (it costs credits) that failed after it may have
 * reached the service (a reset, a timeout, a 5xx): not retryable, and saying so, so that a
 * caller retrying on `retryable` does not pay for a second task. A 429, or a call that surely
 * never left (`notSent`), stays as it is.
 */
function mayHaveCreated(error: unknown, endpoint: string): unknown {
  if (!(error instanceof RxVoiceError) || !error.retryable || error instanceof RateLimitError || wasNotSent(error)) return error;
  // a stream that failed after its first values says what it received itself
  if (error instanceof StreamIdleError || afterValues.has(error)) return error;
  const message = `${error.message}. The request may have reached the service and created a task, which may be charged: it was not sent again; check for that task before sending it again`;
  const cause = error.cause;
  if (error instanceof ApiError) return new ApiError(error.status, message, { cause, body: error.body, requestId: error.requestId, retryAfter: error.retryAfter, retryable: false });
  if (error instanceof TimeoutError) return new TimeoutError(message, { cause, retryable: false });
  if (error instanceof ConnectionError) return new ConnectionError(message, { cause, retryable: false });
  return error;
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
