/**
 * A file sink's temporary file, opened as soon as the sink is subscribed (before its
 * source, so that a file that cannot be written fails before anything upstream starts)
 * and awaited on the first write: the one lazy atomic-file open of `toFile` and
 * `toWavFile`.
 */
import { AtomicFile } from './atomicFile.js';
import { toSinkError } from './errors.js';

/** A temporary file being opened next to its target. */
export interface PendingFile {
  /** The open file; rejects with a `SinkError` naming the sink when it could not be created. */
  ready(): Promise<AtomicFile>;
  /** Remove the temporary file, whether open or still opening (teardown); never rejects for a failed open. */
  abort(): Promise<void>;
}

/**
 * Start creating the temporary file of `path` (file mode `mode`, before umask) for the
 * sink named `sink` (in error messages).
 */
export function openPendingFile(sink: string, path: string, mode: number | undefined): PendingFile {
  const opening = AtomicFile.open(path, mode === undefined ? {} : { mode });
  // Avoid an unhandled rejection when nothing awaits it (unsubscribed at once).
  opening.catch(() => undefined);
  let file: AtomicFile | undefined;
  return {
    async ready() {
      if (!file) {
        try {
          file = await opening;
        } catch (error) {
          throw toSinkError(error, `${sink} could not create a temporary file next to ${path}`);
        }
      }
      return file;
    },
    async abort() {
      const target = file ?? (await opening.catch(() => undefined));
      await target?.abort();
    },
  };
}
