/**
 * The three stores behind one contract: what is set is got back byte for byte, a read
 * makes an entry recent, the size bound evicts least recently used first; the file store
 * writes atomically under concurrent writers; the Redis store against a real redis-server.
 * Expiry and unreadable entries through speechCache's core.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { fileCacheStore, memoryCacheStore, redisCacheStore, type CacheStore } from '../../src/cache/index.js';
import { CacheCore } from '../../src/cache/core.js';
import { decodeEntry, encodeEntry } from '../../src/cache/entry.js';
import { cacheKey } from '../../src/cache/key.js';
import { requireTool } from '../setup/tools.js';
import { startRedis, type RedisServer } from '../setup/redis.js';

const key = (n: number): string => n.toString(16).padStart(64, '0');
const bytes = (n: number, fill: number): Uint8Array => new Uint8Array(n).fill(fill);
const opts = (maxBytes: number) => ({ ttlMs: undefined, maxBytes });

/** The contract every store keeps. */
function storeContract(name: string, make: () => Promise<CacheStore>) {
  describe(`${name}: the store contract`, () => {
    it('gets back what was set; a missing key is undefined; delete removes', async () => {
      const store = await make();
      await store.set(key(1), bytes(100, 7), opts(10_000));
      expect(Buffer.from((await store.get(key(1)))!).equals(Buffer.from(bytes(100, 7)))).toBe(true);
      expect(await store.get(key(2))).toBeUndefined();
      await store.delete(key(1));
      expect(await store.get(key(1))).toBeUndefined();
      await store.close?.();
    });

    it('evicts least recently used first once past maxBytes; a read makes an entry recent', async () => {
      const store = await make();
      await store.set(key(1), bytes(400, 1), opts(1000));
      await delay(15);
      await store.set(key(2), bytes(400, 2), opts(1000));
      await delay(15);
      await store.get(key(1)); // 1 is now more recent than 2
      await delay(15);
      await store.set(key(3), bytes(400, 3), opts(1000)); // 1200 > 1000: the least recent (2) goes
      expect(await store.get(key(2))).toBeUndefined();
      expect(await store.get(key(1))).toBeDefined();
      expect(await store.get(key(3))).toBeDefined();
      // An entry larger than the bound is not stored at all (and evicts nothing).
      await store.set(key(4), bytes(2000, 4), opts(1000));
      expect(await store.get(key(4))).toBeUndefined();
      expect(await store.get(key(1))).toBeDefined();
      await store.close?.();
    });

    it('an entry of exactly maxBytes is kept, and so are entries filling maxBytes exactly', async () => {
      const store = await make();
      await store.set(key(1), bytes(1000, 1), opts(1000));
      expect(await store.get(key(1))).toBeDefined();
      await delay(15); // recency in the file store is the mtime
      await store.set(key(2), bytes(500, 2), opts(1000));
      await delay(15);
      await store.set(key(3), bytes(500, 3), opts(1000));
      expect(await store.get(key(2))).toBeDefined();
      expect(await store.get(key(3))).toBeDefined();
      await store.close?.();
    });

    it('a replaced entry counts once, a deleted one not at all (control: a third entry past the bound evicts)', async () => {
      const store = await make();
      await store.set(key(1), bytes(600, 1), opts(1000));
      await store.set(key(1), bytes(600, 9), opts(1000));
      await delay(15); // recency in the file store is the mtime
      await store.set(key(2), bytes(300, 2), opts(1000)); // 900: both fit
      expect((await store.get(key(1)))?.[0]).toBe(9);
      expect(await store.get(key(2))).toBeDefined();
      await store.delete(key(1));
      await delay(15);
      await store.set(key(3), bytes(600, 3), opts(1000)); // 900 again
      expect(await store.get(key(3))).toBeDefined();
      await delay(15);
      expect(await store.get(key(2))).toBeDefined(); // now the most recent
      await delay(15);
      await store.set(key(4), bytes(600, 4), opts(1000)); // 1500: the least recent (3) goes
      expect(await store.get(key(3))).toBeUndefined();
      expect(await store.get(key(2))).toBeDefined();
      expect(await store.get(key(4))).toBeDefined();
      await store.close?.();
    });
  });
}

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const dirs: string[] = [];
const tempDir = (): string => {
  const dir = mkdtempSync(join(tmpdir(), 'rxvoice-cache-'));
  dirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

storeContract('memoryCacheStore', async () => memoryCacheStore());
storeContract('fileCacheStore', async () => fileCacheStore(tempDir()));

describe('fileCacheStore under concurrent writers', () => {
  it('many writers of the same and of other keys: every file is a whole entry, no temporary file is left', async () => {
    const dir = tempDir();
    // Two stores on one directory stand for two processes.
    const stores = [fileCacheStore(dir), fileCacheStore(dir)];
    const writes: Promise<void>[] = [];
    for (let i = 0; i < 40; i++) {
      const entry = encodeEntry({ text: `entry ${i % 5}`, audio: bytes(5000 + i, i) });
      writes.push(stores[i % 2]!.set(key(i % 5), entry, opts(1_000_000)));
    }
    await Promise.all(writes);
    const names = readdirSync(dir);
    expect(names.filter((n) => n.endsWith('.tmp'))).toEqual([]);
    expect(names).toHaveLength(5);
    for (const name of names) expect(decodeEntry(new Uint8Array(readFileSync(join(dir, name))))).toBeDefined();
  });

  it('ignores files that are not entries; a corrupt entry is a miss and is removed', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'notes.txt'), 'keep me');
    const store = fileCacheStore(dir);
    writeFileSync(join(dir, key(9) + '.rxvc'), 'garbage');
    const core = new CacheCore(store, undefined, 1000, () => undefined, Date.now);
    expect(await core.lookup(key(9))).toBeUndefined();
    expect(readdirSync(dir).sort()).toEqual(['notes.txt']);
    await store.set(key(1), bytes(900, 1), opts(1000));
    await store.set(key(2), bytes(900, 2), opts(1000));
    expect(readdirSync(dir).sort()).toEqual([key(2) + '.rxvc', 'notes.txt']);
  });
});

describe('memoryCacheStore', () => {
  it("its own maxBytes bounds it below the cache's (control: without it the same entries stay)", async () => {
    const fill = async (store: CacheStore) => {
      await store.set(key(1), bytes(400, 1), opts(10_000));
      await store.set(key(2), bytes(400, 2), opts(10_000));
      return [(await store.get(key(1))) !== undefined, (await store.get(key(2))) !== undefined];
    };
    expect(await fill(memoryCacheStore({ maxBytes: 500 }))).toEqual([false, true]);
    expect(await fill(memoryCacheStore())).toEqual([true, true]);
  });

  it("keeps its own copy: the caller's buffer changed after set does not change the entry", async () => {
    const store = memoryCacheStore();
    const value = bytes(10, 1);
    await store.set(key(1), value, opts(100));
    value.fill(2);
    expect([...(await store.get(key(1)))!]).toEqual([...bytes(10, 1)]);
  });
});

describe('fileCacheStore', () => {
  const tempFiles = (dir: string) => readdirSync(dir).filter((n) => n.endsWith('.tmp'));

  it('a write whose rename fails leaves no temporary file (control: the listing shows dot files)', async () => {
    const dir = tempDir();
    const store = fileCacheStore(dir);
    mkdirSync(join(dir, key(1) + '.rxvc')); // a directory where the entry goes: the rename fails
    await expect(store.set(key(1), bytes(10, 1), opts(1000))).rejects.toThrow();
    expect(tempFiles(dir)).toEqual([]);
    writeFileSync(join(dir, `.${key(1)}.control.tmp`), 'x');
    expect(tempFiles(dir)).toEqual([`.${key(1)}.control.tmp`]);
  });

  it('a write that fails before its rename (here: bytes the file system refuses) leaves no temporary file either', async () => {
    const dir = tempDir();
    const store = fileCacheStore(dir);
    const refused = { byteLength: 10 } as unknown as Uint8Array; // not bytes: writeFile throws
    await expect(store.set(key(2), refused, opts(1000))).rejects.toThrow();
    expect(tempFiles(dir)).toEqual([]);
    expect(readdirSync(dir)).toEqual([]);
  });

  it("a crashed writer's temporary file older than an hour is removed by the next write; a fresh one is kept", async () => {
    const dir = tempDir();
    const store = fileCacheStore(dir);
    const stale = `.${key(1)}.stale.tmp`;
    const fresh = `.${key(1)}.fresh.tmp`;
    writeFileSync(join(dir, stale), 'half');
    writeFileSync(join(dir, fresh), 'half');
    const twoHoursAgo = new Date(Date.now() - 2 * 3600_000);
    utimesSync(join(dir, stale), twoHoursAgo, twoHoursAgo);
    await store.set(key(2), bytes(10, 2), opts(1000));
    expect(tempFiles(dir)).toEqual([fresh]);
  });

  it('a key that is not 64 hex digits is refused, never made a path', async () => {
    const dir = tempDir();
    const store = fileCacheStore(dir);
    for (const bad of ['../' + key(1).slice(3), key(1).toUpperCase().replace(/0/g, 'A'), '']) {
      await expect(store.get(bad)).rejects.toThrow(TypeError);
      await expect(store.set(bad, bytes(1, 1), opts(10))).rejects.toThrow(TypeError);
      await expect(store.delete(bad)).rejects.toThrow(TypeError);
    }
    await store.set(key(1), bytes(1, 1), opts(10)); // control: a good key is stored
    expect(readdirSync(dir)).toEqual([key(1) + '.rxvc']);
  });
});

describe('entries and keys', () => {
  it('an entry round-trips; any truncation or other bytes decode to undefined, never to wrong audio', () => {
    fc.assert(
      fc.property(fc.string(), fc.uint8Array({ maxLength: 300 }), fc.option(fc.integer({ min: 1, max: 1e13 }), { nil: undefined }), (text, audio, expiresAt) => {
        const encoded = encodeEntry({ text, audio, format: 'wav', expiresAt, word_timestamps: [{ word: 'a', start: 0, end: 0.5 }] });
        const back = decodeEntry(encoded);
        expect(back?.text).toBe(text);
        expect(Buffer.from(back!.audio).equals(Buffer.from(audio))).toBe(true);
        for (let cut = 0; cut < encoded.byteLength; cut += Math.max(1, Math.floor(encoded.byteLength / 7))) {
          expect(decodeEntry(encoded.subarray(0, cut))).toBeUndefined();
        }
        // bytes after the audio: not this entry either
        const longer = new Uint8Array(encoded.byteLength + 1);
        longer.set(encoded);
        expect(decodeEntry(longer)).toBeUndefined();
      }),
    );
    fc.assert(fc.property(fc.uint8Array({ maxLength: 200 }), (junk) => void decodeEntry(junk)));
  });

  it('keys: settings order does not matter, outer whitespace does not, every other difference does', async () => {
    const base = await cacheKey('Hello there.', { path: 'live', voice_id: 1, language: 'en-us' });
    expect(await cacheKey('  Hello there.\n', { language: 'en-us', path: 'live', voice_id: 1 })).toBe(base);
    expect(await cacheKey('Hello there!', { path: 'live', voice_id: 1, language: 'en-us' })).not.toBe(base);
    expect(await cacheKey('hello there.', { path: 'live', voice_id: 1, language: 'en-us' })).not.toBe(base);
    expect(await cacheKey('Hello there.', { path: 'live', voice_id: 1, language: 'en-gb' })).not.toBe(base);
    expect(await cacheKey('Hello there.', { path: 'tts-stream', voice_id: 1, language: 'en-us' })).not.toBe(base);
    expect(base).toMatch(/^[0-9a-f]{64}$/);
    // a setting given as undefined is a setting not given (options spread from a caller's object): the
    // same entry, not a second paid synthesis; given a value, another entry (control)
    expect(await cacheKey('Hello there.', { path: 'live', voice_id: 1, language: 'en-us', speed: undefined })).toBe(base);
    expect(await cacheKey('Hello there.', { path: 'live', voice_id: 1, language: 'en-us', speed: 1.2 })).not.toBe(base);
    // nested settings too: key order inside them does not matter, their values do
    const nested = await cacheKey('Hello there.', { path: 'live', voice_id: 1, output: { format: 'wav', rate: 16000, extra: undefined } });
    expect(await cacheKey('Hello there.', { path: 'live', voice_id: 1, output: { rate: 16000, format: 'wav' } })).toBe(nested);
    expect(await cacheKey('Hello there.', { path: 'live', voice_id: 1, output: { rate: 24000, format: 'wav' } })).not.toBe(nested);
  });

  it("the cache's maxBytes bounds its store: the least recently used entry goes (control: the same writes under a larger bound all stay)", async () => {
    const entrySize = encodeEntry({ text: 'x', audio: bytes(1000, 1), expiresAt: undefined }).byteLength;
    const hits = async (maxBytes: number): Promise<boolean[]> => {
      const core = new CacheCore(memoryCacheStore(), undefined, maxBytes, () => undefined, () => 0);
      for (let n = 1; n <= 3; n++) await core.save(key(n), { text: 'x', audio: bytes(1000, n) });
      return Promise.all([1, 2, 3].map(async (n) => (await core.lookup(key(n))) !== undefined));
    };
    expect(await hits(Math.floor(2.5 * entrySize))).toEqual([false, true, true]);
    expect(await hits(10 * entrySize)).toEqual([true, true, true]);
  });

  it("an entry larger than the cache's maxBytes is neither written nor counted as stored, and evicts nothing (control: one byte more of bound stores it)", async () => {
    const entrySize = encodeEntry({ text: 'x', audio: bytes(1000, 1), expiresAt: undefined }).byteLength;
    const outcome = async (maxBytes: number) => {
      const sets: string[] = [];
      const memory = memoryCacheStore();
      const store: CacheStore = { get: (k) => memory.get(k), delete: (k) => memory.delete(k), set: (k, v, o) => (sets.push(k), memory.set(k, v, o)) };
      const core = new CacheCore(store, undefined, maxBytes, () => undefined, () => 0);
      await core.save(key(1), { text: 'x', audio: bytes(1000, 1) });
      return { sets: sets.length, stored: core.stats.stored, hit: (await core.lookup(key(1))) !== undefined };
    };
    expect(await outcome(entrySize - 1)).toEqual({ sets: 0, stored: 0, hit: false });
    expect(await outcome(entrySize)).toEqual({ sets: 1, stored: 1, hit: true });
  });

  it('expiry: an entry past its time is a miss and is deleted', async () => {
    let now = 1_000_000;
    const store = memoryCacheStore();
    const core = new CacheCore(store, 60_000, 10_000, () => undefined, () => now);
    await core.save(key(1), { text: 'x', audio: bytes(10, 1) });
    now += 59_999;
    expect(await core.lookup(key(1))).toBeDefined();
    now += 1;
    expect(await core.lookup(key(1))).toBeUndefined();
    expect(await store.get(key(1))).toBeUndefined();
  });

  it('a failing store is a miss and a skipped write, reported to onError', async () => {
    const errors: unknown[] = [];
    const broken: CacheStore = {
      get: () => Promise.reject(new Error('down')),
      set: () => Promise.reject(new Error('down')),
      delete: () => Promise.resolve(),
    };
    const core = new CacheCore(broken, undefined, 1000, (error) => errors.push(error), Date.now);
    expect(await core.lookup(key(1))).toBeUndefined();
    await core.save(key(1), { text: 'x', audio: bytes(1, 1) });
    expect(errors).toHaveLength(2);
    expect(core.stats).toMatchObject({ misses: 1, stored: 0, errors: 2 });
  });
});

const REDIS = requireTool('redis-server', 'cache: redisCacheStore');
describe.skipIf(!REDIS)('redisCacheStore against redis-server', () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedis(REDIS!, tempDir());
  });
  afterAll(async () => {
    await redis?.stop();
  });
  let n = 0;
  storeContract('redisCacheStore', async () => redisCacheStore(redis.url, { prefix: `t${n++}:` }));

  it('close disconnects the connection the store made from an address (control: it was open)', async () => {
    const admin = new Redis(redis.url);
    const connections = async (): Promise<number> => ((await admin.client('LIST')) as string).trim().split('\n').length;
    const before = await connections();
    const store = redisCacheStore(redis.url, { prefix: 'close:' });
    await store.set(key(1), bytes(10, 1), opts(1000));
    expect(await connections()).toBe(before + 1);
    await store.close?.();
    for (let i = 0; i < 500 && (await connections()) > before; i++) await delay(10);
    expect(await connections()).toBe(before);
    admin.disconnect();
  });

  it('ttl: Redis expires the entry itself', async () => {
    const store = redisCacheStore(redis.url, { prefix: 'ttl:' });
    await store.set(key(1), bytes(10, 1), { ttlMs: 50, maxBytes: 1000 });
    expect(await store.get(key(1))).toBeDefined();
    await delay(120);
    expect(await store.get(key(1))).toBeUndefined();
    await store.close?.();
  });
});
