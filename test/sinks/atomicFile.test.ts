/** The atomic file under the file sinks: partial writes, a failed commit, stale temporary files, path checks. */
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, readlink, realpath, stat, symlink, utimes, writeFile } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AtomicFile, checkWritablePath, removeStaleTemporaryFiles, STALE_TEMP_AGE_MS, temporaryPathFor } from '../../src/sinks/atomicFile.js';
import { SinkError } from '../../src/sinks/errors.js';
import { makeTempDir, removeDir } from '../fixtures/sinkFixtures.js';

let dir: string;
beforeEach(async () => {
  dir = await makeTempDir();
});
afterEach(async () => {
  await removeDir(dir);
});

const bytes = (...values: number[]) => new Uint8Array(values);

/** Makes the file's next vectored write a partial one: only its first `limit` bytes are written (as the OS may do). */
function partialNextWritev(file: AtomicFile, limit: number): void {
  const handle = (file as unknown as { handle: FileHandle }).handle;
  const writev = handle.writev.bind(handle);
  handle.writev = (async (buffers: NodeJS.ArrayBufferView[], position?: number) => {
    handle.writev = writev;
    const joined = Buffer.concat(buffers.map((b) => new Uint8Array(b.buffer, b.byteOffset, b.byteLength)));
    const { bytesWritten } = await handle.write(joined, 0, limit, position);
    return { bytesWritten, buffers };
  }) as FileHandle['writev'];
}

/** What this process holds open under `directory` (Linux: the links of /proc/self/fd; a removed file still counts). */
async function openUnder(directory: string): Promise<string[]> {
  const real = await realpath(directory);
  const paths: string[] = [];
  for (const fd of await readdir('/proc/self/fd')) {
    const target = await readlink(`/proc/self/fd/${fd}`).catch(() => undefined);
    if (target?.startsWith(real)) paths.push(target);
  }
  return paths;
}

describe('AtomicFile', () => {
  it.runIf(existsSync('/proc/self/fd'))('leaves no handle open: not the file once committed or aborted, not the directory it fsynced (control: open while writing)', async () => {
    const file = await AtomicFile.open(join(dir, 'out.bin'));
    await file.append([bytes(1, 2, 3)]);
    expect(await openUnder(dir)).toEqual([await realpath(file.temporaryPath)]); // control: an open file is seen
    await file.commit(); // fsync: the file, then the directory
    expect(await openUnder(dir)).toEqual([]);
    const aborted = await AtomicFile.open(join(dir, 'other.bin'));
    expect(await openUnder(dir)).toHaveLength(1);
    await aborted.abort();
    expect(await openUnder(dir)).toEqual([]);
  });

  it('continues a partial vectored write from where it stopped, in the right place', async () => {
    const path = join(dir, 'out.bin');
    const file = await AtomicFile.open(path);
    expect(await file.append([bytes(1, 2)])).toBe(2);
    // 3 pieces, the write stops inside the second one
    partialNextWritev(file, 4);
    expect(await file.append([bytes(3, 4, 5), bytes(6, 7, 8), bytes(9)])).toBe(7);
    expect(await file.append([bytes(10)])).toBe(1);
    await file.commit();
    expect([...(await readFile(path))]).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });

  it('a commit whose rename fails removes the temporary file and leaves the target as it was', async () => {
    const path = join(dir, 'out.bin');
    const file = await AtomicFile.open(path);
    await file.append([bytes(1, 2, 3)]);
    // meanwhile the target became a directory that is not empty: the rename fails
    await mkdir(path);
    await writeFile(join(path, 'inside'), 'x');
    await expect(file.commit()).rejects.toThrow();
    expect((await readdir(dir)).sort()).toEqual(['out.bin']);
    expect(await readdir(path)).toEqual(['inside']);
  });

  it('opening removes a temporary file of ours left over an hour ago in that directory; a younger one stays', async () => {
    const stale = temporaryPathFor(join(dir, 'crashed.wav'));
    const young = temporaryPathFor(join(dir, 'writing.wav'));
    await writeFile(stale, 'x');
    await writeFile(young, 'x');
    const twoHoursAgo = new Date(Date.now() - 2 * STALE_TEMP_AGE_MS);
    await utimes(stale, twoHoursAgo, twoHoursAgo);
    const file = await AtomicFile.open(join(dir, 'out.bin'));
    await file.abort();
    expect(await readdir(dir)).toEqual([young.slice(dir.length + 1)]);
  });

  it('a file is committed or aborted once', async () => {
    const committed = await AtomicFile.open(join(dir, 'a.bin'));
    await committed.commit({ fsync: false });
    await committed.abort(); // a no-op once committed: the file stays, and stays committed
    await expect(committed.commit()).rejects.toThrow('file already committed');
    const aborted = await AtomicFile.open(join(dir, 'b.bin'));
    await aborted.abort();
    await expect(aborted.commit()).rejects.toThrow('file already aborted');
    expect(await readdir(dir)).toEqual(['a.bin']);
  });

  it('open refuses a target that is a directory, before creating anything', async () => {
    await mkdir(join(dir, 'taken'));
    await expect(AtomicFile.open(join(dir, 'taken'))).rejects.toThrow(SinkError);
    expect(await readdir(dir)).toEqual(['taken']);
  });
});

describe('checkWritablePath', () => {
  it('under a plain file, says that the file is not a directory', async () => {
    await writeFile(join(dir, 'plain'), 'x');
    expect(() => checkWritablePath(join(dir, 'plain', 'x.wav'))).toThrow(`cannot write ${join(dir, 'plain', 'x.wav')}: ${join(dir, 'plain')} is not a directory`);
  });
});

describe('removeStaleTemporaryFiles', () => {
  it('removes a temporary file exactly staleAfterMs old, not one a millisecond younger', async () => {
    const path = temporaryPathFor(join(dir, 'x.wav'));
    await writeFile(path, 'x');
    const { mtimeMs } = await stat(path);
    expect(await removeStaleTemporaryFiles(dir, 1000, mtimeMs + 999)).toEqual([]);
    expect(await removeStaleTemporaryFiles(dir, 1000, mtimeMs + 1000)).toEqual([path.slice(dir.length + 1)]);
    expect(await readdir(dir)).toEqual([]);
  });

  it('removes only files: a link of our naming to a directory stays', async () => {
    await mkdir(join(dir, 'target'));
    const link = temporaryPathFor(join(dir, 'x.wav'));
    await symlink(join(dir, 'target'), link);
    const file = temporaryPathFor(join(dir, 'y.wav'));
    await writeFile(file, 'x');
    // control: the file of the same age is removed
    expect(await removeStaleTemporaryFiles(dir, 0, Date.now() + 1000)).toEqual([file.slice(dir.length + 1)]);
    expect((await readdir(dir)).sort()).toEqual([link.slice(dir.length + 1), 'target'].sort());
  });
});
