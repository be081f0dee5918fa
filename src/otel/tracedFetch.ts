/**
 * `tracedFetch()`: a `fetch` for `createClient({ fetch })` that records one span per HTTP
 * request of the client: a task's creation, each status poll, its result, and every other
 * call. The hook is the client's existing `fetch` option, so the client has no tracing
 * code of its own.
 */
import type { Attributes, TracerProvider } from '@opentelemetry/api';
import type { TracerProviderLike } from './types.js';
import * as z from 'zod/mini';
import type { FetchLike } from '../client/config.js';
import { routes } from '../core/routes.js';
import { checkOptions } from '../core/validation.js';
import { loadApi, TRACER_NAME, TRACER_VERSION } from './load.js';
import { errorType } from './speechSpan.js';

/** Options of {@link tracedFetch}. */
export interface TracedFetchOptions {
  /** The fetch that sends the requests. Default: the global `fetch`. */
  fetch?: FetchLike;
  /** Where spans go. Default: the global tracer provider. */
  tracerProvider?: TracerProviderLike;
}

const OptionsSchema = z.object({
  fetch: z.optional(z.custom<FetchLike>((v) => typeof v === 'function', { error: 'must be a function' })),
  tracerProvider: z.optional(z.custom<TracerProviderLike>((v) => v !== null && typeof v === 'object' && typeof (v as TracerProviderLike).getTracer === 'function', { error: 'must be a TracerProvider' })),
});

/** Paths that start a task (POST), from the routes table. */
const CREATION_PATHS = new Set<string>([
  routes.textToSound,
  routes.tts,
  routes.audioSeparation,
  routes.createStory,
  routes.projectSetup,
  routes.translation,
  routes.transcription,
  routes.sub,
  routes.endToEndDubbing,
]);
/** Where task statuses are polled (`GET <prefix>/{task_id}`), from the routes table's status paths. */
const POLL_PREFIXES = new Set<string>(
  Object.entries(routes)
    .filter(([name, value]) => name.endsWith('Status') && typeof value === 'function')
    .map(([, value]) => (value as (id: string) => string)('x').replace(/\/x$/, '')),
);
/** POST paths that answer results (bulk results). */
const RESULT_POSTS = new Set<string>([routes.textToSoundResults, routes.fetchTtsResults]);

/** The first segment of every path of the service (`tts`, `text-to-sound`, `list-voices`...). */
const ROUTE_ROOTS = new Set<string>(
  Object.values(routes).map((value) => (typeof value === 'function' ? (value as (id: string) => string)('x') : value).split('/')[1]!),
);

/**
 * Where the service's own path starts in a request's path: after the base address's path
 * (`/apis/tts/{id}` of `https://client.camb.ai/apis`: at `/tts/{id}`). The index into `path`
 * (0 when the path starts with a route, or names none).
 */
export function routeStart(path: string): number {
  let at = 0;
  for (;;) {
    const next = path.indexOf('/', at + 1);
    const segment = path.slice(at + 1, next < 0 ? undefined : next);
    if (ROUTE_ROOTS.has(segment)) return at;
    if (next < 0) return 0;
    at = next;
  }
}

/** The path with its ids (task ids, run ids, languages after a run id) replaced by `{id}`: a low-cardinality template. */
export function pathTemplate(path: string): string {
  const parts = path.split('/');
  return parts.map((part, i) => (i >= 2 && part !== '' && !/^(stream)$/.test(part) ? '{id}' : part)).join('/');
}

/** What the request is in the task pattern: `create`, `poll`, `result`, or `call` (everything else). */
export function taskPhase(method: string, path: string): 'create' | 'poll' | 'result' | 'call' {
  const template = pathTemplate(path);
  const first = `/${path.split('/')[1] ?? ''}`;
  if (method === 'POST') return CREATION_PATHS.has(path) ? 'create' : RESULT_POSTS.has(path) ? 'result' : 'call';
  if (template === `${first}/{id}` && POLL_PREFIXES.has(first)) return 'poll';
  return template.includes('{id}') ? 'result' : 'call';
}

/**
 * A `fetch` that records an OpenTelemetry span per request, for `createClient({ fetch })`.
 *
 * Each span is named `<METHOD> <path template>` (`POST /tts`, `GET /tts/{id}`; under the
 * base address's path, as it is: `POST /apis/tts` for `https://client.camb.ai/apis`), of kind
 * CLIENT, with the HTTP semantic-convention attributes `http.request.method`,
 * `server.address`, `server.port`, `url.template`, `http.response.status_code`, and
 * `error.type` (the status code from 400, or the failure's name), plus `rxvoice.task.phase`
 * (`create`, `poll`, `result`, `call`) and `rxvoice.credits` (from `X-Credits-Required`).
 * The span ends when the answer's headers arrive (a streamed body is not timed). No header,
 * query or body is recorded, so the key never reaches a span. The current context is the
 * parent: wrap a task in your own span to group its requests.
 *
 * `@opentelemetry/api` is loaded on the first request; without it (or with no provider
 * recording) requests go straight to `fetch`. With a custom `fetch` the client does not
 * own a connection pool (see `createClient`'s `fetch` option).
 *
 * ## Example
 * ```ts
 * import { createClient } from 'rxvoice';
 * import { tracedFetch } from 'rxvoice/otel';
 *
 * const client = createClient({ fetch: tracedFetch() });
 * ```
 *
 * @param options `fetch` (default the global one) and `tracerProvider`.
 * @return The fetch to pass to `createClient`.
 * @throws ValidationError for bad options, at once.
 */
export function tracedFetch(options: TracedFetchOptions = {}): FetchLike {
  checkOptions(OptionsSchema, options, 'tracedFetch');
  const send: FetchLike = options.fetch ?? ((input, init) => globalThis.fetch(input, init as RequestInit));
  return async (input, init) => {
    const api = await loadApi();
    if (api === null) return send(input, init);
    const url = new URL(input);
    const method = String(init['method'] ?? 'GET').toUpperCase();
    // the base address's path (`/apis`) as it is, the service's path after it as a template
    const at = routeStart(url.pathname);
    const route = url.pathname.slice(at);
    const template = url.pathname.slice(0, at) + pathTemplate(route);
    const attributes: Attributes = {
      'http.request.method': method,
      'server.address': url.hostname,
      'server.port': url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port),
      'url.template': template,
      'rxvoice.task.phase': taskPhase(method, route),
    };
    const provider = (options.tracerProvider as TracerProvider | undefined) ?? api.trace.getTracerProvider();
    const span = provider.getTracer(TRACER_NAME, TRACER_VERSION).startSpan(`${method} ${template}`, { kind: api.SpanKind.CLIENT, attributes });
    if (!span.isRecording()) {
      span.end();
      return send(input, init);
    }
    try {
      const response = await send(input, init);
      span.setAttribute('http.response.status_code', response.status);
      const credits = Number(response.headers.get('x-credits-required') ?? Number.NaN);
      if (Number.isFinite(credits)) span.setAttribute('rxvoice.credits', credits);
      if (response.status >= 400) {
        span.setAttribute('error.type', String(response.status));
        span.setStatus({ code: api.SpanStatusCode.ERROR });
      }
      return response;
    } catch (error) {
      span.setAttribute('error.type', errorType(error));
      span.setStatus({ code: api.SpanStatusCode.ERROR, message: error instanceof Error ? error.name : 'error' });
      throw error;
    } finally {
      span.end();
    }
  };
}
