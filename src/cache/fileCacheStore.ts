/**
 * The store in a directory: one file per entry (`<key>.rxvc`). A write goes to a temporary
 * file of its own in the same directory (`.<key>.<random>.tmp`), is synced, then renamed
 * over the entry: a reader sees the old entry or the new one, never half of one, and
 * concurrent writers (processes or calls) each rename a whole file, the last one winning.
 * A read touches the file's mtime (recency); eviction, after each write, lists the
 * directory and removes the least recently used entries until the total fits, and
 * temporary files a crashed writer left (older than an hour).
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { open, readdir, readFile, rename, stat, unlink, utimes } from 'node:fs/promises';
import { join } from 'node:path';
import * as z from 'zod/mini';
import { checkOptions } from '../core/validation.js';
import type { CacheSetOptions, CacheStore } from './store.js';

const ENTRY_SUFFIX = '.rxvc';
const KEY_PATTERN = /^[0-9a-f]{64}$/;
const STALE_TEMP_MS = 60 * 60 * 1000;

const DirSchema = z.string().check(z.minLength(1, { error: 'must be a directory path' }));

const ignoreMissing = (error: unknown): void => {
  if ((error as NodeJS.ErrnoException | null)?.code !== 'ENOENT') throw error;
};

/**
 * A cache store in a directory (created if missing), safe for several processes at once:
 * entries are written atomically (temporary file, sync, rename).
 *
 * ## Example
 * ```ts
 * import { speechCache, fileCacheStore } from 'rxvoice/cache';
 *
 * const cache = speechCache({ store: fileCacheStore('.cache/speech'), maxBytes: 512 * 1024 * 1024 });
 * ```
 *
 * @param dir The directory of the entries (only files named `<64 hex>.rxvc` are read or evicted).
 * @return The store.
 * @throws ValidationError when `dir` is not a non-empty string.
 */
export function fileCacheStore(dir: string): CacheStore {
  checkOptions(DirSchema, dir, 'fileCacheStore');
  mkdirSync(dir, { recursive: true });
  const pathOf = (key: string): string => {
    if (!KEY_PATTERN.test(key)) throw new TypeError('fileCacheStore: keys are 64 hex digits');
    return join(dir, key + ENTRY_SUFFIX);
  };
  return {
    async get(key) {
      const path = pathOf(key);
      try {
        const bytes = await readFile(path);
        const now = new Date();
        await utimes(path, now, now).catch(ignoreMissing);
        return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      } catch (error) {
        ignoreMissing(error);
        return undefined;
      }
    },
    async set(key, value, { maxBytes }: CacheSetOptions) {
      const path = pathOf(key);
      if (value.byteLength > maxBytes) return;
      const temp = join(dir, `.${key}.${randomUUID()}.tmp`);
      const handle = await open(temp, 'wx');
      try {
        try {
          await handle.writeFile(value);
          await handle.sync();
        } finally {
          await handle.close();
        }
        await rename(temp, path);
      } catch (error) {
        // a write, sync or rename that failed (a full disk) leaves no temporary file behind
        await unlink(temp).catch(() => undefined);
        throw error;
      }
      await evict(dir, maxBytes);
    },
    async delete(key) {
      await unlink(pathOf(key)).catch(ignoreMissing);
    },
  };
}

/** Remove least recently used entries until the directory's entries fit in `maxBytes`, and stale temporary files. */
async function evict(dir: string, maxBytes: number): Promise<void> {
  const now = Date.now();
  const entries: { path: string; size: number; mtimeMs: number }[] = [];
  for (const name of await readdir(dir)) {
    const path = join(dir, name);
    const info = await stat(path).catch(() => undefined);
    if (!info?.isFile()) continue;
    if (name.endsWith('.tmp') && name.startsWith('.') && now - info.mtimeMs > STALE_TEMP_MS) await unlink(path).catch(() => undefined);
    else if (name.endsWith(ENTRY_SUFFIX) && KEY_PATTERN.test(name.slice(0, -ENTRY_SUFFIX.length))) entries.push({ path, size: info.size, mtimeMs: info.mtimeMs });
  }
  let total = entries.reduce((sum, entry) => sum + entry.size, 0);
  entries.sort((a, b) => a.mtimeMs - b.mtimeMs);
  for (const entry of entries) {
    if (total <= maxBytes) break;
    await unlink(entry.path).catch(ignoreMissing);
    total -= entry.size;
  }
}
