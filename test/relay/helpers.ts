/**
 * What the relay's socket tests share: a harness (the emulator, a server with the relay in
 * front of it, service sockets tracked with the frames they sent), browsers as pages of the
 * relay's own origin open them, and small readers of frames.
 */
import { createServer, type Server } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { WebSocket, type RawData } from 'ws';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import { attachLiveRelay, type LiveRelay, type LiveRelayOptions } from '../../src/relay/index.js';

export const SECRET = 'rxv-relay-SECRET-canary-5521';

/** Every service socket the relay opens, with the frames it sent and how it closed. */
export interface Upstream {
  socket: WebSocket;
  sent: string[];
  closed: Promise<number>;
}
export const upstreams: Upstream[] = [];
export class TrackingWebSocket extends WebSocket {
  constructor(address: string | URL, options?: WebSocket.ClientOptions) {
    super(address, options);
    const sent: string[] = [];
    const closed = new Promise<number>((resolve) => this.once('close', (code: number) => resolve(code)));
    upstreams.push({ socket: this, sent, closed });
    const send = this.send.bind(this) as (data: unknown, ...rest: unknown[]) => void;
    (this as unknown as { send: (data: unknown, ...rest: unknown[]) => void }).send = (data: unknown, ...rest: unknown[]) => {
      sent.push(String(data));
      send(data, ...rest);
    };
  }
}

export interface Browser {
  ws: WebSocket;
  frames: Array<string | Buffer>;
  opened: Promise<void>;
  closed: Promise<{ code: number; reason: string }>;
}
/** A WebSocket as a page of the relay's own origin opens it (`Origin` set), unless `headers` says otherwise. */
export function browser(url: string, headers: Record<string, string> = {}): Browser {
  const ws = new WebSocket(url, { headers: { origin: new URL(url).origin.replace(/^ws/, 'http'), ...headers } });
  const frames: Array<string | Buffer> = [];
  ws.on('error', () => undefined);
  ws.on('message', (data: RawData, isBinary: boolean) => frames.push(isBinary ? (data as Buffer) : String(data)));
  return {
    ws,
    frames,
    opened: new Promise((resolve) => ws.once('open', () => resolve())),
    closed: new Promise((resolve) => ws.once('close', (code: number, reason: Buffer) => resolve({ code, reason: reason.toString() }))),
  };
}
export const json = (frames: Array<string | Buffer>): Array<{ type: string; error?: string }> =>
  frames.filter((f): f is string => typeof f === 'string').map((f) => JSON.parse(f) as { type: string; error?: string });
export const upgrades = (emulator: Emulator): number => emulator.requests.filter((r) => r.method === 'UPGRADE').length;
export const START = JSON.stringify({ type: 'session.start', voice_id: 1, output_format: 'wav', word_timestamps: true });

export interface Harness {
  emulator: Emulator;
  server: Server;
  relay: LiveRelay;
  url: string;
  close(): Promise<void>;
}
export async function harness(relayOptions: Partial<LiveRelayOptions> = {}, emulatorOptions: Parameters<typeof startEmulator>[0] = {}): Promise<Harness> {
  const emulator = await startEmulator({ synth: 'tone', toneWordSeconds: 0.05, apiKeys: [SECRET], ...emulatorOptions });
  const server = createServer((_, res) => res.writeHead(404).end());
  const relay = attachLiveRelay(server, {
    path: '/speech',
    apiKey: SECRET,
    warn: () => undefined, // the loopback-only warning (host.test.ts checks it)
    baseUrl: emulator.baseUrl,
    WebSocket: TrackingWebSocket,
    clientId: (request) => String(request.headers['x-client'] ?? request.socket.remoteAddress),
    ...relayOptions,
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/speech`;
  return {
    emulator,
    server,
    relay,
    url,
    close: async () => {
      await relay.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await emulator.close();
    },
  };
}

/** A "service" that accepts TCP and never answers the WebSocket handshake: a relay's service session stays connecting. */
export interface SilentService {
  baseUrl: string;
  /** The connections the relay made, in order. */
  sockets: Socket[];
  /** Resolves when that connection is closed. */
  closed(socket: Socket): Promise<void>;
  close(): Promise<void>;
}
export async function silentService(): Promise<SilentService> {
  const sockets: Socket[] = [];
  const closedBy = new Map<Socket, Promise<void>>();
  const server = createTcpServer((socket) => {
    socket.on('error', () => undefined);
    socket.resume(); // read (and drop) the handshake request, so that its end is seen
    closedBy.set(socket, new Promise((resolve) => socket.once('close', () => resolve())));
    sockets.push(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    sockets,
    closed: (socket) => closedBy.get(socket)!,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
