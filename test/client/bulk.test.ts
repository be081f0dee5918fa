import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { lastValueFrom, toArray } from 'rxjs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { fetch as undiciFetch } from 'undici';
import { ApiError, ConnectionError, RateLimitError, type RxVoiceClient } from '../../src/index.js';
import { batchSizes } from '../../src/client/shared.js';
import type { Emulator } from '../../src/emulator/index.js';
import { HttpTransport, parseRetryAfter, retryDelay } from '../../src/client/request.js';
import { resolveConfig } from '../../src/client/config.js';
import { VirtualClock, clientFor, countingProxy, emulator, type SeenRequest } from './helpers.js';

let emu: Emulator;
let proxy: Awaited<ReturnType<typeof countingProxy>>;
let client: RxVoiceClient;
let soundRuns: number[] = [];
let speechRuns: number[] = [];

beforeAll(async () => {
  emu = await emulator({ taskDurationMs: 5 });
  proxy = await countingProxy(emu.baseUrl);
  client = clientFor({ baseUrl: proxy.baseUrl, apiKey: emu.apiKey });
  const sounds = await Promise.all(
    Array.from({ length: 12 }, (_, i) => lastValueFrom(client.textToSound({ prompt: `sound ${i}`, duration: 0.5 }))),
  );
  soundRuns = sounds.map((e) => (e.type === 'result' ? e.run_id : -1));
  const speech = await Promise.all(
    Array.from({ length: 6 }, (_, i) => lastValueFrom(client.speech.task({ text: `Line ${i}.`, voice_id: 1, language: 'en-us' }))),
  );
  speechRuns = speech.map((e) => (e.type === 'result' ? e.run_id : -1));
});
afterAll(async () => {
  await client.close();
  await proxy.close();
  await emu.close();
});
afterEach(() => {
  emu.context.options.faults.httpErrors = undefined;
});

function bulkCalls(seen: SeenRequest[], path: string): number[][] {
  return seen.filter((r) => r.method === 'POST' && r.path === path).map((r) => (JSON.parse(r.body) as { run_ids: number[] }).run_ids);
}

describe('batch sizes', () => {
  it('splits evenly into 2..5, never 1', () => {
    expect(batchSizes(2)).toEqual([2]);
    expect(batchSizes(5)).toEqual([5]);
    expect(batchSizes(6)).toEqual([3, 3]);
    expect(batchSizes(11)).toEqual([4, 4, 3]);
    expect(batchSizes(12)).toEqual([4, 4, 4]);
    for (let n = 2; n <= 200; n += 1) {
      const sizes = batchSizes(n);
      expect(sizes.reduce((a, b) => a + b, 0)).toBe(n);
      for (const s of sizes) expect(s >= 2 && s <= 5).toBe(true);
    }
  });
});

describe('bulk results against the emulator', () => {
  const cases: Array<[number, number[]]> = [
    [2, [2]],
    [5, [5]],
    [6, [3, 3]],
    [12, [4, 4, 4]],
  ];
  for (const [count, sizes] of cases) {
    it(`${count} ids -> calls of ${sizes.join('+')}`, async () => {
      const start = proxy.seen.length;
      const ids = soundRuns.slice(0, count);
      const map = await lastValueFrom(client.sound.results(ids));
      const calls = bulkCalls(proxy.seen.slice(start), '/text-to-sound-results');
      expect(calls.map((c) => c.length).sort()).toEqual([...sizes].sort());
      expect(calls.flat().sort((a, b) => a - b)).toEqual([...ids].sort((a, b) => a - b));
      expect(Object.keys(map).sort()).toEqual(ids.map(String).sort());
      for (const entry of Object.values(map)) expect(entry.output_url).toMatch(/^http/);
    });
  }

  it('bulkConcurrency bounds the bulk calls in flight (2: never a third; control: 3 are seen at once with 3)', async () => {
    /**
     * A proxy that holds every answer until no request has come for `QUIET_MS`, then lets the
     * held ones through: the calls a client has in flight at once all arrive while held.
     */
    const QUIET_MS = 1500;
    const holding = async () => {
      let inFlight = 0;
      let most = 0;
      let held: Array<() => void> = [];
      let quiet: ReturnType<typeof setTimeout> | undefined;
      const server = createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          inFlight += 1;
          most = Math.max(most, inFlight);
          held.push(() => {
            const to = new URL(emu.baseUrl);
            const upstream = httpRequest({ host: to.hostname, port: to.port, method: req.method, path: req.url, headers: { ...req.headers, host: to.host } }, (answer) => {
              res.writeHead(answer.statusCode ?? 502, answer.headers);
              answer.pipe(res);
              answer.on('end', () => (inFlight -= 1));
            });
            upstream.on('error', () => res.destroy());
            upstream.end(Buffer.concat(chunks));
          });
          clearTimeout(quiet);
          quiet = setTimeout(() => {
            const release = held;
            held = [];
            for (const go of release) go();
          }, QUIET_MS);
        });
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      return {
        baseUrl,
        most: () => most,
        close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
      };
    };
    const mostInFlight = async (bulkConcurrency: number): Promise<number> => {
      const gate = await holding();
      const bounded = clientFor({ baseUrl: gate.baseUrl, apiKey: emu.apiKey }, { bulkConcurrency });
      try {
        // 12 ids: three calls of 4
        const map = await lastValueFrom(bounded.sound.results(soundRuns.slice(0, 12)));
        expect(Object.keys(map)).toHaveLength(12);
        return gate.most();
      } finally {
        await bounded.close();
        await gate.close();
      }
    };
    expect(await mostInFlight(2)).toBe(2);
    expect(await mostInFlight(3)).toBe(3);
  }, 30_000);

  it('1 id goes to the single-result path and answers audio', async () => {
    const start = proxy.seen.length;
    const id = soundRuns[0]!;
    const map = await lastValueFrom(client.sound.results([id, id]));
    const seen = proxy.seen.slice(start);
    expect(seen.map((r) => `${r.method} ${r.path}`)).toEqual([`GET /text-to-sound-result/${id}`]);
    expect(map[String(id)]!.audio!.byteLength).toBeGreaterThan(44);
  });

  it('run ids are checked locally: 0 and fractions refused, before any call', async () => {
    const start = proxy.seen.length;
    const error = await lastValueFrom(client.sound.results([soundRuns[0]!, 0, 1.5])).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'ValidationError', source: 'local' });
    expect((error as { issues: { loc: unknown[] }[] }).issues.map((i) => i.loc)).toEqual([
      ['body', 'run_ids', 1],
      ['body', 'run_ids', 2],
    ]);
    expect(proxy.seen.length).toBe(start);
  });

  it('runs this client did not make go to the service (their kind is unknown here); a speech run is refused as sound', async () => {
    const other = clientFor({ baseUrl: proxy.baseUrl, apiKey: emu.apiKey });
    try {
      const map = await lastValueFrom(other.sound.results(soundRuns.slice(0, 2)));
      expect(Object.keys(map).sort()).toEqual(soundRuns.slice(0, 2).map(String).sort());
    } finally {
      await other.close();
    }
    const refused = await lastValueFrom(client.sound.results([soundRuns[0]!, speechRuns[0]!])).catch((e: unknown) => e);
    expect(refused).toMatchObject({ name: 'ValidationError', source: 'local' });
    expect(refused).toMatchObject({ issues: [{ loc: ['body', 'run_ids', 1], msg: `run ${speechRuns[0]} is a tts run, not a text-to-sound run` }] });
  });

  it('speech fetchResults batches the same way (6 -> 3+3)', async () => {
    const start = proxy.seen.length;
    const map = await lastValueFrom(client.speech.fetchResults(speechRuns));
    const calls = bulkCalls(proxy.seen.slice(start), '/fetch-tts-results');
    expect(calls.map((c) => c.length)).toEqual([3, 3]);
    expect(Object.keys(map)).toHaveLength(6);
  });
});

describe('retry delays', () => {
  const options = { baseDelayMs: 500, maxDelayMs: 8000, maxRetryAfterMs: 60_000 };
  it('exponential from baseDelayMs, capped, jittered over the upper half', () => {
    expect([0, 1, 2, 3, 4, 5].map((n) => retryDelay(n, options, () => 1))).toEqual([500, 1000, 2000, 4000, 8000, 8000]);
    expect([0, 1, 2, 3, 4, 5].map((n) => retryDelay(n, options, () => 0))).toEqual([250, 500, 1000, 2000, 4000, 4000]);
    expect(retryDelay(2, options, () => 0.5)).toBe(1500);
  });
  it('Retry-After (seconds or HTTP date) wins, capped by maxRetryAfterMs', () => {
    expect(retryDelay(0, options, () => 1, 3)).toBe(3000);
    expect(retryDelay(4, options, () => 1, 0)).toBe(0);
    expect(retryDelay(0, options, () => 1, 3600)).toBe(60_000);
    expect(parseRetryAfter('2.5')).toBe(2.5);
    expect(parseRetryAfter(new Date(10_000 + 4_000).toUTCString(), 10_000)).toBe(4);
    expect(parseRetryAfter('soon')).toBeUndefined();
    expect(parseRetryAfter(null)).toBeUndefined();
  });
});

describe('retries', () => {
  it('retries a status call on injected 503 then succeeds', async () => {
    emu.context.options.faults.httpErrors = { status: 503, count: 2 };
    const start = proxy.seen.length;
    const voices = await lastValueFrom(client.voices.list());
    expect(voices.length).toBeGreaterThan(0);
    expect(proxy.seen.slice(start).filter((r) => r.path === '/list-voices')).toHaveLength(3);
  });

  it('retries on 429 honouring Retry-After, even for a creation call', async () => {
    emu.context.options.faults.httpErrors = { status: 429, count: 1, retryAfter: 7 };
    // A virtual clock: the retry waits exactly Retry-After (7 s) without a real wait.
    const clock = new VirtualClock();
    const c = clientFor({ baseUrl: proxy.baseUrl, apiKey: emu.apiKey }, { scheduler: clock });
    const start = proxy.seen.length;
    const { task_id } = await lastValueFrom(c.sound.create({ prompt: 'retry me' }));
    expect(task_id).toBeTruthy();
    expect(clock.delays).toEqual([7000]);
    expect(proxy.seen.slice(start).filter((r) => r.path === '/text-to-sound')).toHaveLength(2);
    await c.close();
  });

  it('retries a status call on 408 with exponential backoff; never a creation call on 408', async () => {
    const clock = new VirtualClock();
    const c = clientFor(
      { baseUrl: proxy.baseUrl, apiKey: emu.apiKey },
      { scheduler: clock, retry: { baseDelayMs: 1000, maxDelayMs: 10_000 }, random: () => 1 },
    );
    const { task_id } = await lastValueFrom(c.sound.create({ prompt: 'status after 408' }));
    emu.context.options.faults.httpErrors = { status: 408, count: 2 };
    let start = proxy.seen.length;
    const status = await lastValueFrom(c.sound.status(task_id));
    expect(status.status).toMatch(/PENDING|SUCCESS/);
    expect(proxy.seen.slice(start).map((r) => r.path)).toEqual(Array(3).fill(`/text-to-sound/${task_id}`));
    expect(clock.delays).toEqual([1000, 2000]);

    emu.context.options.faults.httpErrors = { status: 408, count: 1 };
    start = proxy.seen.length;
    const error = await lastValueFrom(c.sound.create({ prompt: 'costly' })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(408);
    expect(proxy.seen.slice(start)).toHaveLength(1);
    await c.close();
  });

  it('honours Retry-After on a 503 too (not only on a 429); control: the same 503 without it waits the backoff', async () => {
    const clock = new VirtualClock();
    const c = clientFor(
      { baseUrl: proxy.baseUrl, apiKey: emu.apiKey },
      { scheduler: clock, retry: { baseDelayMs: 1000, maxDelayMs: 10_000 }, random: () => 1 },
    );
    emu.context.options.faults.httpErrors = { status: 503, count: 1, retryAfter: 7 };
    let start = proxy.seen.length;
    expect((await lastValueFrom(c.voices.list())).length).toBeGreaterThan(0);
    expect(proxy.seen.slice(start).map((r) => r.path)).toEqual(['/list-voices', '/list-voices']);
    expect(clock.delays).toEqual([7000]);

    emu.context.options.faults.httpErrors = { status: 503, count: 1 };
    start = proxy.seen.length;
    expect((await lastValueFrom(c.voices.list())).length).toBeGreaterThan(0);
    expect(proxy.seen.slice(start)).toHaveLength(2);
    expect(clock.delays).toEqual([7000, 1000]);
    await c.close();
  });

  it('never re-sends a ttsStream (paid) on 500; control: a 429 is retried and the stream arrives', async () => {
    const clock = new VirtualClock();
    const c = clientFor({ baseUrl: proxy.baseUrl, apiKey: emu.apiKey }, { scheduler: clock, maxRetries: 2 });
    const speak = (): Promise<unknown> =>
      lastValueFrom(c.ttsStream({ text: 'Hello there.', voice_id: 1, language: 'en-us', output_configuration: { format: 'mp3' } }).pipe(toArray()));
    emu.context.options.faults.httpErrors = { status: 500, count: 1 };
    let start = proxy.seen.length;
    const error = await speak().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(500);
    expect(proxy.seen.slice(start).map((r) => r.path)).toEqual(['/tts-stream']);
    expect(clock.delays).toEqual([]);

    emu.context.options.faults.httpErrors = { status: 429, count: 1, retryAfter: 3 };
    start = proxy.seen.length;
    const chunks = (await speak()) as unknown[];
    expect(chunks.length).toBeGreaterThan(0);
    expect(proxy.seen.slice(start).map((r) => r.path)).toEqual(['/tts-stream', '/tts-stream']);
    // the stream's idle timer (streamIdleTimeoutMs, 30 s) runs on the scheduler too
    expect(clock.delays.filter((d) => d !== 30_000)).toEqual([3000]);
    await c.close();
  });

  it('gives up after maxRetries with the last error', async () => {
    emu.context.options.faults.httpErrors = { status: 429, count: 10 };
    const start = proxy.seen.length;
    const error = await lastValueFrom(client.voices.list()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitError);
    expect(proxy.seen.slice(start)).toHaveLength(3);
  });

  it('never retries a creation call on 500', async () => {
    emu.context.options.faults.httpErrors = { status: 500, count: 1 };
    const start = proxy.seen.length;
    const error = await lastValueFrom(client.sound.create({ prompt: 'costly' })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(500);
    expect(proxy.seen.slice(start)).toHaveLength(1);
  });

  it('retries bulk results (idempotent POST) on 500', async () => {
    emu.context.options.faults.httpErrors = { status: 500, count: 1 };
    const start = proxy.seen.length;
    const map = await lastValueFrom(client.sound.results(soundRuns.slice(0, 2)));
    expect(Object.keys(map)).toHaveLength(2);
    expect(proxy.seen.slice(start)).toHaveLength(2);
  });

  it('retries a creation call when the connection was refused', async () => {
    const { createServer } = await import('node:net');
    const s = createServer();
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    const port = (s.address() as { port: number }).port;
    await new Promise<void>((r) => s.close(() => r()));
    let calls = 0;
    const counting = (url: string, init: Record<string, unknown>): Promise<Response> => {
      calls += 1;
      return undiciFetch(url, init as never) as unknown as Promise<Response>;
    };
    const c = clientFor({ baseUrl: `http://127.0.0.1:${port}`, apiKey: emu.apiKey }, { maxRetries: 2, fetch: counting });
    const error = await lastValueFrom(c.sound.create({ prompt: 'x' })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionError);
    expect((error as ConnectionError).retryable).toBe(true);
    expect(calls).toBe(3);
    await c.close();
  });
});

describe('the kinds of runs the client made, for the local bulk check: the last 10 000', () => {
  it('forgets the run used least recently past 10 000; remembering a run again keeps it', () => {
    const { config, apiKey } = resolveConfig({ apiKey: 'test-key', baseUrl: 'http://127.0.0.1:1' });
    const transport = new HttpTransport(config, apiKey);
    for (let run = 1; run <= 10_000; run++) transport.rememberRun(run, 'text-to-sound');
    transport.rememberRun(1, 'text-to-sound'); // seen again: now the newest
    transport.rememberRun(10_001, 'tts');
    expect(transport.runFamily(1)).toBe('text-to-sound');
    expect(transport.runFamily(2)).toBeUndefined();
    expect(transport.runFamily(3)).toBe('text-to-sound');
    expect(transport.runFamily(10_001)).toBe('tts');
  });
});
