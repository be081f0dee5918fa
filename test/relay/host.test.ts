/**
 * DNS rebinding: a relay with neither `publicOrigin` nor `origins` takes its own origin from
 * the `Host` header, which a rebinding page sets to its own name (its `Origin` and `Host`
 * both `http://rebind.attacker.example:<port>`). Such a relay serves only loopback host names
 * and says so in one warning line at start. Controls: the same request is served on a
 * loopback name, and by a relay whose `publicOrigin` names that host; no warning with
 * `publicOrigin` or `origins`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocket } from 'ws';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import { isLoopbackHost } from '../../src/relay/origin.js';
import { attachLiveRelay, type LiveRelay, type LiveRelayOptions } from '../../src/relay/index.js';

const START = JSON.stringify({ type: 'session.start', voice_id: 1, output_format: 'wav' });
const DONE = JSON.stringify({ type: 'text.done' });
const ATTACKER = 'rebind.attacker.example';

let emulator: Emulator;
beforeAll(async () => {
  emulator = await startEmulator({ synth: 'tone', toneWordSeconds: 0.01 });
});
afterAll(() => emulator.close());

const upgrades = (): number => emulator.requests.filter((r) => r.method === 'UPGRADE').length;

async function site(options: Partial<LiveRelayOptions>): Promise<{ relay: LiveRelay; port: number; close(): Promise<void> }> {
  const server = createServer((_, res) => res.writeHead(404).end());
  const relay = attachLiveRelay(server, { path: '/speech', apiKey: emulator.apiKey, baseUrl: emulator.baseUrl, warn: () => undefined, ...options });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    relay,
    port: (server.address() as AddressInfo).port,
    close: async () => {
      await relay.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * A page at `http://<host>:<port>/` opening the relay by that name (the socket goes to
 * 127.0.0.1, where a rebound name resolves): its `Origin` and `Host` name `host`. Starts and
 * ends a session once open; resolves with how it closed.
 */
function page(port: number, host: string, options: { origin?: string | false } = {}): Promise<{ code: number; reason: string }> {
  const origin = options.origin === undefined ? `http://${host}:${port}` : options.origin;
  const ws = new WebSocket(`ws://127.0.0.1:${port}/speech`, {
    headers: { host: `${host}:${port}` },
    ...(origin === false ? {} : { origin }),
  });
  ws.on('error', () => undefined);
  ws.on('open', () => {
    ws.send(START);
    ws.send(DONE);
  });
  return new Promise((resolve) => ws.once('close', (code: number, reason: Buffer) => resolve({ code, reason: String(reason) })));
}

describe('host names and DNS rebinding', () => {
  it('without publicOrigin or origins: a rebinding page is refused 4403 before anything upstream; loopback names are served', async () => {
    const relay = await site({});
    try {
      const before = upgrades();
      expect(await page(relay.port, ATTACKER)).toEqual({
        code: 4403,
        reason: `host not allowed: ${ATTACKER}:${relay.port} (without publicOrigin or origins only localhost is served)`,
      });
      // a script with no Origin that authorize would let in: the same (the relay cannot tell its name)
      const script = await site({ authorize: () => true });
      try {
        expect((await page(script.port, ATTACKER, { origin: false })).code).toBe(4403);
        expect((await page(script.port, '127.0.0.1', { origin: false })).code).toBe(1000); // control
      } finally {
        await script.close();
      }
      expect(upgrades()).toBe(before + 1);
      expect(relay.relay.stats().refused.origin).toBe(1);
      // control: the same page on loopback names is served
      for (const host of ['localhost', '127.0.0.1', '127.0.0.2', '[::1]']) expect(await page(relay.port, host)).toMatchObject({ code: 1000 });
      expect(upgrades()).toBe(before + 5);
    } finally {
      await relay.close();
    }
  });

  it('control: a relay whose publicOrigin names the host serves that page; with origins only, listed pages come by any name, its own only by a loopback one', async () => {
    const named = await site({ publicOrigin: `http://${ATTACKER}` });
    try {
      expect(await page(named.port, ATTACKER, { origin: `http://${ATTACKER}` })).toMatchObject({ code: 1000 });
      expect((await page(named.port, ATTACKER)).code).toBe(4403); // another port is another origin
    } finally {
      await named.close();
    }
    const listed = await site({ origins: ['https://app.example.com', `http://${ATTACKER}:1`] });
    try {
      const before = upgrades();
      // a rebinding page (its Origin and Host its own name): not the relay's own origin with
      // origins and no publicOrigin, so refused before anything upstream
      expect(await page(listed.port, 'relay.example.net')).toEqual({ code: 4403, reason: `origin not allowed: http://relay.example.net:${listed.port}` });
      expect(upgrades()).toBe(before);
      // controls: a listed page reaching it by any name, and its own page on a loopback name
      expect((await page(listed.port, 'relay.example.net', { origin: 'https://app.example.com' })).code).toBe(1000);
      expect((await page(listed.port, '127.0.0.1')).code).toBe(1000);
      expect((await page(listed.port, 'localhost')).code).toBe(1000);
      expect(upgrades()).toBe(before + 3);
    } finally {
      await listed.close();
    }
  });

  it('says so in one warning line at start, only without publicOrigin or origins', async () => {
    const lines: string[] = [];
    const warn = (line: string): void => void lines.push(line);
    const none = await site({ warn });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^rxvoice relay at \/speech: no publicOrigin or origins, so only loopback hosts \(localhost, 127\.0\.0\.0\/8, \[::1\]\) are served/);
    expect(lines[0]).not.toContain('\n');
    await page(none.port, 'localhost');
    await page(none.port, ATTACKER);
    expect(lines).toHaveLength(1); // once, at start
    await none.close();
    const withPublic = await site({ warn, publicOrigin: 'https://chat.example.com' });
    const withOrigins = await site({ warn, origins: ['https://chat.example.com'] });
    expect(lines).toHaveLength(1);
    await withPublic.close();
    await withOrigins.close();
  });

  it('isLoopbackHost: localhost, 127.0.0.0/8 in any form, [::1], with any port; nothing else', () => {
    for (const host of ['localhost', 'LOCALHOST:8080', 'localhost:80', '127.0.0.1', '127.255.0.9:1', '127.1', '0x7f.1', '[::1]', '[::1]:9000', '[0:0:0:0:0:0:0:1]']) {
      expect([host, isLoopbackHost(host)]).toEqual([host, true]);
    }
    const others = [undefined, '', ATTACKER, 'localhost.attacker.example', '127.0.0.1.attacker.example', 'attacker.example@127.0.0.1'];
    others.push('128.0.0.1', '0.0.0.0', '10.0.0.1', '[::2]', '[::ffff:7f00:1]', 'localhost/x', 'localhost?x', 'localhost#x', 'local host');
    for (const host of others) expect([host, isLoopbackHost(host)]).toEqual([host, false]);
  });
});
