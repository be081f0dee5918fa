/**
 * The batch's last-byte gate: a creation call's request body goes out whole but its last
 * byte, which waits for the gate (the batch journal fsyncs its `sent` record there), so
 * "no `sent` record" proves "the service never received it".
 */
import type { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';

/**
 * Runs before the last byte of a creation call's request goes out; when it rejects, the
 * request is abandoned before its last byte. It may run more than once (a same-origin
 * 307/308 resends the body): make it idempotent.
 */
export type LastByteGate = () => Promise<void>;

/** An undici interceptor that sends a request body whole but its last byte, then waits for `gate`. */
export function lastByteInterceptor(gate: LastByteGate): Dispatcher.DispatcherComposeInterceptor {
  // undici takes an async iterable body (lib/core/request.js), though its types list only Readable.
  return (dispatch) => (options, handler) => dispatch({ ...options, body: gatedBody(options.body, gate) as unknown as Readable }, handler);
}

async function* gatedBody(body: unknown, gate: LastByteGate): AsyncGenerator<Uint8Array> {
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
