/**
 * Server-sent events: a tiny encoder, the inverse of the parser in `sse.ts`. Used by the
 * emulator's `POST /translation/stream`.
 */

/** An event to encode. `event` defaults (on the receiving side) to `message`. */
export interface SseEventInit {
  event?: string;
  data: string;
  id?: string;
  /** Reconnection time, ms. */
  retry?: number;
}

/**
 * Encode one event as event-stream text, ending with the blank line that dispatches it.
 * Multi-line data becomes several `data:` lines (any of CRLF, CR, LF splits a line), so
 * the parser joins them back with `\n`. `event` and `id` must be one line each (line
 * breaks in them are replaced by spaces; an `id` must not contain NUL).
 *
 * @example encodeSseEvent({ data: 'a\nb' }) === 'data: a\ndata: b\n\n'
 */
export function encodeSseEvent(init: SseEventInit): string {
  let out = '';
  if (init.event !== undefined && init.event !== '') out += `event: ${oneLine(init.event)}\n`;
  if (init.id !== undefined) out += `id: ${oneLine(init.id).replace(/\0/g, '')}\n`;
  if (init.retry !== undefined && Number.isInteger(init.retry) && init.retry >= 0) out += `retry: ${init.retry}\n`;
  for (const line of init.data.split(/\r\n|\r|\n/)) out += `data: ${line}\n`;
  return `${out}\n`;
}

function oneLine(text: string): string {
  return text.replace(/\r\n|\r|\n/g, ' ');
}
