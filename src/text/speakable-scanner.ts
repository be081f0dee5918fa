/**
 * The markdown scanner of speakable text (see `speakable.ts` for the rules): markdown in,
 * speakable pieces out, hidden pieces for thoughts and tool calls. The word stage
 * (`speakable-words.ts`) runs after it.
 *
 * One object per stream: its fields are where the scan is (the buffer, the line, an open code
 * span, link, fenced block or hidden block); each method takes one decision and returns false
 * when it needs more text. `run` calls them until the buffer is used up.
 */
import { ASCII_PUNCT, isAstralEmoji, isEmphasisMarker, Kind, kindOf, NL } from './speakable-marks.js';
import { lineStartAt, linkAt, type LineKind } from './speakable-markdown.js';
import { hiddenAt, tagAt, type HiddenKind } from './speakable-tags.js';
import { PieceMap, type CheckedSpeakableOptions, type CodeBlockMode, type HiddenBlock, type SpeakablePiece, type SpeakableTextCore } from './speakable-pieces.js';
import type { TagPolicy } from './speakable-tags.js';
import { FencedBlock, type ScanOps } from './speakable-fence.js';

/**
 * An open hidden block (`<think>`): its tag name, kind and where its opening tag starts; the
 * scanner's state before it (`prev`, and whether the tag began a plain line), restored after
 * it, so the text around a block reads as if the block were not there.
 */
interface Hidden {
  name: string;
  kind: HiddenKind;
  start: number;
  prev: number;
  atLineStart: boolean;
}

/** The markdown scanner: markdown in, speakable pieces out (hidden pieces for thoughts). */
export function createScanner(checked: CheckedSpeakableOptions, onHiddenBlock: ((block: HiddenBlock) => void) | undefined): SpeakableTextCore {
  return new MarkdownScanner(checked, onHiddenBlock);
}

class MarkdownScanner implements SpeakableTextCore, ScanOps {
  private readonly codeBlocks: CodeBlockMode;
  private readonly maxBufferSize: number;
  private readonly tags: TagPolicy;
  /** Input not consumed yet starts at absolute offset `base`; `pos` indexes `buf`. */
  buf = '';
  base = 0;
  pos = 0;
  private readonly pieces = new PieceMap();
  /** The last consumed input code unit (for emphasis flanking); NaN at the start. */
  private prev = Number.NaN;
  private lineStart = true;
  private lineKind: LineKind = 'text';
  /** Open code span: its backtick count (0: none). */
  private codeSpan = 0;
  /** Inside link text: absolute offsets of its `]` and just after its `)`. */
  private linkClose = -1;
  private linkEnd = -1;
  private fence: FencedBlock | undefined;
  private hidden: Hidden | undefined;
  /** Where the current plain line's text starts (absolute; -1: not on a plain line's start). */
  private textLineAt = -1;
  /** After `end()`: the kind of hidden block the text ended in. */
  unclosed: HiddenKind | undefined;

  constructor(
    checked: CheckedSpeakableOptions,
    private readonly onHiddenBlock: ((block: HiddenBlock) => void) | undefined,
  ) {
    this.codeBlocks = checked.codeBlocks;
    this.maxBufferSize = checked.maxBufferSize;
    this.tags = checked.tags;
    // `thoughts: 'drop-open'`: the model's template sent `<think>`; the text starts inside it
    if (checked.openThought) this.hidden = { name: 'think', kind: 'thought', start: 0, prev: Number.NaN, atLineStart: true };
  }

  feed(text: string): SpeakablePiece[] {
    if (text.length === 0) return [];
    this.buf += text;
    this.run(false);
    return this.pieces.take();
  }

  end(): SpeakablePiece[] {
    this.run(true);
    const hidden = this.hidden;
    if (hidden) {
      // the text ended inside a thought or tool call: the rest was not spoken
      this.unclosed = hidden.kind;
      this.hidden = undefined;
      this.onHiddenBlock?.({ kind: hidden.kind, start: hidden.start, end: this.base + this.pos, closed: false });
    }
    this.fence?.unterminated(this);
    this.fence = undefined;
    this.codeSpan = 0;
    this.linkClose = -1;
    this.lineStart = true;
    this.lineKind = 'text';
    this.prev = Number.NaN;
    this.pieces.tail = '';
    return this.pieces.take();
  }

  emit(text: string, start: number, end: number, verbatim = false): void {
    this.pieces.emit(text, start, end, verbatim);
  }

  /** One step inside a hidden block: its content goes out as non-spoken pieces. */
  private stepHidden(final: boolean): boolean {
    const h = this.hidden!;
    const at = hiddenAt(this.buf, this.pos, h.name, final);
    if (at.content > 0) {
      const abs = this.base + this.pos;
      this.pieces.hide(this.buf.slice(this.pos, this.pos + at.content), abs, abs + at.content, h.kind);
      this.pos += at.content;
      return true;
    }
    if (at.close === 0) return false;
    this.pos += at.close;
    this.hidden = undefined;
    this.prev = h.prev;
    if (h.atLineStart) {
      this.lineStart = true;
      this.textLineAt = -1;
    }
    this.onHiddenBlock?.({ kind: h.kind, start: h.start, end: this.base + this.pos, closed: true });
    return true;
  }

  /** Consume `n` code units without speaking them. */
  drop(n: number): void {
    this.prev = this.buf.charCodeAt(this.pos + n - 1);
    this.pos += n;
  }

  /** Consume `n` code units, speaking them as they are. */
  copy(n: number): void {
    const abs = this.base + this.pos;
    this.emit(this.buf.slice(this.pos, this.pos + n), abs, abs + n, true);
    this.prev = this.buf.charCodeAt(this.pos + n - 1);
    this.pos += n;
  }

  /** Consume `n` code units, speaking `text` instead. */
  private replace(n: number, text: string): void {
    const abs = this.base + this.pos;
    this.emit(text, abs, abs + n);
    this.prev = this.buf.charCodeAt(this.pos + n - 1);
    this.pos += n;
  }

  /** The line's block markers (`speakable-markdown.ts`), dropped. Returns false when more text is needed. */
  private startLine(final: boolean): boolean {
    const at = lineStartAt(this.buf, this.pos, final);
    if (at === undefined) return false;
    switch (at.type) {
      case 'fence': {
        // the info string (`js`) is kept: spoken with the body if the block never closes
        const info = at.infoEnd > at.infoAt ? [{ text: this.buf.slice(at.infoAt, at.infoEnd), start: this.base + at.infoAt, end: this.base + at.infoEnd }] : [];
        // a long info string goes on: the rest of the line is body text
        this.fence = new FencedBlock({ char: at.char, len: at.len, start: this.base + this.pos }, info, at.eol < 0, this.codeBlocks, this.maxBufferSize);
        this.drop(at.stop - this.pos);
        this.lineStart = at.eol >= 0;
        return true;
      }
      case 'rule':
        // a horizontal rule: not spoken, ends a sentence
        this.drop((at.eol < 0 ? at.end : at.eol) - this.pos);
        if (at.eol >= 0) this.replace(1, '\n\n');
        this.lineStart = true;
        return true;
      case 'table-separator':
        this.drop((at.eol < 0 ? at.end : at.eol) - this.pos);
        if (at.eol >= 0) this.drop(1);
        this.lineStart = at.eol >= 0;
        return true;
      default: {
        // drop the markers (and the indentation before them); plain lines keep their text. A
        // block line after running text ends that text's sentence: its markers become a break.
        const i = at.markersEnd;
        const tail = this.pieces.tail;
        if (at.kind !== 'text' && tail.length > 0 && tail !== '\n\n') this.replace(i - this.pos, tail.endsWith('\n') ? '\n' : '\n\n');
        else if (i > this.pos) this.drop(i - this.pos);
        this.lineKind = at.kind;
        this.lineStart = false;
        this.textLineAt = at.kind === 'text' ? this.base + this.pos : -1;
        return true;
      }
    }
  }

  /** A step inside a fenced block; after its closing fence, a line starts. */
  private stepFence(fence: FencedBlock, final: boolean): boolean {
    const ok = fence.step(this, final);
    if (fence.closed) {
      this.fence = undefined;
      this.lineStart = true;
    }
    return ok;
  }

  /** One decision in running text. Returns false when more text is needed. */
  private stepInline(final: boolean): boolean {
    const n = this.buf.length;
    const abs = this.base + this.pos;
    if (this.linkClose >= 0 && abs === this.linkClose) {
      this.drop(this.linkEnd - abs); // `](address)`
      this.linkClose = -1;
      this.linkEnd = -1;
      return true;
    }
    const c = this.buf.charCodeAt(this.pos);
    if (c === NL) {
      if (this.lineKind !== 'text' && this.codeSpan === 0) this.replace(1, '\n\n');
      else this.copy(1);
      this.lineStart = true;
      this.lineKind = 'text';
      this.linkClose = -1;
      return true;
    }
    if (this.codeSpan > 0) {
      const decided = this.stepCode(c, final);
      if (decided !== undefined) return decided;
      // a dropped character or a surrogate: as outside code
    }
    const cls = kindOf(c);
    if (cls === Kind.Plain) {
      let k = this.pos + 1;
      while (k < n && kindOf(this.buf.charCodeAt(k)) === Kind.Plain) k++;
      this.copy(k - this.pos);
      return true;
    }
    if (cls === Kind.Drop) {
      this.drop(1);
      return true;
    }
    // surrogates: an emoji is dropped, a lone surrogate too
    if (c >= 0xd800 && c <= 0xdbff) {
      if (this.pos + 1 >= n && !final) return false;
      const low = this.buf.charCodeAt(this.pos + 1);
      if (low >= 0xdc00 && low <= 0xdfff) {
        const cp = ((c - 0xd800) << 10) + (low - 0xdc00) + 0x10000;
        if (isAstralEmoji(cp)) this.drop(2);
        else this.copy(2);
      } else this.drop(1);
      return true;
    }
    if (c >= 0xdc00 && c <= 0xdfff) {
      this.drop(1);
      return true;
    }
    return this.stepSyntax(c, final);
  }

  /**
   * Inside a code span: everything is spoken as it is, but the closing backticks. Undefined
   * when the character is one to treat as outside code (dropped, or a surrogate).
   */
  private stepCode(c: number, final: boolean): boolean | undefined {
    const n = this.buf.length;
    if (c === 0x60) {
      let k = this.pos;
      while (k < n && this.buf.charCodeAt(k) === 0x60) k++;
      if (k >= n && !final) return false;
      if (k - this.pos === this.codeSpan) {
        this.codeSpan = 0;
        this.drop(k - this.pos);
      } else this.copy(k - this.pos);
      return true;
    }
    let k = this.pos;
    for (; k < n; k++) {
      const x = this.buf.charCodeAt(k);
      if (x === 0x60 || x === NL || kindOf(x) === Kind.Drop || (x >= 0xd800 && x <= 0xdfff)) break;
    }
    if (k === this.pos) return undefined;
    this.copy(k - this.pos);
    return true;
  }

  /** A character that may be markdown syntax (`\\`, backticks, emphasis, links, tags, table pipes). */
  private stepSyntax(c: number, final: boolean): boolean {
    const n = this.buf.length;
    switch (c) {
      case 0x5c: {
        // `\*`: the character, not a marker
        if (this.pos + 1 >= n && !final) return false;
        const next = this.buf.charCodeAt(this.pos + 1);
        if (this.pos + 1 < n && next < 0x80 && ASCII_PUNCT.test(String.fromCharCode(next))) {
          this.drop(1);
          this.copy(1);
        } else this.copy(1);
        return true;
      }
      case 0x60: {
        let k = this.pos;
        while (k < n && this.buf.charCodeAt(k) === 0x60) k++;
        if (k >= n && !final) return false;
        this.codeSpan = k - this.pos;
        this.drop(k - this.pos);
        return true;
      }
      case 0x2a:
      case 0x5f:
      case 0x7e:
        return this.emphasis(c, final);
      case 0x21: {
        if (this.pos + 1 >= n && !final) return false;
        if (this.buf.charCodeAt(this.pos + 1) === 0x5b) {
          const link = linkAt(this.buf, this.base, this.pos + 1, final);
          if (link === undefined) return false;
          if (link) {
            this.drop(2); // `![`: an image speaks its description
            this.linkClose = link.close;
            this.linkEnd = link.end;
            return true;
          }
        }
        this.copy(1);
        return true;
      }
      case 0x5b: {
        const link = linkAt(this.buf, this.base, this.pos, final);
        if (link === undefined) return false;
        if (link) {
          this.drop(1);
          this.linkClose = link.close;
          this.linkEnd = link.end;
        } else this.copy(1);
        return true;
      }
      case 0x3c: {
        const tag = tagAt(this.buf, this.pos, this.prev, final, this.tags);
        if (tag === undefined) return false;
        if (tag.type === 'autolink') {
          this.drop(1);
          this.copy(tag.address.length);
          this.drop(1);
        } else if (tag.type === 'hidden') {
          this.hidden = { name: tag.name, kind: tag.kind, start: this.base + this.pos, prev: this.prev, atLineStart: this.base + this.pos === this.textLineAt };
          this.pos += tag.len;
        } else if (tag.type === 'tag') {
          if (tag.action === 'keep') this.copy(tag.len);
          else if (tag.action === 'space') this.replace(tag.len, ' ');
          else this.drop(tag.len);
        } else this.copy(1);
        return true;
      }
      case 0x7c: {
        if (this.lineKind !== 'table') {
          this.copy(1);
          return true;
        }
        // a cell separator: `,` between cells, nothing at the row's end
        let k = this.pos + 1;
        while (k < n && (this.buf.charCodeAt(k) === 0x20 || this.buf.charCodeAt(k) === 9 || this.buf.charCodeAt(k) === 13)) k++;
        if (k >= n && !final) return false;
        if (k >= n || this.buf.charCodeAt(k) === NL) this.drop(1);
        else this.replace(1, ',');
        return true;
      }
      case 0x5d:
      default:
        this.copy(1);
        return true;
    }
  }

  /** A run of `*`, `_` or `~`: a marker (dropped) or text, by what stands on either side. */
  private emphasis(ch: number, final: boolean): boolean {
    const n = this.buf.length;
    let k = this.pos;
    while (k < n && this.buf.charCodeAt(k) === ch) k++;
    if (k >= n && !final) return false;
    const run = k - this.pos;
    if (isEmphasisMarker(ch, run, this.prev, k < n ? this.buf.charCodeAt(k) : Number.NaN)) this.drop(run);
    else this.copy(run);
    return true;
  }

  private run(final: boolean): void {
    while (this.pos < this.buf.length) {
      const ok = this.hidden ? this.stepHidden(final) : this.fence ? this.stepFence(this.fence, final) : this.lineStart ? this.startLine(final) : this.stepInline(final);
      if (!ok) break;
    }
    if (this.pos > 0) {
      this.buf = this.buf.slice(this.pos);
      this.base += this.pos;
      this.pos = 0;
    }
  }
}
