/**
 * The markdown scanner of speakable text (see `speakable.ts` for the rules): markdown in,
 * speakable pieces out, hidden pieces for thoughts and tool calls. The word stage
 * (`speakable-words.ts`) runs after it.
 */
import { ASCII_PUNCT, isAstralEmoji, isEmphasisMarker, Kind, kindOf, NL } from './speakable-marks.js';
import { lineStartAt, linkAt, type LineKind } from './speakable-markdown.js';
import { hiddenAt, tagAt, type HiddenKind } from './speakable-tags.js';
import { PieceMap, type CheckedSpeakableOptions, type HiddenBlock, type SpeakablePiece, type SpeakableTextCore } from './speakable-pieces.js';

/** The markdown scanner: markdown in, speakable pieces out (hidden pieces for thoughts). */
export function createScanner(checked: CheckedSpeakableOptions, onHiddenBlock: ((block: HiddenBlock) => void) | undefined): SpeakableTextCore {
  const { codeBlocks, maxBufferSize, tags } = checked;

  /** Input not consumed yet starts at absolute offset `base`; `pos` indexes `buf`. */
  let buf = '';
  let base = 0;
  let pos = 0;
  const pieces = new PieceMap();
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
  /**
   * Open hidden block (`<think>`): its tag name, kind and where its opening tag starts; the
   * scanner's state before it (`prev`, and whether the tag began a plain line), restored after
   * it, so the text around a block reads as if the block were not there.
   */
  let hidden: { name: string; kind: HiddenKind; start: number; prev: number; atLineStart: boolean } | undefined;
  /** Where the current plain line's text starts (absolute; -1: not on a plain line's start). */
  let textLineAt = -1;
  let unclosed: HiddenKind | undefined;

  const emit = (text: string, start: number, end: number, verbatim = false): void => pieces.emit(text, start, end, verbatim);

  /** One step inside a hidden block: its content goes out as non-spoken pieces. */
  function stepHidden(final: boolean): boolean {
    const h = hidden!;
    const at = hiddenAt(buf, pos, h.name, final);
    if (at.content > 0) {
      const abs = base + pos;
      pieces.hide(buf.slice(pos, pos + at.content), abs, abs + at.content, h.kind);
      pos += at.content;
      return true;
    }
    if (at.close === 0) return false;
    pos += at.close;
    hidden = undefined;
    prev = h.prev;
    if (h.atLineStart) {
      lineStart = true;
      textLineAt = -1;
    }
    onHiddenBlock?.({ kind: h.kind, start: h.start, end: base + pos, closed: true });
    return true;
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

  /** The line's block markers (`speakable-markdown.ts`), dropped. Returns false when more text is needed. */
  function startLine(final: boolean): boolean {
    const at = lineStartAt(buf, pos, final);
    if (at === undefined) return false;
    switch (at.type) {
      case 'fence': {
        // the info string (`js`) is kept: spoken with the body if the block never closes
        const info = at.infoEnd > at.infoAt ? [{ text: buf.slice(at.infoAt, at.infoEnd), start: base + at.infoAt, end: base + at.infoEnd }] : [];
        fence = { char: at.char, len: at.len, start: base + pos, info, body: [], bodyLen: 0, speaking: codeBlocks === 'speak' };
        fenceLine = at.eol < 0; // a long info string goes on: the rest of the line is body text
        drop(at.stop - pos);
        lineStart = at.eol >= 0;
        return true;
      }
      case 'rule':
        // a horizontal rule: not spoken, ends a sentence
        drop((at.eol < 0 ? at.end : at.eol) - pos);
        if (at.eol >= 0) replace(1, '\n\n');
        lineStart = true;
        return true;
      case 'table-separator':
        drop((at.eol < 0 ? at.end : at.eol) - pos);
        if (at.eol >= 0) drop(1);
        lineStart = at.eol >= 0;
        return true;
      default: {
        // drop the markers (and the indentation before them); plain lines keep their text. A
        // block line after running text ends that text's sentence: its markers become a break.
        const i = at.markersEnd;
        const tail = pieces.tail;
        if (at.kind !== 'text' && tail.length > 0 && tail !== '\n\n') replace(i - pos, tail.endsWith('\n') ? '\n' : '\n\n');
        else if (i > pos) drop(i - pos);
        lineKind = at.kind;
        lineStart = false;
        textLineAt = at.kind === 'text' ? base + pos : -1;
        return true;
      }
    }
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
        if (x === 0x60 || x === NL || kindOf(x) === Kind.Drop || (x >= 0xd800 && x <= 0xdfff)) break;
      }
      if (k > pos) {
        copy(k - pos);
        return true;
      }
      // a dropped character or a surrogate: as outside code
    }
    const cls = kindOf(c);
    if (cls === Kind.Plain) {
      let k = pos + 1;
      while (k < n && kindOf(buf.charCodeAt(k)) === Kind.Plain) k++;
      copy(k - pos);
      return true;
    }
    if (cls === Kind.Drop) {
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
          const link = linkAt(buf, base, pos + 1, final);
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
        const link = linkAt(buf, base, pos, final);
        if (link === undefined) return false;
        if (link) {
          drop(1);
          linkClose = link.close;
          linkEnd = link.end;
        } else copy(1);
        return true;
      }
      case 0x3c: {
        const tag = tagAt(buf, pos, final, tags);
        if (tag === undefined) return false;
        if (tag.type === 'autolink') {
          drop(1);
          copy(tag.address.length);
          drop(1);
        } else if (tag.type === 'hidden') {
          hidden = { name: tag.name, kind: tag.kind, start: base + pos, prev, atLineStart: base + pos === textLineAt };
          pos += tag.len;
        } else if (tag.type === 'tag') {
          if (tag.action === 'keep') copy(tag.len);
          else if (tag.action === 'space') replace(tag.len, ' ');
          else drop(tag.len);
        } else copy(1);
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
    if (isEmphasisMarker(ch, run, prev, k < n ? buf.charCodeAt(k) : Number.NaN)) drop(run);
    else copy(run);
    return true;
  }

  function run(final: boolean): void {
    while (pos < buf.length) {
      const ok = hidden ? stepHidden(final) : fence ? stepFence(final) : lineStart ? startLine(final) : stepInline(final);
      if (!ok) break;
    }
    if (pos > 0) {
      buf = buf.slice(pos);
      base += pos;
      pos = 0;
    }
  }

  const take = (): SpeakablePiece[] => pieces.take();

  return {
    feed(text) {
      if (text.length === 0) return [];
      buf += text;
      run(false);
      return take();
    },
    get unclosed() {
      return unclosed;
    },
    end() {
      run(true);
      if (hidden) {
        // the text ended inside a thought or tool call: the rest was not spoken
        unclosed = hidden.kind;
        onHiddenBlock?.({ kind: hidden.kind, start: hidden.start, end: base + pos, closed: false });
        hidden = undefined;
      }
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
      pieces.tail = '';
      return take();
    },
  };
}
