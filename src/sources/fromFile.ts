import { defer, type Observable } from 'rxjs';
import { optionError } from '../core/validation.js';
import { checkEncoding, fromReadable } from './fromReadable.js';

/**
 * Node's `fs`, fetched when a file is read rather than imported, so that browsers can load
 * `rxvoice/sources` (for `fromTokens`); `fromFile` itself needs Node.
 */
function nodeFs(): typeof import('node:fs') {
  const fs = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process?.getBuiltinModule?.('node:fs');
  if (fs === undefined) throw new Error('fromFile needs Node.js (>= 20.16): there is no file system here');
  return fs as typeof import('node:fs');
}

/** Options of {@link fromFile}. */
export interface FromFileOptions {
  /** Bytes read at a time (default 64 KiB). */
  chunkSize?: number;
  /** Text encoding of the file (a `TextDecoder` label), default `utf-8`. */
  encoding?: string;
}

/**
 * The text of a file as a token-like stream: chunks of at most `chunkSize` bytes,
 * decoded, never splitting a multibyte character.
 *
 * Cold: the file is opened on subscribe and closed on complete, error or unsubscribe.
 * A missing file errors with the `ENOENT` error of `fs`. Node only (outside Node the
 * subscription errors).
 *
 * ## Example
 * ```ts
 * fromFile('story.txt').pipe(segmentSentences({ locale: 'en-us' }), client.speak({ voice_id: 1 }));
 * ```
 *
 * @param path Path of the file.
 * @param options Chunk size and encoding.
 * @return An Observable of the decoded text chunks.
 * @throws {ValidationError} At once, when `chunkSize` is not an integer >= 1 or `encoding` is not a label `TextDecoder` knows.
 */
export function fromFile(path: string, options: FromFileOptions = {}): Observable<string> {
  const chunkSize = options.chunkSize ?? 64 * 1024;
  if (!Number.isInteger(chunkSize) || chunkSize < 1) {
    throw optionError('fromFile', ['chunkSize'], 'must be an integer >= 1', 'greater_than_equal');
  }
  checkEncoding('fromFile', options.encoding);
  return defer(() =>
    fromReadable(nodeFs().createReadStream(path, { highWaterMark: chunkSize }), {
      ...(options.encoding === undefined ? {} : { encoding: options.encoding }),
    }),
  );
}

/**
 * Standard input as text chunks (multibyte characters never split). Unsubscribing pauses
 * stdin and removes the listeners; it does not destroy it: a later subscription reads on.
 *
 * @param options Encoding of the input (default `utf-8`).
 * @return An Observable of the decoded text chunks, completing at end of input.
 * @throws {ValidationError} At once, for an `encoding` that `TextDecoder` does not know.
 */
export function fromStdin(options: { encoding?: string } = {}): Observable<string> {
  checkEncoding('fromStdin', options.encoding);
  return defer(() =>
    fromReadable(process.stdin, {
      destroyOnUnsubscribe: false,
      ...(options.encoding === undefined ? {} : { encoding: options.encoding }),
    }),
  );
}
