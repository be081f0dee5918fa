/**
 * The relay's limits at their edges, over real sockets: exactly at a limit is served, one
 * over is refused (text per session, characters per minute, sessions on the relay, a
 * client's share of them), and an `authorize` answering an empty id is a no.
 */
import { describe, expect, it } from 'vitest';
import { START, browser, harness, json, upgrades, upstreams } from './helpers.js';

const chunk = (text: string): string => JSON.stringify({ type: 'text.chunk', text });
const DONE = JSON.stringify({ type: 'text.done' });

describe('rxvoice/relay: limits at their edges', () => {
  it('textPerSession: exactly the limit is spoken; one character more closes 4400, that chunk not forwarded', async () => {
    const h = await harness({ limits: { textPerSession: 10 } });
    try {
      const at = browser(h.url, { 'x-client': 'at' });
      await at.opened;
      at.ws.send(START);
      at.ws.send(chunk('Ten chars.')); // 10
      at.ws.send(DONE);
      expect(await at.closed).toEqual({ code: 1000, reason: 'session done' });
      expect(json(at.frames).map((f) => f.type)).toContain('segment.done');

      const over = browser(h.url, { 'x-client': 'over' });
      await over.opened;
      over.ws.send(START);
      await expect.poll(() => json(over.frames).map((f) => f.type)).toContain('session.ready');
      const upstream = upstreams.at(-1)!;
      over.ws.send(chunk('Ten chars.'));
      over.ws.send(chunk('!')); // 11
      expect(await over.closed).toEqual({ code: 4400, reason: 'text over 10 characters in one session' });
      expect(upstream.sent).toEqual([START, chunk('Ten chars.')]);
    } finally {
      await h.close();
    }
  });

  it('an empty text.chunk is not forwarded; the text around it is', async () => {
    const h = await harness();
    try {
      const b = browser(h.url);
      await b.opened;
      b.ws.send(START);
      await expect.poll(() => json(b.frames).map((f) => f.type)).toContain('session.ready');
      const upstream = upstreams.at(-1)!;
      b.ws.send(chunk(''));
      b.ws.send(chunk('Hello.'));
      b.ws.send(DONE);
      expect((await b.closed).code).toBe(1000);
      expect(upstream.sent).toEqual([START, chunk('Hello.'), DONE]);
    } finally {
      await h.close();
    }
  });

  it('charactersPerMinute: exactly the budget is spoken; one character more closes 4429', async () => {
    const h = await harness({ limits: { charactersPerMinute: 20 } });
    try {
      const b = browser(h.url, { 'x-client': 'spender' });
      await b.opened;
      b.ws.send(START);
      await expect.poll(() => json(b.frames).map((f) => f.type)).toContain('session.ready');
      const upstream = upstreams.at(-1)!;
      b.ws.send(chunk('Twenty characters!!.')); // 20: the whole budget
      await expect.poll(() => upstream.sent.length).toBe(2);
      b.ws.send(chunk('A')); // 21
      b.ws.send(DONE);
      expect(await b.closed).toEqual({ code: 4429, reason: 'budget: over 20 characters per minute for this client' });
      expect(upstream.sent).toEqual([START, chunk('Twenty characters!!.')]);
    } finally {
      await h.close();
    }
  });

  it('limits.sessions: the relay serves that many sessions at once; one more is closed 4400 (too many on this server)', async () => {
    const h = await harness({ limits: { sessions: 2, clientShare: 1 } });
    let opened = 0;
    h.relay.events.subscribe((event) => {
      if (event.type === 'sessionOpened') opened++;
    });
    try {
      const one = browser(h.url, { 'x-client': 'one' });
      const two = browser(h.url, { 'x-client': 'two' });
      await Promise.all([one.opened, two.opened]);
      await expect.poll(() => opened).toBe(2); // both admitted: the limit is reached, not passed
      const three = browser(h.url, { 'x-client': 'three' });
      expect(await three.closed).toEqual({ code: 4400, reason: 'too many sessions on this server' });
      expect(json(three.frames)).toEqual([{ type: 'session.error', error: 'too many sessions on this server' }]);
      expect(h.relay.stats().refused.serverSessions).toBe(1);
      // the two admitted are served
      for (const b of [one, two]) {
        b.ws.send(START);
        b.ws.send(DONE);
        expect((await b.closed).code).toBe(1000);
      }
    } finally {
      await h.close();
    }
  });

  it('clientShare of a relay’s sessions is rounded down: 10% of 15 is one session per client', async () => {
    const h = await harness({ limits: { sessions: 15, sessionsPerClient: 10, clientShare: 0.1 } });
    let opened = 0;
    h.relay.events.subscribe((event) => {
      if (event.type === 'sessionOpened') opened++;
    });
    try {
      const first = browser(h.url, { 'x-client': 'greedy' });
      await first.opened;
      await expect.poll(() => opened).toBe(1);
      const second = browser(h.url, { 'x-client': 'greedy' });
      expect(await second.closed).toEqual({ code: 4429, reason: 'budget: over 1 sessions at once for this client' });
      // control: another client gets its own one
      const other = browser(h.url, { 'x-client': 'other' });
      await other.opened;
      other.ws.send(START);
      other.ws.send(DONE);
      expect((await other.closed).code).toBe(1000);
      first.ws.close();
      await first.closed;
    } finally {
      await h.close();
    }
  });

  it('authorize answering an empty client id is a no (4401, nothing upstream); a non-empty id is a yes', async () => {
    const h = await harness({ authorize: (request) => String(request.headers['x-id'] ?? '') });
    try {
      const before = upgrades(h.emulator);
      const empty = browser(h.url, { 'x-id': '' });
      expect((await empty.closed).code).toBe(4401);
      expect(upgrades(h.emulator)).toBe(before);
      const named = browser(h.url, { 'x-id': 'user:1' });
      await named.opened;
      named.ws.send(START);
      named.ws.send(DONE);
      expect((await named.closed).code).toBe(1000);
      expect(upgrades(h.emulator)).toBe(before + 1); // control: a served session is seen upstream
    } finally {
      await h.close();
    }
  });
});
