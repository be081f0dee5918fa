/**
 * The relay's timers in virtual time (its `scheduler` option): the start timeout (a page that
 * never sends `session.start` is closed, one that did is not), the close grace (a browser that
 * never answers a close frame is cut off), and a service session still connecting when its
 * browser leaves (cut off at once, not left to open).
 */
import { describe, expect, it } from 'vitest';
import { connect, type Socket } from 'node:net';
import { VirtualTimeScheduler } from 'rxjs';
import { START, TrackingWebSocket, browser, harness, json, silentService, upstreams } from './helpers.js';

/** A virtual clock run by hand: `to(ms)` runs what is due up to `ms`, nothing later. */
function clock(): { scheduler: VirtualTimeScheduler; to(ms: number): void } {
  const scheduler = new VirtualTimeScheduler();
  return {
    scheduler,
    to(ms: number) {
      // an action at `ms`, so that the clock reads `ms` after (a flush stops at the last action run)
      if (ms > scheduler.now()) scheduler.schedule(() => undefined, ms - scheduler.now());
      scheduler.maxFrames = ms;
      scheduler.flush();
    },
  };
}

describe('rxvoice/relay: timers on its scheduler', () => {
  it('a page that sends no session.start is closed 4400 at startTimeoutMs, not before; one that started is not', async () => {
    const time = clock();
    const h = await harness({ scheduler: time.scheduler, limits: { startTimeoutMs: 5000 } });
    const events: Array<{ type: string; reason?: string; client?: string }> = [];
    h.relay.events.subscribe((event) => events.push(event));
    try {
      const silent = browser(h.url, { 'x-client': 'silent' });
      const started = browser(h.url, { 'x-client': 'started' });
      await Promise.all([silent.opened, started.opened]);
      started.ws.send(START);
      // both admitted (their store claims answered), and the started one's service session open
      await expect.poll(() => events.filter((e) => e.type === 'sessionOpened').length).toBe(2);
      await expect.poll(() => json(started.frames).map((f) => f.type)).toContain('session.ready');
      const upstreamsBefore = upstreams.length;

      time.to(4999);
      expect(events.filter((e) => e.type === 'refused')).toEqual([]); // reported synchronously when it happens
      time.to(5000);
      expect(events.filter((e) => e.type === 'refused')).toEqual([expect.objectContaining({ reason: 'startTimeout', client: 'silent' })]);
      expect(await silent.closed).toEqual({ code: 4400, reason: 'no session.start in time' });
      expect(json(silent.frames)).toEqual([{ type: 'session.error', error: 'no session.start in time' }]);
      expect(upstreams.length).toBe(upstreamsBefore); // nothing was opened for it

      // the page that started goes on well past the start timeout
      time.to(20_000);
      started.ws.send(JSON.stringify({ type: 'text.chunk', text: 'Still here.' }));
      started.ws.send(JSON.stringify({ type: 'text.done' }));
      expect((await started.closed).code).toBe(1000);
      expect(json(started.frames).map((f) => f.type)).toContain('segment.done');
      expect(h.relay.stats().refused.startTimeout).toBe(1);
    } finally {
      await h.close();
    }
  });

  it('audio from the service counts as activity: the idle clock starts again when it arrives (control: it runs out after)', async () => {
    const time = clock();
    const held: Array<{ data: string; deliver: () => void }> = [];
    let holding = true;
    /** A service connection whose frames reach the relay only when the test lets them (a slow network). */
    class HeldWebSocket extends TrackingWebSocket {
      override emit(event: string | symbol, ...args: unknown[]): boolean {
        if (event === 'message' && holding) {
          held.push({ data: String(args[0]), deliver: () => super.emit(event, ...args) });
          return true;
        }
        return super.emit(event, ...args);
      }
    }
    const h = await harness({ scheduler: time.scheduler, WebSocket: HeldWebSocket, limits: { idleTimeoutMs: 1000 } });
    const refused: string[] = [];
    h.relay.events.subscribe((event) => {
      if (event.type === 'refused') refused.push(`${event.reason} at ${time.scheduler.now()}`);
    });
    try {
      const b = browser(h.url);
      await b.opened;
      b.ws.send(START);
      b.ws.send(JSON.stringify({ type: 'text.chunk', text: 'Hello there.' }));
      // everything the service says for that sentence has reached the relay, held back
      await expect.poll(() => upstreams.at(-1)?.sent.length).toBe(2);
      await expect.poll(() => held.some((m) => m.data.includes('segment.done'))).toBe(true); // and its audio before it
      time.to(900);
      expect(refused).toEqual([]);
      holding = false;
      for (const { deliver } of held.splice(0)) deliver(); // the audio arrives at 900 ms
      await expect.poll(() => b.frames.some((f) => Buffer.isBuffer(f))).toBe(true);
      time.to(1899);
      expect(refused).toEqual([]); // 999 ms after the audio: still open
      time.to(1900);
      expect(refused).toEqual(['idle at 1900']);
      expect(await b.closed).toEqual({ code: 4408, reason: 'idle: no text and no audio for 1 s' });
    } finally {
      await h.close();
    }
  });

  it('a client’s sessions share clientBytesPerSecond: together over it, the second is throttled; another client is not', async () => {
    const time = clock(); // the clock stands still: no bucket refills during the test
    const h = await harness({
      scheduler: time.scheduler,
      limits: { sessionsPerClient: 2, bytesPerSecond: 1_000_000, clientBytesPerSecond: 4096, frameBytes: 4096, textPerSession: 1_000_000, charactersPerMinute: 1_000_000 },
    });
    const throttled: string[] = [];
    h.relay.events.subscribe((event) => {
      if (event.type === 'throttled') throttled.push(`${event.client} ${event.cause}`);
    });
    const big = JSON.stringify({ type: 'text.chunk', text: 'word '.repeat(600) }); // ~3 KB: within one bucket, not two
    try {
      const speak = async (client: string): Promise<void> => {
        const b = browser(h.url, { 'x-client': client });
        await b.opened;
        b.ws.send(START);
        await expect.poll(() => json(b.frames).map((f) => f.type)).toContain('session.ready');
        const upstream = upstreams.at(-1)!;
        b.ws.send(big);
        await expect.poll(() => upstream.sent.length).toBe(2); // read and forwarded
      };
      await speak('shared');
      expect(throttled).toEqual([]);
      await speak('other'); // control: another client's bucket is its own
      expect(throttled).toEqual([]);
      await speak('shared'); // ~6 KB of one client's: over its 4096 per second
      expect(throttled).toEqual(['shared bytesPerSecond']);
    } finally {
      // the throttled browser is not read, so it cannot answer the close frame: the grace runs out
      const closing = h.close();
      time.to(time.scheduler.now() + 2000);
      await closing;
    }
  });

  it('a client that closes its sessions keeps its spent bucket until it refills: a new session is throttled, one after the refill is not', async () => {
    const time = clock();
    const h = await harness({
      scheduler: time.scheduler,
      limits: { sessionsPerClient: 1, bytesPerSecond: 1_000_000, clientBytesPerSecond: 4096, frameBytes: 4096, textPerSession: 1_000_000, charactersPerMinute: 1_000_000 },
    });
    const throttled: string[] = [];
    let closed = 0;
    h.relay.events.subscribe((event) => {
      if (event.type === 'throttled') throttled.push(`${event.client} ${event.cause}`);
      if (event.type === 'sessionClosed') closed++;
    });
    const big = JSON.stringify({ type: 'text.chunk', text: 'word '.repeat(600) }); // ~3 KB: within one bucket, not two
    try {
      /** A session of `client` that sends `big`, read and forwarded; then the page leaves. */
      const speakAndLeave = async (client: string): Promise<void> => {
        const b = browser(h.url, { 'x-client': client });
        await b.opened;
        b.ws.send(START);
        await expect.poll(() => json(b.frames).map((f) => f.type)).toContain('session.ready');
        const upstream = upstreams.at(-1)!;
        const before = closed;
        b.ws.send(big);
        await expect.poll(() => upstream.sent.length + throttled.length).toBeGreaterThanOrEqual(2);
        b.ws.close();
        // a throttled page is not read until its wait is over: its close frame with it
        if (throttled.length > 0) time.to(time.scheduler.now() + 1000);
        await expect.poll(() => closed).toBe(before + 1);
      };
      await speakAndLeave('shared');
      expect(throttled).toEqual([]);
      // the clock stands still: the second session's 3 KB comes out of what is left of the first's bucket
      await speakAndLeave('shared');
      expect(throttled).toEqual(['shared bytesPerSecond']);
      // control: once the bucket has refilled (4096 bytes at 4096 a second), a session goes through
      time.to(time.scheduler.now() + 2000);
      await speakAndLeave('shared');
      expect(throttled).toEqual(['shared bytesPerSecond']);
    } finally {
      const closing = h.close();
      time.to(time.scheduler.now() + 2000);
      await closing;
    }
  });

  it('a browser that never answers the close frame is cut off CLOSE_GRACE_MS (2 s) later', async () => {
    const time = clock();
    const h = await harness({ scheduler: time.scheduler, limits: { startTimeoutMs: 1000 } });
    let opened = 0;
    h.relay.events.subscribe((event) => {
      if (event.type === 'sessionOpened') opened++;
    });
    try {
      // a raw socket: it does the handshake, then reads and never writes (no close frame back)
      const { host } = new URL(h.url);
      const raw: Socket = connect({ host: '127.0.0.1', port: Number(new URL(h.url).port) });
      raw.on('error', () => undefined);
      let received = Buffer.alloc(0);
      raw.on('data', (data: Buffer) => (received = Buffer.concat([received, data])));
      let cut = false;
      raw.once('close', () => (cut = true));
      raw.write(
        `GET /speech HTTP/1.1\r\nHost: ${host}\r\nOrigin: http://${host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
          'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n',
      );
      await expect.poll(() => opened).toBe(1);
      time.to(1000); // the start timeout: a session.error, then a close frame 4400
      // the close frame (opcode 8, code 4400 = 0x1130) has arrived, and the socket is still there
      await expect.poll(() => received.includes(Buffer.from([0x88]))).toBe(true);
      expect(received.includes(Buffer.from([0x11, 0x30]))).toBe(true);
      expect(raw.destroyed || raw.readableEnded).toBe(false);
      time.to(3000);
      // ws itself would cut it only after 30 s: within 10 s it is the relay's grace
      await expect.poll(() => cut, { timeout: 10_000 }).toBe(true);
      expect(raw.readableEnded || raw.destroyed).toBe(true);
    } finally {
      await h.close();
    }
  });

  it('a browser that leaves while its service session is still connecting: that connection is cut at once', async () => {
    // the relay's service session stays connecting for as long as the relay keeps it
    const service = await silentService();
    const h = await harness({ baseUrl: service.baseUrl });
    try {
      const b = browser(h.url);
      await b.opened;
      b.ws.send(START);
      await expect.poll(() => service.sockets.length).toBe(1); // the relay is connecting to the service
      expect(h.relay.stats().upstreams).toBe(1);
      b.ws.close();
      await b.closed;
      await service.closed(service.sockets[0]!); // cut, not left to open later with the key in its header
      await expect.poll(() => h.relay.stats().upstreams).toBe(0);
    } finally {
      await h.close();
      await service.close();
    }
  });
});
