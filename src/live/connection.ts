/**
 * One WebSocket of a live session (live-session.ts) and the small socket helpers it needs:
 * opening it (the key in a header, or already in the address), closing it whatever the
 * runtime allows, cutting off a peer that is not trusted to answer, and reading a binary
 * frame's bytes.
 */
import { redact } from '../core/errors.js';
import { listenNodeSocket } from './node-socket.js';
import { PROGRESS_AUDIO_SECONDS, keyHeader, type ResolvedSpeak } from './options.js';
import type { Connection, SocketErrorEvent, SocketEventsHost, WebSocketLike } from './socket-types.js';
import { CloseCodes } from './protocol-constants.js';

export type { Connection, SocketErrorEvent, SocketEventsHost } from './socket-types.js';

/** `WebSocket.OPEN`, the same number in `ws` and in browsers. */
export const OPEN = 1;

/**
 * A new socket to the session's address: the key in the `x-api-key` header when the
 * constructor takes headers (else it is in the address already). Throws what the
 * constructor throws (a bad address...).
 */
export function openSocket(options: ResolvedSpeak, apiKey: string): WebSocketLike {
  const socket = options.headersSupported
    ? new options.WebSocket(options.url, undefined, {
        headers: keyHeader(apiKey),
        maxPayload: options.maxPayload,
        closeTimeout: options.closeGraceMs,
      })
    : new options.WebSocket(options.url);
  if (socket.binaryType !== 'nodebuffer') socket.binaryType = 'arraybuffer';
  return socket;
}

/**
 * `text` (a close reason, an error message, a frame's type) with the key removed in every
 * form a socket's address or headers may carry it (`redact`: as is, URI-encoded, form-encoded).
 */
export function scrubKey(text: string, apiKey: string): string {
  return redact(text, [apiKey]);
}

/** A connection on a socket just opened, nothing heard yet. */
export function newConnection(socket: WebSocketLike, now: number, host: SocketEventsHost): Connection {
  return {
    socket,
    host,
    lastServerId: -1,
    inProgress: undefined,
    sessionError: undefined,
    transportError: undefined,
    readyTimer: undefined,
    lastFrameAt: now,
    audioSinceProgress: 0,
    textSentAt: now,
    sentenceDueAt: now,
  };
}

/**
 * Hand the connection's socket events to its host. Listeners are never removed: once the
 * socket is not the session's current one the host ignores them (`ws` emits 'error' on a
 * socket closed while connecting, which must stay handled).
 *
 * A `ws` socket is listened to through its own events, with what its `addEventListener`
 * would put in the event (the text as a string, the reason as a string): no event object
 * and wrapper per frame (its `addEventListener` builds a `MessageEvent` for each, and a
 * wrapper closure per listener), and through listeners shared by every socket
 * (`listenNodeSocket` in node-socket.ts, not in a browser bundle). Other sockets (browsers,
 * undici, a caller's) through `addEventListener`.
 */
export function listen(connection: Connection): void {
  const socket = connection.socket;
  const host = connection.host;
  if (listenNodeSocket(connection)) return;
  socket.addEventListener('open', () => host.onOpen(connection));
  socket.addEventListener('message', (event) => host.onMessage(connection, (event as { data: unknown }).data));
  socket.addEventListener('close', (event) => {
    const { code, reason } = event as { code?: number; reason?: string };
    host.onClose(connection, code ?? 1006, reason ?? '');
  });
  socket.addEventListener('error', (event) => host.onSocketError(connection, event as SocketErrorEvent));
}

/** Close with `code` (1000 where the runtime refuses it); a socket already closed is left as it is. */
export function closeQuietly(socket: WebSocketLike, code: number, reason?: string): void {
  try {
    socket.close(code, reason);
  } catch {
    // Browsers only allow 1000 and 3000-4999.
    try {
      socket.close(CloseCodes.normal);
    } catch {
      // already closed
    }
  }
}

/** Drop the TCP connection at once (`ws` only): for a peer not trusted to answer the close frame. */
export function cutOff(socket: WebSocketLike): void {
  (socket as { terminate?: () => void }).terminate?.();
}

/** A binary frame's bytes (a view, no copy), or undefined for a type no runtime sends. */
export function toBytes(data: unknown): Uint8Array | undefined {
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  // ws hands a fresh Buffer per message: a plain Uint8Array view on it, no copy (a view,
  // not the Buffer itself, so that `.slice()` copies as it does on any Uint8Array).
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  return undefined;
}

/** Bytes of `PROGRESS_AUDIO_SECONDS` of audio: exact for 16-bit WAV, a 128 kbit/s estimate for compressed formats. */
export function progressAudioBytes(config: ResolvedSpeak['config']): number {
  const { output_format, sample_rate } = config;
  const bytesPerSecond = output_format === 'wav' ? (sample_rate ?? 16_000) * 2 : 16_000;
  return Math.ceil(bytesPerSecond * PROGRESS_AUDIO_SECONDS);
}
