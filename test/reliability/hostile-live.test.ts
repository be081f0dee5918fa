/**
 * Hostile live services, second round: a service that goes silent while text waits to
 * be spoken (after `session.ready`, mid-segment, trickling a frame byte by byte), one
 * that ignores the close frame, and the key kept out of inspected objects, debug output
 * and garbled redactions.
 */
import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { inspect } from 'node:util';
import type { Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Subject, lastValueFrom, of, toArray, type Observable, type Subscription } from 'rxjs';
import type { WebSocket as WsSocket } from 'ws';
import { LiveSessionError, MIN_REDACTED_SECRET_LENGTH, WITHHELD_TEXT, redact } from '../../src/core/errors.js';
import type { LiveSpeechEvent } from '../../src/live/events.js';
import { frameHeader, hostileSuite, httpServer, rawWsServer, rejectionOf, textFrame, wsServer } from './helpers.js';

const KEY = 'sk-rxv-hostile-live-0123456789';
const { cleanups, clientOn } = hostileSuite(KEY);

const READY = JSON.stringify({ type: 'session.ready', session_id: 's1', run_id: 1 });
const TEXT = 'Hello there. How are you?';

async function outcome(events$: Observable<LiveSpeechEvent>): Promise<{ error: unknown; events: LiveSpeechEvent[] }> {
  const events: LiveSpeechEvent[] = [];
  const error = await new Promise<unknown>((resolve) =>
    events$.subscribe({ next: (e) => events.push(e), error: resolve, complete: () => resolve(undefined) }),
  );
  return { error, events };
}

/** A `ws` server that answers the first frame with `frames`, then says nothing more. */
async function silentAfter(frames: (string | Buffer)[]): Promise<string> {
  const server = await wsServer((socket: WsSocket) => {
    socket.once('message', () => {
      for (const frame of frames) socket.send(frame);
    });
  });
  cleanups.push(() => server.close());
  return server.wsUrl.replace('ws:', 'http:');
}

describe('a service silent while text waits to be spoken', () => {
  const silences: { name: string; frames: (string | Buffer)[]; events: string[] }[] = [
    { name: 'after session.ready', frames: [READY], events: ['ready'] },
    {
      name: 'mid-segment',
      frames: [READY, JSON.stringify({ type: 'segment.start', segment_id: 0, text: 'Hello there. ' }), Buffer.alloc(100, 1)],
      events: ['ready', 'segmentStart', 'audio'],
    },
  ];
  for (const { name, frames, events } of silences) {
    it(`silent ${name}: a 'timeout' LiveSessionError after responseTimeoutMs, carrying unspoken`, async () => {
      const url = await silentAfter(frames);
      const result = await outcome(of(TEXT).pipe(clientOn(url).speak({ voice_id: 1, responseTimeoutMs: 300 })));
      expect(result.events.map((e) => e.type)).toEqual(events);
      expect(result.error).toBeInstanceOf(LiveSessionError);
      expect(result.error).toMatchObject({ code: 'timeout', retryable: true, unspoken: TEXT });
      expect((result.error as Error).message).toContain('responseTimeoutMs');
    });
  }

  it('trickling a frame one byte at a time (never a whole frame): timeout too', async () => {
    let trickled = 0;
    const server = await rawWsServer((socket: Socket) => {
      socket.once('data', () => {
        socket.write(textFrame(READY));
        socket.write(frameHeader(0x1, 10_000));
        const drip = setInterval(() => {
          trickled += 1;
          if (socket.destroyed) clearInterval(drip);
          else socket.write('x');
        }, 20);
        socket.on('close', () => clearInterval(drip));
      });
    });
    cleanups.push(() => server.close());
    const result = await outcome(of(TEXT).pipe(clientOn(server.baseUrl).speak({ voice_id: 1, responseTimeoutMs: 300 })));
    expect(result.error).toMatchObject({ code: 'timeout', unspoken: TEXT });
    expect(trickled).toBeGreaterThan(5); // the peer was sending bytes all along
  });

  /** A service that starts a segment, then sends an audio frame of `bytes` every 20 ms, forever. */
  async function dripping(bytes: number): Promise<{ url: string; sent: () => number }> {
    let sent = 0;
    const server = await wsServer((socket: WsSocket) => {
      socket.once('message', () => {
        socket.send(READY);
        socket.send(JSON.stringify({ type: 'segment.start', segment_id: 0, text: 'Hello there.' }));
        const drip = setInterval(() => {
          if (socket.readyState !== socket.OPEN) return clearInterval(drip);
          sent += 1;
          socket.send(Buffer.alloc(bytes, 1));
        }, 20);
        socket.on('close', () => clearInterval(drip));
      });
    });
    cleanups.push(() => server.close());
    return { url: server.wsUrl.replace('ws:', 'http:'), sent: () => sent };
  }

  it('a trickle of 1-byte audio frames is no progress: timeout after responseTimeoutMs, though frames kept coming', async () => {
    const service = await dripping(1);
    const result = await outcome(of(TEXT).pipe(clientOn(service.url).speak({ voice_id: 1, sample_rate: 16000, responseTimeoutMs: 300 })));
    expect(result.error).toMatchObject({ code: 'timeout', unspoken: TEXT });
    expect(result.events.filter((e) => e.type === 'audio').length).toBeGreaterThan(5); // frames arrived all along
  });

  it('control: audio at a real rate (0.1 s of 16 kHz WAV each 20 ms) keeps the session alive past responseTimeoutMs', async () => {
    const service = await dripping(3200);
    const events: LiveSpeechEvent[] = [];
    let ended: unknown = 'running';
    const sub = of(TEXT)
      .pipe(clientOn(service.url).speak({ voice_id: 1, sample_rate: 16000, responseTimeoutMs: 300 }))
      .subscribe({ next: (e) => events.push(e), error: (e: unknown) => (ended = e), complete: () => (ended = undefined) });
    cleanups.push(async () => sub.unsubscribe());
    await new Promise((resolve) => setTimeout(resolve, 1200)); // four times the timeout
    expect(ended).toBe('running');
    expect(events.filter((e) => e.type === 'audio').length).toBeGreaterThan(20);
  });

  it('no text waiting: no timeout (control: a session with text on the same silent service times out meanwhile)', async () => {
    const url = await silentAfter([READY]);
    const client = clientOn(url);
    const quiet$ = new Subject<string>();
    const quiet: LiveSpeechEvent[] = [];
    let quietEnded = false;
    const quietSub = quiet$.pipe(client.speak({ voice_id: 1, responseTimeoutMs: 300 })).subscribe({
      next: (e) => quiet.push(e),
      error: () => (quietEnded = true),
      complete: () => (quietEnded = true),
    });
    cleanups.push(async () => quietSub.unsubscribe());
    for (let waited = 0; quiet.length === 0 && waited < 5_000; waited += 10) await new Promise((r) => setTimeout(r, 10));
    expect(quiet.map((e) => e.type)).toEqual(['ready']);
    // Opened after the quiet one was ready: its timeout comes when the quiet one has been silent longer.
    const loud = await outcome(of(TEXT).pipe(client.speak({ voice_id: 1, responseTimeoutMs: 300 })));
    expect(loud.error).toMatchObject({ code: 'timeout' });
    expect(quietEnded).toBe(false);
  });

  it('with reconnect, the timeout is a drop: a new session speaks exactly the unspoken text', async () => {
    let connections = 0;
    const spokenByServer: string[] = [];
    const server = await wsServer((socket: WsSocket) => {
      connections += 1;
      const first = connections === 1;
      let id = 0;
      socket.on('message', (data) => {
        const frame = JSON.parse(String(data)) as { type: string; text?: string };
        if (frame.type === 'session.start') socket.send(READY);
        if (first) return; // the first session goes silent after session.ready
        if (frame.type === 'text.chunk' && frame.text) {
          spokenByServer.push(frame.text);
          socket.send(JSON.stringify({ type: 'segment.start', segment_id: id, text: frame.text }));
          socket.send(Buffer.alloc(10, 2));
          socket.send(JSON.stringify({ type: 'segment.done', segment_id: id }));
          id += 1;
        }
        if (frame.type === 'text.done') {
          socket.send(JSON.stringify({ type: 'session.done' }));
          socket.close(1000);
        }
      });
    });
    cleanups.push(() => server.close());
    const events = await lastValueFrom(
      of(TEXT).pipe(
        clientOn(server.wsUrl.replace('ws:', 'http:')).speak({ voice_id: 1, responseTimeoutMs: 300, reconnect: { maxAttempts: 2, baseDelayMs: 1 } }),
        toArray(),
      ),
    );
    expect(events.map((e) => e.type)).toEqual(['ready', 'reconnected', 'segmentStart', 'audio', 'segmentDone', 'done']);
    expect(events[1]).toMatchObject({ type: 'reconnected', resent: TEXT });
    expect(spokenByServer).toEqual([TEXT]);
    expect(connections).toBe(2);
  });
});

describe('a service that ignores the close frame', () => {
  it('20 unsubscribed sessions: every socket is cut within about closeGraceMs (1 s), not after 30 s', async () => {
    let opened = 0;
    let cut = 0;
    const server = await rawWsServer((socket: Socket) => {
      opened += 1;
      socket.once('data', () => socket.write(textFrame(READY))); // then reads and ignores everything, close frame included
      // The client giving up on the socket is its end of the TCP stream (a clean close
      // would wait for our close frame, which never comes).
      socket.removeAllListeners('end');
      socket.on('end', () => {
        cut += 1;
        socket.destroy();
      });
    });
    cleanups.push(() => server.close());
    const client = clientOn(server.baseUrl);
    const subs: Subscription[] = [];
    const ready: Promise<void>[] = [];
    for (let i = 0; i < 20; i++) {
      ready.push(
        new Promise<void>((resolve) => {
          subs.push(new Subject<string>().pipe(client.speak({ voice_id: 1 })).subscribe({ next: () => resolve(), error: () => resolve() }));
        }),
      );
    }
    await Promise.all(ready);
    expect(opened).toBe(20);
    for (const sub of subs) sub.unsubscribe();
    for (let waited = 0; cut < 20 && waited < 6_000; waited += 20) await new Promise((r) => setTimeout(r, 20));
    expect(cut).toBe(20); // within 6 s; ws's own default would hold them for 30 s
  });
});

describe('a service that ignores the close frame, silent, stalled or breaking the protocol while text waits', () => {
  const cases: Array<{ name: string; options: Record<string, unknown>; then?: string; outcome: string }> = [
    { name: 'silent (responseTimeoutMs)', options: { responseTimeoutMs: 300 }, outcome: 'timeout' },
    { name: "stalled (stall.fallback 'error')", options: { stall: { afterMs: 300, fallback: 'error' } }, outcome: 'timeout' },
    { name: "stalled (stall.fallback 'tts-stream')", options: { stall: { afterMs: 300, fallback: 'tts-stream' }, fallbackSpeech: () => of(new Uint8Array(2)) }, outcome: 'done' },
    { name: 'a frame that is not JSON', options: {}, then: '{not json', outcome: 'protocol' },
  ];
  for (const { name, options, then, outcome: expected } of cases) {
    it(`${name}: its socket is cut at once, not kept for closeGraceMs`, async () => {
      let endedAt = 0;
      const server = await rawWsServer((socket: Socket) => {
        // then reads and ignores everything, close frame included
        socket.once('data', () => socket.write(then === undefined ? textFrame(READY) : Buffer.concat([textFrame(READY), textFrame(then)])));
        socket.on('close', () => (endedAt = Date.now()));
      });
      cleanups.push(() => server.close());
      const result = await outcome(of(TEXT).pipe(clientOn(server.baseUrl).speak({ voice_id: 1, closeGraceMs: 20_000, ...options })));
      const endedBy = Date.now();
      expect(result.error === undefined ? 'done' : (result.error as LiveSessionError).code).toBe(expected);
      for (let waited = 0; endedAt === 0 && waited < 5_000; waited += 20) await new Promise((r) => setTimeout(r, 20));
      // cut as the session ended (closeGraceMs would keep it 20 s)
      expect(endedAt).toBeGreaterThan(0);
      expect(endedAt - endedBy).toBeLessThan(5_000);
    });
  }
});

describe('the key out of reach', () => {
  it('util.inspect of the subscription, the client and the text subject never shows the key (control: the scan sees it in a plain object)', async () => {
    const server = await wsServer((socket: WsSocket) => socket.once('message', () => socket.send(READY)));
    cleanups.push(() => server.close());
    const client = clientOn(server.wsUrl.replace('ws:', 'http:'));
    const text$ = new Subject<string>();
    let ready = false;
    const sub = text$.pipe(client.speak({ voice_id: 1 })).subscribe({ next: () => (ready = true), error: () => undefined });
    cleanups.push(async () => sub.unsubscribe());
    const scan = (): string[] =>
      [sub, client, text$].flatMap((value, i) =>
        [4, 8, 20].flatMap((depth) => (inspect(value, { depth, showHidden: true }).includes(KEY) ? [`${i}@${depth}`] : [])),
      );
    expect(scan()).toEqual([]); // while connecting
    for (let waited = 0; !ready && waited < 5_000; waited += 10) await new Promise((r) => setTimeout(r, 10));
    expect(ready).toBe(true);
    text$.next('Hello there.');
    expect(scan()).toEqual([]); // ready, text in flight
    expect(inspect({ connection: { headers: { 'x-api-key': KEY } } }, { depth: 4 })).toContain(KEY);
  });

  it('NODE_DEBUG=net does not print the live connection options with the key (control: a plain ws connection does)', async () => {
    const server = await wsServer((socket: WsSocket) =>
      socket.once('message', () => {
        socket.send(READY);
        socket.send(JSON.stringify({ type: 'session.done' }));
        socket.close(1000);
      }),
    );
    cleanups.push(() => server.close());
    const script = fileURLToPath(new URL('../fixtures/net-debug-speaker.ts', import.meta.url));
    const run = (mode: string): Promise<{ code: number | null; stderr: string }> =>
      new Promise((resolve) => {
        const child = spawn(process.execPath, ['--import', 'tsx', script, mode, server.wsUrl, KEY], {
          env: { ...process.env, NODE_DEBUG: 'net,tls' },
          stdio: ['ignore', 'ignore', 'pipe'],
        });
        let stderr = '';
        child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
        child.on('close', (code) => resolve({ code, stderr }));
      });
    const ours = await run('client');
    expect(ours.code).toBe(0);
    expect(ours.stderr).toContain('NET'); // debug output was on
    expect(ours.stderr).not.toContain(KEY);
    const control = await run('plain-ws');
    expect(control.code).toBe(0);
    expect(control.stderr).toContain(KEY);
  });

  it('a very short key is never cut out of ordinary text: a text holding it is withheld whole, others pass unchanged', async () => {
    expect(MIN_REDACTED_SECRET_LENGTH).toBe(8);
    expect(redact('ConnectionError: The live session closed', ['e'])).toBe(WITHHELD_TEXT);
    expect(redact('Quota hit', ['e'])).toBe('Quota hit');
    expect(redact(`token ${KEY} leaked`, [KEY])).toBe('token *** leaked');
    const server = await httpServer((req, res) => {
      req.resume();
      res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: req.url === '/list-voices' ? 'The service is down' : 'Quota hit' }));
    });
    cleanups.push(() => server.close());
    const shortKey = clientOn(server.baseUrl, { apiKey: 'e' });
    const down = await rejectionOf(lastValueFrom(shortKey.voices.list()));
    expect((down as Error).message).toBe(`GET /list-voices answered 500: ${WITHHELD_TEXT}`);
    expect((down as Error).message).not.toContain('***');
    const quota = await rejectionOf(lastValueFrom(shortKey.sound.status('t1')));
    expect((quota as Error).message).toContain('answered 500: Quota hit');
  });
});
