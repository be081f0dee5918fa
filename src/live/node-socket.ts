/**
 * The `ws` package's WebSocket: the default constructor of a live session in Node, the
 * test that a socket is one and the listening to its own events (`listenNodeSocket`, for
 * `connection.ts`), and what its errors say (`WS_ERR_*` codes, the status of a refused
 * handshake).
 *
 * A browser bundle gets `browser-socket.ts` instead (`"browser"` in package.json): there
 * `ws` is only a stub that throws, and its CommonJS wrapper cost the page 0.5 KB gzipped.
 */
import { WebSocket, type RawData } from 'ws';
import type { Connection, WebSocketConstructorLike, WebSocketLike } from './socket-types.js';

/** The default WebSocket constructor: `ws`'s (it takes `{ headers }`, so the key is sent as a header). */
export const NodeWebSocket: WebSocketConstructorLike | undefined = WebSocket;

/** True for a socket of the `ws` package. */
export function isNodeSocket(socket: WebSocketLike): socket is WebSocketLike & WebSocket {
  return socket instanceof WebSocket;
}

/**
 * The protocol error a socket error event means, if any: `ws` reports a peer breaking the
 * WebSocket protocol (a message over `maxPayload`, a bad opcode, invalid UTF-8...) with a
 * `WS_ERR_*` code; other errors (a refused connection...) end in a close instead.
 */
export function protocolViolation(event: { error?: unknown }, maxPayload: number): string | undefined {
  const code = (event.error as { code?: unknown } | undefined)?.code;
  if (typeof code !== 'string' || !code.startsWith('WS_ERR_')) return undefined;
  return code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH'
    ? `The server sent a message larger than maxPayload (${maxPayload} bytes)`
    : `The server broke the WebSocket protocol (${code})`;
}

/**
 * For a handshake answered 404 (the socket's error names the status, as `ws`'s does; a
 * browser's names none): the live path is not where it was looked for (the service does not
 * publish it), so say which option sets it. `url` is the session address; its query (a key,
 * for browser-style sockets) is left out.
 * @internal
 *
 * @example
 * ```ts
 * livePathHint('Unexpected server response: 404', 'wss://host/apis/live-tts/ws'); // '. No live session at wss://host/apis/live-tts/ws: set ...'
 * ```
 */
export function livePathHint(transportError: string | undefined, url: string): string {
  if (transportError === undefined || !/\b404\b/.test(transportError)) return '';
  const where = new URL(url);
  return (
    `. No live session at ${where.origin}${where.pathname}: set the live address ` +
    "(createClient's `liveUrl`, or speak's `wsUrl`) to the service's live WebSocket path"
  );
}

/** The connection a `ws` socket is listened to for (a property of the socket: no closure per socket). */
const CONNECTION = Symbol('rxvoice.connection');

/** The connection of a `ws` socket listened to. */
function connectionOf(socket: WebSocket): Connection {
  return (socket as unknown as { [CONNECTION]: Connection })[CONNECTION];
}

function onNodeOpen(this: WebSocket): void {
  // ws reads no frame before 'open' (it emits 'open' as it takes the TCP socket): 'message' is
  // listened to from here, and 'open' no longer, so the socket's table of events keeps three
  // entries (a fourth doubles its size: 256 bytes, not 160)
  this.off('open', onNodeOpen);
  this.on('message', onNodeMessage);
  const connection = connectionOf(this);
  connection.host.onOpen(connection);
}

function onNodeMessage(this: WebSocket, data: RawData, isBinary: boolean): void {
  const connection = connectionOf(this);
  connection.host.onMessage(connection, isBinary ? data : data.toString());
}

function onNodeClose(this: WebSocket, code: number, reason: Buffer): void {
  const connection = connectionOf(this);
  connection.host.onClose(connection, code, reason.toString());
}

function onNodeError(this: WebSocket, error: Error): void {
  const connection = connectionOf(this);
  connection.host.onSocketError(connection, { error, message: error.message });
}

/**
 * Hand a `ws` socket's events to its connection's host, if the socket is a `ws` one (else
 * false: `connection.ts` listens through `addEventListener`). Its listeners are module
 * functions shared by every socket (`ws` calls them with the socket as `this`), which find
 * the connection in a property of the socket (not enumerable: `util.inspect` of a socket
 * does not show it): no closures and context per socket (`ws` links its own receiver and
 * sender to their socket the same way). 'message' is listened to from 'open' on, in place
 * of 'open'.
 */
export function listenNodeSocket(connection: Connection): boolean {
  const socket = connection.socket;
  if (!isNodeSocket(socket)) return false;
  Object.defineProperty(socket, CONNECTION, { value: connection });
  socket.on('open', onNodeOpen);
  socket.on('close', onNodeClose);
  socket.on('error', onNodeError);
  return true;
}
