/**
 * The real service by default (issue 29): the key from CAMB_API_KEY (then RXVOICE_API_KEY),
 * the address from CAMB_BASE_URL (then RXVOICE_BASE_URL, then https://client.camb.ai/apis),
 * the live address overridable, and the errors a user meets there: unreachable host,
 * 401/403, a live path answering 404. Local servers on port 0; the public host only in a
 * child process whose DNS answers "not found" (the test never needs, nor uses, a network).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { lastValueFrom, of, toArray } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthenticationError, ConnectionError, createClient } from '../../src/index.js';
import { RxVoiceError } from '../../src/live/index.js';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';

const KEY = 'sk-camb-SECRET-0c4f2e9a71';
const root = fileURLToPath(new URL('../..', import.meta.url));

function configError(make: () => unknown): RxVoiceError {
  try {
    make();
  } catch (error) {
    expect(error).toBeInstanceOf(RxVoiceError);
    expect((error as RxVoiceError).code).toBe('config');
    return error as RxVoiceError;
  }
  throw new Error('expected a config error');
}

describe('where the client goes', () => {
  it('CAMB_ variables win over RXVOICE_ ones; RXVOICE_ ones are read alone; options win over both', () => {
    const both = createClient({
      env: { CAMB_API_KEY: KEY, RXVOICE_API_KEY: 'other-key', CAMB_BASE_URL: 'https://camb.example/v1', RXVOICE_BASE_URL: 'https://rx.example' },
    });
    expect(both.baseUrl).toBe('https://camb.example/v1');
    expect(createClient({ env: { RXVOICE_API_KEY: KEY, RXVOICE_BASE_URL: 'https://rx.example/' } }).baseUrl).toBe('https://rx.example');
    expect(createClient({ env: { CAMB_API_KEY: KEY, CAMB_BASE_URL: 'https://camb.example' }, baseUrl: 'https://given.example' }).baseUrl).toBe(
      'https://given.example',
    );
    // blank values count as unset
    expect(createClient({ env: { CAMB_API_KEY: ' ', RXVOICE_API_KEY: KEY, CAMB_BASE_URL: '' } }).baseUrl).toBe('https://client.camb.ai/apis');
  });

  it('a key alone: the public service, and the live address derived from it', () => {
    const client = createClient({ env: { CAMB_API_KEY: KEY } });
    expect(client.baseUrl).toBe('https://client.camb.ai/apis');
    expect(client.wsUrl).toBe('wss://client.camb.ai/apis/live-tts/ws');
    expect(JSON.stringify(client)).not.toContain(KEY);
  });

  it('liveUrl overrides the derived live address, as given; a bad one is a config error', () => {
    const client = createClient({ apiKey: KEY, liveUrl: 'wss://live.example/v2/stream' });
    expect(client.baseUrl).toBe('https://client.camb.ai/apis');
    expect(client.wsUrl).toBe('wss://live.example/v2/stream');
    expect(configError(() => createClient({ apiKey: KEY, liveUrl: 'https://live.example' })).message).toContain('liveUrl');
  });

  it('a plain ws:// liveUrl to another host is refused like a plain http:// baseUrl (the key would travel in clear); loopback and allowInsecureHttp are allowed', () => {
    const refused = configError(() => createClient({ apiKey: KEY, liveUrl: 'ws://192.0.2.2:8080/live-tts/ws' }));
    expect(refused.message).toMatch(/plain ws:\/\/ to 192\.0\.2\.2/);
    expect(refused.message).not.toContain(KEY);
    expect(configError(() => createClient({ apiKey: KEY, baseUrl: 'http://192.0.2.2:8080' })).message).toMatch(/plain http/); // the rule it follows
    expect(createClient({ apiKey: KEY, liveUrl: 'ws://127.0.0.1:8080/live-tts/ws' }).wsUrl).toBe('ws://127.0.0.1:8080/live-tts/ws');
    expect(createClient({ apiKey: KEY, liveUrl: 'ws://192.0.2.2:8080/x', allowInsecureHttp: true }).wsUrl).toBe('ws://192.0.2.2:8080/x');
  });

  it('a key no HTTP header can carry (a line break, a space, non-ASCII) is a config error at once, naming where it came from, never the key', () => {
    for (const bad of [`${KEY}\n`, `${KEY}\r\nX-Evil: 1`, `${KEY} extra`, `${KEY}€`, `\t${KEY}`]) {
      const given = configError(() => createClient({ apiKey: bad }));
      expect(given.message).toMatch(/option `apiKey`.*HTTP header/);
      expect(given.message).not.toContain(KEY);
      // the environment's values are trimmed (a trailing line break there is common); what is inside is not
      if (bad.trim() === bad) expect(configError(() => createClient({ env: { CAMB_API_KEY: bad } })).message).toMatch(/from the environment/);
    }
    expect(createClient({ env: { CAMB_API_KEY: `${KEY}\n` } }).baseUrl).toBe('https://client.camb.ai/apis');
    expect(createClient({ apiKey: 'sk+test/KEY=1234567890~!' }).baseUrl).toBe('https://client.camb.ai/apis'); // control: printable ASCII is fine
  });

  it('a base address without a scheme shows the value and the fix, never the key', () => {
    const error = configError(() => createClient({ apiKey: KEY, baseUrl: 'client.camb.ai/apis' }));
    expect(error.message).toContain('"client.camb.ai/apis"');
    expect(error.message).toContain('https://client.camb.ai/apis');
    const pasted = configError(() => createClient({ apiKey: KEY, baseUrl: `x${KEY}` }));
    expect(pasted.message).not.toContain(KEY);
    expect(pasted.message).toContain('***');
  });
});

describe('errors at a service', () => {
  let server: Server;
  let baseUrl: string;
  let emu: Emulator;
  beforeAll(async () => {
    // answers every path with the status its first segment names (/401/..., /403/...)
    server = createServer((req, res) => {
      const status = Number(req.url?.split('/')[1]) || 500;
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: `status ${status}`, status }));
    });
    // a WebSocket handshake anywhere: 404, as a service whose live path is elsewhere
    server.on('upgrade', (_req, socket) => socket.end('HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    emu = await startEmulator({ synth: 'tone', apiKeys: [KEY] });
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
    await emu.close();
  });

  it('a closed port: a ConnectionError naming the host and port', async () => {
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((r) => probe.close(() => r()));
    const client = createClient({ apiKey: KEY, baseUrl: `http://127.0.0.1:${port}`, maxRetries: 0 });
    const error = await lastValueFrom(client.voices.list()).catch((e: unknown) => e);
    await client.close();
    expect(error).toBeInstanceOf(ConnectionError);
    expect((error as Error).message).toContain(`127.0.0.1:${port}`);
    expect((error as Error).message).toContain('ECONNREFUSED');
    expect((error as Error).message).toContain('CAMB_BASE_URL');
  });

  it.each([401, 403])('%i: an AuthenticationError that says to check CAMB_API_KEY', async (status) => {
    const client = createClient({ apiKey: KEY, baseUrl: `${baseUrl}/${status}`, maxRetries: 0 });
    const error = await lastValueFrom(client.voices.list()).catch((e: unknown) => e);
    await client.close();
    expect(error).toBeInstanceOf(AuthenticationError);
    expect((error as AuthenticationError).status).toBe(status);
    expect((error as Error).message).toContain('CAMB_API_KEY');
    expect((error as Error).message).not.toContain(KEY);
  });

  it('a live path answering 404 names the option to set; the same client with liveUrl speaks', async () => {
    const lost = createClient({ apiKey: KEY, baseUrl: emu.baseUrl, liveUrl: `${baseUrl.replace('http', 'ws')}/somewhere/ws` });
    const error = await lastValueFrom(of('Hello there.').pipe(lost.speak({ voice_id: 1 }), toArray())).catch((e: unknown) => e);
    await lost.close();
    expect(error).toBeInstanceOf(RxVoiceError);
    expect((error as Error).message).toContain('404');
    expect((error as Error).message).toContain('liveUrl');
    expect((error as Error).message).toContain('/somewhere/ws');
    // control: the emulator's own live path given as liveUrl (used as is) speaks
    const found = createClient({ apiKey: KEY, baseUrl: emu.baseUrl, liveUrl: emu.wsUrl });
    const events = await lastValueFrom(of('Hello there.').pipe(found.speak({ voice_id: 1 }), toArray()));
    await found.close();
    expect(events.some((e) => e.type === 'segmentDone' || e.type === 'done')).toBe(true);
  });
});

/** Run node with DNS answering "not found" for every host; killed after 25 s. */
function runWithoutNetwork(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'rxvoice-nonet-'));
  const preload = join(dir, 'no-network.mjs');
  writeFileSync(
    preload,
    `import dns from 'node:dns';
dns.lookup = (host, options, callback) => {
  const done = typeof options === 'function' ? options : callback;
  process.stderr.write('[no-network] lookup ' + host + '\\n');
  const error = Object.assign(new Error('getaddrinfo ENOTFOUND ' + host), { code: 'ENOTFOUND', hostname: host, syscall: 'getaddrinfo' });
  process.nextTick(() => done(error));
};
`,
  );
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', preload, ...args], {
      cwd: root,
      env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', RXVOICE_FROM_SOURCE: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const killer = setTimeout(() => child.kill('SIGKILL'), 25_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(killer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('only CAMB_API_KEY set, no network', () => {
  it('rxvoice voices fails with a connection error naming client.camb.ai (exit 6)', async () => {
    const run = await runWithoutNetwork([join(root, 'bin/rxvoice.js'), 'voices'], { CAMB_API_KEY: KEY });
    // the lookup went to the public host: the error is the connection's, not a configuration's
    expect(run.stderr).toContain('[no-network] lookup client.camb.ai');
    expect(run.code).toBe(6);
    const errorLine = run.stderr.split('\n').find((line) => line.startsWith('rxvoice: '));
    expect(errorLine).toMatch(/ConnectionError: .*client\.camb\.ai/);
    expect(run.stderr + run.stdout).not.toContain(KEY);
  }, 40_000);

  it("createClient()'s client fails with a ConnectionError naming client.camb.ai", async () => {
    const script = `import { createClient } from ${JSON.stringify(join(root, 'src/index.ts'))};
const client = createClient({ maxRetries: 0 });
try { await client.voices.list().toPromise(); console.log('no error'); }
catch (error) { console.log(JSON.stringify({ name: error.name, code: error.code, message: error.message })); }
finally { await client.close(); }`;
    const run = await runWithoutNetwork(['--import', 'tsx', '--input-type=module', '-e', script], { CAMB_API_KEY: KEY });
    expect(run.stderr).toContain('[no-network] lookup client.camb.ai');
    const result = JSON.parse(run.stdout.trim().split('\n').at(-1) ?? '{}') as { name?: string; code?: string; message?: string };
    expect(result.name).toBe('ConnectionError');
    expect(result.code).toBe('connection');
    expect(result.message).toContain('client.camb.ai');
    expect(result.message).toContain('ENOTFOUND');
    expect(run.stdout).not.toContain(KEY);
  }, 40_000);
});

describe('Node older than 20.19', () => {
  const fake = (version: string): string[] => ['--import', `data:text/javascript,Object.defineProperty(process.versions,'node',{value:'${version}'})`];
  it('the CLI and the import say which Node is needed; 20.19 itself loads (control)', async () => {
    const cli = await runWithoutNetwork([...fake('18.20.4'), join(root, 'bin/rxvoice.js'), '--help'], {});
    expect(cli.code).toBe(1);
    expect(cli.stderr).toContain('rxvoice needs Node 20.19 or later; this is 18.20.4');
    const load = (version: string) =>
      runWithoutNetwork([...fake(version), '--import', 'tsx', '--input-type=module', '-e', `import(${JSON.stringify(join(root, 'src/index.ts'))}).then(() => console.log('loaded'), (e) => console.log(e.message))`], {});
    expect((await load('20.18.3')).stdout).toContain('rxvoice needs Node 20.19 or later; this is 20.18.3');
    expect((await load('20.19.0')).stdout.trim()).toBe('loaded');
    const help = await runWithoutNetwork([...fake('20.19.0'), join(root, 'bin/rxvoice.js'), '--help'], {});
    expect(help.code).toBe(0);
  }, 60_000);
});
