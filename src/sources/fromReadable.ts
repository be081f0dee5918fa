import { Observable } from 'rxjs';
import type { Readable } from 'node:stream';
import { optionError } from '../core/validation.js';

/**
 * `encoding` checked as a `TextDecoder` label: a `ValidationError` at once for one it does
 * not know (else the subscription would fail after the file or stream was opened).
 * @internal
 */
export function checkEncoding(where: string, encoding: string | undefined): void {
  if (encoding === undefined) return;
  try {
    new TextDecoder(encoding);
  } catch {
    throw optionError(where, ['encoding'], `must be a text encoding label TextDecoder knows (got ${JSON.stringify(String(encoding))})`, 'enum');
  }
}

/** Options of {@link fromReadable}. */
export interface FromReadableOptions {
  /** Text encoding of the bytes (a `TextDecoder` label), default `utf-8`. */
  encoding?: string;
  /**
   * Destroy the readable when the subscriber unsubscribes early (default `true`). Set it
   * to `false` for a stream the process shares, such as `process.stdin`: it is then only
   * paused and its listeners removed, and a later subscription reads on from where it is.
   */
  destroyOnUnsubscribe?: boolean;
}

/**
 * Text from a Node `Readable`: each chunk decoded as it arrives, a multibyte character
 * split between two chunks held back until it is whole. Empty pieces are not emitted.
 *
 * Cold: listening starts on subscribe. Completes at the readable's `end`, errors with its
 * `error`; unsubscribing early removes the listeners and destroys the readable (see
 * `destroyOnUnsubscribe`).
 *
 * ## Example
 * ```ts
 * fromReadable(process.stdin, { destroyOnUnsubscribe: false }).subscribe(console.log);
 * ```
 *
 * @param readable A Node readable of bytes (or of strings, when it has an encoding set).
 * @param options Encoding and teardown.
 * @return An Observable of the decoded text chunks.
 * @throws {ValidationError} At once, for an `encoding` that `TextDecoder` does not know.
 */
export function fromReadable(readable: Readable, options: FromReadableOptions = {}): Observable<string> {
  checkEncoding('fromReadable', options.encoding);
  return new Observable<string>((subscriber) => {
    const decoder = new TextDecoder(options.encoding ?? 'utf-8');
    let finished = false;
    const onData = (chunk: unknown): void => {
      const text =
        typeof chunk === 'string' ? chunk : chunk instanceof Uint8Array ? decoder.decode(chunk, { stream: true }) : undefined;
      if (text === undefined) {
        // the stream goes on but nobody reads it: let it go as an unsubscribe does
        finished = true;
        release();
        subscriber.error(new TypeError(`fromReadable: expected bytes or strings, got ${typeof chunk}`));
        return;
      }
      if (text.length > 0) subscriber.next(text);
    };
    const onEnd = (): void => {
      finished = true;
      cleanup();
      const rest = decoder.decode();
      if (rest.length > 0) subscriber.next(rest);
      subscriber.complete();
    };
    const onError = (error: unknown): void => {
      finished = true;
      cleanup();
      subscriber.error(error);
    };
    const cleanup = (): void => {
      readable.off('data', onData);
      readable.off('end', onEnd);
      readable.off('error', onError);
    };
    readable.on('data', onData);
    readable.on('end', onEnd);
    readable.on('error', onError);
    // a stream an earlier subscription paused (`destroyOnUnsubscribe: false`) does not flow
    // again for a new 'data' listener: it is resumed
    if (readable.readableFlowing === false) readable.resume();
    /** Stop reading: the listeners removed, the readable destroyed (or paused). */
    const release = (): void => {
      cleanup();
      if (options.destroyOnUnsubscribe ?? true) readable.destroy();
      else readable.pause();
    };
    return () => {
      if (!finished) release();
    };
  });
}
