/**
 * A file written under a temporary name in the target's directory and renamed onto the
 * target only when complete, so no half-written file ever exists under the final name.
 *
 * A process killed mid-write (`kill -9`, power loss) leaves its temporary file behind;
 * the next `open` in that directory removes temporary files of our own naming
 * (`.<name>.<12 hex digits>.tmp`) not modified for `staleAfterMs` (default one hour), so
 * they do not pile up. A file being written is modified at every write, so only writers
 * stalled for that long could lose theirs.
 */
import { randomBytes } from 'node:crypto';
import { accessSync, constants, statSync } from 'node:fs';
import { open, readdir, rename, stat, unlink, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { SinkError } from './errors.js';

export interface AtomicFileOptions {
  /** File mode of the new file (before umask). Default 0o666. */
  mode?: number;
  /**
   * Age (since last modification) past which a temporary file of our naming left in the
   * target directory is removed on open, ms. Default {@link STALE_TEMP_AGE_MS} (one hour).
   */
  staleAfterMs?: number;
}

/** Default age past which leftover temporary files are removed: one hour. */
export const STALE_TEMP_AGE_MS = 60 * 60 * 1000;

/** Names `temporaryPathFor` gives: `.<name>.<12 hex digits>.tmp`. */
const TEMP_NAME = /^\..+\.[0-9a-f]{12}\.tmp$/;

/**
 * Remove temporary files of our naming in `directory` not modified for `staleAfterMs`.
 * Best effort: never throws (a file may vanish or be locked meanwhile). Resolves with the
 * names removed.
 */
export async function removeStaleTemporaryFiles(directory: string, staleAfterMs = STALE_TEMP_AGE_MS, now = Date.now()): Promise<string[]> {
  const removed: string[] = [];
  let names: string[];
  try {
    names = await readdir(directory);
  } catch {
    return removed;
  }
  for (const name of names) {
    if (!TEMP_NAME.test(name)) continue;
    const path = join(directory, name);
    try {
      const info = await stat(path);
      if (!info.isFile() || now - info.mtimeMs < staleAfterMs) continue;
      await unlink(path);
      removed.push(name);
    } catch {
      // gone or not ours to remove: leave it
    }
  }
  return removed;
}

/** The temporary name for `path`: `.<name>.<random>.tmp` in the same directory. */
export function temporaryPathFor(path: string): string {
  const absolute = resolve(path);
  return join(dirname(absolute), `.${basename(absolute)}.${randomBytes(6).toString('hex')}.tmp`);
}

/**
 * Checks that a file can be written at `path`: the path is not a directory, its
 * directory exists, is a directory and is writable. Nothing is created.
 *
 * Synchronous (a few `stat` calls), so the file sinks run it when subscribed, before
 * they subscribe to what they write (a hot source loses nothing), and the CLI runs it
 * before any paid call: a bad output path costs nothing. The real write can still fail
 * later (a full disk, a permission changed meanwhile).
 *
 * ## Example
 * ```ts
 * import { checkWritablePath } from 'rxvoice/sinks';
 *
 * checkWritablePath('out/answer.wav'); // throws SinkError when out/ is missing
 * ```
 *
 * @param path The file to be written (relative paths resolve against the working directory).
 * @throws SinkError (reason `'io'`) saying what is wrong.
 */
export function checkWritablePath(path: string): void {
  const target = resolve(path);
  let existing: ReturnType<typeof statSync> | undefined;
  try {
    existing = statSync(target);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'ENOTDIR') {
      throw new SinkError('io', `cannot write ${target}: ${(error as Error).message}`, { cause: error });
    }
  }
  if (existing?.isDirectory()) throw new SinkError('io', `cannot write ${target}: it is a directory`);
  const directory = dirname(target);
  const parent = statSync(directory, { throwIfNoEntry: false });
  if (!parent) throw new SinkError('io', `cannot write ${target}: the directory ${directory} does not exist`);
  if (!parent.isDirectory()) throw new SinkError('io', `cannot write ${target}: ${directory} is not a directory`);
  try {
    accessSync(directory, constants.W_OK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // only a refusal means "not writable"; another failure (Deno without its sys permission) says what it is
    const why = code === 'EACCES' || code === 'EPERM' || code === 'EROFS' ? 'is not writable' : `could not be checked (${(error as Error).message})`;
    throw new SinkError('io', `cannot write ${target}: the directory ${directory} ${why}`, { cause: error });
  }
}

export class AtomicFile {
  /** Bytes appended so far (the append position). */
  position = 0;
  private state: 'open' | 'committed' | 'aborted' = 'open';

  private constructor(
    readonly path: string,
    readonly temporaryPath: string,
    private readonly handle: FileHandle,
  ) {}

  /** Check `path` ({@link checkWritablePath}), then create the temporary file (exclusively) next to it. */
  static async open(path: string, options: AtomicFileOptions = {}): Promise<AtomicFile> {
    const target = resolve(path);
    checkWritablePath(target);
    await removeStaleTemporaryFiles(dirname(target), options.staleAfterMs ?? STALE_TEMP_AGE_MS);
    const temporaryPath = temporaryPathFor(target);
    const handle = await open(temporaryPath, 'wx', options.mode ?? 0o666);
    return new AtomicFile(target, temporaryPath, handle);
  }

  /** Write `bytes` to `path` whole or not at all: a temporary file, committed (fsync, rename), removed on a failure. */
  static async write(path: string, bytes: Uint8Array, options: AtomicFileOptions = {}): Promise<void> {
    const file = await AtomicFile.open(path, options);
    try {
      await file.append([bytes]);
      await file.commit();
    } catch (error) {
      await file.abort();
      throw error;
    }
  }

  /**
   * Append `pieces` in order with one vectored write (`writev`); partial writes are
   * continued. Resolves with the bytes appended.
   */
  async append(pieces: readonly Uint8Array[]): Promise<number> {
    const nonEmpty = pieces.filter((piece) => piece.byteLength > 0);
    const total = nonEmpty.reduce((n, piece) => n + piece.byteLength, 0);
    if (total === 0) return 0;
    const { bytesWritten } =
      nonEmpty.length === 1
        ? await this.handle.write(nonEmpty[0] as Uint8Array, 0, total, this.position)
        : await this.handle.writev(nonEmpty, this.position);
    let done = bytesWritten;
    // Rare: a partial write. Continue piece by piece from where it stopped.
    let skip = done;
    for (const piece of nonEmpty) {
      if (skip >= piece.byteLength) {
        skip -= piece.byteLength;
        continue;
      }
      const rest = piece.subarray(skip);
      skip = 0;
      await this.writeAt(rest, this.position + done);
      done += rest.byteLength;
    }
    this.position += total;
    return total;
  }

  /** Positional write that does not move the append position. */
  async writeAt(bytes: Uint8Array, position: number): Promise<void> {
    let offset = 0;
    while (offset < bytes.byteLength) {
      const { bytesWritten } = await this.handle.write(bytes, offset, bytes.byteLength - offset, position + offset);
      offset += bytesWritten;
    }
  }

  /** fsync (optional), close, rename onto the final path, fsync the directory (best effort). */
  async commit(options: { fsync?: boolean } = {}): Promise<void> {
    if (this.state !== 'open') throw new Error(`file already ${this.state}`);
    const fsync = options.fsync ?? true;
    try {
      if (fsync) await this.handle.sync();
      await this.handle.close();
      await rename(this.temporaryPath, this.path);
      this.state = 'committed';
    } catch (error) {
      await this.abort();
      throw error;
    }
    if (fsync) await syncDirectory(dirname(this.path));
  }

  /** Close and remove the temporary file. Never throws; a no-op once committed. */
  async abort(): Promise<void> {
    if (this.state !== 'open') return;
    this.state = 'aborted';
    await this.handle.close().catch(() => undefined);
    await unlink(this.temporaryPath).catch(() => undefined);
  }
}

async function syncDirectory(directory: string): Promise<void> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(directory, 'r');
    await handle.sync();
  } catch {
    // Not every platform can fsync a directory (Windows); the rename is still done.
  } finally {
    await handle?.close().catch(() => undefined);
  }
}
