/**
 * Markdown syntax as the speech core (`speakable.ts`) recognizes it: block markers at a line's
 * start (fences, headings, quotes, bullets, numbers, rules, table rows) and links. Pure
 * functions of the buffered text; `undefined` means "wait: the text so far does not tell".
 */
import { isDigit, MARKER_LOOKAHEAD, NL } from './speakable-marks.js';

export type LineKind = 'text' | 'heading' | 'item' | 'quote' | 'table';

export const TABLE_SEPARATOR = /^\s*\|?\s*:?-+:?\s*(?:\|\s*:?-+:?\s*)*\|?\s*$/;
export const HTML_TAG = /^<(?:\/?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?\/?|!--[^]*--)>$/;
export const AUTOLINK = /^<((?:https?|ftp|mailto):[^\s<>]+|[^\s<>@]+@[^\s<>@]+\.[^\s<>@]+)>$/i;

/** What starts a line (offsets in the buffer). */
export type LineStart =
  /** A fence (```` ``` ```` or `~~~`): its character and length, the info string, and where its line ends (`eol` -1: not yet). */
  | { type: 'fence'; char: number; len: number; infoAt: number; infoEnd: number; eol: number; stop: number }
  /** A horizontal rule (`---`, `* * *`, `___`) up to `eol` (-1: the text ends first, at `end`). */
  | { type: 'rule'; eol: number; end: number }
  /** A table's `|---|---|` row, up to `eol` (-1: at `end`). */
  | { type: 'table-separator'; eol: number; end: number }
  /** Any other line: its kind, and where its markers (and the indentation before them) end. */
  | { type: 'line'; kind: LineKind; markersEnd: number };

/** After a bullet: a task box `[ ] ` / `[x] ` is skipped. Returns the new index, or -1 to wait. */
export function taskBox(buf: string, i: number, final: boolean): number {
  const rest = buf.slice(i, i + 4);
  if (!final && rest.length < 4 && /^(?:\[(?:[ xX]\]?)?)?$/.test(rest)) return -1;
  return /^\[[ xX]\] $/.test(rest) ? i + 4 : i;
}

/** The block markers of the line starting at `pos`, or undefined to wait for more text. */
export function lineStartAt(buf: string, pos: number, final: boolean): LineStart | undefined {
  let i = pos;
  const n = buf.length;
  while (i < n && (buf.charCodeAt(i) === 0x20 || buf.charCodeAt(i) === 9)) i++;
  if (i >= n && !final) return undefined;
  // a fence: ``` or ~~~
  if (!final && /^(?:`{1,2}|~{1,2})$/.test(buf.slice(i, i + 3))) return undefined; // a fence may be coming
  const fm = /^(`{3,}|~{3,})/.exec(buf.slice(i, i + 64));
  if (fm) {
    if (i + fm[1]!.length >= n && !final) return undefined;
    const eol = buf.indexOf('\n', i);
    if (eol < 0 && !final && n - i < MARKER_LOOKAHEAD) return undefined;
    const infoAt = i + fm[1]!.length;
    return { type: 'fence', char: fm[1]!.charCodeAt(0), len: fm[1]!.length, infoAt, infoEnd: eol < 0 ? n : eol, eol, stop: eol < 0 ? n : eol + 1 };
  }
  let kind: LineKind = 'text';
  for (;;) {
    if (i >= n) {
      if (!final) return undefined;
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
      if (k >= n && !final) return undefined;
      const after = buf.charCodeAt(k);
      if (k - i <= 6 && (k >= n || after === 0x20 || after === 9 || after === NL)) {
        kind = 'heading';
        i = k;
        while (i < n && buf.charCodeAt(i) === 0x20) i++;
        if (i >= n && !final) return undefined; // more spaces may come
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
      if (k >= n && !final && k - i < MARKER_LOOKAHEAD) return undefined;
      if (lineDone && marks >= 3 && c !== 0x2b) return { type: 'rule', eol: buf.indexOf('\n', k), end: n };
      if (c !== 0x5f && i + 1 < n && (buf.charCodeAt(i + 1) === 0x20 || buf.charCodeAt(i + 1) === 9)) {
        kind = 'item';
        i = taskBox(buf, i + 2, final);
        if (i < 0) return undefined;
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
      } else if (!final && /^\d{1,9}[.)]?$/.test(head)) return undefined;
      break;
    }
    if (c === 0x7c) {
      const eol = buf.indexOf('\n', i);
      if (eol < 0 && !final && n - i < MARKER_LOOKAHEAD) return undefined;
      const line = buf.slice(i, eol < 0 ? n : eol);
      if (TABLE_SEPARATOR.test(line) && line.includes('-')) return { type: 'table-separator', eol, end: n };
      kind = 'table';
      i++;
      break;
    }
    break;
  }
  return { type: 'line', kind, markersEnd: i };
}

/**
 * A `[` at `at` opening `[text](address)`: the absolute offsets (`base` + index) of its `]`
 * and just after its `)`; null if it is not a link; undefined to wait.
 */
export function linkAt(buf: string, base: number, at: number, final: boolean): { close: number; end: number } | null | undefined {
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
