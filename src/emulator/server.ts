/**
 * The emulator's server: one `node:http` server for every HTTP endpoint, and a
 * `ws` WebSocketServer (noServer) for the live speech path. Upgrades of the live path
 * are accepted first and then checked: a missing or invalid key closes the socket with
 * 4401; any other upgrade path is answered 404 and destroyed.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { routes } from '../core/routes.js';
import { CloseCodes } from '../live/protocol.js';
import { API_KEY_HEADER, createRequestHandler } from './http.js';
import { handleLiveConnection } from './live.js';
import type { EmulatorState } from './state.js';

/** A running server and how to stop it. */
export interface RunningServer {
  server: Server;
  port: number;
  /** Close every socket (HTTP keep-alive and WebSocket) and stop listening. */
  close(): Promise<void>;
  /** Live WebSockets open right now. */
  liveConnections(): number;
}

function liveKeyOf(req: IncomingMessage, url: URL): string | undefined {
  const header = req.headers[API_KEY_HEADER];
  const fromHeader = Array.isArray(header) ? header[0] : header;
  return fromHeader || url.searchParams.get('api_key') || undefined;
}

/** Start listening on `state.options.host` at `listenPort` (default `state.options.port`). */
export async function startServer(state: EmulatorState, listenPort: number = state.options.port): Promise<RunningServer> {
  const server = createServer(createRequestHandler(state));
  server.keepAliveTimeout = 5_000;
  const wss = new WebSocketServer({ noServer: true, clientTracking: true });
  const pendingUpgrades = new Set<Socket>();

  server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    // A peer resetting the connection must not crash the emulator.
    socket.on('error', () => undefined);
    const url = new URL(req.url ?? '/', 'http://emulator.invalid');
    state.requests.push({ method: 'UPGRADE', path: url.pathname });
    if (url.pathname !== routes.liveTts || state.closing) {
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      socket.destroy();
      return;
    }
    pendingUpgrades.add(socket);
    socket.once('close', () => pendingUpgrades.delete(socket));
    wss.handleUpgrade(req, socket, head, (ws: WebSocket) => {
      pendingUpgrades.delete(socket);
      // Protocol errors of the peer are reported as 'error' events; never let one go unheard.
      ws.on('error', () => undefined);
      const key = liveKeyOf(req, url);
      if (!state.isAcceptedKey(key)) {
        ws.close(CloseCodes.invalidKey, key ? 'invalid API key' : 'missing API key');
        // A peer that never answers the close frame is cut off.
        const timer = setTimeout(() => ws.terminate(), 1_000);
        const unregister = state.onClose(() => clearTimeout(timer));
        ws.once('close', () => {
          clearTimeout(timer);
          unregister();
        });
        return;
      }
      handleLiveConnection(ws, req, key, state);
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listenPort, state.options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;

  let closed: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closed ??= new Promise<void>((resolve) => {
      state.shutdown();
      for (const ws of wss.clients) ws.terminate();
      for (const socket of pendingUpgrades) socket.destroy();
      pendingUpgrades.clear();
      wss.close();
      server.close(() => resolve());
      server.closeAllConnections();
    });
    return closed;
  };
  return { server, port, close, liveConnections: () => wss.clients.size };
}
