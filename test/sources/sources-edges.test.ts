/**
 * Edges of the token sources a review found: an encoding checked when the source is made
 * (not after the file is open), a shared stream read again by a later subscription, no pull
 * of an async iterable after the subscriber is gone, and bytes then text kept in order.
 */
import { PassThrough } from 'node:stream';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { firstValueFrom, lastValueFrom, take, timeout, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/core/errors.js';
import { fromFile, fromReadable, fromStdin, fromTokens } from '../../src/sources/index.js';

const tick = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

describe('encoding', () => {
  it('an encoding TextDecoder does not know is a ValidationError when the source is made', () => {
    const bad = 'no-such-encoding';
    expect(() => fromFile('/nonexistent/story.txt', { encoding: bad })).toThrow(ValidationError);
    expect(() => fromReadable(new PassThrough(), { encoding: bad })).toThrow(ValidationError);
    expect(() => fromStdin({ encoding: bad })).toThrow(ValidationError);
    try {
      fromFile('/x', { encoding: bad });
    } catch (error) {
      expect((error as ValidationError).issues[0]?.loc).toEqual(['options', 'encoding']);
      expect((error as ValidationError).message).toContain('no-such-encoding');
    }
  });

  it('a label TextDecoder knows is taken (control), and decodes', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rxvoice-enc-'));
    try {
      const path = join(dir, 'a.txt');
      await writeFile(path, Buffer.from('héllo', 'utf16le'));
      expect((await lastValueFrom(fromFile(path, { encoding: 'utf-16le', chunkSize: 3 }).pipe(toArray()))).join('')).toBe('héllo');
      expect(() => fromReadable(new PassThrough(), { encoding: 'latin1' })).not.toThrow();
      expect((await readdir(dir)).length).toBe(1);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('a shared stream (destroyOnUnsubscribe: false)', () => {
  it('a later subscription reads on where an earlier one, unsubscribed, left it', async () => {
    const stream = new PassThrough();
    const text$ = fromReadable(stream, { destroyOnUnsubscribe: false });
    const first = firstValueFrom(text$.pipe(take(1)));
    stream.write('first\n');
    expect(await first).toBe('first\n');
    expect(stream.destroyed).toBe(false);
    const second = lastValueFrom(text$.pipe(toArray(), timeout({ first: 10_000 })));
    stream.write('second\n');
    stream.end();
    expect((await second).join('')).toBe('second\n');
  });
});

describe('fromTokens over an async iterable', () => {
  /** An iterator that counts its pulls and answers each at once. */
  function counting(): AsyncIterable<string> & { pulls: number; returned: boolean } {
    const source = {
      pulls: 0,
      returned: false,
      [Symbol.asyncIterator]() {
        return {
          next: async () => ({ done: false as const, value: `token${source.pulls++} ` }),
          return: async () => {
            source.returned = true;
            return { done: true as const, value: undefined };
          },
        };
      },
    };
    return source;
  }

  it('pulls nothing more once the subscriber is gone (take(1)), and returns the iterator', async () => {
    const source = counting();
    expect(await firstValueFrom(fromTokens(source).pipe(take(1)))).toBe('token0 ');
    await tick(20);
    expect(source.pulls).toBe(1);
    expect(source.returned).toBe(true);
  });

  it('pulls as many as it delivers: take(3) pulls 3 (the count sees pulls)', async () => {
    const source = counting();
    expect(await lastValueFrom(fromTokens(source).pipe(take(3), toArray()))).toEqual(['token0 ', 'token1 ', 'token2 ']);
    await tick(20);
    expect(source.pulls).toBe(3);
  });

  it('bytes that end inside a character, then a string: the order of the input is kept', async () => {
    async function* mixed() {
      yield new Uint8Array([0x63, 0x61, 0x66, 0xc3]); // "caf" and half an "é"
      yield ' au lait';
      yield new Uint8Array([0xa9]);
    }
    const out = await lastValueFrom(fromTokens(mixed()).pipe(toArray()));
    expect(out.join('')).toBe('caf\uFFFD au lait\uFFFD');
    // control: the same bytes whole give the character
    async function* whole() {
      yield new Uint8Array([0x63, 0x61, 0x66, 0xc3]);
      yield new Uint8Array([0xa9]);
      yield ' au lait';
    }
    expect((await lastValueFrom(fromTokens(whole()).pipe(toArray()))).join('')).toBe('café au lait');
  });
});
