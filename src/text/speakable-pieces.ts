/**
 * What the markdown-to-speech core (`speakable.ts`) gives out, and the offset map: each piece
 * of speakable text carries the range of the markdown it renders (`input.slice(start, end)`),
 * so captions can show the markdown's own words.
 */
import { optionError } from '../core/validation.js';
import { bufferSizeOption } from './sentence-options.js';

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

/**
 * The pieces given out so far, with their source ranges: copies of consecutive source text
 * merge into one piece; the last two characters spoken are kept (a block line after running
 * text ends its sentence with a paragraph break only if one is not there yet).
 */
export class PieceMap {
  private out: SpeakablePiece[] = [];
  /** The last piece pushed, when it is a verbatim copy of its source (copies merge). */
  private lastCopy: SpeakablePiece | undefined;
  /** The last two characters spoken so far. */
  tail = '';

  /** Speak `text` for the source range [start, end); `verbatim`: `text` is that source. */
  emit(text: string, start: number, end: number, verbatim = false): void {
    if (text.length === 0) return;
    this.tail = (this.tail + text).slice(-2);
    const last = this.lastCopy;
    if (verbatim && last && last.end === start && this.out[this.out.length - 1] === last) {
      last.text += text;
      last.end = end;
      return;
    }
    const piece = { text, start, end };
    this.out.push(piece);
    this.lastCopy = verbatim ? piece : undefined;
  }

  /** The pieces given out since the last call. */
  take(): SpeakablePiece[] {
    const r = this.out;
    this.out = [];
    return r;
  }
}
