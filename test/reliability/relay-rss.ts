/**
 * The relay's memory under a padded-frame flood, measured in a process of its own (a
 * script, not a test: its figure goes in reports, the tests bound buffered bytes instead).
 *
 *   npx tsx test/reliability/relay-rss.ts [--seconds 15] [--service emulator|deaf]
 *
 * The child runs the relay with its default limits in front of the emulator (`emulator`)
 * or of a service that stops reading after `session.ready` (`deaf`); this process opens 4
 * sessions and sends `{"type":"text.chunk","text":"","pad":<60 KB>}` (one in 16 with a
 * word of text) as fast as each socket takes them. Prints the child's RSS and heap before,
 * at most, and at the end, and what this side pushed.
 */
import { fork } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { WebSocket, WebSocketServer } from 'ws';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '15' }, service: { type: 'string', default: 'emulator' }, child: { type: 'boolean', default: false } } });

async function child(): Promise<void> {
  const { startEmulator } = await import('../../src/emulator/index.js');
  const { attachLiveRelay } = await import('../../src/relay/index.js');
  let baseUrl: string;
  let apiKey = 'sk-rxv-rss-0123456789';
  if (values.service === 'deaf') {
    const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    await new Promise((resolve) => wss.once('listening', resolve));
    wss.on('connection', (socket) => {
      socket.on('error', () => undefined);
      socket.once('message', () => {
        socket.send(JSON.stringify({ type: 'session.ready', session_id: 's', run_id: 1 }));
        (socket as unknown as { _socket: { pause(): void } })._socket.pause();
      });
    });
    baseUrl = `http://127.0.0.1:${(wss.address() as AddressInfo).port}`;
  } else {
    const emulator = await startEmulator({ synth: 'tone', apiKeys: [apiKey] });
    baseUrl = emulator.baseUrl;
    apiKey = emulator.apiKey;
  }
  const server = createServer();
  attachLiveRelay(server, { path: '/speech', apiKey, baseUrl, authorize: () => true });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  process.send!({ url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}/speech` });
  setInterval(() => {
    const { rss, heapUsed, external, arrayBuffers } = process.memoryUsage();
    process.send!({ rss, heapUsed, external, arrayBuffers });
  }, 250);
}

async function parent(): Promise<void> {
  const relay = fork(fileURLToPath(import.meta.url), ['--child', '--service', values.service!], { execArgv: ['--import', 'tsx'] });
  const samples: Array<{ rss: number; heapUsed: number; external: number }> = [];
  const url = await new Promise<string>((resolve) =>
    relay.on('message', (message: { url?: string; rss?: number; heapUsed?: number; external?: number }) => {
      if (message.url !== undefined) resolve(message.url);
      else samples.push(message as { rss: number; heapUsed: number; external: number });
    }),
  );
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const before = samples.at(-1)!;
  const pad = 'p'.repeat(60 * 1024 - 100);
  let pushed = 0;
  let n = 0;
  const until = Date.now() + Number(values.seconds) * 1000;
  const sockets = await Promise.all(
    Array.from({ length: 4 }, () => {
      const ws = new WebSocket(url);
      ws.on('error', () => undefined);
      return new Promise<WebSocket>((resolve) => ws.once('open', () => resolve(ws)));
    }),
  );
  for (const ws of sockets) ws.send(JSON.stringify({ type: 'session.start', voice_id: 1, output_format: 'wav' }));
  while (Date.now() < until) {
    for (const ws of sockets) {
      while (ws.readyState === WebSocket.OPEN && ws.bufferedAmount < 8 * 1024 * 1024) {
        const frame = JSON.stringify({ type: 'text.chunk', text: n++ % 16 === 0 ? 'word ' : '', pad });
        ws.send(frame);
        pushed += frame.length;
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const waiting = sockets.reduce((sum, ws) => sum + ws.bufferedAmount, 0);
  const most = samples.reduce((m, s) => (s.rss > m.rss ? s : m), before);
  const end = samples.at(-1)!;
  const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
  console.log(
    `service ${values.service}, ${values.seconds} s, 4 sessions: pushed ${mb(pushed)} (${mb(waiting)} still waiting in this process); ` +
      `relay RSS ${mb(before.rss)} before, ${mb(most.rss)} at most (+${mb(most.rss - before.rss)}), ${mb(end.rss)} at the end; ` +
      `heap ${mb(before.heapUsed)} -> ${mb(end.heapUsed)}`,
  );
  for (const ws of sockets) ws.terminate();
  relay.kill('SIGKILL');
}

await (values.child ? child() : parent());
