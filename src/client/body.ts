/**
 * Readers of an answer's body: as a stream of chunks, or collected up to a limit (a peer
 * sending more is cut off, never buffered without bound).
 */
import { Observable } from 'rxjs';

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
export async function readUpTo(response: Response, limit: number): Promise<{ bytes: Uint8Array; over: boolean }> {
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

/** The body as UTF-8 text, its first `limit` bytes at most. */
export async function readLimited(response: Response, limit: number): Promise<string> {
  const { bytes } = await readUpTo(response, limit);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
}
