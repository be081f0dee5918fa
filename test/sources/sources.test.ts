import { afterEach, describe, expect, it, vi } from 'vitest';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { ValidationError } from '../../src/core/errors.js';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { firstValueFrom, lastValueFrom, take, toArray } from 'rxjs';
import OpenAI from 'openai';
import { fromFile, fromReadable, fromTokens } from '../../src/sources/index.js';

const enc = new TextEncoder();
const collect = (o: import('rxjs').Observable<string>) => lastValueFrom(o.pipe(toArray()));
const tick = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

describe('fromTokens', () => {
  it('async iterable of strings, skipping empty ones', async () => {
    async function* gen() {
      yield 'Hel';
      yield '';
      yield 'lo';
    }
    expect(await collect(fromTokens(gen()))).toEqual(['Hel', 'lo']);
  });

  it('async iterable of bytes with a character split across chunks', async () => {
    const bytes = enc.encode('añ😀b');
    async function* gen() {
      yield bytes.subarray(0, 2);
      yield bytes.subarray(2, 5);
      yield bytes.subarray(5);
    }
    const out = await collect(fromTokens(gen()));
    expect(out.join('')).toBe('añ😀b');
    expect(out.join('')).not.toContain('\uFFFD');
  });

  it('chat completion chunks: delta.content, null and empty skipped', async () => {
    async function* gen() {
      yield { choices: [{ delta: { role: 'assistant', content: '' } }] };
      yield { choices: [{ delta: { content: 'Hi' } }] };
      yield { choices: [{ delta: { content: null } }] };
      yield { choices: [] };
      yield { choices: [{ delta: { content: ' there' } }] };
      yield { choices: [{ delta: {}, finish_reason: 'stop' }] };
    }
    expect(await collect(fromTokens(gen()))).toEqual(['Hi', ' there']);
  });

  it('errors with TypeError on an unknown item, and passes iterator errors', async () => {
    async function* bad() {
      yield 'a';
      yield 42 as unknown as string;
    }
    await expect(collect(fromTokens(bad()))).rejects.toThrow(TypeError);
    async function* throws() {
      yield 'a';
      throw new Error('upstream');
    }
    await expect(collect(fromTokens(throws()))).rejects.toThrow('upstream');
  });

  it('async iterable of bytes cut inside a character at the end: U+FFFD comes last, nothing dropped', async () => {
    async function* gen() {
      yield enc.encode('ab');
      yield new Uint8Array([0xe2, 0x82]); // the first two bytes of "€"
    }
    expect((await collect(fromTokens(gen()))).join('')).toBe('ab\uFFFD');
  });

  it('message chunks: only text blocks with text are read, however other blocks name their fields', async () => {
    async function* gen() {
      yield { content: [{ type: 'text', text: 'Hi' }, { type: 'reasoning', text: 'hidden' }, { type: 'text', text: 5 }, { type: 'text', text: '!' }] };
    }
    expect(await collect(fromTokens(gen()))).toEqual(['Hi!']);
  });

  it('an unknown item gives the iterable up: its finally block runs', async () => {
    let closed = false;
    async function* bad() {
      try {
        yield 'a';
        yield 42 as unknown as string;
        yield 'never read';
      } finally {
        closed = true;
      }
    }
    await expect(collect(fromTokens(bad()))).rejects.toThrow(TypeError);
    await vi.waitFor(() => expect(closed).toBe(true));
  });

  it('an abort controller of the input (openai streams) is aborted on early unsubscribe, not after completion', async () => {
    const abortable = (items: string[]) => {
      const controller = new AbortController();
      return Object.assign(
        (async function* () {
          yield* items;
          if (items.length > 1) await new Promise(() => undefined); // never ends after its items
        })(),
        { controller },
      );
    };
    const complete = abortable(['a']);
    expect(await collect(fromTokens(complete))).toEqual(['a']);
    expect(complete.controller.signal.aborted).toBe(false);
    const endless = abortable(['a', 'b']);
    expect(await firstValueFrom(fromTokens(endless))).toBe('a');
    expect(endless.controller.signal.aborted).toBe(true);
  });

  it('a web ReadableStream read to its end is released (it can be read again)', async () => {
    const stream = new ReadableStream<string>({
      start(c) {
        c.enqueue('a');
        c.close();
      },
    });
    expect(await collect(fromTokens(stream))).toEqual(['a']);
    expect(stream.locked).toBe(false);
  });

  it('an unknown chunk of a web ReadableStream cancels it', async () => {
    let cancelled = false;
    const stream = new ReadableStream<unknown>({
      start(c) {
        c.enqueue('a');
        c.enqueue(42);
      },
      cancel() {
        cancelled = true;
      },
    });
    await expect(collect(fromTokens(stream as ReadableStream<string>))).rejects.toThrow(TypeError);
    await vi.waitFor(() => expect(cancelled).toBe(true));
  });

  it('unsubscribe calls iterator.return()', async () => {
    let returned = false;
    async function* gen() {
      try {
        for (let i = 0; ; i++) {
          yield `t${i} `;
          await tick(1);
        }
      } finally {
        returned = true;
      }
    }
    expect(await lastValueFrom(fromTokens(gen()).pipe(take(3), toArray()))).toEqual(['t0 ', 't1 ', 't2 ']);
    await tick(20);
    expect(returned).toBe(true);
  });

  it('web ReadableStream of strings and of bytes; cancel on unsubscribe', async () => {
    const strings = new ReadableStream<string>({
      start(c) {
        c.enqueue('a');
        c.enqueue('b');
        c.close();
      },
    });
    expect(await collect(fromTokens(strings))).toEqual(['a', 'b']);
    const bytes = enc.encode('日本');
    const byteStream = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(bytes.subarray(0, 4));
        c.enqueue(bytes.subarray(4));
        c.close();
      },
    });
    expect((await collect(fromTokens(byteStream))).join('')).toBe('日本');

    let cancelled: unknown = 'no';
    let n = 0;
    const endless = new ReadableStream<string>({
      pull(c) {
        c.enqueue(`x${n++}`);
        return tick(1);
      },
      cancel(reason) {
        cancelled = reason;
      },
    });
    expect(await firstValueFrom(fromTokens(endless))).toBe('x0');
    await tick(10);
    expect(cancelled).not.toBe('no');
  });

  it('stops the producer on unsubscribe, for every input kind', async () => {
    type Kind = [name: string, make: () => { input: Parameters<typeof fromTokens>[0]; stopped: () => boolean }];
    const endlessIterable = (item: (i: number) => unknown) => () => {
      let stopped = false;
      const input = {
        [Symbol.asyncIterator]() {
          let i = 0;
          return {
            next: async () => {
              await tick(1);
              return { done: false, value: item(i++) };
            },
            return: async () => {
              stopped = true;
              return { done: true, value: undefined };
            },
          };
        },
      } as Parameters<typeof fromTokens>[0];
      return { input, stopped: () => stopped };
    };
    const endlessWeb = (item: (i: number) => string | Uint8Array) => () => {
      let stopped = false;
      let i = 0;
      const input = new ReadableStream<string | Uint8Array>({
        pull: async (c) => {
          await tick(1);
          c.enqueue(item(i++));
        },
        cancel: () => {
          stopped = true;
        },
      });
      return { input, stopped: () => stopped };
    };
    const endlessNode = (objectMode: boolean, item: (i: number) => unknown) => () => {
      let i = 0;
      const input = new Readable({
        objectMode,
        read() {
          setTimeout(() => this.push(item(i++)), 1);
        },
      });
      return { input, stopped: () => input.destroyed };
    };
    const kinds: Kind[] = [
      ['async iterable of strings', endlessIterable((i) => `s${i}`)],
      ['async iterable of bytes', endlessIterable((i) => enc.encode(`b${i}`))],
      ['async iterable of chat completion chunks', endlessIterable((i) => ({ choices: [{ delta: { content: `c${i}` } }] }))],
      ['web ReadableStream of strings', endlessWeb((i) => `w${i}`)],
      ['web ReadableStream of bytes', endlessWeb((i) => enc.encode(`v${i}`))],
      ['Node Readable of bytes', endlessNode(false, (i) => Buffer.from(`n${i}`))],
      ['Node Readable in object mode', endlessNode(true, (i) => ({ choices: [{ delta: { content: `o${i}` } }] }))],
    ];
    for (const [name, make] of kinds) {
      const { input, stopped } = make();
      const out = await lastValueFrom(fromTokens(input).pipe(take(2), toArray()));
      expect(out.join('').length, name).toBeGreaterThan(0);
      for (let i = 0; i < 50 && !stopped(); i++) await tick(2);
      expect(stopped(), name).toBe(true);
    }
  });

  it('an async iterator without return() is read no further after unsubscribe (control: read whole, every item is pulled)', async () => {
    // return() is optional in the iterator protocol: then the read loop itself must stop pulling
    const counted = (count: number) => {
      let pulls = 0;
      let i = 0;
      const input: AsyncIterable<string> = {
        [Symbol.asyncIterator]: () => ({
          next: async () => {
            pulls++;
            return i < count ? { done: false, value: `t${i++}` } : { done: true, value: undefined };
          },
        }),
      };
      return { input, pulls: () => pulls };
    };
    const early = counted(100);
    expect(await lastValueFrom(fromTokens(early.input).pipe(take(3), toArray()))).toEqual(['t0', 't1', 't2']);
    await new Promise<void>((r) => setImmediate(r)); // every microtask the loop could queue has run
    expect(early.pulls()).toBeLessThanOrEqual(4);
    const whole = counted(100);
    expect(await collect(fromTokens(whole.input))).toHaveLength(100);
    expect(whole.pulls()).toBe(101);
  });

  it('Node Readable; destroyed on early unsubscribe', async () => {
    expect((await collect(fromTokens(Readable.from([Buffer.from('ab'), Buffer.from('c')])))).join('')).toBe('abc');
    const objects = Readable.from([{ choices: [{ delta: { content: 'A' } }] }, 'b', { choices: [{ delta: { content: null } }] }]);
    expect(await collect(fromTokens(objects))).toEqual(['A', 'b']);
    const endlessObjects = new PassThrough({ objectMode: true });
    const firstObject = firstValueFrom(fromTokens(endlessObjects));
    endlessObjects.write({ choices: [{ delta: { content: 'tok' } }] });
    expect(await firstObject).toBe('tok');
    expect(endlessObjects.destroyed).toBe(true);
    const stream = new PassThrough();
    const first = firstValueFrom(fromTokens(stream));
    stream.write('hello');
    expect(await first).toBe('hello');
    expect(stream.destroyed).toBe(true);
  });
});

describe('fromTokens with the openai package against a local OpenAI-compatible endpoint', () => {
  let server: Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
    server = undefined;
  });

  const chunk = (content: string | null, finish: string | null = null, role?: string) =>
    `data: ${JSON.stringify({
      id: 'chatcmpl-1',
      object: 'chat.completion.chunk',
      created: 1,
      model: 'fake',
      choices: [{ index: 0, delta: content === null ? {} : { ...(role ? { role } : {}), content }, finish_reason: finish }],
    })}\n\n`;

  async function start(handler: (res: ServerResponse, closed: Promise<void>) => void): Promise<string> {
    server = createServer((req, res) => {
      if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
        res.writeHead(404).end();
        return;
      }
      req.resume();
      const closed = new Promise<void>((r) => res.on('close', () => r()));
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      handler(res, closed);
    });
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', () => r()));
    return `http://127.0.0.1:${(server!.address() as AddressInfo).port}/v1`;
  }

  it('streams delta.content tokens in order and completes at [DONE]', async () => {
    const baseURL = await start((res) => {
      res.write(chunk('', null, 'assistant'));
      for (const t of ['Hello', ',', ' wor', 'ld', '.']) res.write(chunk(t));
      res.write(chunk(null, 'stop'));
      res.end('data: [DONE]\n\n');
    });
    const openai = new OpenAI({ apiKey: 'test-key', baseURL, maxRetries: 0 });
    const stream = await openai.chat.completions.create({ model: 'fake', messages: [{ role: 'user', content: 'hi' }], stream: true });
    expect(await collect(fromTokens(stream))).toEqual(['Hello', ',', ' wor', 'ld', '.']);
  });

  it('early unsubscribe closes the HTTP stream (the server sees the connection close)', async () => {
    let serverSawClose = false;
    let sent = 0;
    const baseURL = await start((res, closed) => {
      const timer = setInterval(() => {
        res.write(chunk(`t${sent++} `));
      }, 5);
      void closed.then(() => {
        clearInterval(timer);
        serverSawClose = true;
      });
    });
    const openai = new OpenAI({ apiKey: 'test-key', baseURL, maxRetries: 0 });
    const stream = await openai.chat.completions.create({ model: 'fake', messages: [{ role: 'user', content: 'hi' }], stream: true });
    expect(await lastValueFrom(fromTokens(stream).pipe(take(3), toArray()))).toEqual(['t0 ', 't1 ', 't2 ']);
    for (let i = 0; i < 50 && !serverSawClose; i++) await tick(10);
    expect(serverSawClose).toBe(true);
    const after = sent;
    await tick(50);
    expect(sent).toBe(after);
  });
});

describe('fromFile and fromReadable', () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it('reads a file in small chunks without splitting multibyte characters', async () => {
    dir = await mkdtemp(join(tmpdir(), 'rxvoice-src-'));
    const text = 'Grüße aus Köln. 日本語のテキスト。😀 Emoji! '.repeat(20);
    const path = join(dir, 'in.txt');
    await writeFile(path, text);
    for (const chunkSize of [1, 2, 3, 5, 64]) {
      const chunks = await collect(fromFile(path, { chunkSize }));
      expect(chunks.join('')).toBe(text);
      for (const c of chunks) expect(c).not.toContain('\uFFFD');
      expect(chunks).not.toContain(''); // a chunk holding only part of a character gives no empty piece
      if (chunkSize === 64) expect(chunks.length).toBeGreaterThan(10);
    }
  });

  it('other encodings, missing files, bad chunk sizes', async () => {
    dir = await mkdtemp(join(tmpdir(), 'rxvoice-src-'));
    const path = join(dir, 'utf16.txt');
    await writeFile(path, Buffer.from('héllo', 'utf16le'));
    expect((await collect(fromFile(path, { encoding: 'utf-16le', chunkSize: 3 }))).join('')).toBe('héllo');
    await expect(collect(fromFile(join(dir, 'missing.txt')))).rejects.toMatchObject({ code: 'ENOENT' });
    expect(() => fromFile(path, { chunkSize: 0 })).toThrow(ValidationError);
    expect(() => fromFile(path, { chunkSize: 1.5 })).toThrow(ValidationError);
  });

  it('fromReadable: a character cut by the end of the input comes out as U+FFFD, not dropped', async () => {
    // "h" then the first two bytes of "€" (E2 82 AC)
    expect(await collect(fromReadable(Readable.from([Buffer.from([0x68, 0xe2, 0x82])])))).toEqual(['h', '\uFFFD']);
  });

  it('fromReadable: completing leaves a readable that does not destroy itself as it is', async () => {
    const stream = new PassThrough({ autoDestroy: false });
    const chunks = collect(fromReadable(stream));
    stream.end('abc');
    expect(await chunks).toEqual(['abc']);
    expect(stream.destroyed).toBe(false);
    // control: unsubscribing early does destroy it
    const other = new PassThrough({ autoDestroy: false });
    fromReadable(other).subscribe().unsubscribe();
    expect(other.destroyed).toBe(true);
  });

  it('fromReadable: completing removes its listeners from the readable (a shared stream keeps none of them)', async () => {
    const stream = new PassThrough({ autoDestroy: false });
    const listeners = () => ['data', 'end', 'error'].map((name) => stream.listenerCount(name));
    const before = listeners();
    const chunks = collect(fromReadable(stream));
    expect(listeners()).toEqual(before.map((n) => n + 1)); // control: subscribed, one of each is there
    stream.end('abc');
    expect(await chunks).toEqual(['abc']);
    expect(listeners()).toEqual(before);
  });

  it('fromReadable without destroying (stdin-like): pauses on unsubscribe', async () => {
    const stream = new PassThrough();
    const sub = fromReadable(stream, { destroyOnUnsubscribe: false }).subscribe();
    stream.write('a');
    await tick(1);
    sub.unsubscribe();
    expect(stream.destroyed).toBe(false);
    expect(stream.isPaused()).toBe(true);
    expect(stream.listenerCount('data')).toBe(0);
  });

  it('fromReadable: an item that is neither bytes nor a string errors and lets the readable go, destroyed or paused as on unsubscribe', async () => {
    const errorOf = async (stream: PassThrough, options?: { destroyOnUnsubscribe: boolean }): Promise<unknown> => {
      const failed = collect(fromReadable(stream, options)).catch((error: unknown) => error);
      stream.write({ not: 'bytes' });
      return failed;
    };
    const destroyed = new PassThrough({ objectMode: true, autoDestroy: false });
    expect(await errorOf(destroyed)).toBeInstanceOf(TypeError);
    expect(destroyed.destroyed).toBe(true);
    const paused = new PassThrough({ objectMode: true, autoDestroy: false });
    expect(await errorOf(paused, { destroyOnUnsubscribe: false })).toBeInstanceOf(TypeError);
    expect(paused.destroyed).toBe(false);
    expect(paused.isPaused()).toBe(true);
    expect(paused.listenerCount('data')).toBe(0);
    // control: a stream read to its end is neither destroyed nor paused by fromReadable
    const read = new PassThrough({ objectMode: true, autoDestroy: false });
    const done = collect(fromReadable(read));
    read.end('abc');
    expect(await done).toEqual(['abc']);
    expect(read.destroyed).toBe(false);
  });

  /** Runs `program` (an ES module importing from `./src`) in a child process; `feed` writes its standard input. */
  async function runChild(program: string, feed: (stdin: NodeJS.WritableStream) => Promise<void>): Promise<string> {
    const root = fileURLToPath(new URL('../..', import.meta.url));
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', program], {
      cwd: root,
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    const closed = new Promise<number | null>((r) => child.on('close', r));
    await feed(child.stdin);
    expect(await closed).toBe(0);
    return out;
  }

  it('fromStdin reads standard input of a child process, multibyte characters whole', async () => {
    const program =
      `import { lastValueFrom, toArray } from 'rxjs';` +
      `import { fromStdin } from './src/sources/index.ts';` +
      `const chunks = await lastValueFrom(fromStdin().pipe(toArray()));` +
      `process.stdout.write(JSON.stringify(chunks));`;
    const bytes = enc.encode('Grüße 😀 日本');
    const out = await runChild(program, async (stdin) => {
      stdin.write(bytes.subarray(0, 4)); // ends inside 'ü'
      await tick(100);
      stdin.end(bytes.subarray(4));
    });
    const chunks = JSON.parse(out) as string[];
    expect(chunks.join('')).toBe('Grüße 😀 日本');
    for (const c of chunks) expect(c).not.toContain('\uFFFD');
  });

  it('fromStdin: unsubscribing pauses standard input and does not destroy it (the process may read it again)', async () => {
    const program =
      `import { firstValueFrom } from 'rxjs';` +
      `import { fromStdin } from './src/sources/index.ts';` +
      `const first = await firstValueFrom(fromStdin());` +
      `const state = { first, destroyed: process.stdin.destroyed, paused: process.stdin.isPaused(), listeners: process.stdin.listenerCount('data') };` +
      `process.stdout.write(JSON.stringify(state), () => process.exit(0));`;
    const out = await runChild(program, async (stdin) => {
      stdin.write('hello');
    });
    expect(JSON.parse(out)).toEqual({ first: 'hello', destroyed: false, paused: true, listeners: 0 });
  });
});
