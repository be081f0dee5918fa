/**
 * Hostile servers: tiny HTTP and WebSocket peers on port 0 that break the contract
 * (endless lines, huge frames, bad JSON, frames out of order, silence). Each must give a
 * clear typed error within bounded time and memory: never a crash, never a hang, and
 * nothing left open afterwards.
 */
import { describe, expect, it } from 'vitest';
import { lastValueFrom, of, toArray, NEVER, type Observable } from 'rxjs';
import type { WebSocket as WsSocket } from 'ws';
import type { RxVoiceClient } from '../../src/index.js';
import {
  AbortError,
  LiveSessionError,
  ProtocolError,
  RxVoiceError,
  TimeoutError,
  ValidationError,
} from '../../src/core/errors.js';
import { SseError, createSseParser } from '../../src/text/sse.js';
import { parseSse } from '../../src/operators/parseSse.js';
import { DEFAULT_LIVE_MAX_PAYLOAD } from '../../src/live/session.js';
import type { LiveSpeechEvent } from '../../src/live/events.js';
import {
  activeResources,
  hostileSuite,
  frameHeader,
  httpServer,
  leftovers,
  rawWsServer,
  rejectionOf,
  textFrame,
  wsServer,
} from './helpers.js';
import { waitFor } from '../fixtures/sinkFixtures.js';

const KEY = 'sk-rxv-hostile-0123456789';
const { cleanups, clientOn } = hostileSuite(KEY);

/** Subscribe and return the error with the time it took (fails the test on completion). */
async function timedError<T>(source$: Observable<T>): Promise<{ error: unknown; ms: number; values: T[] }> {
  const started = Date.now();
  const values: T[] = [];
  const error = await new Promise<unknown>((resolve, reject) => {
    source$.subscribe({ next: (v) => values.push(v), error: resolve, complete: () => reject(new Error('completed without an error')) });
  });
  return { error, ms: Date.now() - started, values };
}

const heapMiB = (): number => process.memoryUsage().heapUsed / 1048576;

describe('hostile HTTP servers', () => {
  it('an endless SSE line: translateStream fails with SseError (max-line-length), bounded bytes', async () => {
    let written = 0;
    let clientGone = false;
    const chunk = Buffer.alloc(64 * 1024, 'x');
    const server = await httpServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/event-stream', 'x-credits-required': '1' });
      res.write('data: ');
      const pump = (): void => {
        while (!clientGone && written < 64 * 1024 * 1024) {
          written += chunk.length;
          if (!res.write(chunk)) {
            res.once('drain', pump);
            return;
          }
        }
      };
      res.on('close', () => {
        clientGone = true;
      });
      pump();
    });
    cleanups.push(() => server.close());
    const client = clientOn(server.baseUrl);
    const heapBefore = heapMiB();
    const { error, ms } = await timedError(
      client.translateStream({ text: 'Hello', source_language: 'en-us', target_language: 'de-de' }),
    );
    expect(error).toBeInstanceOf(SseError);
    expect(error).toMatchObject({ code: 'sse', type: 'max-line-length' });
    expect(ms).toBeLessThan(10_000);
    // The client stops reading: the server could not push more than a few MiB past the 1 MiB limit.
    await waitFor(() => clientGone, 5_000, 'the client to close the connection');
    expect(written).toBeLessThan(16 * 1024 * 1024);
    expect(heapMiB() - heapBefore).toBeLessThan(64);
  });

  it('parseSse on an endless line or an endless event: typed errors at the configured limits', async () => {
    const endless = (piece: string, count: number): Observable<string> => of(...Array.from({ length: count }, () => piece));
    const line = await rejectionOf(lastValueFrom(endless('y'.repeat(1000), 100).pipe(parseSse({ maxLineLength: 10_000 }), toArray())));
    expect(line).toBeInstanceOf(SseError);
    expect(line).toMatchObject({ type: 'max-line-length', limit: 10_000 });
    const event = await rejectionOf(
      lastValueFrom(endless('data: zzzzzzzzzz\n', 10_000).pipe(parseSse({ maxEventSize: 5_000 }), toArray())),
    );
    expect(event).toBeInstanceOf(SseError);
    expect(event).toMatchObject({ type: 'max-event-size' });
    // the core throws as soon as the limit is passed, not after buffering the rest
    const parser = createSseParser({ onEvent: () => undefined, maxLineLength: 4096 });
    let fed = 0;
    expect(() => {
      for (;;) {
        parser.feed('q'.repeat(100));
        fed += 100;
        if (fed > 1_000_000) break;
      }
    }).toThrow(SseError);
    expect(fed).toBeLessThanOrEqual(4096);
  });

  it('an HTTP server that never answers: TimeoutError after timeoutMs', async () => {
    const server = await httpServer((req) => {
      req.resume(); // reads the request, never answers
    });
    cleanups.push(() => server.close());
    const client = clientOn(server.baseUrl, { timeoutMs: 200 });
    const { error, ms } = await timedError(client.voices.list());
    expect(error).toBeInstanceOf(TimeoutError);
    expect((error as TimeoutError).message).toContain('GET /list-voices');
    expect(ms).toBeGreaterThanOrEqual(150);
    expect(ms).toBeLessThan(5_000);
    const stream = await timedError(client.translateStream({ text: 'Hi', source_language: 'en-us', target_language: 'de-de' }));
    expect(stream.error).toBeInstanceOf(TimeoutError);
  });

  it('a body that stalls after the headers: the abort signal ends the call with AbortError', async () => {
    const server = await httpServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: one\n\n'); // then silence, forever
    });
    cleanups.push(() => server.close());
    const client = clientOn(server.baseUrl, { timeoutMs: 200 });
    const controller = new AbortController();
    const pieces: string[] = [];
    const done = rejectionOf(
      new Promise((resolve, reject) =>
        client
          .translateStream({ text: 'Hi', source_language: 'en-us', target_language: 'de-de' }, { signal: controller.signal })
          .subscribe({ next: (p) => pieces.push(p), error: reject, complete: () => resolve(undefined) }),
      ),
    );
    await waitFor(() => pieces.length > 0, 5_000, 'the first piece');
    // Past timeoutMs (200 ms, which only covers a stream until its headers) it is still open.
    // The control: a call started after it to a server that never answers its headers
    // times out with the same timeoutMs; once it has, the older stream is past it too.
    const silent = await httpServer((req) => req.resume());
    cleanups.push(() => silent.close());
    const control = await timedError(
      clientOn(silent.baseUrl, { timeoutMs: 200 }).translateStream({ text: 'Hi', source_language: 'en-us', target_language: 'de-de' }),
    );
    expect(control.error).toBeInstanceOf(TimeoutError);
    expect(pieces).toEqual(['one']);
    controller.abort();
    const error = await done;
    expect(error).toBeInstanceOf(RxVoiceError);
    expect(error).toBeInstanceOf(AbortError);
  });

  it('an endless JSON body: ProtocolError once the answer passes the size limit, bounded memory', async () => {
    let written = 0;
    let clientGone = false;
    const item = Buffer.from(JSON.stringify({ id: 1, voice_name: 'x'.repeat(200), gender: 1, age: 30, description: null, language: null, is_published: true }) + ',');
    const chunk = Buffer.concat(Array.from({ length: 256 }, () => item));
    const server = await httpServer((req, res) => {
      req.resume();
      res.on('close', () => {
        clientGone = true;
      });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('[');
      const pump = (): void => {
        // at most 48 MiB, then silence: without a limit the client would time out instead
        while (!clientGone && written < 48 * 1024 * 1024) {
          written += chunk.length;
          if (!res.write(chunk)) {
            res.once('drain', pump);
            return;
          }
        }
      };
      pump();
    });
    cleanups.push(() => server.close());
    const client = clientOn(server.baseUrl, { timeoutMs: 5_000 });
    const { error, ms } = await timedError(client.voices.list());
    expect(error).toBeInstanceOf(ProtocolError);
    expect((error as ProtocolError).message).toContain('GET /list-voices');
    // the limit itself ended it (not the cut JSON failing to parse)
    expect((error as ProtocolError).message).toContain(`answered a JSON body larger than ${16 * 1024 * 1024} bytes`);
    expect(ms).toBeLessThan(5_000);
    await waitFor(() => clientGone, 5_000, 'the client to close the connection');
    expect(written).toBeLessThan(40 * 1024 * 1024);
  });

  it('a server asking to retry after a day (429, Retry-After): the wait is capped by maxRetryAfterMs, then RateLimitError', async () => {
    let requests = 0;
    const server = await httpServer((req, res) => {
      req.resume();
      requests++;
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '86400' }).end('{"error":"slow down"}');
    });
    cleanups.push(() => server.close());
    const client = clientOn(server.baseUrl, { maxRetries: 2, retry: { maxRetryAfterMs: 50 } });
    const { error, ms } = await timedError(client.voices.list());
    expect(error).toMatchObject({ name: 'RateLimitError', retryAfter: 86400 });
    expect(requests).toBe(3);
    expect(ms).toBeLessThan(3_000);
  });

  const wrongBodies: { name: string; call: (c: RxVoiceClient) => Observable<unknown>; body: string; endpoint: string }[] = [
    { name: 'voices list as an object', call: (c) => c.voices.list(), body: '{"voices":[]}', endpoint: 'GET /list-voices' },
    { name: 'voice with a string id', call: (c) => c.voices.list(), body: '[{"id":"1","voice_name":"A","gender":1,"age":3,"description":null,"language":null,"is_published":true}]', endpoint: 'GET /list-voices' },
    { name: 'task_id as a number', call: (c) => c.sound.create({ prompt: 'rain' }), body: '{"task_id":5}', endpoint: 'POST /text-to-sound' },
    { name: 'unknown task status', call: (c) => c.sound.status('t1'), body: '{"status":"DONE","run_id":null}', endpoint: 'text-to-sound' },
    { name: 'translation texts as a string', call: (c) => c.translation.result(7), body: '{"texts":"hallo"}', endpoint: 'translation' },
    { name: 'not JSON at all', call: (c) => c.voices.list(), body: '<html>oops</html>', endpoint: 'GET /list-voices' },
    { name: 'truncated JSON', call: (c) => c.sound.create({ prompt: 'rain' }), body: '{"task_id": "ab', endpoint: 'POST /text-to-sound' },
  ];
  for (const { name, call, body, endpoint } of wrongBodies) {
    it(`a wrong-typed JSON answer (${name}): ProtocolError naming the endpoint`, async () => {
      const server = await httpServer((req, res) => {
        req.resume();
        res.writeHead(200, { 'content-type': 'application/json' }).end(body);
      });
      cleanups.push(() => server.close());
      const client = clientOn(server.baseUrl);
      const { error } = await timedError(call(client));
      expect(error).toBeInstanceOf(ProtocolError);
      expect((error as ProtocolError).message).toContain(endpoint);
      expect((error as ProtocolError).message).not.toContain(KEY);
    });
  }

  it('a status the contract does not list while a task is polled: ProtocolError naming the task, for tasks.resume (control: a listed one is polled on)', async () => {
    let polls = 0;
    const server = await httpServer((req, res) => {
      req.resume();
      if (req.method === 'POST') return res.writeHead(200, { 'content-type': 'application/json' }).end('{"task_id":"t-42"}');
      polls++;
      res.writeHead(200, { 'content-type': 'application/json' }).end(polls === 1 ? '{"status":"PENDING","run_id":null}' : '{"status":"CANCELLED","run_id":null}');
    });
    cleanups.push(() => server.close());
    const client = clientOn(server.baseUrl, { polling: { initialDelayMs: 1, maxDelayMs: 1, jitter: 0 } });
    const { error } = await timedError(client.textToSound({ prompt: 'rain' }));
    expect(error).toBeInstanceOf(ProtocolError);
    expect((error as ProtocolError).message).toContain('GET text-to-sound status of task t-42');
    expect(polls).toBe(2);
  });
});

// ---------------------------------------------------------------------------
// Live session
// ---------------------------------------------------------------------------

const READY = JSON.stringify({ type: 'session.ready', session_id: 's1', run_id: 1 });

/**
 * Speak `text` through a client on `baseUrl`; resolves with the error, the events and the
 * time, once the client's socket is gone (checked while the hostile server still runs: the
 * client, not the server, must close it).
 */
async function speakOn(
  baseUrl: string,
  options: Record<string, unknown> = {},
  text$: Observable<string> = of('Hello there. How are you?'),
): Promise<{ error: unknown; ms: number; values: LiveSpeechEvent[] }> {
  const before = activeResources();
  const client = clientOn(baseUrl);
  const outcome = await timedError(text$.pipe(client.speak({ voice_id: 1, ...options })));
  const left = await leftovers(before, 5_000);
  delete left['TCPServerWrap'];
  expect(left).toEqual({});
  return outcome;
}

describe('hostile live servers', () => {
  it('a 100 MB WebSocket frame: refused at its header (maxPayload), ProtocolError, little read', async () => {
    let written = 0;
    let peerClosed = false;
    const server = await rawWsServer((socket) => {
      socket.once('data', () => {
        // after session.start: ready, then a binary frame announcing 100 MB
        socket.write(textFrame(READY));
        socket.write(frameHeader(0x2, 100_000_000));
        const chunk = Buffer.alloc(256 * 1024, 7);
        const pump = (): void => {
          while (!peerClosed && written < 100_000_000) {
            written += chunk.length;
            if (!socket.write(chunk)) {
              socket.once('drain', pump);
              return;
            }
          }
        };
        pump();
      });
      socket.on('close', () => {
        peerClosed = true;
      });
    });
    cleanups.push(() => server.close());
    const heapBefore = heapMiB();
    const { error, ms } = await speakOn(server.baseUrl);
    expect(error).toMatchObject({ name: 'LiveSessionError', code: 'protocol' });
    expect((error as LiveSessionError).message).toContain(`maxPayload (${DEFAULT_LIVE_MAX_PAYLOAD} bytes)`);
    expect((error as LiveSessionError).unspoken).toBe('Hello there. How are you?');
    expect(ms).toBeLessThan(5_000);
    await waitFor(() => peerClosed, 5_000, 'the client to close the socket');
    expect(written).toBeLessThan(32 * 1024 * 1024);
    expect(heapMiB() - heapBefore).toBeLessThan(64);
  });

  it('maxPayload is an option: a 2 MiB text frame is refused by default, read with maxPayload 4 MiB', async () => {
    const big = JSON.stringify({ type: 'segment.start', segment_id: 0, text: 'x'.repeat(2 * 1024 * 1024) });
    const make = (): Promise<{ baseUrl: string; close(): Promise<void> }> =>
      rawWsServer((socket) => {
        socket.once('data', () => {
          socket.write(textFrame(READY));
          socket.write(textFrame(big));
          socket.write(frameHeader(0x2, 1)); // then audio, then a bad frame type to end it
          socket.write(Buffer.from([1]));
          socket.write(textFrame('{"type":"nope"}'));
        });
      });
    const a = await make();
    cleanups.push(() => a.close());
    const refused = await speakOn(a.baseUrl);
    expect(refused.error).toMatchObject({ name: 'LiveSessionError', code: 'protocol' });
    expect((refused.error as Error).message).toContain('maxPayload');
    const b = await make();
    cleanups.push(() => b.close());
    const read = await speakOn(b.baseUrl, { maxPayload: 4 * 1024 * 1024 });
    expect(read.error).toMatchObject({ name: 'LiveSessionError', code: 'protocol' });
    expect((read.error as Error).message).toContain('invalid frame');
    // the 2 MiB text is not what was sent: reported as a mismatch, the sent text decides
    expect(read.values.map((e) => e.type)).toEqual(['ready', 'segmentStart', 'segmentMismatch', 'audio']);
    // bad options throw when the operator is made
    let invalid: unknown;
    try {
      clientOn(b.baseUrl).speak({ voice_id: 1, maxPayload: 0 });
    } catch (error) {
      invalid = error;
    }
    expect(invalid).toBeInstanceOf(ValidationError);
    expect((invalid as ValidationError).issues[0]?.loc).toEqual(['options', 'maxPayload']);
  });

  it('invalid UTF-8 in a text frame: ProtocolError (the WebSocket protocol is broken)', async () => {
    const server = await rawWsServer((socket) => {
      socket.once('data', () => {
        socket.write(textFrame(READY));
        socket.write(Buffer.concat([frameHeader(0x1, 4), Buffer.from([0x7b, 0xff, 0xfe, 0x7d])]));
      });
    });
    cleanups.push(() => server.close());
    const { error, ms } = await speakOn(server.baseUrl);
    expect(error).toMatchObject({ name: 'LiveSessionError', code: 'protocol' });
    expect(ms).toBeLessThan(5_000);
  });

  /** Scripts of frames a hostile `ws` server sends after `session.start`. */
  const scripts: { name: string; frames: (string | Buffer)[]; message: RegExp; events?: string[] }[] = [
    { name: 'invalid JSON', frames: [READY, '{"type":"segment.start",'], message: /not JSON/ },
    { name: 'JSON that is not an object', frames: [READY, '42'], message: /invalid frame/ },
    { name: 'an unknown frame type', frames: [READY, '{"type":"segment.explode","segment_id":0}'], message: /invalid frame/ },
    { name: 'a wrong-typed field', frames: [READY, '{"type":"segment.start","segment_id":"0","text":"Hi."}'], message: /invalid frame/ },
    { name: 'segment.start before session.ready', frames: ['{"type":"segment.start","segment_id":0,"text":"Hi."}'], message: /before session\.ready/ },
    { name: 'binary before session.ready', frames: [Buffer.from([1, 2, 3])], message: /audio outside of a segment/ },
    { name: 'binary before segment.start', frames: [READY, Buffer.from([1, 2, 3])], message: /audio outside of a segment/ },
    { name: 'segment.done for an unknown id', frames: [READY, '{"type":"segment.done","segment_id":7}'], message: /not started/ },
    {
      name: 'segment.done for another segment',
      frames: [READY, '{"type":"segment.start","segment_id":0,"text":"Hello there."}', Buffer.from([1]), '{"type":"segment.done","segment_id":1}'],
      message: /not started/,
      events: ['ready', 'segmentStart', 'audio'],
    },
    {
      name: 'segment ids going back',
      frames: [
        READY,
        '{"type":"segment.start","segment_id":0,"text":"Hello there."}',
        Buffer.from([1]),
        '{"type":"segment.done","segment_id":0}',
        '{"type":"segment.start","segment_id":0,"text":"How are you?"}',
      ],
      message: /does not follow/,
      events: ['ready', 'segmentStart', 'audio', 'segmentDone'],
    },
    {
      name: 'a first segment id other than 0',
      frames: [READY, '{"type":"segment.start","segment_id":3,"text":"Hello there."}'],
      message: /does not follow -1/,
      events: ['ready'],
    },
    { name: 'session.ready twice', frames: [READY, READY], message: /twice/ },
    { name: 'an audio frame over 64 KiB', frames: [READY, '{"type":"segment.start","segment_id":0,"text":"Hello there."}', Buffer.alloc(65 * 1024)], message: /64|65536/ },
  ];
  for (const script of scripts) {
    it(`a server sending ${script.name}: ProtocolError, socket closed`, async () => {
      const server = await wsServer((socket: WsSocket) => {
        socket.once('message', () => {
          for (const frame of script.frames) socket.send(frame);
        });
      });
      cleanups.push(() => server.close());
      const { error, ms, values } = await speakOn(server.wsUrl.replace('ws:', 'http:'));
      expect(error).toMatchObject({ name: 'LiveSessionError', code: 'protocol' });
      expect((error as LiveSessionError).message).toMatch(script.message);
      expect(typeof (error as LiveSessionError).unspoken).toBe('string');
      expect(ms).toBeLessThan(5_000);
      if (script.events) expect(values.map((e) => e.type)).toEqual(script.events);
      await waitFor(() => server.closes.length > 0, 5_000, 'the socket to close');
      expect(server.closes).toHaveLength(1);
    });
  }

  it('a segment.start while another segment is in progress: ProtocolError', async () => {
    const server = await wsServer((socket: WsSocket) => {
      socket.once('message', () => {
        socket.send(READY);
        socket.send('{"type":"segment.start","segment_id":0,"text":"Hello there."}');
        socket.send('{"type":"segment.start","segment_id":1,"text":"How are you?"}');
      });
    });
    cleanups.push(() => server.close());
    const { error } = await speakOn(server.wsUrl.replace('ws:', 'http:'));
    expect(error).toMatchObject({ name: 'LiveSessionError', code: 'protocol' });
    expect((error as LiveSessionError).message).toMatch(/before segment\.done/);
  });

  it('a premature session.done and a clean close with text unspoken: an error carrying the text, not a silent loss', async () => {
    const server = await wsServer((socket: WsSocket) => {
      socket.once('message', () => {
        socket.send(READY);
        socket.send('{"type":"segment.start","segment_id":0,"text":"Hello there."}');
        socket.send(Buffer.from([1, 2]));
        socket.send('{"type":"segment.done","segment_id":0}');
        socket.send('{"type":"session.done"}');
        socket.close(1000);
      });
    });
    cleanups.push(() => server.close());
    const { error, values } = await speakOn(server.wsUrl.replace('ws:', 'http:'));
    expect(values.map((e) => e.type)).toContain('segmentDone');
    expect(error).toBeInstanceOf(LiveSessionError);
    expect((error as LiveSessionError).unspoken).toBe('How are you?');
  });

  it('a WebSocket server that never sends session.ready: TimeoutError after readyTimeoutMs', async () => {
    const server = await wsServer(() => undefined);
    cleanups.push(() => server.close());
    const { error, ms } = await speakOn(server.wsUrl.replace('ws:', 'http:'), { readyTimeoutMs: 200 }, NEVER);
    expect(error).toMatchObject({ name: 'LiveSessionError', code: 'timeout' });
    expect(ms).toBeGreaterThanOrEqual(150);
    expect(ms).toBeLessThan(5_000);
  });

  it('a server that never completes the WebSocket handshake: TimeoutError, the socket is dropped', async () => {
    const server = await rawWsServer(() => undefined, { handshake: false });
    cleanups.push(() => server.close());
    const { error, ms } = await speakOn(server.baseUrl, { readyTimeoutMs: 200 });
    expect(error).toMatchObject({ name: 'LiveSessionError', code: 'timeout' });
    expect((error as LiveSessionError).unspoken).toBe('Hello there. How are you?');
    expect(ms).toBeLessThan(5_000);
  });

  it('with reconnect on, a silent server is retried maxAttempts times, then TimeoutError', async () => {
    let connections = 0;
    const server = await wsServer(() => {
      connections++;
    });
    cleanups.push(() => server.close());
    const { error } = await speakOn(server.wsUrl.replace('ws:', 'http:'), {
      readyTimeoutMs: 100,
      reconnect: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 5 },
    });
    expect(error).toMatchObject({ name: 'LiveSessionError', code: 'timeout' });
    expect(connections).toBe(3);
  });

  it('a protocol error is not retried, even with reconnect on', async () => {
    let connections = 0;
    const server = await wsServer((socket: WsSocket) => {
      connections++;
      socket.once('message', () => socket.send('not json'));
    });
    cleanups.push(() => server.close());
    const { error } = await speakOn(server.wsUrl.replace('ws:', 'http:'), { reconnect: { maxAttempts: 3, baseDelayMs: 1 } });
    expect(error).toMatchObject({ name: 'LiveSessionError', code: 'protocol' });
    expect(connections).toBe(1);
  });
});
