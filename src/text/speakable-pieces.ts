/**
 * What the markdown-to-speech core (`speakable.ts`) gives out, and the offset map: each piece
 * of speakable text carries the range of the markdown it renders (`input.slice(start, end)`),
 * so captions can show the markdown's own words.
 */
import { optionError } from '../core/validation.js';
import { bufferSizeOption } from './sentence-options.js';
import type { HiddenKind, TagPolicy } from './speakable-tags.js';
import { lexiconOption, type Lexicon } from './speakable-lexicon.js';
import { numberLocale, type NumberWords } from './speakable-numbers.js';

export type { HiddenKind } from './speakable-tags.js';

/** One piece of speakable text and the range of the original markdown it renders. */
export interface SpeakablePiece {
  /** Text to speak (may be whitespace, such as the `"\n\n"` that ends a list item). */
  text: string;
  /** Offset (UTF-16 code units, from the start of the whole input) of the first source character. */
  start: number;
  /** Offset just after the last source character. `start === end` never happens. */
  end: number;
  /**
   * Set on text that is not spoken but kept for captions: the content of a thought
   * (`<think>...</think>`) or a tool call (`<tool_call>...</tool_call>`).
   */
  hidden?: HiddenKind;
}

/** A hidden block (thought or tool call) ended: where it was, and whether its closing tag came. */
export interface HiddenBlock {
  kind: HiddenKind;
  /** Source offsets of the block, from its opening tag to after its closing tag (or the end). */
  start: number;
  end: number;
  /** False when the text ended inside the block (the rest was not spoken). */
  closed: boolean;
}

/** How URLs are spoken: as their host (`example.com`), not at all, or as written. */
export type LinkMode = 'host' | 'drop' | 'verbatim';

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
  /**
   * `<think>`, `<thinking>`, `<reasoning>` blocks: `'drop'` (default: not spoken, kept as hidden
   * pieces) or `'speak'`. `'drop-open'`: as `'drop'`, and the text starts inside a thought whose
   * `<think>` the model's chat template already sent (DeepSeek R1): nothing is spoken before the
   * first `</think>`; a text with no `</think>` speaks nothing and ends unclosed (`onHiddenBlock`
   * with `closed: false`, `unclosed === 'thought'`).
   */
  thoughts?: 'drop' | 'speak' | 'drop-open';
  /** `<tool_call>` blocks: `'drop'` (default) or `'speak'`. */
  toolCalls?: 'drop' | 'speak';
  /** SSML-like tags (`<break/>`, `<say-as>`, `<phoneme>`, `<spell>`...): `'strip'` (default) or `'keep'` intact. */
  markup?: 'strip' | 'keep';
  /** URLs: `'host'` (default: `https://example.com/a?b=1` is spoken `example.com`), `'drop'`, `'verbatim'`. */
  links?: LinkMode;
  /** E-mail addresses and file paths: `'readable'` (default: `a.b@c.de` is `a dot b at c dot de`) or `'verbatim'`. */
  addresses?: 'readable' | 'verbatim';
  /** Pronunciations: whole words and rules (see {@link Lexicon}); one or a list, per language. */
  lexicon?: Lexicon | readonly Lexicon[];
  /** Numbers, money, percentages, dates, times and units in words (default false); needs `language`'s number words. */
  spokenForm?: boolean;
  /** The text's language, a locale tag (`en-us`, `de-de`): spoken forms, address words and lexicon choice. Default `en-us`. */
  language?: string;
  /**
   * Number words for `spokenForm` with the synchronous core `createSpeakableText`
   * (`await loadNumberWords(language)`); the `speakableText()` operator loads them itself.
   */
  numberWords?: NumberWords;
  /** Called when a hidden block ends (closed, or cut off by the end of the text). */
  onHiddenBlock?: (block: HiddenBlock) => void;
}

/** The incremental core: feed markdown, get speakable pieces. */
export interface SpeakableTextCore {
  /** Feed more markdown; returns the pieces now decided, in order. */
  feed(text: string): SpeakablePiece[];
  /** The input is over: returns what was still undecided (markers at the end count as text). */
  end(): SpeakablePiece[];
  /** After `end()`: the kind of hidden block the text ended inside (its rest was not spoken), if any. */
  readonly unclosed: HiddenKind | undefined;
}

/** Options once checked, with their defaults. */
export interface CheckedSpeakableOptions {
  codeBlocks: CodeBlockMode;
  maxBufferSize: number;
  tags: TagPolicy;
  /** The text starts inside a thought (`thoughts: 'drop-open'`). */
  openThought: boolean;
  links: LinkMode;
  addresses: 'readable' | 'verbatim';
  lexicon: readonly Lexicon[];
  spokenForm: boolean;
  language: string;
}

function oneOf<T extends string>(value: T | undefined, allowed: readonly T[], name: string): T {
  if (value === undefined) return allowed[0]!;
  if (!allowed.includes(value)) throw optionError('speakableText', [name], `must be ${allowed.map((a) => `'${a}'`).join(' or ')}`);
  return value;
}

/** Validated options (the one place they are checked): throws a ValidationError. */
export function speakableTextOptions(options: SpeakableTextOptions = {}): CheckedSpeakableOptions {
  const codeBlocks = options.codeBlocks ?? 'skip';
  if (!(codeBlocks === 'skip' || codeBlocks === 'speak' || (typeof codeBlocks === 'object' && codeBlocks !== null && typeof codeBlocks.say === 'string'))) {
    throw optionError('speakableText', ['codeBlocks'], "must be 'skip', 'speak' or { say: string }");
  }
  const hide = new Set<HiddenKind>();
  const thoughts = oneOf(options.thoughts, ['drop', 'speak', 'drop-open'], 'thoughts');
  if (thoughts !== 'speak') hide.add('thought');
  if (oneOf(options.toolCalls, ['drop', 'speak'], 'toolCalls') === 'drop') hide.add('tool_call');
  const markup = oneOf(options.markup, ['strip', 'keep'], 'markup');
  const language = options.language ?? 'en-us';
  if (typeof language !== 'string' || !/^[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{2,8})*$/.test(language)) throw optionError('speakableText', ['language'], 'must be a locale tag such as en-us');
  if (options.spokenForm !== undefined && typeof options.spokenForm !== 'boolean') throw optionError('speakableText', ['spokenForm'], 'must be a boolean');
  if (options.spokenForm === true && numberLocale(language) === undefined) throw optionError('speakableText', ['language'], 'spokenForm speaks en, de, es and fr');
  if (options.onHiddenBlock !== undefined && typeof options.onHiddenBlock !== 'function') throw optionError('speakableText', ['onHiddenBlock'], 'must be a function');
  return {
    codeBlocks,
    maxBufferSize: bufferSizeOption(options.maxBufferSize, 'speakableText'),
    tags: { hide, markup },
    openThought: thoughts === 'drop-open',
    links: oneOf(options.links, ['host', 'drop', 'verbatim'], 'links'),
    addresses: oneOf(options.addresses, ['readable', 'verbatim'], 'addresses'),
    lexicon: lexiconOption(options.lexicon),
    spokenForm: options.spokenForm ?? false,
    language: language.toLowerCase().replace('_', '-'),
  };
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

  /** Keep `text` (source [start, end)) for captions, not spoken. Never merges with spoken text. */
  hide(text: string, start: number, end: number, kind: HiddenKind): void {
    const last = this.out[this.out.length - 1];
    if (last && last.hidden === kind && last.end === start) {
      last.text += text;
      last.end = end;
      return;
    }
    this.out.push({ text, start, end, hidden: kind });
    this.lastCopy = undefined;
  }

  /** The pieces given out since the last call. */
  take(): SpeakablePiece[] {
    const r = this.out;
    this.out = [];
    return r;
  }
}
