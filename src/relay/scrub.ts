/**
 * Keeps the relay's API key out of everything it sends to a browser, in any form a
 * service could echo it: as is or in another case, JSON-escaped (`\u0041`, `\/`),
 * URL-encoded (`%41`, also twice), as an HTML character reference, in hex, in base64
 * (standard or URL-safe, at any byte alignment), in text or binary frames and close
 * reasons.
 *
 * The rule is on fragments, so that it holds across frame boundaries with nothing held
 * back: any run of {@link KEY_FRAGMENT} or more consecutive characters of the key (in one of
 * those forms) is masked wherever it is, and in a stream of frames (`stream()`) each frame
 * is read after the end of the frames before it, so the rest of a key begun there is masked
 * however short. A key split over frames leaves at most `KEY_FRAGMENT - 1` characters, at
 * the end of the frame where it begins, never the key. (In JSON frames a key split between
 * two frames' string values is two runs, each masked when it has `KEY_FRAGMENT` characters.)
 * A close reason cut mid-key (reasons are at most 123 bytes) also loses a trailing key
 * prefix of 4 or more characters.
 *
 * @internal
 */

/** The shortest run of the key's characters that is masked. */
export const KEY_FRAGMENT = 8;
/** The shortest key prefix masked at the end of a close reason (a reason cut mid-key). */
const REASON_TAIL = 4;
const MASK = '***';
/** How much of the frames before a frame is read in front of it: a key fragment in its longest form (`\u0041` is 6 characters a key character). */
const CARRY = 6 * KEY_FRAGMENT + 8;

/** A decoded view of a text: each of its characters with the range of the original it came from. */
interface View {
  text: string;
  start: number[];
  end: number[];
}

const SIMPLE_ESCAPES: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
const ESCAPE = /\\u([0-9a-fA-F]{4})|\\x([0-9a-fA-F]{2})|\\(["\\/bfnrt])|%([0-9a-fA-F]{2})|&#(?:[xX]([0-9a-fA-F]{1,6})|(\d{1,7}));/y;

/** One decoding pass over `view` (JSON, JS and URL escapes, HTML references); undefined when nothing was decoded. */
function decodeOnce(view: View): View | undefined {
  const { text } = view;
  if (!/[\\%&]/.test(text)) return undefined;
  const out: string[] = [];
  const start: number[] = [];
  const end: number[] = [];
  let decoded = false;
  for (let i = 0; i < text.length; ) {
    ESCAPE.lastIndex = i;
    const match = text[i] === '\\' || text[i] === '%' || text[i] === '&' ? ESCAPE.exec(text) : null;
    let length = 1;
    let char = text[i]!;
    if (match) {
      const [all, u, x, simple, percent, hexRef, decRef] = match;
      const code = u ?? x ?? percent ?? hexRef;
      const point = code !== undefined ? Number.parseInt(code, 16) : decRef !== undefined ? Number(decRef) : undefined;
      char = point !== undefined ? (point <= 0x10ffff ? String.fromCodePoint(point) : all) : SIMPLE_ESCAPES[simple!]!;
      length = all.length;
      decoded = true;
    }
    out.push(char);
    // a code point above U+FFFF is two UTF-16 units: both map to the same original range
    for (let k = 0; k < char.length; k++) {
      start.push(view.start[i]!);
      end.push(view.end[i + length - 1]!);
    }
    i += length;
  }
  return decoded ? { text: out.join(''), start, end } : undefined;
}

/** ASCII letters to lower case, one unit for one (positions stay put). */
function foldAscii(text: string): string {
  return text.replace(/[A-Z]+/g, (letters) => letters.toLowerCase());
}

/** Every substring of `needle` of length `size` (the whole needle when shorter). */
function windows(needle: string, size: number): Set<string> {
  const w = Math.min(size, needle.length);
  const out = new Set<string>();
  for (let i = 0; i + w <= needle.length; i++) out.add(needle.slice(i, i + w));
  return out;
}

/** Base64 of the key as it appears inside a longer base64 text, at each of the three byte alignments. */
function base64Needles(key: Buffer): string[] {
  const out: string[] = [];
  for (let offset = 0; offset < 3; offset++) {
    const encoded = Buffer.concat([Buffer.alloc(offset), key]).toString('base64');
    const first = Math.ceil((8 * offset) / 6);
    const last = Math.floor((8 * (offset + key.length)) / 6);
    const needle = encoded.slice(first, last);
    out.push(needle, needle.replaceAll('+', '-').replaceAll('/', '_'));
  }
  return out;
}

const BASE = 257;

/** Windows of one size of one form of the key, with their rolling hashes (a cheap first test). */
interface Matcher {
  /** Compare against the text with ASCII letters folded to lower case (true) or as is. */
  folded: boolean;
  size: number;
  set: Set<string>;
  hashes: Set<number>;
  /** BASE to the power size - 1, modulo 2^32. */
  top: number;
}

function unit(text: string, i: number, folded: boolean): number {
  const c = text.charCodeAt(i);
  return folded && c >= 65 && c <= 90 ? c + 32 : c;
}

function matcher(folded: boolean, set: Set<string>): Matcher {
  const size = Math.min(...[...set].map((w) => w.length));
  const hashes = new Set<number>();
  for (const w of set) {
    let h = 0;
    for (let i = 0; i < w.length; i++) h = (Math.imul(h, BASE) + w.charCodeAt(i)) | 0;
    hashes.add(h);
  }
  let top = 1;
  for (let i = 1; i < size; i++) top = Math.imul(top, BASE);
  return { folded, size, set, hashes, top };
}

/** Calls `hit(i)` for each position of `text` where a window of `m` starts (a rolling hash, then a real comparison). */
function scan(text: string, m: Matcher, hit: (i: number) => void): void {
  const w = m.size;
  if (text.length < w) return;
  let h = 0;
  for (let i = 0; i < w; i++) h = (Math.imul(h, BASE) + unit(text, i, m.folded)) | 0;
  for (let i = 0; ; i++) {
    if (m.hashes.has(h)) {
      const window = text.slice(i, i + w);
      if (m.set.has(m.folded ? foldAscii(window) : window)) hit(i);
    }
    if (i + w >= text.length) return;
    h = (Math.imul(h - Math.imul(unit(text, i, m.folded), m.top), BASE) + unit(text, i + w, m.folded)) | 0;
  }
}

/** The scrubbing of one stream of frames: each frame is read after the end of the ones before it. */
export interface FrameScrubber {
  /** A text frame, with every form of the key masked (`***`), also the rest of a key begun in an earlier text frame. */
  text(text: string): string;
  /** A binary frame, likewise (bytes overwritten with `*`, same length). */
  binary(data: Buffer): Buffer;
}

/** Masks the key in what goes to a browser. */
export interface KeyScrubber {
  /** A text frame with every form of the key masked (`***`). */
  text(text: string): string;
  /** A close reason: like `text`, and a key prefix it ends with masked too. */
  reason(text: string): string;
  /** A binary frame: the bytes of every form of the key overwritten with `*` (same length; a copy when changed). */
  binary(data: Buffer): Buffer;
  /** A scrubber for one session's frames, in order: what continues a key begun in the frame before is masked too, however short. */
  stream(): FrameScrubber;
}

/**
 * The scrubber of `key`.
 *
 * @param key The API key.
 * @return `text`, `reason` and `binary`, each returning what may be sent.
 */
export function keyScrubber(key: string): KeyScrubber {
  const bytes = Buffer.from(key, 'utf8');
  const folded = foldAscii(key);
  const b64 = new Set<string>();
  for (const needle of base64Needles(bytes)) for (const w of windows(needle, Math.ceil((KEY_FRAGMENT * 4) / 3))) b64.add(w);
  const matchers: Matcher[] = [
    matcher(true, windows(folded, KEY_FRAGMENT)),
    matcher(true, windows(bytes.toString('hex'), 2 * KEY_FRAGMENT)),
    matcher(false, b64),
  ];

  // runs of characters that can be part of an encoded key: nothing else can hold one
  const chars = new Set(`\\%&#;xXuU0123456789abcdefABCDEF"/bfnrt+-_=${key}${key.toUpperCase()}${key.toLowerCase()}`);
  for (const m of matchers) for (const w of m.set) for (const c of w) chars.add(c);
  const escaped = [...chars].map((c) => `\\u{${c.codePointAt(0)!.toString(16)}}`).join('');
  const runs = new RegExp(`[${escaped}]{${Math.min(...matchers.map((m) => m.size))},}`, 'gu');

  /** Ranges [start, end) of `text` holding a form of the key. */
  function find(text: string): Array<[number, number]> {
    const found: Array<[number, number]> = [];
    for (const run of text.matchAll(runs)) for (const [s, e] of findInRun(run[0], false)) found.push([run.index + s, run.index + e]);
    return found;
  }

  function findInRun(run: string, atEnd: boolean): Array<[number, number]> {
    const views: View[] = [{ text: run, start: Array.from({ length: run.length }, (_, i) => i), end: Array.from({ length: run.length }, (_, i) => i + 1) }];
    for (let pass = 0; pass < 3; pass++) {
      const next = decodeOnce(views.at(-1)!);
      if (next === undefined) break;
      views.push(next);
    }
    const found: Array<[number, number]> = [];
    for (const v of views) {
      for (const m of matchers) scan(v.text, m, (i) => found.push([v.start[i]!, v.end[i + m.size - 1]!]));
      if (atEnd) {
        const lower = foldAscii(v.text);
        for (let n = Math.min(folded.length, lower.length); n >= REASON_TAIL; n--) {
          if (lower.endsWith(folded.slice(0, n))) {
            found.push([v.start[lower.length - n]!, v.end[lower.length - 1]!]);
            break;
          }
        }
      }
    }
    return found;
  }

  function mergeRanges(ranges: Array<[number, number]>): Array<[number, number]> {
    const sorted = ranges.sort((a, b) => a[0] - b[0]);
    const out: Array<[number, number]> = [];
    for (const [s, e] of sorted) {
      const last = out.at(-1);
      if (last !== undefined && s <= last[1]) last[1] = Math.max(last[1], e);
      else out.push([s, e]);
    }
    return out;
  }

  /** `text` with `ranges` (merged, sorted) replaced by the mask. */
  function maskText(text: string, ranges: Array<[number, number]>): string {
    let out = '';
    let at = 0;
    for (const [s, e] of ranges) {
      out += text.slice(at, s) + MASK;
      at = e;
    }
    return out + text.slice(at);
  }

  /** `data` with `ranges` overwritten by `*` (a copy; `data` itself when there are none). */
  function maskBytes(data: Buffer, ranges: Array<[number, number]>): Buffer {
    if (ranges.length === 0) return data;
    const copy = Buffer.from(data);
    for (const [s, e] of ranges) copy.fill(0x2a, s, e);
    return copy;
  }

  /** The ranges of `text` to mask, `carry` (the end of what went before, already sent) read in front of it. */
  function rangesAfter(carry: string, text: string): Array<[number, number]> {
    const shift = carry.length;
    return mergeRanges(
      find(carry + text)
        .map(([s, e]): [number, number] => [Math.max(0, s - shift), e - shift])
        .filter(([, e]) => e > 0),
    );
  }

  return {
    text: (text) => maskText(text, rangesAfter('', text)),
    reason: (text) => maskText(text, mergeRanges(findInRun(text, true))),
    binary: (data) => maskBytes(data, rangesAfter('', data.toString('latin1'))),
    stream: () => {
      let textCarry = '';
      let binaryCarry = '';
      return {
        text: (text) => {
          const out = maskText(text, rangesAfter(textCarry, text));
          textCarry = (textCarry + text).slice(-CARRY);
          return out;
        },
        binary: (data) => {
          const latin1 = data.toString('latin1');
          const out = maskBytes(data, rangesAfter(binaryCarry, latin1));
          binaryCarry = (binaryCarry + latin1).slice(-CARRY);
          return out;
        },
      };
    },
  };
}
