/**
 * The relay's origin rules and who a client is, over plain sockets (ws clients set `Origin`
 * as they like): no `Origin` needs an `authorize` that says yes; another origin is refused
 * 4403 before `authorize` and before anything upstream; `publicOrigin` is the own origin
 * behind a proxy; an IPv6 client counts by its /64. Chromium's own `Origin` is in
 * browser.test.ts, DNS rebinding in host.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer } from 'node:http';
import { lastValueFrom, of } from 'rxjs';
import { WebSocket } from 'ws';
import { speak } from '../../src/live/index.js';
import { attachLiveRelay } from '../../src/relay/index.js';
import { SECRET, START, browser, harness, upgrades, type Harness } from './helpers.js';

describe('rxvoice/relay: origins over plain sockets', () => {
  let h: Harness;
  const asked: string[] = [];
  beforeAll(async () => {
    h = await harness({ clientId: undefined });
  });
  afterAll(() => h.close());

  it('no Origin (a server, a script): the default authorize refuses (4401); an authorize that says yes (or gives an id) serves it', async () => {
    const before = upgrades(h.emulator);
    const script = new WebSocket(h.url); // ws sends no Origin unless told
    const closed = await new Promise<{ code: number; reason: string }>((resolve) =>
      script.once('close', (code: number, reason: Buffer) => resolve({ code, reason: String(reason) })),
    );
    expect(closed.code).toBe(4401);
    expect(closed.reason).toMatch(/no Origin/);
    expect(upgrades(h.emulator)).toBe(before);

    const gated = await harness({ authorize: (request) => (request.headers['x-job'] === 'nightly' ? 'job:nightly' : false) });
    const seen: string[] = [];
    gated.relay.events.subscribe((event) => {
      if (event.type === 'sessionOpened') seen.push(event.client);
    });
    try {
      const job = new WebSocket(gated.url, { headers: { 'x-job': 'nightly' } });
      await new Promise((resolve) => job.once('open', resolve));
      job.send(START);
      job.send(JSON.stringify({ type: 'text.chunk', text: 'Scheduled speech.' }));
      job.send(JSON.stringify({ type: 'text.done' }));
      expect(await new Promise((resolve) => job.once('close', resolve))).toBe(1000);
      expect(seen).toEqual(['job:nightly']); // authorize's id is the client
    } finally {
      await gated.close();
    }
  });

  it('another origin: 4403 before authorize, nothing upstream; publicOrigin is the own origin behind a proxy', async () => {
    const proxied = await harness({
      publicOrigin: 'https://chat.example.com',
      authorize: (request) => {
        asked.push(String(request.headers.origin));
        return true;
      },
    });
    try {
      const before = upgrades(proxied.emulator);
      const evil = browser(proxied.url, { origin: 'https://evil.example' });
      expect(await evil.closed).toEqual({ code: 4403, reason: 'origin not allowed: https://evil.example' });
      // behind the proxy the request's own scheme and host are not the page's
      const direct = browser(proxied.url);
      expect((await direct.closed).code).toBe(4403);
      expect(asked).toEqual([]);
      expect(upgrades(proxied.emulator)).toBe(before);
      // control: the public origin (default port of https written out or not) is served
      for (const origin of ['https://chat.example.com', 'https://CHAT.example.com:443']) {
        const page = browser(proxied.url, { origin });
        await page.opened;
        page.ws.send(START);
        page.ws.send(JSON.stringify({ type: 'text.done' }));
        expect((await page.closed).code).toBe(1000);
      }
      expect(asked).toHaveLength(2);
      expect(upgrades(proxied.emulator)).toBe(before + 2);
      expect(proxied.relay.stats().refused.origin).toBe(2);
    } finally {
      await proxied.close();
    }
  });

  it('speak() from a page of another origin: a non-retryable session_rejected error (4403), not retried even with reconnect', async () => {
    const h2 = await harness();
    try {
      let opened = 0;
      class ForeignPage extends WebSocket {
        constructor(address: string | URL, protocols?: string | string[]) {
          super(address, protocols, { origin: 'https://evil.example' });
          opened += 1;
        }
      }
      const error = await lastValueFrom(
        of('Hello there.').pipe(speak({ wsUrl: h2.url, WebSocket: ForeignPage }, { voice_id: 1, reconnect: { maxAttempts: 3, baseDelayMs: 1 } })),
      ).catch((caught: unknown) => caught);
      expect(error).toMatchObject({ name: 'SessionRejectedError', code: 'session_rejected', closeCode: 4403, retryable: false, unspoken: 'Hello there.' });
      expect(opened).toBe(1);
      expect(upgrades(h2.emulator)).toBe(0);
    } finally {
      await h2.close();
    }
  });

  it('bad origin options throw a ValidationError at once', () => {
    const server = createServer();
    const base = { path: '/s', apiKey: SECRET, baseUrl: 'http://127.0.0.1:1' };
    expect(() => attachLiveRelay(server, { ...base, origins: ['https://app.example.com/page'] })).toThrow(/options.origins.0/);
    expect(() => attachLiveRelay(server, { ...base, publicOrigin: 'chat.example.com' })).toThrow(/publicOrigin/);
    expect(() => attachLiveRelay(server, { ...base, publicOrigin: 'https://chat.example.com/' })).toThrow(/publicOrigin/); // no trailing /
    expect(() => attachLiveRelay(server, { ...base, origins: ['https://app.example.com/'] })).toThrow(/origins/);
    expect(() => attachLiveRelay(server, { ...base, limits: { clientShare: 2 } })).toThrow(/clientShare/);
  });
});

describe('rxvoice/relay: who a client is', () => {
  it('origins listed are compared as origins: a default port written out, or a capital letter, still names the page; another port does not', async () => {
    const listed = await harness({ origins: ['https://app.example.com:443', 'http://Tools.Example.com'] });
    try {
      for (const origin of ['https://app.example.com', 'http://tools.example.com']) {
        const page = browser(listed.url, { origin });
        await page.opened;
        page.ws.send(START);
        page.ws.send(JSON.stringify({ type: 'text.done' }));
        expect((await page.closed).code).toBe(1000);
      }
      // control: an origin not listed is refused
      expect((await browser(listed.url, { origin: 'https://evil.example.com' }).closed).code).toBe(4403);
      // a listed name on another port is another origin (http's default is 80, not https's 443)
      expect((await browser(listed.url, { origin: 'http://tools.example.com:443' }).closed).code).toBe(4403);
    } finally {
      await listed.close();
    }
  });

  it('an origins test that throws is a no: 4403 and nothing upstream (control: the same test saying yes serves)', async () => {
    const tested = await harness({
      origins: (origin) => {
        if (origin === 'https://ok.example.com') return true;
        throw new Error('origin lookup failed');
      },
    });
    try {
      expect((await browser(tested.url, { origin: 'https://broken.example.com' }).closed).code).toBe(4403);
      expect(upgrades(tested.emulator)).toBe(0);
      const page = browser(tested.url, { origin: 'https://ok.example.com' });
      await page.opened;
      page.ws.send(START);
      page.ws.send(JSON.stringify({ type: 'text.done' }));
      expect((await page.closed).code).toBe(1000);
      expect(upgrades(tested.emulator)).toBe(1);
    } finally {
      await tested.close();
    }
  });

  it('only path and path/live-tts/ws are the relay’s: other paths under it are not served (404)', async () => {
    const statusOf = (url: string): Promise<number | 'open'> =>
      new Promise((resolve) => {
        const ws = new WebSocket(url, { headers: { origin: new URL(url).origin.replace(/^ws/, 'http') } });
        ws.on('error', () => undefined);
        ws.once('open', () => {
          resolve('open');
          ws.terminate();
        });
        ws.once('unexpected-response', (_request, response) => resolve(response.statusCode ?? 0));
      });
    const site = await harness();
    try {
      for (const path of ['/speechx', '/speech/other', '/speech/live-tts/ws/more', '/speech/live-tts/wsx']) {
        expect(await statusOf(site.url.replace(/\/speech$/, path))).toBe(404);
      }
      // control: the relay's own paths open
      expect(await statusOf(site.url)).toBe('open');
      expect(await statusOf(`${site.url}/live-tts/ws`)).toBe('open');
    } finally {
      await site.close();
    }
  });

  it('an IPv6 address counts by its /64 (one machine holds a whole /64); IPv4, also mapped, as is', async () => {
    const { addressClient } = await import('../../src/relay/origin.js');
    const machine = ['2001:db8:1:2::1', '2001:db8:1:2:ffff:ffff:ffff:fffe', '2001:0DB8:0001:0002:aaaa::9%eth0', '2001:db8:1:2:0:0:10.0.0.1'];
    expect(new Set(machine.map(addressClient))).toEqual(new Set(['2001:db8:1:2::/64']));
    expect(addressClient('2001:db8:1:3::1')).toBe('2001:db8:1:3::/64'); // the next /64 is someone else
    expect(addressClient('::1')).toBe('0:0:0:0::/64');
    expect(addressClient('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(addressClient('203.0.113.7')).not.toBe(addressClient('203.0.113.8'));
    expect(addressClient(undefined)).toBe('unknown');
  });
});
