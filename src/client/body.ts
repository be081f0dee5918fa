/**
 * Readers of an answer's body: as a stream of chunks, or collected up to a limit (a peer
 * sending more is cut off, never buffered without bound), and its cancelling. An answer of
 * `dispatcherFetch` also holds its body as the dispatcher's Node stream: these read that
 * directly, not through the `Response`'s web stream.
 */
import { Observable } from 'rxjs';

/** A body as a Node stream of bytes (undici's `BodyReadable`). */
export interface StreamBody extends AsyncIterable<Uint8Array> {
  destroy(error?: Error): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
}

/** Destroys a body left unread: its request is aborted (undici then emits an abort error, expected here). */
function discard(stream: StreamBody): void {
  stream.on('error', () => undefined);
  stream.destroy();
}

/** Bodies held as Node streams, by answer, until a reader takes them. */
const streamBodies = new WeakMap<Response, StreamBody>();

/**
 * Gives `response` the body `stream`, for the readers here to read directly: through a web
 * `ReadableStream` the same 150 KB answer cost ~0.13 ms more a call (`dispatcher-fetch.ts`).
 *
 * @internal
 */
export function holdStreamBody(response: Response, stream: StreamBody): void {
  streamBodies.set(response, stream);
}

/** The Node stream of `response`'s body, taken (a second call gets undefined), if it has one. */
export function takeStreamBody(response: Response): StreamBody | undefined {
  const stream = streamBodies.get(response);
  if (stream) streamBodies.delete(response);
  return stream;
}

/** Cancel `response`'s body unread (its connection is closed, not left holding unread bytes). */
export async function cancelBody(response: Response): Promise<void> {
  const stream = takeStreamBody(response);
  if (stream) discard(stream);
  else await response.body?.cancel().catch(() => undefined);
}

/** `chunk` as a plain `Uint8Array` over the same bytes (a `Buffer` from Node's streams is one). */
function plain(chunk: Uint8Array): Uint8Array {
  return chunk.constructor === Uint8Array ? chunk : new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
}

/** The chunks of a Node stream body; unsubscribing before its end destroys it. */
function streamChunks(stream: StreamBody): Observable<Uint8Array> {
  return new Observable<Uint8Array>((subscriber) => {
    let stopped = false;
    let ended = false;
    const pump = async (): Promise<void> => {
      for await (const chunk of stream) {
        if (stopped) return;
        subscriber.next(plain(chunk));
      }
      ended = true;
      subscriber.complete();
    };
    pump().catch((error: unknown) => {
      ended = true;
      if (!stopped) subscriber.error(error);
    });
    return () => {
      stopped = true;
      if (!ended) discard(stream);
    };
  });
}

/** The chunks of a response body; unsubscribing cancels the body. */
export function bodyBytes(response: Response): Observable<Uint8Array> {
  const stream = takeStreamBody(response);
  if (stream) return streamChunks(stream);
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
export async function readUpTo(response: Response, limit: number): Promise<{ bytes: Uint8Array; over: boolean }> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  let over = false;
  const stream = takeStreamBody(response);
  if (stream) {
    for await (const chunk of stream) {
      chunks.push(chunk);
      total += chunk.byteLength;
      if (total > limit) {
        over = true;
        discard(stream);
        break;
      }
    }
  } else if (response.body) {
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

/** The body as UTF-8 text, its first `limit` bytes at most. */
export async function readLimited(response: Response, limit: number): Promise<string> {
  const { bytes } = await readUpTo(response, limit);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
}
