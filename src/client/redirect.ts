/**
 * Sending a request, following redirects only within its origin: a redirect is followed
 * (at most {@link MAX_REDIRECTS} hops) only when it stays on the same origin (scheme,
 * host and port); any other (another host, or https to http) ends the call with a
 * `RedirectError`, so the key never travels to another origin or in clear text. A
 * redirect answer to a multipart upload is never followed: the upload streams from disk
 * and is not kept for a second send.
 */
import type { Dispatcher } from 'undici';
import { RedirectError } from '../core/errors.js';
import { cancelBody } from './body.js';
import type { FetchLike } from './config.js';
import { lastByteInterceptor } from './last-byte.js';
import type { HttpMethod, RequestSpec } from './spec.js';

/** Redirect hops followed (same origin only) before the call fails with a `RedirectError`. */
export const MAX_REDIRECTS = 5;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/** How the transport sends: its fetch, dispatcher, the headers of every request (the key among them) and its scrubber. */
export interface SendContext {
  fetch: FetchLike;
  dispatcher: Dispatcher | undefined;
  headers: Record<string, string>;
  scrub: (text: string) => string;
}

/** One hop: where, how, and whether the body goes. */
interface Hop {
  url: URL;
  method: HttpMethod;
  withBody: boolean;
}

/**
 * Send `spec` to `url`, following redirects only within its origin (the body is rebuilt
 * for a 307/308; a 303, or a 301/302 after a POST, continues as a GET without body, as
 * fetch does). A redirect elsewhere, or past {@link MAX_REDIRECTS}, rejects with a
 * `RedirectError`.
 */
export async function sendFollowingRedirects(spec: RequestSpec, url: URL, signal: AbortSignal, context: SendContext): Promise<Response> {
  let hop: Hop = { url, method: spec.method, withBody: true };
  for (let count = 0; ; count += 1) {
    const response = await sendHop(spec, hop, signal, context);
    const opaque = response.type === 'opaqueredirect';
    if (!opaque && !REDIRECT_STATUSES.has(response.status)) return response;
    await cancelBody(response);
    hop = nextHop(spec, hop, opaque ? 0 : response.status, response.headers.get('location'), count, context.scrub);
  }
}

/** One request of the chain; a creation call's last byte waits for its gate. */
async function sendHop(spec: RequestSpec, hop: Hop, signal: AbortSignal, context: SendContext): Promise<Response> {
  const headers: Record<string, string> = { ...context.headers, accept: spec.accept ?? 'application/json' };
  let body: string | FormData | undefined;
  if (hop.withBody && spec.form) body = spec.form();
  else if (hop.withBody && spec.json !== undefined) {
    body = JSON.stringify(spec.json);
    headers['content-type'] = 'application/json';
  }
  // A multipart body is sent with redirect 'error': with any other mode, fetch keeps a
  // copy of a streamed body for a possible redirect (it clones the request, teeing the
  // body), so an upload streamed from disk would be held whole in memory. A redirect
  // answer to an upload is then a RedirectError, not followed.
  const upload = body !== undefined && typeof body !== 'string';
  const init: Record<string, unknown> = { method: hop.method, headers, body, signal, redirect: upload ? 'error' : 'manual' };
  const { dispatcher } = context;
  if (dispatcher) init['dispatcher'] = dispatcher;
  const gate = spec.kind === 'creation' && body !== undefined ? spec.lastByteGate : undefined;
  // On undici's dispatcher the gate holds the last byte back; with a custom fetch and no
  // dispatcher it runs before the call (marking it sent a little early: safe, never late).
  if (gate && dispatcher && typeof dispatcher.compose === 'function') init['dispatcher'] = dispatcher.compose(lastByteInterceptor(gate));
  else if (gate) await gate();
  return context.fetch(hop.url.href, init).catch((error: unknown) => {
    if (upload && (error as { cause?: { message?: unknown } } | null)?.cause?.message === 'unexpected redirect') {
      throw new RedirectError(0, undefined, `${spec.endpoint} answered a redirect to an upload: not followed (an upload is streamed once, never re-sent elsewhere)`);
    }
    throw error;
  });
}

/** The hop a redirect answer leads to, or a `RedirectError` when it leaves the origin or goes on too long. */
function nextHop(spec: RequestSpec, hop: Hop, status: number, location: string | null, count: number, scrub: (text: string) => string): Hop {
  let target: URL | undefined;
  try {
    target = location === null ? undefined : new URL(location, hop.url);
  } catch {
    target = undefined;
  }
  const shown = target ? scrub(`${target.origin}${target.pathname}`) : undefined;
  const rule = `a redirect is followed only within ${hop.url.origin}, so the API key never goes to another origin or over plain http`;
  if (!target || target.origin !== hop.url.origin) {
    const what = shown ? `${status || 'a redirect'} redirecting to ${shown}` : `${status ? `${status}, ` : ''}a redirect without a usable Location`;
    throw new RedirectError(status, shown, `${spec.endpoint} answered ${what}: not followed (${rule})`);
  }
  if (count >= MAX_REDIRECTS) {
    throw new RedirectError(status, shown, `${spec.endpoint}: more than ${MAX_REDIRECTS} redirects, last to ${shown}`);
  }
  if (status === 303 || ((status === 301 || status === 302) && hop.method === 'POST')) return { url: target, method: 'GET', withBody: false };
  return { url: target, method: hop.method, withBody: hop.withBody };
}
