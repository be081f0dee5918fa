/**
 * Server-sent events: a pure incremental parser, apart from any transport.
 *
 * `createSseParser({ onEvent })` returns `{ feed, end, reset }`. Feed it bytes (UTF-8,
 * characters may be split across chunks) or strings, in chunks split anywhere; it calls
 * `onEvent` once per dispatched event, following the event-stream parsing rules of the
 * HTML standard:
 *
 * - one leading byte order mark is stripped, once per stream;
 * - lines end in CR, LF or CRLF, also when the CR ends one chunk and the LF starts the
 *   next (the pair is one line end, never two);
 * - `field: value` loses ONE optional space after the colon; a line without a colon is a
 *   field name with an empty value; lines starting with `:` are comments;
 * - `data` lines are joined with `\n`; `event` sets the type (default `message`); an `id`
 *   containing NUL is ignored; `retry` counts only when it is all ASCII digits;
 * - an event is dispatched at a blank line, and only when it had at least one `data`
 *   line; an event not ended by a blank line when the input ends is dropped.
 *
 * Emitted `id`: the id set by a line of this event (as eventsource-parser reports it),
 * absent when the event had no valid `id` line. `lastEventId()` gives the persisting
 * last event id of the stream, as an `EventSource` keeps it.
 * Emitted `retry`: the last valid `retry` value given within this event's lines; every
 * valid `retry` is also reported at once to `onRetry` (a block with only `retry` is never
 * dispatched as an event).
 *
 * A partial line is kept as pieces and joined once (no quadratic string building), and
 * `maxLineLength` / `maxEventSize` bound the memory a hostile peer can make us hold: past
 * them `feed` throws an {@link SseError} and the parser resets.
 *
 * Bytes are parsed as bytes: lines are found with `Buffer#indexOf` (called on the chunk
 * as it is, any `Uint8Array`), and only field values are decoded, line by line (an
 * all-ASCII chunk is converted at once instead). A line is decoded whole, so a character
 * split across chunks is never broken: the short unfinished line at a chunk's end is kept
 * as raw bytes and finished with the next chunk's first bytes; a longer one is decoded in
 * pieces, its last (at most 3) bytes waiting when they may begin a character. Invalid
 * UTF-8 becomes U+FFFD exactly as `TextDecoder` would make it (tested against it on
 * random bytes).
 * Feed one stream as bytes or as text; mixing works, bytes held back then count as the
 * end of input.
 *
 * Runs outside Node too: Node's `buffer` module is fetched at run time
 * (`process.getBuiltinModule`), never imported, so a browser bundle never sees
 * `node:buffer`. Without it, bytes are decoded by a streaming `TextDecoder` and parsed as
 * text: the same events (the byte path is tested to equal exactly that decoding).
 */
import type { Buffer } from 'node:buffer';
import { RxVoiceError } from '../core/errors.js';

/** Node's `buffer` module when running on Node (>= 20.16), else undefined (browsers). */
const nodeBuffer = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process?.getBuiltinModule?.(
  'node:buffer',
) as typeof import('node:buffer') | undefined;
/** Node's `Buffer`; only used on the byte path, which runs only when it exists. */
const BufferClass = nodeBuffer?.Buffer as typeof Buffer;
const isAscii = nodeBuffer?.isAscii as (input: Uint8Array) => boolean;

/** One dispatched server-sent event. */
export interface SseEvent {
  /** Event type; `message` when the event set none (or an empty one). */
  event: string;
  /** The `data` lines joined with `\n`. */
  data: string;
  /** The id given by an `id` line of this event, if any. */
  id?: string;
  /** The reconnection time (ms) given by a `retry` line of this event, if any. */
  retry?: number;
}

/** Which limit an {@link SseError} reports. */
export type SseErrorType = 'max-line-length' | 'max-event-size';

/** The event stream broke a limit (a line or an event too large). Code `sse`. */
export class SseError extends RxVoiceError {
  override name = 'SseError';
  readonly type: SseErrorType;
  readonly limit: number;
  constructor(type: SseErrorType, limit: number, message: string) {
    super('sse', message);
    this.type = type;
    this.limit = limit;
  }
}

/** Options of {@link createSseParser}: the callbacks and the memory limits. */
export interface SseParserOptions {
  /** Called once per dispatched event. */
  onEvent: (event: SseEvent) => void;
  /** Called with each valid `retry` value (ms), when its line is read. */
  onRetry?: (retry: number) => void;
  /** Called with each comment line's text (after the `:` and one optional space). */
  onComment?: (comment: string) => void;
  /** Longest line accepted, in UTF-16 code units. Default 1 MiB (1_048_576). */
  maxLineLength?: number;
  /** Largest `data` of one event accepted, in UTF-16 code units. Default 16 MiB. */
  maxEventSize?: number;
}

/** The incremental parser returned by {@link createSseParser}. */
export interface SseParser {
  /** Feed the next chunk: UTF-8 bytes or text. Throws {@link SseError} past a limit. */
  feed(chunk: string | Uint8Array): void;
  /**
   * The input is over: flushes the decoder; an unfinished event is dropped. Then the
   * parser is ready for a new stream (a reconnection); `lastEventId()` is kept.
   */
  end(): void;
  /** Forget everything buffered (partial line, event, decoder bytes, BOM state). */
  reset(): void;
  /** The stream's last event id so far (persists across events and `end()`; `''` at first and after `reset()`). */
  lastEventId(): string;
}

/** Default longest line, in UTF-16 code units (1 MiB). */
export const DEFAULT_SSE_MAX_LINE_LENGTH = 1_048_576;
/** Default largest event `data`, in UTF-16 code units (16 MiB). */
export const DEFAULT_SSE_MAX_EVENT_SIZE = 16 * 1_048_576;

/** Longest unfinished line (bytes) kept as bytes across a chunk boundary. */
const TAIL_MAX = 16_384;
/** Largest line the tail buffer grows to hold; longer ones are joined in a new buffer. */
const SCRATCH_MAX = 65_536;

const LF = 10;
const CR = 13;
const SPACE = 32;
const COLON = 58;

/** The line `s[start, end)` is a `data` field: it starts with `data:`. */
function isDataLine(s: string, start: number, end: number): boolean {
  return (
    s.charCodeAt(start) === 100 &&
    s.charCodeAt(start + 4) === COLON &&
    s.charCodeAt(start + 1) === 97 &&
    s.charCodeAt(start + 2) === 116 &&
    s.charCodeAt(start + 3) === 97 &&
    start + 4 < end
  );
}

/** Where the value of the `data:` line `s[start, end)` begins: after the colon and one optional space. */
function dataValueStart(s: string, start: number, end: number): number {
  return s.charCodeAt(start + 5) === SPACE && start + 5 < end ? start + 6 : start + 5;
}

/** {@link isDataLine} for the bytes `buf[start, end)`. */
function isDataLineBytes(buf: Uint8Array, start: number, end: number): boolean {
  return buf[start] === 100 && buf[start + 4] === COLON && buf[start + 1] === 97 && buf[start + 2] === 116 && buf[start + 3] === 97 && start + 4 < end;
}

/** {@link dataValueStart} for the bytes `buf[start, end)`. */
function dataValueStartBytes(buf: Uint8Array, start: number, end: number): number {
  return buf[start + 5] === SPACE && start + 5 < end ? start + 6 : start + 5;
}

/** Create an incremental server-sent events parser. */
export function createSseParser(options: SseParserOptions): SseParser {
  const { onEvent, onRetry, onComment } = options;
  const maxLineLength = options.maxLineLength ?? DEFAULT_SSE_MAX_LINE_LENGTH;
  const maxEventSize = options.maxEventSize ?? DEFAULT_SSE_MAX_EVENT_SIZE;

  /**
   * Bytes held back from the last chunk: the start of a character the next chunk
   * completes (at most 3 bytes), or the first bytes of a possible byte order mark.
   */
  let carry: Uint8Array | undefined;
  /** Outside Node: bytes are decoded here, then parsed as text. */
  let textDecoder = nodeBuffer ? undefined : new TextDecoder('utf-8', { ignoreBOM: true });
  let bomChecked = false;
  /** Chunks left that skip the all-ASCII check (the stream just showed other bytes). */
  let skipAsciiCheck = 0;
  /**
   * The unfinished line at the end of the last chunk, as raw bytes: `tail[0, tailLen)`
   * (a character split by the chunk end is simply in it). Used while the line is short;
   * longer ones are decoded into `pending`. Never both at once.
   */
  let tail: Uint8Array | undefined;
  let tailLen = 0;
  /** Longest unfinished line kept as bytes: fewer bytes than the limit can never break it. */
  const tailLimit = Math.min(TAIL_MAX, maxLineLength);
  /** Pieces of the current unfinished line. */
  let pending: string[] = [];
  let pendingLength = 0;
  /** The last chunk ended in CR: an LF starting the next one belongs to it. */
  let skipLF = false;

  let eventType = '';
  let data = '';
  let hasData = false;
  let id: string | undefined;
  let retry: number | undefined;
  /** The spec's "last event ID buffer": set by `id` lines, never cleared by a dispatch. */
  let idBuffer = '';
  /** The spec's "last event ID string": takes the buffer's value at each blank line. */
  let lastId = '';

  function clearEvent(): void {
    eventType = '';
    data = '';
    hasData = false;
    id = undefined;
    retry = undefined;
  }

  /** Forget the stream's buffers; the last event id is kept (for a reconnection). */
  function resetStream(): void {
    clearEvent();
    carry = undefined;
    tailLen = 0;
    if (tail !== undefined && tail.length > TAIL_MAX) tail = undefined;
    if (textDecoder) textDecoder = new TextDecoder('utf-8', { ignoreBOM: true });
    bomChecked = false;
    pending = [];
    pendingLength = 0;
    skipLF = false;
    idBuffer = lastId;
  }

  function reset(): void {
    lastId = '';
    resetStream();
  }

  function fail(type: SseErrorType, limit: number, message: string): never {
    reset();
    throw new SseError(type, limit, message);
  }

  function eventTooLarge(): never {
    fail('max-event-size', maxEventSize, `SSE event data exceeds ${maxEventSize} characters`);
  }

  /** Deliver the event being built, with `value` as its data, and start the next one. */
  function emit(value: string): void {
    const event: SseEvent = { event: eventType === '' ? 'message' : eventType, data: value };
    if (id !== undefined) event.id = id;
    if (retry !== undefined) event.retry = retry;
    clearEvent();
    onEvent(event);
  }

  function dispatch(): void {
    lastId = idBuffer;
    if (!hasData) {
      clearEvent();
      return;
    }
    emit(data);
  }

  function appendData(value: string): void {
    if (hasData) {
      if (data.length + 1 + value.length > maxEventSize) {
        eventTooLarge();
      }
      data = data + '\n' + value;
    } else {
      if (value.length > maxEventSize) {
        eventTooLarge();
      }
      data = value;
      hasData = true;
    }
  }

  /** Interpret `s[start, end)`, one whole line without its line end. */
  function line(s: string, start: number, end: number): void {
    if (start === end) {
      dispatch();
      return;
    }
    // Fast path: "data:"
    if (isDataLine(s, start, end)) {
      appendData(s.slice(dataValueStart(s, start, end), end));
      return;
    }
    if (s.charCodeAt(start) === COLON) {
      if (onComment) {
        const v = start + 1 < end && s.charCodeAt(start + 1) === SPACE ? start + 2 : start + 1;
        onComment(s.slice(v, end));
      }
      return;
    }
    let colon = -1;
    for (let i = start + 1; i < end; i++) {
      if (s.charCodeAt(i) === COLON) {
        colon = i;
        break;
      }
    }
    let field: string;
    let value: string;
    if (colon === -1) {
      field = s.slice(start, end);
      value = '';
    } else {
      field = s.slice(start, colon);
      const v = colon + 1 < end && s.charCodeAt(colon + 1) === SPACE ? colon + 2 : colon + 1;
      value = s.slice(v, end);
    }
    switch (field) {
      case 'data':
        appendData(value);
        break;
      case 'event':
        eventType = value;
        break;
      case 'id':
        if (value.indexOf('\u0000') === -1) {
          id = value;
          idBuffer = value;
        }
        break;
      case 'retry':
        if (isAsciiDigits(value)) {
          const ms = parseInt(value, 10);
          retry = ms;
          onRetry?.(ms);
        }
        break;
      default:
        // Unknown fields are ignored.
        break;
    }
  }

  function takePending(tail: string): string {
    pending.push(tail);
    const whole = pending.length === 1 ? tail : pending.join('');
    pending = [];
    pendingLength = 0;
    return whole;
  }

  function tooLong(): never {
    fail('max-line-length', maxLineLength, `SSE line exceeds ${maxLineLength} characters`);
  }

  function keepPiece(piece: string): void {
    pendingLength += piece.length;
    if (pendingLength > maxLineLength) tooLong();
    pending.push(piece);
  }

  function processText(text: string): void {
    const len = text.length;
    if (len === 0) return;
    let pos = 0;
    if (skipLF) {
      skipLF = false;
      if (text.charCodeAt(0) === LF) pos = 1;
    }
    let nextCR = text.indexOf('\r', pos);
    if (pending.length > 0) {
      // Finish the line begun in earlier chunks.
      const lf = text.indexOf('\n', pos);
      const end = nextCR === -1 ? lf : lf === -1 || nextCR < lf ? nextCR : lf;
      if (end === -1) {
        keepPiece(pos === 0 ? text : text.slice(pos));
        return;
      }
      if (pendingLength + (end - pos) > maxLineLength) tooLong();
      const whole = takePending(text.slice(pos, end));
      line(whole, 0, whole.length);
      pos = end + 1;
      if (end === nextCR) {
        if (pos === len) {
          skipLF = true;
          return;
        }
        if (text.charCodeAt(pos) === LF) pos++;
        nextCR = text.indexOf('\r', pos);
      }
    }
    if (nextCR === -1) processLF(text, pos, len);
    else processAny(text, pos, len, nextCR);
  }

  /** The common case: no CR from `pos` on. */
  function processLF(text: string, pos: number, len: number): void {
    let lf = text.indexOf('\n', pos);
    while (lf !== -1) {
      if (lf === pos) {
        dispatch();
      } else {
        if (lf - pos > maxLineLength) tooLong();
        if (!hasData && text.charCodeAt(lf + 1) === LF && isDataLine(text, pos, lf)) {
          // One data line and a blank line: the event is whole.
          const v = dataValueStart(text, pos, lf);
          if (lf - v > maxEventSize) eventTooLarge();
          lastId = idBuffer;
          pos = lf + 2;
          emit(text.slice(v, lf));
          lf = text.indexOf('\n', pos);
          continue;
        }
        line(text, pos, lf);
      }
      pos = lf + 1;
      lf = text.indexOf('\n', pos);
    }
    if (pos < len) keepPiece(pos === 0 ? text : text.slice(pos));
  }

  /** Lines ending in CR, LF or CRLF. */
  function processAny(text: string, pos: number, len: number, nextCR: number): void {
    let nextLF = text.indexOf('\n', pos);
    while (pos < len) {
      if (nextLF !== -1 && nextLF < pos) nextLF = text.indexOf('\n', pos);
      if (nextCR !== -1 && nextCR < pos) nextCR = text.indexOf('\r', pos);
      let end: number;
      if (nextCR === -1) {
        if (nextLF === -1) {
          keepPiece(pos === 0 ? text : text.slice(pos));
          return;
        }
        end = nextLF;
      } else if (nextLF === -1 || nextCR < nextLF) {
        end = nextCR;
      } else {
        end = nextLF;
      }
      if (end - pos > maxLineLength) tooLong();
      line(text, pos, end);
      pos = end + 1;
      if (end === nextCR) {
        if (pos < len) {
          if (text.charCodeAt(pos) === LF) pos++;
        } else {
          skipLF = true;
        }
      }
    }
  }

  /** Code units of the text of `buf[start, end)`, checked against the line limit. */
  function checkLineBytes(buf: Uint8Array, start: number, end: number, already: number): void {
    // A character takes at least one byte, so only a long run of bytes can be too long.
    if (already + (end - start) > maxLineLength && already + utf8(buf, start, end).length > maxLineLength) {
      tooLong();
    }
  }

  /** Keep `buf[pos, len)`, the start of a line; a character split by the chunk end waits in `carry`. */
  function keepBytes(buf: Uint8Array, pos: number, len: number): void {
    let cut = len;
    for (let i = len - 1; i >= pos && i >= len - 3; i--) {
      const b = buf[i]!;
      if (b < 0x80) break;
      if (b >= 0xc0) {
        cut = i;
        break;
      }
    }
    if (cut > pos) keepPiece(utf8(buf, pos, cut));
    if (cut < len) carry = new Uint8Array(buf.subarray(cut, len));
  }

  /** Keep `buf[pos, len)`, the start of a line: as bytes when short, else decoded. */
  function keepTail(buf: Uint8Array, pos: number, len: number): void {
    const n = len - pos;
    if (n > tailLimit) {
      keepBytes(buf, pos, len);
      return;
    }
    let t = tail;
    if (t === undefined || t.length < n) t = tail = new Uint8Array(Math.max(256, n));
    copyBytes(buf, pos, len, t, 0);
    tailLen = n;
  }

  /** The held tail bytes followed by `buf[start, end)`, in one buffer (the tail buffer while it is small). */
  function withTail(held: number, buf: Uint8Array, start: number, end: number): Uint8Array {
    const t = tail!;
    const n = held + (end - start);
    if (n <= t.length) {
      copyBytes(buf, start, end, t, held);
      return t;
    }
    if (n > SCRATCH_MAX) return BufferClass.concat([t.subarray(0, held), buf.subarray(start, end)], n);
    const bigger = new Uint8Array(Math.max(n, 2 * t.length));
    copyBytes(t, 0, held, bigger, 0);
    copyBytes(buf, start, end, bigger, held);
    tail = bigger;
    return bigger;
  }

  /** Finish the line held in `tail` with this chunk; returns where parsing goes on (-1: the chunk is used up). */
  function finishTail(buf: Uint8Array, nextCR: number): number {
    const len = buf.length;
    const held = tailLen;
    tailLen = 0;
    const lf = indexOfByte(buf, LF, 0);
    const end = nextCR === -1 ? lf : lf === -1 || nextCR < lf ? nextCR : lf;
    if (end === -1) {
      if (held + len <= tailLimit) {
        tailLen = held + len;
        withTail(held, buf, 0, len);
        return -1;
      }
      // Too long for bytes: decode. The bytes of a character split by the last chunk's
      // end (at most 3) come first; any byte after them cannot continue the held bytes.
      let c = 0;
      while (c < 3 && c < len && (buf[c]! & 0xc0) === 0x80) c++;
      const t = withTail(held, buf, 0, c);
      if (c === len) {
        keepBytes(t, 0, held + c);
        return -1;
      }
      keepPiece(utf8(t, 0, held + c));
      keepBytes(buf, c, len);
      return -1;
    }
    const t = withTail(held, buf, 0, end);
    if (held + end > maxLineLength) checkLineBytes(t, 0, held + end, 0);
    byteLine(t, 0, held + end);
    let pos = end + 1;
    if (end === nextCR) {
      if (pos === len) {
        skipLF = true;
        return -1;
      }
      if (buf[pos] === LF) pos++;
    }
    return pos;
  }

  /** Interpret the bytes of one whole line, `buf[start, end)`. */
  function byteLine(buf: Uint8Array, start: number, end: number): void {
    if (start === end) {
      dispatch();
      return;
    }
    if (isDataLineBytes(buf, start, end)) {
      appendData(utf8(buf, dataValueStartBytes(buf, start, end), end));
      return;
    }
    const text = utf8(buf, start, end);
    line(text, 0, text.length);
  }

  function processBytes(buf: Uint8Array): void {
    const len = buf.length;
    let pos = 0;
    if (skipLF) {
      skipLF = false;
      if (buf[0] === LF) pos = 1;
    }
    let nextCR = indexOfByte(buf, CR, pos);
    if (tailLen > 0) {
      pos = finishTail(buf, nextCR);
      if (pos === -1) return;
      if (nextCR !== -1 && nextCR < pos) nextCR = indexOfByte(buf, CR, pos);
    } else if (pending.length > 0) {
      const lf = indexOfByte(buf, LF, pos);
      const end = nextCR === -1 ? lf : lf === -1 || nextCR < lf ? nextCR : lf;
      if (end === -1) {
        keepBytes(buf, pos, len);
        return;
      }
      checkLineBytes(buf, pos, end, pendingLength);
      const whole = takePending(utf8(buf, pos, end));
      line(whole, 0, whole.length);
      pos = end + 1;
      if (end === nextCR) {
        if (pos === len) {
          skipLF = true;
          return;
        }
        if (buf[pos] === LF) pos++;
        nextCR = indexOfByte(buf, CR, pos);
      }
    }
    if (nextCR === -1) processBytesLF(buf, pos, len);
    else processBytesAny(buf, pos, len, nextCR);
  }

  /** Bytes with no CR from `pos` on. */
  function processBytesLF(buf: Uint8Array, pos: number, len: number): void {
    let lf = indexOfByte(buf, LF, pos);
    while (lf !== -1) {
      if (lf === pos) {
        dispatch();
      } else {
        if (lf - pos > maxLineLength) checkLineBytes(buf, pos, lf, 0);
        if (!hasData && buf[lf + 1] === LF && isDataLineBytes(buf, pos, lf)) {
          // One data line and a blank line: the event is whole.
          const value = utf8(buf, dataValueStartBytes(buf, pos, lf), lf);
          if (value.length > maxEventSize) eventTooLarge();
          lastId = idBuffer;
          pos = lf + 2;
          emit(value);
          lf = indexOfByte(buf, LF, pos);
          continue;
        }
        byteLine(buf, pos, lf);
      }
      pos = lf + 1;
      lf = indexOfByte(buf, LF, pos);
    }
    if (pos < len) keepTail(buf, pos, len);
  }

  /** Bytes with lines ending in CR, LF or CRLF. */
  function processBytesAny(buf: Uint8Array, pos: number, len: number, nextCR: number): void {
    let nextLF = indexOfByte(buf, LF, pos);
    while (pos < len) {
      if (nextLF !== -1 && nextLF < pos) nextLF = indexOfByte(buf, LF, pos);
      if (nextCR !== -1 && nextCR < pos) nextCR = indexOfByte(buf, CR, pos);
      let end: number;
      if (nextCR === -1) {
        if (nextLF === -1) {
          keepTail(buf, pos, len);
          return;
        }
        end = nextLF;
      } else if (nextLF === -1 || nextCR < nextLF) {
        end = nextCR;
      } else {
        end = nextLF;
      }
      if (end - pos > maxLineLength) checkLineBytes(buf, pos, end, 0);
      byteLine(buf, pos, end);
      pos = end + 1;
      if (end === nextCR) {
        if (pos < len) {
          if (buf[pos] === LF) pos++;
        } else {
          skipLF = true;
        }
      }
    }
  }

  function feedBytes(chunk: Uint8Array): void {
    if (textDecoder) {
      feedText(textDecoder.decode(chunk, { stream: true }));
      return;
    }
    // Any Uint8Array: Node's native slice and search methods are called on it as it is.
    let buf = chunk;
    if (carry !== undefined) {
      buf = BufferClass.concat([carry, buf]);
      carry = undefined;
    }
    if (!bomChecked) {
      // Wait for three bytes (or fewer, when they cannot be a BOM) to decide.
      if (buf.length < 3 && buf[0] === 0xef && (buf.length < 2 || buf[1] === 0xbb)) {
        carry = new Uint8Array(buf);
        return;
      }
      bomChecked = true;
      if (buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) buf = buf.subarray(3);
    }
    if (buf.length === 0) return;
    if (tailLen > 0 || skipAsciiCheck > 0) {
      // A held byte tail continues in this chunk; or the stream is not ASCII lately.
      if (skipAsciiCheck > 0) skipAsciiCheck--;
      processBytes(buf);
      return;
    }
    if (isAscii(buf)) {
      // ASCII bytes are their own characters: one cheap conversion, then the text path.
      processText(latin1(buf));
      return;
    }
    skipAsciiCheck = 7;
    processBytes(buf);
  }

  /** Text fed after bytes: the held bytes end as they would at the end of input. */
  function flushCarry(): void {
    if (textDecoder) {
      const rest = textDecoder.decode();
      textDecoder = new TextDecoder('utf-8', { ignoreBOM: true });
      if (rest.length > 0) feedText(rest);
      return;
    }
    if (tailLen > 0) {
      const text = utf8(tail!, 0, tailLen);
      tailLen = 0;
      processText(text);
      return;
    }
    if (carry === undefined) return;
    const held = carry;
    carry = undefined;
    if (!bomChecked) {
      bomChecked = true;
      // fewer than three bytes of a would-be BOM: they are text after all
    }
    processText(utf8(held, 0, held.length));
  }

  function feedText(text: string): void {
    if (!bomChecked && text.length > 0) {
      bomChecked = true;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    processText(text);
  }

  return {
    feed(chunk) {
      if (typeof chunk === 'string') {
        flushCarry();
        feedText(chunk);
        return;
      }
      if (chunk.length > 0) feedBytes(chunk);
    },
    end() {
      flushCarry();
      resetStream();
    },
    reset,
    lastEventId() {
      return lastId;
    },
  };
}

/** Node's native methods of `Buffer.prototype`; they work on any `Uint8Array`. */
interface BufferNatives {
  utf8Slice(this: Uint8Array, start: number, end: number): string;
  latin1Slice(this: Uint8Array, start: number, end: number): string;
  indexOf(this: Uint8Array, value: number, byteOffset: number): number;
}
const natives = BufferClass?.prototype as unknown as Partial<BufferNatives> | undefined;
const utf8Slice = natives?.utf8Slice;
const latin1Slice = natives?.latin1Slice;
const bufferIndexOf = natives?.indexOf as BufferNatives['indexOf'];

/** A `Buffer` over the same memory (only when Node lacks the native slice methods). */
function asBuffer(buf: Uint8Array): Buffer {
  return BufferClass.isBuffer(buf) ? buf : BufferClass.from(buf.buffer, buf.byteOffset, buf.byteLength);
}

/** UTF-8 text of `buf[start, end)` (invalid sequences become U+FFFD, as `TextDecoder` does). */
function utf8(buf: Uint8Array, start: number, end: number): string {
  return utf8Slice !== undefined ? utf8Slice.call(buf, start, end) : asBuffer(buf).toString('utf8', start, end);
}

function latin1(buf: Uint8Array): string {
  return latin1Slice !== undefined ? latin1Slice.call(buf, 0, buf.length) : asBuffer(buf).toString('latin1');
}

/** First index of `byte` in `buf` at or after `from`, or -1 (`Buffer#indexOf`: a native search). */
function indexOfByte(buf: Uint8Array, byte: number, from: number): number {
  return bufferIndexOf.call(buf, byte, from);
}

/** Copy `src[start, end)` into `dst` at `at` (a loop for the short runs of line tails). */
function copyBytes(src: Uint8Array, start: number, end: number, dst: Uint8Array, at: number): void {
  if (end - start > 64) {
    dst.set(src.subarray(start, end), at);
    return;
  }
  for (let i = start; i < end; i++) dst[at++] = src[i]!;
}

function isAsciiDigits(value: string): boolean {
  const n = value.length;
  if (n === 0) return false;
  for (let i = 0; i < n; i++) {
    const c = value.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}
