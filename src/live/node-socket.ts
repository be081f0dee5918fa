/**
 * The `ws` package's WebSocket: the default constructor of a live session in Node, and
 * the test that a socket is one (`connection.ts` listens to its own events then).
 *
 * A browser bundle gets `browser-socket.ts` instead (`"browser"` in package.json): there
 * `ws` is only a stub that throws, and its CommonJS wrapper cost the page 0.5 KB gzipped.
 */
import { WebSocket } from 'ws';
import type { WebSocketConstructorLike, WebSocketLike } from './options.js';

/** The default WebSocket constructor: `ws`'s (it takes `{ headers }`, so the key is sent as a header). */
export const NodeWebSocket: WebSocketConstructorLike | undefined = WebSocket;

/** True for a socket of the `ws` package. */
export function isNodeSocket(socket: WebSocketLike): socket is WebSocketLike & WebSocket {
  return socket instanceof WebSocket;
}
