/**
 * The journal's lock: one batch per journal at a time. A lock file `<journal>.lock`
 * holds the owner's pid, host and a random token; it is taken atomically (the content is
 * written to a private file first, then `link`ed into place, which fails when the lock
 * exists), so a reader never sees a half-written lock. A lock left by a process that
 * died (same host, `process.kill(pid, 0)` answers ESRCH) is stale and taken over; any
 * other lock is refused with a {@link JournalLockedError} naming its owner.
 */
import { randomBytes } from 'node:crypto';
import { link, readFile, realpath, rm, stat, unlink, writeFile, open } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { readFileSync, unlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import { JournalLockedError } from './errors.js';

/** What a lock file holds. */
export interface LockOwner {
  pid: number;
  host: string;
  /** When the lock was taken (ISO 8601). */
  since: string;
  /** Random, to tell one holder's lock from another's with the same pid. */
  token: string;
}

/** A taken lock; `release` removes the lock file if it is still ours. Safe to call twice. */
export interface JournalLock {
  readonly path: string;
  readonly owner: LockOwner;
  release(): Promise<void>;
}

/** `path` with its links resolved: of the file when it exists, else of its folder (the path as given when neither exists). */
async function realPath(path: string): Promise<string> {
  try {
    return await realpath(path);
  } catch {
    try {
      return join(await realpath(dirname(path)), basename(path));
    } catch {
      return path;
    }
  }
}

/** A break file older than this (ms) was left by a process that died while breaking a stale lock. */
const STALE_BREAK_MS = 10_000;

/**
 * Take the lock of the journal at `journalPath`. Rejects with {@link JournalLockedError}
 * when another live process holds it (or a process of another host, which cannot be
 * checked from here).
 */
export async function lockJournal(journalPath: string): Promise<JournalLock> {
  // the lock of the file itself: two names of one journal (a symlink, a linked folder) share it
  const path = `${await realPath(journalPath)}.lock`;
  const owner: LockOwner = { pid: process.pid, host: hostname(), since: new Date().toISOString(), token: randomBytes(8).toString('hex') };
  const content = `${JSON.stringify(owner)}\n`;
  const mine = `${path}.${process.pid}.${owner.token}`;
  await writeFile(mine, content, { flag: 'wx' });
  try {
    for (let attempt = 0; attempt < 20; attempt++) {
      try {
        await placeLock(mine, path, content);
        return lockOf(path, owner, content);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const holder = await readOwner(path);
      if (holder === 'gone') continue;
      if (holder === 'unreadable' || holder.host !== owner.host || isAlive(holder.pid)) throw new JournalLockedError(journalPath, path, holder);
      await breakStale(path, holder);
    }
    throw new JournalLockedError(journalPath, path, 'unreadable');
  } finally {
    await unlink(mine).catch(() => undefined);
  }
}

/**
 * Put the lock in place atomically: `link` the private file (whole content at once);
 * where the file system has no hard links, create it with O_EXCL and write it (a reader
 * may then see it empty for a moment, and refuses it as unreadable: safe). Rejects with
 * EEXIST when a lock is there.
 */
async function placeLock(mine: string, path: string, content: string): Promise<void> {
  try {
    await link(mine, path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'ENOSYS') throw error;
    const handle = await open(path, 'wx');
    try {
      await handle.writeFile(content);
    } finally {
      await handle.close();
    }
  }
}

function lockOf(path: string, owner: LockOwner, content: string): JournalLock {
  let released = false;
  // A process that exits before the asynchronous release (process.exit) still removes it.
  const onExit = (): void => {
    try {
      if (readFileSync(path, 'utf8') === content) unlinkSync(path);
    } catch {
      // gone already
    }
  };
  process.once('exit', onExit);
  return {
    path,
    owner,
    async release() {
      if (released) return;
      released = true;
      process.off('exit', onExit);
      // Remove it only while it is still ours (never another process's lock).
      const now = await readFile(path, 'utf8').catch(() => undefined);
      if (now === content) await unlink(path).catch(() => undefined);
    },
  };
}

async function readOwner(path: string): Promise<LockOwner | 'gone' | 'unreadable'> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'gone';
    return 'unreadable';
  }
  try {
    const value = JSON.parse(text) as Partial<LockOwner>;
    if (typeof value.pid === 'number' && Number.isInteger(value.pid) && value.pid > 0 && typeof value.host === 'string' && typeof value.token === 'string') {
      return { pid: value.pid, host: value.host, since: String(value.since ?? ''), token: value.token };
    }
  } catch {
    // below
  }
  return 'unreadable';
}

/** Whether a local process `pid` exists (EPERM: it exists, owned by another user). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/**
 * Remove a stale lock under a break file taken with O_EXCL, so two processes breaking the same stale lock at once cannot remove the fresh
 * lock one of them has just taken: the one holding the break file checks that the lock
 * is still the stale one before removing it.
 */
async function breakStale(path: string, stale: LockOwner): Promise<void> {
  const breaker = `${path}.break`;
  let handle;
  try {
    handle = await open(breaker, 'wx');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    const info = await stat(breaker).catch(() => undefined);
    if (info && Date.now() - info.mtimeMs > STALE_BREAK_MS) await rm(breaker, { force: true });
    await new Promise((resolve) => setTimeout(resolve, 20));
    return;
  }
  try {
    const now = await readOwner(path);
    if (now !== 'gone' && now !== 'unreadable' && now.token === stale.token) await unlink(path).catch(() => undefined);
  } finally {
    await handle.close();
    await rm(breaker, { force: true });
  }
}
