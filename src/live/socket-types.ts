/**
 * The types a live session's socket code shares: the WebSocket it uses (`WebSocketLike`,
 * `WebSocketConstructorLike`: re-exported by options.ts, the names of the public API), one
 * socket of a session (`Connection`) and where its events go (`SocketEventsHost`). Apart
 * from the files that use them (options.ts, connection.ts, node-socket.ts, browser-socket.ts)
 * so that none of those imports another for a type.
 */
import type { Subscription } from 'rxjs';

/**
 * The part of a WebSocket the session uses: the WHATWG API, which browsers, undici and
 * the `ws` package all implement.
 */
export interface WebSocketLike {
  readonly readyState: number;
  binaryType: string;
  /** Sends one JSON text frame. */
  send(data: string): void;
  /** Closes the connection (1000 when `code` is not given). */
  close(code?: number, reason?: string): void;
  /** Listens to `open`, `message` (text and binary frames), `close` and `error`. */
  addEventListener(type: 'open' | 'message' | 'close' | 'error', listener: (event: unknown) => void): void;
}

/**
 * A WebSocket constructor: `ws`'s (takes `{ headers }` as its third argument) or a
 * browser-style one (URL and protocols only).
 */
export type WebSocketConstructorLike = new (
  url: string,
  protocols?: string | string[],
  options?: { headers?: Record<string, string>; maxPayload?: number; closeTimeout?: number },
) => WebSocketLike;

/** One WebSocket of a session, and what the server said on it. */
export interface Connection {
  socket: WebSocketLike;
  /** Where the socket's events go (the session). */
  host: SocketEventsHost;
  /** Last segment id seen from the server on this socket (-1 before any). */
  lastServerId: number;
  /** Server id of the segment started and not yet done. */
  inProgress: number | undefined;
  /** The message of a `session.error` (scrubbed). */
  sessionError: string | undefined;
  /** The message of the socket's last error event (scrubbed). */
  transportError: string | undefined;
  readyTimer: Subscription | undefined;
  /** Scheduler time of the server's last progress (for `responseTimeoutMs`): a JSON frame, or enough audio. */
  lastFrameAt: number;
  /** Audio bytes received since the last progress (a trickle of tiny frames is not progress). */
  audioSinceProgress: number;
  /** Scheduler time of the last `text.chunk` or `text.done` sent on this socket. */
  textSentAt: number;
  /** Scheduler time since which a sentence sent on this socket has waited to start (while the ledger says one waits). */
  sentenceDueAt: number;
}

/** A socket's error event, as `ws` and browsers give it. */
export interface SocketErrorEvent {
  message?: string;
  error?: unknown;
}

/** What a session does with its socket's events. */
export interface SocketEventsHost {
  onOpen(connection: Connection): void;
  /** A frame: a JSON text (`string`), or audio (a `Buffer` / `ArrayBuffer`). */
  onMessage(connection: Connection, data: unknown): void;
  onClose(connection: Connection, code: number, reason: string): void;
  onSocketError(connection: Connection, event: SocketErrorEvent): void;
}

