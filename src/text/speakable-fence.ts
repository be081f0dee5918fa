/**
 * A fenced code block (```` ``` ```` or `~~~`) in the speech scanner (`speakable-scanner.ts`):
 * skipped (its text held in case it never closes), spoken, or replaced by a phrase.
 */
import { NL } from './speakable-marks.js';
import type { CodeBlockMode, SpeakablePiece } from './speakable-pieces.js';

/** What a fenced block needs of the scanner: its buffer, and consuming and speaking text. */
export interface ScanOps {
  readonly buf: string;
  readonly pos: number;
  readonly base: number;
  /** Consume `n` code units without speaking them. */
  drop(n: number): void;
  /** Consume `n` code units, speaking them as they are. */
  copy(n: number): void;
  /** Speak `text` for the source range [start, end). */
  emit(text: string, start: number, end: number): void;
}

/** An open fenced block. */
export class FencedBlock {
  /** Its text while it is not spoken. */
  private body: SpeakablePiece[] = [];
  private bodyLen = 0;
  private speaking: boolean;
  /** The closing fence was read. */
  closed = false;

  /**
   * @param line Inside a line (not at its start): a long info string goes on as body text.
   * @param info The info string (`js`): spoken with the body if the block never closes.
   */
  constructor(
    private readonly fence: { char: number; len: number; start: number },
    private readonly info: SpeakablePiece[],
    private line: boolean,
    private readonly codeBlocks: CodeBlockMode,
    private readonly maxBufferSize: number,
  ) {
    this.speaking = codeBlocks === 'speak';
  }

  /** A line (or the rest of one) inside the block. Returns false when more text is needed. */
  step(s: ScanOps, final: boolean): boolean {
    const n = s.buf.length;
    if (!this.line) {
      // at the line's start: is it the closing fence?
      let i = s.pos;
      while (i < n && i - s.pos < 3 && s.buf.charCodeAt(i) === 0x20) i++;
      let k = i;
      while (k < n && s.buf.charCodeAt(k) === this.fence.char) k++;
      if (k >= n && !final) return false;
      if (k - i >= this.fence.len) {
        let e = k;
        while (e < n && (s.buf.charCodeAt(e) === 0x20 || s.buf.charCodeAt(e) === 9 || s.buf.charCodeAt(e) === 13)) e++;
        if (e >= n && !final) return false;
        if (e >= n || s.buf.charCodeAt(e) === NL) {
          const start = s.base + s.pos;
          s.drop((e >= n ? n : e + 1) - s.pos);
          this.close(s, start, s.base + s.pos);
          return true;
        }
      }
      this.line = true;
    }
    // body text up to the line's end
    const eol = s.buf.indexOf('\n', s.pos);
    const stop = eol < 0 ? n : eol + 1;
    if (stop > s.pos) this.bodyText(s, stop - s.pos);
    if (eol >= 0) this.line = false;
    return true;
  }

  /**
   * The text ended inside the block: its text is spoken, not lost. An info string that names a
   * language (`js`, `c++`) is not (it would run into the code's first word: `jsconst`).
   */
  unterminated(s: ScanOps): void {
    const info = this.info.map((p) => p.text).join('');
    const pieces = this.body.length > 0 && /^\s*[\w+#.-]+\s*$/.test(info) ? this.body : [...this.info, ...this.body];
    for (const p of pieces) s.emit(p.text, p.start, p.end);
  }

  private bodyText(s: ScanOps, len: number): void {
    if (this.speaking) {
      s.copy(len);
      return;
    }
    const abs = s.base + s.pos;
    this.body.push({ text: s.buf.slice(s.pos, s.pos + len), start: abs, end: abs + len });
    this.bodyLen += len;
    s.drop(len);
    if (this.bodyLen > this.maxBufferSize) {
      // too long to hold: speak it from here (nothing is lost)
      this.speaking = true;
      for (const p of this.body) s.emit(p.text, p.start, p.end);
      this.body = [];
    }
  }

  private close(s: ScanOps, closeStart: number, closeEnd: number): void {
    this.closed = true;
    if (this.speaking) s.emit('\n\n', closeStart, closeEnd);
    else if (typeof this.codeBlocks === 'object') s.emit(`${this.codeBlocks.say}\n\n`, this.fence.start, closeEnd);
    else s.emit('\n\n', closeStart, closeEnd);
  }
}
