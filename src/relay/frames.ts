/**
 * Small helpers on WebSocket frames and close frames: sizes and text of what `ws` hands
 * over, the keys of a checked frame, close codes and reasons a browser may be sent, and
 * closing a browser that may never answer.
 *
 * @internal
 */
import type { SchedulerLike } from 'rxjs';
import { WebSocket, type RawData } from 'ws';

/** Bytes a close reason may hold (RFC 6455: 125 bytes of payload, 2 of them the code). */
export const CLOSE_REASON_BYTES = 123;

/** How long a browser has to answer a close frame before its socket is cut, ms. */
export const CLOSE_GRACE_MS = 2_000;

/** The size of a message as `ws` delivers it, bytes. */
export function byteLength(data: RawData): number {
  if (Array.isArray(data)) return data.reduce((sum, part) => sum + part.byteLength, 0);
  return data.byteLength;
}

/** A message as UTF-8 text. */
export function rawText(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return (Buffer.isBuffer(data) ? data : Buffer.from(data)).toString('utf8');
}

/** A message as one Buffer. */
export function binary(data: RawData): Buffer {
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.isBuffer(data) ? data : Buffer.from(data);
}

/**
 * The longest start of `text` whose UTF-8 encoding fits in `maxBytes`, cut between code
 * points only (a surrogate pair is kept whole or dropped whole).
 */
export function truncateUtf8(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text) <= maxBytes) return text;
  let bytes = 0;
  let end = 0;
  for (const char of text) {
    const size = Buffer.byteLength(char);
    if (bytes + size > maxBytes) break;
    bytes += size;
    end += char.length;
  }
  return text.slice(0, end);
}

/** Keeps only the keys the frame's schema knows (the parsed frame has exactly those), in the order given. */
export function knownKeys(input: Record<string, unknown>, parsed: object): string {
  const kept: Record<string, unknown> = {};
  for (const key of Object.keys(input)) if (Object.hasOwn(parsed, key)) kept[key] = input[key];
  return JSON.stringify(kept);
}

/** Close codes `ws` may send that a service close maps to as is; others become 1011. */
export function browserCloseCode(code: number): number {
  if (code === 1000 || (code >= 1001 && code <= 1003) || (code >= 1007 && code <= 1014) || (code >= 3000 && code <= 4999)) return code;
  return 1011; // 1005, 1006, 1015: the service connection was lost without a close frame
}

/**
 * Closes a browser's socket with `code` and `reason` (cut to a close frame's size); a browser that does not answer the close frame
 * within {@link CLOSE_GRACE_MS} (on `scheduler`) is cut off.
 */
export function closeThenTerminate(browser: WebSocket, code: number, reason: string, scheduler: SchedulerLike): void {
  if (browser.readyState === WebSocket.CLOSED) return;
  if (browser.readyState === WebSocket.OPEN || browser.readyState === WebSocket.CONNECTING) {
    browser.close(code, truncateUtf8(reason, CLOSE_REASON_BYTES));
  }
  const timer = scheduler.schedule(() => browser.terminate(), CLOSE_GRACE_MS);
  browser.once('close', () => timer.unsubscribe());
}

/** A `session.error` frame with `message` (sent before a 4400 close). */
export function sessionError(message: string): string {
  return JSON.stringify({ type: 'session.error', error: message });
}

