/**
 * The client's default way to send: undici's dispatcher API (`dispatcher.request`), its
 * answer handed on as a fetch `Response`, in place of undici's `fetch`.
 *
 * Why: for one small POST answered with ~150 KB of audio, `fetch` cost about 0.3 ms more
 * than `request` on the same keep-alive agent (`bench/plugins.ts`; measured apart: 0.75
 * against 0.45 ms a call, the answer wrapped in a `Response` included). `fetch` builds a
 * `Request`, clones it and tees its body (for a redirect it might follow; the client
 * follows redirects itself, `redirect.ts`), and runs the fetch algorithm's steps around
 * the same dispatcher call.
 *
 * The body stays the dispatcher's Node stream, which the readers of `body.ts` read directly:
 * a web `ReadableStream` around it cost ~0.13 ms more on the same answer (0.49 against 0.36
 * ms a call). Cancelling it (`cancelBody`) or leaving a read early destroys the request, so
 * no socket is left holding unread bytes. The `Response` is whole all the same: its `body`
 * (a web stream over the Node stream, pulled only when read), `arrayBuffer()` and the rest
 * work for any other reader.
 *
 * What stays as `fetch` did it for the client: the status, reason and headers of the
 * answer; a redirect is an answer like any other (the client sends with
 * `redirect: 'manual'`); the abort `signal`; `content-length` of a text body. Sent with
 * `fetch` still: a multipart upload (a `FormData` body, `redirect: 'error'`, see
 * `redirect.ts`), and any call where the dispatcher has no `request` (Bun's undici is a shim
 * without it). Not asked for, so not undone: a compressed answer (`fetch` sends
 * `accept-encoding` and decompresses; this sends no `accept-encoding`, so the server answers
 * as it is).
 */
import { STATUS_CODES } from 'node:http';
import type { Dispatcher } from 'undici';
import { holdStreamBody } from './body.js';
import type { FetchLike } from './config.js';
import { loadUndici } from './undici.js';

/** Statuses whose answer has no body (a `Response` with one would throw). */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/**
 * A `FetchLike` that sends over `init.dispatcher`'s `request` where it can, and with
 * `fallback` (undici's `fetch`) otherwise.
 */
export function dispatcherFetch(fallback: FetchLike): FetchLike {
  return async (input, init) => {
    const dispatcher = init['dispatcher'] as Dispatcher | undefined;
    const body = init['body'];
    if (typeof dispatcher?.request !== 'function' || (body !== undefined && typeof body !== 'string') || init['redirect'] === 'error') {
      return fallback(input, init);
    }
    const url = new URL(input);
    const headers = { ...(init['headers'] as Record<string, string>) };
    if (typeof body === 'string') headers['content-length'] = String(Buffer.byteLength(body));
    const answer = await dispatcher.request({
      origin: url.origin,
      path: `${url.pathname}${url.search}`,
      method: init['method'] as Dispatcher.HttpMethod,
      headers,
      body,
      signal: init['signal'] as AbortSignal | undefined,
    });
    const empty = NULL_BODY_STATUSES.has(answer.statusCode);
    if (empty) answer.body.resume();
    // a whole Response (its body a web stream of the Node stream, made when first read), whose
    // Node stream the readers of body.ts take and read directly
    const { Response: UndiciResponse } = await loadUndici(); // one load a process (undici.ts)
    const response = new UndiciResponse(empty ? null : (answer.body as unknown as AsyncIterable<Uint8Array>), {
      status: answer.statusCode,
      statusText: answer.statusText || STATUS_CODES[answer.statusCode] || '',
      headers: answerHeaders(answer.headers),
    }) as unknown as Response;
    if (!empty) holdStreamBody(response, answer.body);
    return response;
  };
}

/** The answer's headers as `[name, value]` pairs (a repeated header, such as `set-cookie`, once a value). */
function answerHeaders(headers: Dispatcher.ResponseData['headers']): [string, string][] {
  const pairs: [string, string][] = [];
  for (const [name, value] of Object.entries(headers)) {
    if (Array.isArray(value)) for (const v of value) pairs.push([name, v]);
    else if (value !== undefined) pairs.push([name, value]);
  }
  return pairs;
}
