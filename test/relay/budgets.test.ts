/**
 * Visitor budgets of the relay over real sockets: characters per minute (the chunk over it
 * not forwarded, another visitor unaffected), sessions at once within `clientShare`, the
 * idle timeout, and frames waiting for a slow service session within `upstreamBufferedBytes`.
 */
import { describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { START, browser, harness, json, silentService, upstreams } from './helpers.js';

describe('rxvoice/relay: visitor budgets', () => {
  const forUser = (user: string): Record<string, string> => ({ 'x-user': user });
  const authorizeUser = (request: { headers: Record<string, string | string[] | undefined> }): string | false => {
    const user = request.headers['x-user'];
    return typeof user === 'string' ? `user:${user}` : false;
  };

  it('one visitor over its characters per minute is closed 4429 (the chunk not forwarded) while another keeps speaking', async () => {
    const h = await harness({ authorize: authorizeUser, clientId: undefined, limits: { charactersPerMinute: 60 } });
    const events: Array<{ type: string; reason?: string; client?: string }> = [];
    h.relay.events.subscribe((event) => events.push(event));
    try {
      const a = browser(h.url, forUser('a'));
      const b = browser(h.url, forUser('b'));
      await Promise.all([a.opened, b.opened]);
      a.ws.send(START);
      b.ws.send(START);
      const forty = (who: string): string => JSON.stringify({ type: 'text.chunk', text: `${who} says forty characters of text here. `.padEnd(40, '.').slice(0, 40) });
      const first = upstreams.length;
      a.ws.send(forty('A'));
      b.ws.send(forty('B'));
      await expect.poll(() => upstreams.slice(first).filter((u) => u.sent.length >= 2).length).toBe(2);
      const upstreamA = upstreams.slice(first).find((u) => u.sent[1]!.includes('A says'))!;
      a.ws.send(forty('A')); // 80 > 60
      const closed = await a.closed;
      expect(closed.code).toBe(4429);
      expect(closed.reason).toBe('budget: over 60 characters per minute for this client');
      expect(await upstreamA.closed).toBe(1000);
      expect(upstreamA.sent).toHaveLength(2); // the chunk over the budget never reached the service

      // the other visitor goes on: its budget is its own
      b.ws.send(JSON.stringify({ type: 'text.chunk', text: 'Still mine.' }));
      b.ws.send(JSON.stringify({ type: 'text.done' }));
      expect((await b.closed).code).toBe(1000);
      expect(json(b.frames).filter((f) => f.type === 'segment.done').length).toBeGreaterThan(0);

      // the budget is the visitor's, not the session's: a new session of A is refused too
      const again = browser(h.url, forUser('a'));
      await again.opened;
      again.ws.send(START);
      again.ws.send(JSON.stringify({ type: 'text.chunk', text: 'More than the twenty left.' }));
      expect((await again.closed).code).toBe(4429);
      expect(events.filter((e) => e.type === 'refused')).toEqual([
        expect.objectContaining({ reason: 'characters', client: 'user:a' }),
        expect.objectContaining({ reason: 'characters', client: 'user:a' }),
      ]);
      expect(h.relay.stats().refused.characters).toBe(2);
    } finally {
      await h.close();
    }
  });

  it('one client holds at most clientShare of the relay’s sessions, whatever sessionsPerClient says', async () => {
    const h = await harness({ authorize: authorizeUser, clientId: undefined, limits: { sessions: 10, sessionsPerClient: 10 } });
    try {
      const first = browser(h.url, forUser('greedy'));
      await first.opened;
      const second = browser(h.url, forUser('greedy'));
      expect(await second.closed).toEqual({ code: 4429, reason: 'budget: over 1 sessions at once for this client' });
      const other = browser(h.url, forUser('modest'));
      await other.opened;
      other.ws.send(START);
      other.ws.send(JSON.stringify({ type: 'text.done' }));
      expect((await other.closed).code).toBe(1000);
      first.ws.close();
      await first.closed;
      // the slot is free again
      const third = browser(h.url, forUser('greedy'));
      await third.opened;
      third.ws.send(START);
      third.ws.send(JSON.stringify({ type: 'text.done' }));
      expect((await third.closed).code).toBe(1000);
    } finally {
      await h.close();
    }
  });

  it('an idle session is closed 4408 by the relay and its service session closed; a session that keeps talking is not', async () => {
    const h = await harness({ limits: { idleTimeoutMs: 400 } });
    try {
      const idle = browser(h.url, { 'x-client': 'idle' });
      const talker = browser(h.url, { 'x-client': 'talker' });
      await Promise.all([idle.opened, talker.opened]);
      idle.ws.send(START);
      talker.ws.send(START);
      await expect.poll(() => json(idle.frames).length).toBeGreaterThan(0);
      const both = upstreams.slice(-2);
      const started = Date.now();
      const timer = setInterval(() => talker.ws.send(JSON.stringify({ type: 'text.chunk', text: 'and ' })), 150);
      const closed = await idle.closed;
      expect(closed).toEqual({ code: 4408, reason: 'idle: no text and no audio for 0.4 s' });
      expect(Date.now() - started).toBeGreaterThanOrEqual(300);
      // one of the two service sessions (the idle one's) is closed by the relay
      expect(await Promise.race(both.map((u) => u.closed))).toBe(1000);
      await new Promise((resolve) => setTimeout(resolve, 600));
      clearInterval(timer);
      expect(talker.ws.readyState).toBe(WebSocket.OPEN);
      talker.ws.send(JSON.stringify({ type: 'text.done' }));
      expect((await talker.closed).code).toBe(1000);
      expect(h.relay.stats().refused.idle).toBe(1);
    } finally {
      await h.close();
    }
  });

  it('frames wait for a slow service session to open: past upstreamBufferedBytes the browser is not read, then everything goes in order', async () => {
    const h = await harness(
      { limits: { upstreamBufferedBytes: 16 * 1024, frameBytes: 8 * 1024, charactersPerMinute: 1_000_000, textPerSession: 1_000_000 } },
      { latencyMs: 1500 },
    );
    const throttled: string[] = [];
    h.relay.events.subscribe((event) => {
      if (event.type === 'throttled') throttled.push(event.cause);
    });
    try {
      const b = browser(h.url);
      await b.opened;
      b.ws.send(START);
      const chunks = Array.from({ length: 24 }, (_, i) => JSON.stringify({ type: 'text.chunk', text: `Chunk ${i}. ${'word '.repeat(800)}` }));
      for (const chunk of chunks) b.ws.send(chunk); // 24 x 4 KB = 96 KB, before the service session is open
      let most = 0;
      await expect
        .poll(() => {
          most = Math.max(most, h.relay.stats().upstreamBufferedBytes);
          return h.relay.stats().pausedBrowsers;
        })
        .toBe(1);
      expect(throttled).toContain('upstreamBuffered');
      await expect.poll(() => upstreams.at(-1)!.sent.length, { timeout: 20_000, interval: 5 }).toBe(25);
      // bounded the whole time: the limit, plus what one read of the socket can hold
      expect(most).toBeLessThanOrEqual(16 * 1024 + 64 * 1024);
      expect(upstreams.at(-1)!.sent).toEqual([START, ...chunks]);
      b.ws.close();
      await b.closed;
    } finally {
      await h.close();
    }
  });

  it('a browser is read up to upstreamBufferedBytes waiting toward the service, and no longer just past it', async () => {
    const service = await silentService(); // the service session never opens: every frame waits
    const limit = 16 * 1024;
    const h = await harness({ baseUrl: service.baseUrl, limits: { upstreamBufferedBytes: limit, charactersPerMinute: 1_000_000, textPerSession: 1_000_000 } });
    try {
      const b = browser(h.url);
      await b.opened;
      b.ws.send(START);
      let waiting = Buffer.byteLength(START);
      await expect.poll(() => h.relay.stats().upstreamBufferedBytes).toBe(waiting);
      const chunk = JSON.stringify({ type: 'text.chunk', text: 'word '.repeat(800) }); // about 4 KB
      const send = async (): Promise<void> => {
        b.ws.send(chunk);
        waiting += Buffer.byteLength(chunk);
        await expect.poll(() => h.relay.stats().upstreamBufferedBytes).toBe(waiting);
      };
      while (waiting + Buffer.byteLength(chunk) <= limit) {
        await send();
        expect(h.relay.stats().pausedBrowsers).toBe(0); // within the limit: still read
      }
      await send(); // one chunk past it
      expect(h.relay.stats().pausedBrowsers).toBe(1);
    } finally {
      await h.close();
      await service.close();
    }
  });
});
