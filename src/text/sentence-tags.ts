/**
 * Tags are never cut: a wrapper of the sentence segmenter that shows it every complete tag
 * (`<break time="1.5s"/>`, `<sub alias="W. W. W.">`) with its inside masked, so no stop, quote
 * or line break inside a tag can make a sentence boundary. The masked text has the same length
 * as the original, so the pieces are cut from the original text at the same offsets (joining
 * them still gives back the input exactly).
 *
 * A `<` that may open a tag (a letter, `/` or `!` after it) waits for its `>`, at most
 * {@link TAG_LOOKAHEAD} code units, and not past a line break or another `<`; otherwise it is
 * text. `a < b` is text at once.
 */
import type { FlushPoint, SentenceSegmenter } from './sentence-options.js';

/** How far a `<` looks for its `>` before it counts as text. */
export const TAG_LOOKAHEAD = 512;

const TAG = /^<(?:\/?[A-Za-z][\w:-]*(?:\s[^<>]*)?\/?|!--[^]*--)>$/;

/** `tag` as the segmenter sees it: the brackets kept, every character inside made inert. */
const mask = (tag: string): string => `<${'x'.repeat(tag.length - 2)}>`;

/** A segmenter that can be made as good as new (`reset()`): the sentence engine. */
export interface ResettableSegmenter extends SentenceSegmenter {
  /** Forget everything fed: as a new segmenter of the same options. */
  reset(): void;
}

/** The segmenter `inner`, with tags kept whole (see the module documentation). */
export function tagSafeSegmenter<I extends ResettableSegmenter>(inner: I): TagSafeSegmenter<I> {
  return new TagSafeSegmenter(inner);
}

/**
 * The wrapper's state is two strings and its code prototype methods (shared by every
 * segmenter: a live session builds two, where a closure per method used to be built).
 */
export class TagSafeSegmenter<I extends ResettableSegmenter = ResettableSegmenter> implements ResettableSegmenter {
  /** Text from a `<` whose tag is not decided yet. */
  private held: string;
  /** Original text given to `inner` and not yet returned by it (as masked text, same length). */
  private given: string;

  constructor(readonly inner: I) {
    // set here, not where declared: variable to V8 from the first instance (see `SentenceEngine`)
    this.held = '';
    this.given = '';
  }

  feed(text: string): string[] {
    if (text.length === 0) return [];
    const out: string[] = [];
    if (this.held === '' && !text.includes('<')) {
      this.give(text, text, out); // no tag: as the segmenter would
      return out;
    }
    this.held += text;
    this.run(false, out);
    return out;
  }

  end(): string[] {
    const out: string[] = [];
    if (this.held !== '') this.run(true, out); // nothing held (no `<` waits): nothing to scan
    this.unmask(this.inner.end(), out);
    return out;
  }

  pending(): string {
    return this.given + this.held;
  }

  reset(): void {
    this.held = '';
    this.given = '';
    this.inner.reset();
  }

  flushAt(where: FlushPoint): string[] {
    return this.unmask(this.inner.flushAt(where), []);
  }

  atBoundary(): boolean {
    return this.held === '' && this.inner.atBoundary();
  }

  undecidedFrom(): number {
    const undecided = this.inner.undecidedFrom();
    if (undecided >= 0) return undecided;
    return this.held === '' ? -1 : this.given.length;
  }

  /** `inner`'s pieces (masked) as pieces of the original text, appended to `out` (no array between). */
  private unmask(pieces: string[], out: string[]): string[] {
    if (pieces.length === 0) return out;
    let at = 0;
    for (const piece of pieces) {
      out.push(this.given.slice(at, at + piece.length));
      at += piece.length;
    }
    this.given = this.given.slice(at);
    return out;
  }

  private give(text: string, masked: string, out: string[]): void {
    if (text.length === 0) return;
    this.given += text;
    this.unmask(this.inner.feed(masked), out);
  }

  /** Give `inner` everything decided in `held`; keep an undecided tag. */
  private run(final: boolean, out: string[]): void {
    const held = this.held;
    let from = 0;
    for (;;) {
      const lt = held.indexOf('<', from);
      if (lt < 0) break;
      this.give(held.slice(from, lt), held.slice(from, lt), out);
      from = lt;
      if (lt + 1 >= held.length && !final) break;
      if (!/^[A-Za-z/!]$/.test(held.charAt(lt + 1))) {
        this.give('<', '<', out);
        from = lt + 1;
        continue;
      }
      let k = lt + 1;
      while (k < held.length && k - lt < TAG_LOOKAHEAD && held[k] !== '>' && held[k] !== '\n' && held[k] !== '<') k++;
      if (k >= held.length && !final && k - lt <= TAG_LOOKAHEAD) break; // wait for the `>` (it may be at `lt + TAG_LOOKAHEAD`)
      const tag = held[k] === '>' ? held.slice(lt, k + 1) : '';
      if (TAG.test(tag)) {
        this.give(tag, mask(tag), out);
        from = k + 1;
      } else {
        this.give('<', '<', out);
        from = lt + 1;
      }
    }
    const rest = held.indexOf('<', from) < 0 || final ? held.length : held.indexOf('<', from);
    this.give(held.slice(from, rest), held.slice(from, rest), out);
    this.held = held.slice(rest);
  }
}
