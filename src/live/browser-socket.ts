/**
 * The browser stand-in for `node-socket.ts` (`"browser"` in package.json): no default
 * WebSocket constructor (the page passes its own, `LiveConnection.WebSocket`), and no
 * socket is a `ws` one. Nothing of `ws` enters a browser bundle.
 */
import type { WebSocket } from 'ws';
import type { WebSocketConstructorLike, WebSocketLike } from './options.js';

/** No default constructor in a browser: `speak` asks for `connection.WebSocket`. */
export const NodeWebSocket: WebSocketConstructorLike | undefined = undefined;

/** Never true in a browser. */
export function isNodeSocket(_socket: WebSocketLike): _socket is WebSocketLike & WebSocket {
  return false;
}
