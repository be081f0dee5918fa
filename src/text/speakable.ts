/**
 * Speakable text from markdown: a pure incremental core (`feed`/`end`) wrapped by the
 * `speakableText()` operator.
 *
 * LLM answers are markdown; a speech service would read `**`, `##`, list numbers, URLs and
 * emoji aloud. The core drops markup and keeps words:
 *
 * - **Not spoken**: emphasis markers (`*` `**` `_` `__` `~~`), heading (`#`) and quote (`>`)
 *   markers, list bullets and numbers (`- ` `* ` `+ ` `1. ` `1) `, task boxes `[ ]`),
 *   horizontal rules, HTML tags, link and image addresses (`[text](url)` speaks `text`),
 *   inline-code backticks (the code is spoken), emoji with their variation selectors, skin
 *   tones and ZWJ sequences, table pipes (`|` between cells becomes `,`; the `|---|` row is
 *   dropped), NUL and other control characters, lone surrogates.
 * - **Sentence ends**: each list item, heading, quote line, table row and rule ends a
 *   sentence even without a stop: its line break becomes a paragraph break (`"\n\n"`), which
 *   every sentence splitter (ours, the service's) takes as a boundary.
 * - **Fenced code blocks** are not spoken by default (`codeBlocks: 'skip'`); `'speak'` speaks
 *   their lines, `{ say: 'Here is some code.' }` says a phrase instead.
 * - **Kept**: underscores inside words (`my_value_2`), a lone `*` in arithmetic (`2 * 3`,
 *   `2*3`), `°`, `%`, `€`, `<` in `a < b`, escaped characters (`\*` is spoken as `*`).
 *
 * Streaming: a character is decided as soon as the text after it settles what it is; only
 * markers wait (a `*` at the end of a chunk, a `[` until its `]` and `(address)` or at most
 * 512 code units, a `<` until its `>`, a line's first characters until its block marker is
 * known). The output does not depend on how the input was split.
 *
 * Bad input never throws from `feed`/`end` and never loses words: an unterminated code
 * span or emphasis is spoken (markers dropped); an unterminated fenced block is spoken at the
 * end (its text is not lost); a fenced block longer than `maxBufferSize` is spoken from the
 * moment it is that long; a megabyte without a line break streams through in linear time.
 *
 * Every output piece says where it came from: `input.slice(start, end)` is the markdown it
 * renders, so captions can show the markdown's own words.
 */
import { optionError } from '../core/validation.js';
import { bufferSizeOption } from './sentences.js';

/** One piece of speakable text and the range of the original markdown it renders. */
export interface SpeakablePiece {
  /** Text to speak (may be whitespace, such as the `"\n\n"` that ends a list item). */
  text: string;
  /** Offset (UTF-16 code units, from the start of the whole input) of the first source character. */
  start: number;
  /** Offset just after the last source character. `start === end` never happens. */
  end: number;
}

/** What to do with fenced code blocks. */
export type CodeBlockMode = 'skip' | 'speak' | { say: string };

/** Options of `createSpeakableText` and the `speakableText()` operator. */
export interface SpeakableTextOptions {
  /** Fenced code blocks: `'skip'` (default), `'speak'`, or `{ say: phrase }` said instead. */
  codeBlocks?: CodeBlockMode;
  /**
   * Code units of a skipped fenced block kept (to speak them if the block never closes);
   * beyond this the block is spoken. Default 65 536, at least 16.
   */
  maxBufferSize?: number;
}

/** The incremental core: feed markdown, get speakable pieces. */
export interface SpeakableTextCore {
  /** Feed more markdown; returns the pieces now decided, in order. */
  feed(text: string): SpeakablePiece[];
  /** The input is over: returns what was still undecided (markers at the end count as text). */
  end(): SpeakablePiece[];
}

/** Validated options (the one place they are checked): throws a ValidationError. */
export function speakableTextOptions(options: SpeakableTextOptions = {}): { codeBlocks: CodeBlockMode; maxBufferSize: number } {
  const codeBlocks = options.codeBlocks ?? 'skip';
  if (!(codeBlocks === 'skip' || codeBlocks === 'speak' || (typeof codeBlocks === 'object' && codeBlocks !== null && typeof codeBlocks.say === 'string'))) {
    throw optionError('speakableText', ['codeBlocks'], "must be 'skip', 'speak' or { say: string }");
  }
  return { codeBlocks, maxBufferSize: bufferSizeOption(options.maxBufferSize, 'speakableText') };
}

/** How far a `[`, `<` or a table line looks ahead before it counts as plain text. */
const MARKER_LOOKAHEAD = 512;

const NL = 10;
const ASCII_PUNCT = /^[!-/:-@[-`{-~]$/;
const RE_PUNCT = /^[\p{P}\p{S}]$/u;
const RE_PICTO = /^\p{Extended_Pictographic}$/u;
const HTML_TAG = /^<(?:\/?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?\/?|!--[^]*--)>$/;
const AUTOLINK = /^<((?:https?|ftp|mailto):[^\s<>]+|[^\s<>@]+@[^\s<>@]+\.[^\s<>@]+)>$/i;
const TABLE_SEPARATOR = /^\s*\|?\s*:?-+:?\s*(?:\|\s*:?-+:?\s*)*\|?\s*$/;

/** Classes of code units: plain text, or something to look at. */
const PLAIN = 1;
const DROP = 2;
const SPECIAL = 3;
const CLASS = new Uint8Array(0x10000);

function classOf(c: number): number {
  const known = CLASS[c]!;
  if (known !== 0) return known;
  let cls: number;
  if (c === 0x2a || c === 0x5f || c === 0x7e || c === 0x60 || c === 0x5b || c === 0x5d || c === 0x3c || c === 0x21 || c === 0x5c || c === 0x7c || c === NL) cls = SPECIAL;
  else if (c >= 0xd800 && c <= 0xdfff) cls = SPECIAL; // surrogates: emoji or lone
  else if ((c < 0x20 && c !== 9 && c !== 13) || c === 0x7f || c === 0xfe0e || c === 0xfe0f || c === 0x200d || c === 0x20e3) cls = DROP;
  else if (c >= 0x2000 && c !== 0x2122 && RE_PICTO.test(String.fromCharCode(c))) cls = DROP;
  else cls = PLAIN;
  CLASS[c] = cls;
  return cls;
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 9 || c === NL || c === 13 || c === 0xa0 || Number.isNaN(c);
}

function isPunct(c: number): boolean {
  if (Number.isNaN(c)) return false;
  if (c < 0x80) return ASCII_PUNCT.test(String.fromCharCode(c));
  return RE_PUNCT.test(String.fromCharCode(c));
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

/** Emoji beyond the BMP (and their modifiers, regional indicators and tag characters). */
function isAstralEmoji(cp: number): boolean {
  if ((cp >= 0x1f3fb && cp <= 0x1f3ff) || (cp >= 0x1f1e6 && cp <= 0x1f1ff) || (cp >= 0xe0020 && cp <= 0xe007f)) return true;
  return RE_PICTO.test(String.fromCodePoint(cp));
}

type LineKind = 'text' | 'heading' | 'item' | 'quote' | 'table';

/** Create the incremental markdown-to-speech core (see the module documentation). */
export function createSpeakableText(options: SpeakableTextOptions = {}): SpeakableTextCore {
  const { codeBlocks, maxBufferSize } = speakableTextOptions(options);

  /** Input not consumed yet starts at absolute offset `base`; `pos` indexes `buf`. */
  let buf = '';
  let base = 0;
  let pos = 0;
  let out: SpeakablePiece[] = [];
  /** The last consumed input code unit (for emphasis flanking); NaN at the start. */
  let prev = Number.NaN;
  let lineStart = true;
  let lineKind: LineKind = 'text';
  /** Open code span: its backtick count (0: none). */
  let codeSpan = 0;
  /** Inside link text: absolute offsets of its `]` and just after its `)`. */
  let linkClose = -1;
  let linkEnd = -1;
  /** Open fenced block. */
  let fence:
    | { char: number; len: number; start: number; info: SpeakablePiece[]; body: SpeakablePiece[]; bodyLen: number; speaking: boolean }
    | undefined;
  /** Inside a fenced block's line, not at its start. */
  let fenceLine = false;

  /** The last piece pushed, when it is a verbatim copy of its source (copies merge). */
  let lastCopy: SpeakablePiece | undefined;

  /** The last two characters spoken so far. */
  let tail = '';

  function emit(text: string, start: number, end: number, verbatim = false): void {
    if (text.length === 0) return;
    tail = (tail + text).slice(-2);
    if (verbatim && lastCopy && lastCopy.end === start && out[out.length - 1] === lastCopy) {
      lastCopy.text += text;
      lastCopy.end = end;
      return;
    }
    const piece = { text, start, end };
    out.push(piece);
    lastCopy = verbatim ? piece : undefined;
  }

  /** Consume `n` code units without speaking them. */
  function drop(n: number): void {
    prev = buf.charCodeAt(pos + n - 1);
    pos += n;
  }

  /** Consume `n` code units, speaking them as they are. */
  function copy(n: number): void {
    const abs = base + pos;
    emit(buf.slice(pos, pos + n), abs, abs + n, true);
    prev = buf.charCodeAt(pos + n - 1);
    pos += n;
  }

  /** Consume `n` code units, speaking `text` instead. */
  function replace(n: number, text: string): void {
    const abs = base + pos;
    emit(text, abs, abs + n);
    prev = buf.charCodeAt(pos + n - 1);
    pos += n;
  }

  /** Index of the next line break at or after `from`, or -1. */
  function lineEndFrom(from: number): number {
    return buf.indexOf('\n', from);
  }

  /** The line's block markers. Returns false when more text is needed. */
  function startLine(final: boolean): boolean {
    let i = pos;
    const n = buf.length;
    while (i < n && (buf.charCodeAt(i) === 0x20 || buf.charCodeAt(i) === 9)) i++;
    if (i >= n && !final) return false;
    // a fence: ``` or ~~~
    if (!final && /^(?:`{1,2}|~{1,2})$/.test(buf.slice(i, i + 3))) return false; // a fence may be coming
    const fm = /^(`{3,}|~{3,})/.exec(buf.slice(i, i + 64));
    if (fm) {
      if (i + fm[1]!.length >= n && !final) return false;
      const eol = lineEndFrom(i);
      if (eol < 0 && !final && n - i < MARKER_LOOKAHEAD) return false;
      const stop = eol < 0 ? n : eol + 1;
      const infoAt = i + fm[1]!.length;
      const infoEnd = eol < 0 ? n : eol;
      // the info string (`js`) is kept: spoken with the body if the block never closes
      const info = infoEnd > infoAt ? [{ text: buf.slice(infoAt, infoEnd), start: base + infoAt, end: base + infoEnd }] : [];
      fence = { char: fm[1]!.charCodeAt(0), len: fm[1]!.length, start: base + pos, info, body: [], bodyLen: 0, speaking: codeBlocks === 'speak' };
      fenceLine = eol < 0; // a long info string goes on: the rest of the line is body text
      drop(stop - pos);
      lineStart = eol >= 0;
      return true;
    }
    let kind: LineKind = 'text';
    for (;;) {
      if (i >= n) {
        if (!final) return false;
        break;
      }
      const c = buf.charCodeAt(i);
      if (c === 0x3e) {
        // `>` quote markers, maybe nested
        kind = 'quote';
        i++;
        if (i < n && buf.charCodeAt(i) === 0x20) i++;
        continue;
      }
      if (c === 0x23) {
        let k = i;
        while (k < n && buf.charCodeAt(k) === 0x23) k++;
        if (k >= n && !final) return false;
        const after = buf.charCodeAt(k);
        if (k - i <= 6 && (k >= n || after === 0x20 || after === 9 || after === NL)) {
          kind = 'heading';
          i = k;
          while (i < n && buf.charCodeAt(i) === 0x20) i++;
          if (i >= n && !final) return false; // more spaces may come
        }
        break;
      }
      if (c === 0x2d || c === 0x2a || c === 0x5f || c === 0x2b) {
        // a rule (`---`, `* * *`, `___`) or a bullet (`- `, `* `, `+ `)
        let k = i;
        let marks = 0;
        while (k < n && (buf.charCodeAt(k) === c || buf.charCodeAt(k) === 0x20 || buf.charCodeAt(k) === 9)) {
          if (buf.charCodeAt(k) === c) marks++;
          k++;
        }
        const lineDone = k < n ? buf.charCodeAt(k) === NL || buf.charCodeAt(k) === 13 : final;
        if (k >= n && !final && k - i < MARKER_LOOKAHEAD) return false;
        if (lineDone && marks >= 3 && c !== 0x2b) {
          // a horizontal rule: not spoken, ends a sentence
          const eol = lineEndFrom(k);
          drop((eol < 0 ? n : eol) - pos);
          if (eol >= 0) {
            replace(1, '\n\n');
            lineStart = true;
          } else lineStart = true;
          return true;
        }
        if (c !== 0x5f && i + 1 < n && (buf.charCodeAt(i + 1) === 0x20 || buf.charCodeAt(i + 1) === 9)) {
          kind = 'item';
          i += 2;
          i = taskBox(i, final);
          if (i < 0) return false;
        }
        break;
      }
      if (isDigit(c)) {
        // `1. ` or `1) `: an ordered item
        const head = buf.slice(i, i + 12);
        const m = /^\d{1,9}[.)][ \t]/.exec(head);
        if (m) {
          kind = 'item';
          i += m[0].length;
        } else if (!final && /^\d{1,9}[.)]?$/.test(head)) return false;
        break;
      }
      if (c === 0x7c) {
        const eol = lineEndFrom(i);
        if (eol < 0 && !final && n - i < MARKER_LOOKAHEAD) return false;
        const line = buf.slice(i, eol < 0 ? n : eol);
        if (TABLE_SEPARATOR.test(line) && line.includes('-')) {
          drop((eol < 0 ? n : eol) - pos);
          if (eol >= 0) drop(1);
          lineStart = eol >= 0;
          return true;
        }
        kind = 'table';
        i++;
        break;
      }
      break;
    }
    // drop the markers (and the indentation before them); plain lines keep their text. A
    // block line after running text ends that text's sentence: its markers become a break.
    if (kind !== 'text' && tail.length > 0 && tail !== '\n\n') replace(i - pos, tail.endsWith('\n') ? '\n' : '\n\n');
    else if (i > pos) drop(i - pos);
    lineKind = kind;
    lineStart = false;
    return true;
  }

  /** After a bullet: a task box `[ ] ` / `[x] ` is dropped. Returns the new index, or -1 to wait. */
  function taskBox(i: number, final: boolean): number {
    const rest = buf.slice(i, i + 4);
    if (!final && rest.length < 4 && /^(?:\[(?:[ xX]\]?)?)?$/.test(rest)) return -1;
    return /^\[[ xX]\] $/.test(rest) ? i + 4 : i;
  }

  /** A line inside a fenced block. Returns false when more text is needed. */
  function stepFence(final: boolean): boolean {
    const f = fence!;
    const n = buf.length;
    if (!fenceLine) {
      // at the line's start: is it the closing fence?
      let i = pos;
      while (i < n && i - pos < 3 && buf.charCodeAt(i) === 0x20) i++;
      let k = i;
      while (k < n && buf.charCodeAt(k) === f.char) k++;
      if (k >= n && !final) return false;
      if (k - i >= f.len) {
        let e = k;
        while (e < n && (buf.charCodeAt(e) === 0x20 || buf.charCodeAt(e) === 9 || buf.charCodeAt(e) === 13)) e++;
        if (e >= n && !final) return false;
        if (e >= n || buf.charCodeAt(e) === NL) {
          const stop = e >= n ? n : e + 1;
          const start = base + pos;
          drop(stop - pos);
          closeFence(start, base + pos);
          lineStart = true;
          return true;
        }
      }
      fenceLine = true;
    }
    // body text up to the line's end
    const eol = lineEndFrom(pos);
    const stop = eol < 0 ? n : eol + 1;
    if (stop > pos) fenceBody(stop - pos);
    if (eol >= 0) fenceLine = false;
    return true;
  }

  function fenceBody(len: number): void {
    const f = fence!;
    if (f.speaking) {
      copy(len);
      return;
    }
    const abs = base + pos;
    f.body.push({ text: buf.slice(pos, pos + len), start: abs, end: abs + len });
    f.bodyLen += len;
    drop(len);
    if (f.bodyLen > maxBufferSize) {
      // too long to hold: speak it from here (nothing is lost)
      f.speaking = true;
      for (const p of f.body) emit(p.text, p.start, p.end);
      f.body = [];
    }
  }

  function closeFence(closeStart: number, closeEnd: number): void {
    const f = fence!;
    fence = undefined;
    fenceLine = false;
    if (f.speaking) emit('\n\n', closeStart, closeEnd);
    else if (typeof codeBlocks === 'object') emit(`${codeBlocks.say}\n\n`, f.start, closeEnd);
    else emit('\n\n', closeStart, closeEnd);
  }

  /** A `[` at `at` opening `[text](address)`: the offsets of `]` and after `)`, null if not, undefined to wait. */
  function linkAt(at: number, final: boolean): { close: number; end: number } | null | undefined {
    const n = buf.length;
    let k = at + 1;
    while (k < n && k - at < MARKER_LOOKAHEAD) {
      const c = buf.charCodeAt(k);
      if (c === 0x5d) break;
      if (c === NL || c === 0x5b) return null;
      k++;
    }
    if (k >= n) return final ? null : undefined;
    if (buf.charCodeAt(k) !== 0x5d) return null;
    if (k + 1 >= n) return final ? null : undefined;
    if (buf.charCodeAt(k + 1) !== 0x28) return null;
    let m = k + 2;
    let depth = 0;
    while (m < n && m - at < MARKER_LOOKAHEAD) {
      const c = buf.charCodeAt(m);
      if (c === NL) return null;
      if (c === 0x28) depth++;
      if (c === 0x29) {
        if (depth === 0) break;
        depth--;
      }
      m++;
    }
    if (m >= n) return final ? null : undefined;
    if (buf.charCodeAt(m) !== 0x29) return null;
    return { close: base + k, end: base + m + 1 };
  }

  /** One decision in running text. Returns false when more text is needed. */
  function stepInline(final: boolean): boolean {
    const n = buf.length;
    const abs = base + pos;
    if (linkClose >= 0 && abs === linkClose) {
      drop(linkEnd - abs); // `](address)`
      linkClose = -1;
      linkEnd = -1;
      return true;
    }
    const c = buf.charCodeAt(pos);
    if (c === NL) {
      if (lineKind !== 'text' && codeSpan === 0) replace(1, '\n\n');
      else copy(1);
      lineStart = true;
      lineKind = 'text';
      linkClose = -1;
      return true;
    }
    if (codeSpan > 0) {
      // inside `code`: everything is spoken as it is, but the closing backticks
      if (c === 0x60) {
        let k = pos;
        while (k < n && buf.charCodeAt(k) === 0x60) k++;
        if (k >= n && !final) return false;
        if (k - pos === codeSpan) {
          codeSpan = 0;
          drop(k - pos);
        } else copy(k - pos);
        return true;
      }
      let k = pos;
      for (; k < n; k++) {
        const x = buf.charCodeAt(k);
        if (x === 0x60 || x === NL || classOf(x) === DROP || (x >= 0xd800 && x <= 0xdfff)) break;
      }
      if (k > pos) {
        copy(k - pos);
        return true;
      }
      // a dropped character or a surrogate: as outside code
    }
    const cls = classOf(c);
    if (cls === PLAIN) {
      let k = pos + 1;
      while (k < n && classOf(buf.charCodeAt(k)) === PLAIN) k++;
      copy(k - pos);
      return true;
    }
    if (cls === DROP) {
      drop(1);
      return true;
    }
    // surrogates: an emoji is dropped, a lone surrogate too
    if (c >= 0xd800 && c <= 0xdbff) {
      if (pos + 1 >= n && !final) return false;
      const low = buf.charCodeAt(pos + 1);
      if (low >= 0xdc00 && low <= 0xdfff) {
        const cp = ((c - 0xd800) << 10) + (low - 0xdc00) + 0x10000;
        if (isAstralEmoji(cp)) drop(2);
        else copy(2);
      } else drop(1);
      return true;
    }
    if (c >= 0xdc00 && c <= 0xdfff) {
      drop(1);
      return true;
    }
    switch (c) {
      case 0x5c: {
        // `\*`: the character, not a marker
        if (pos + 1 >= n && !final) return false;
        const next = buf.charCodeAt(pos + 1);
        if (pos + 1 < n && next < 0x80 && ASCII_PUNCT.test(String.fromCharCode(next))) {
          drop(1);
          copy(1);
        } else copy(1);
        return true;
      }
      case 0x60: {
        let k = pos;
        while (k < n && buf.charCodeAt(k) === 0x60) k++;
        if (k >= n && !final) return false;
        codeSpan = k - pos;
        drop(k - pos);
        return true;
      }
      case 0x2a:
      case 0x5f:
      case 0x7e:
        return emphasis(c, final);
      case 0x21: {
        if (pos + 1 >= n && !final) return false;
        if (buf.charCodeAt(pos + 1) === 0x5b) {
          const link = linkAt(pos + 1, final);
          if (link === undefined) return false;
          if (link) {
            drop(2); // `![`: an image speaks its description
            linkClose = link.close;
            linkEnd = link.end;
            return true;
          }
        }
        copy(1);
        return true;
      }
      case 0x5b: {
        const link = linkAt(pos, final);
        if (link === undefined) return false;
        if (link) {
          drop(1);
          linkClose = link.close;
          linkEnd = link.end;
        } else copy(1);
        return true;
      }
      case 0x3c: {
        // `<b>`, `</div>`, `<br/>`, `<!-- -->`, `<https://x.y>`; `a < b` is text at once
        if (pos + 1 >= n && !final) return false;
        if (!/^[A-Za-z/!]$/.test(buf.charAt(pos + 1))) {
          copy(1);
          return true;
        }
        let k = pos + 1;
        while (k < n && k - pos < MARKER_LOOKAHEAD && buf.charCodeAt(k) !== 0x3e && buf.charCodeAt(k) !== NL && buf.charCodeAt(k) !== 0x3c) k++;
        if (k >= n && !final && k - pos < MARKER_LOOKAHEAD) return false;
        if (k < n && buf.charCodeAt(k) === 0x3e) {
          const tag = buf.slice(pos, k + 1);
          const auto = AUTOLINK.exec(tag);
          if (auto) {
            drop(1);
            copy(auto[1]!.length);
            drop(1);
            return true;
          }
          if (HTML_TAG.test(tag)) {
            if (/^<br\b/i.test(tag)) replace(tag.length, ' ');
            else drop(tag.length);
            return true;
          }
        }
        copy(1);
        return true;
      }
      case 0x7c: {
        if (lineKind !== 'table') {
          copy(1);
          return true;
        }
        // a cell separator: `,` between cells, nothing at the row's end
        let k = pos + 1;
        while (k < n && (buf.charCodeAt(k) === 0x20 || buf.charCodeAt(k) === 9 || buf.charCodeAt(k) === 13)) k++;
        if (k >= n && !final) return false;
        if (k >= n || buf.charCodeAt(k) === NL) drop(1);
        else replace(1, ',');
        return true;
      }
      case 0x5d:
      default:
        copy(1);
        return true;
    }
  }

  /** A run of `*`, `_` or `~`: a marker (dropped) or text, by what stands on either side. */
  function emphasis(ch: number, final: boolean): boolean {
    const n = buf.length;
    let k = pos;
    while (k < n && buf.charCodeAt(k) === ch) k++;
    if (k >= n && !final) return false;
    const run = k - pos;
    const before = prev;
    const after = k < n ? buf.charCodeAt(k) : Number.NaN;
    const left = !isSpace(after) && (!isPunct(after) || isSpace(before) || isPunct(before));
    const right = !isSpace(before) && (!isPunct(before) || isSpace(after) || isPunct(after));
    let marker = left || right;
    if (ch === 0x7e && run === 1) marker = false; // `~5 minutes`
    if (ch === 0x5f && left && right) marker = false; // `my_value_2`
    if (ch === 0x2a && isDigit(before) && isDigit(after)) marker = false; // `2*3`
    if (marker) drop(run);
    else copy(run);
    return true;
  }

  function run(final: boolean): void {
    while (pos < buf.length) {
      const ok = fence ? stepFence(final) : lineStart ? startLine(final) : stepInline(final);
      if (!ok) break;
    }
    if (pos > 0) {
      buf = buf.slice(pos);
      base += pos;
      pos = 0;
    }
  }

  function take(): SpeakablePiece[] {
    const r = out;
    out = [];
    return r;
  }

  return {
    feed(text) {
      if (text.length === 0) return [];
      buf += text;
      run(false);
      return take();
    },
    end() {
      run(true);
      if (fence) {
        // an unterminated fenced block: spoken, not lost
        const f = fence;
        fence = undefined;
        for (const p of [...f.info, ...f.body]) emit(p.text, p.start, p.end);
      }
      codeSpan = 0;
      linkClose = -1;
      lineStart = true;
      lineKind = 'text';
      prev = Number.NaN;
      tail = '';
      return take();
    },
  };
}
