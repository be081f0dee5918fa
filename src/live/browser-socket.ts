/**
 * The browser stand-in for `node-socket.ts` (`"browser"` in package.json): no default
 * WebSocket constructor (the page passes its own, `LiveConnection.WebSocket`), no socket is
 * a `ws` one, and a browser's error event says nothing (no `ws` codes, no handshake status).
 * Nothing of `ws` enters a browser bundle.
 */
import type { WebSocket } from 'ws';
import type { Connection, WebSocketConstructorLike, WebSocketLike } from './socket-types.js';

/** No default constructor in a browser: `speak` asks for `connection.WebSocket`. */
export const NodeWebSocket: WebSocketConstructorLike | undefined = undefined;

/** Never true in a browser. */
export function isNodeSocket(_socket: WebSocketLike): _socket is WebSocketLike & WebSocket {
  return false;
}

/** A browser's error event says nothing of the protocol (a broken peer ends in a close). */
export function protocolViolation(_event: { error?: unknown }, _maxPayload: number): string | undefined {
  return undefined;
}

/** A browser's error event names no handshake status: no hint. */
export function livePathHint(_transportError: string | undefined, _url: string): string {
  return '';
}

/** No socket is a `ws` one: `connection.ts` listens through `addEventListener`. */
export function listenNodeSocket(_connection: Connection): boolean {
  return false;
}
