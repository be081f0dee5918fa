/**
 * The `ws` package's WebSocket: the default constructor of a live session in Node, the
 * test that a socket is one (`connection.ts` listens to its own events then), and what its
 * errors say (`WS_ERR_*` codes, the status of a refused handshake).
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
