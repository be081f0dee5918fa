/**
 * The tag rules of the sentence segmenter (`src/text/sentence-tags.ts`): a complete tag is never
 * cut, and a `<` that may open one waits for its `>`, at most `TAG_LOOKAHEAD` code units, not
 * past a line break or another `<`. Each rule is shown by a stop inside the would-be tag: cut
 * where the `<` is text, not cut where it opens a tag; and the same text as a control on the
 * other side of the rule.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TAG_LOOKAHEAD } from '../../src/text/sentence-tags.js';
import { createSentenceSegmenter } from '../../src/text/sentences.js';
import { cut } from '../fixtures/cut.js';

/** The pieces of `tokens` fed one by one, then `end()`. */
function pieces(tokens: readonly string[]): string[] {
  const segmenter = createSentenceSegmenter({ locale: 'en-us' });
  return [...tokens.flatMap((token) => segmenter.feed(token)), ...segmenter.end()];
}

/** `Go <b` + a stop inside + padding, closed by `>` at `length` code units from the `<`. */
function longTag(length: number): string {
  const inside = 'b stop. Then ';
  return `<${inside}${'x'.repeat(length - inside.length - 2)}>`;
}

describe('tags in the sentence segmenter', () => {
  it('keeps a tag whole however the text is split; the same text without the brackets is cut at its stop (control)', () => {
    const cases: ReadonlyArray<readonly [string, readonly string[]]> = [
      ['Hi <sub alias="W. W. W.">www</sub> here. Next.', ['Hi <sub alias="W. W. W.">www</sub> here.', ' Next.']],
      ['Hi <!-- note. Then more --> here. Next.', ['Hi <!-- note. Then more --> here.', ' Next.']],
    ];
    for (const [text, whole] of cases) {
      fc.assert(
        fc.property(fc.array(fc.nat({ max: text.length }), { maxLength: 8 }), (cuts) => {
          expect(pieces(cut(text, cuts))).toEqual(whole);
        }),
        { numRuns: 200 },
      );
    }
    // the control: the comment's text without its `<!` and `>` is cut at its stop
    expect(pieces(['Hi -- note. Then more -- here. Next.'])).toEqual(['Hi -- note.', ' Then more -- here.', ' Next.']);
  });

  it(`looks at most ${TAG_LOOKAHEAD} code units for the '>': a longer one is text, cut at its stop`, () => {
    const inTag = `Go ${longTag(TAG_LOOKAHEAD + 1)} end.`; // the '>' TAG_LOOKAHEAD code units after the '<'
    const tooLong = `Go ${longTag(TAG_LOOKAHEAD + 2)} end.`;
    expect(pieces([inTag])).toEqual([inTag]);
    expect(pieces([tooLong])).toEqual([tooLong.slice(0, tooLong.indexOf('stop.') + 5), tooLong.slice(tooLong.indexOf('stop.') + 5)]);
    // token by token, as a stream would bring it: the same (the `>` at the last place looked at
    // was once decided before it came: the `<` taken for text with one code unit still to see)
    expect(pieces([...inTag])).toEqual([inTag]);
    expect(pieces([...tooLong])).toEqual(pieces([tooLong]));
  });

  it('does not look past a line break: the < before it is text; the same without the break is a tag (control)', () => {
    expect(pieces(['Go <b stop. Then\nmore> end.'])).toEqual(['Go <b stop.', ' Then\nmore> end.']);
    expect(pieces(['Go <b stop. Then more> end.'])).toEqual(['Go <b stop. Then more> end.']);
  });

  it('does not look past another <: the first is text at once, while the second waits for its >', () => {
    const segmenter = createSentenceSegmenter({ locale: 'en-us' });
    // the first `<` is decided (text) by the second one: its stop is decided by `Then`
    expect(segmenter.feed('Go <b stop. Then <i')).toEqual(['Go <b stop.']);
    expect(segmenter.pending()).toBe(' Then <i');
    expect(segmenter.feed('>x</i>. Next')).toEqual([' Then <i>x</i>.']);
    // control: without the second `<`, the first waits (its `>` may still come)
    const control = createSentenceSegmenter({ locale: 'en-us' });
    expect(control.feed('Go <b stop. Then ')).toEqual([]);
    expect(control.end()).toEqual(['Go <b stop.', ' Then ']);
  });

  it('an input that ends inside an undecided tag keeps every code unit (end() gives it back)', () => {
    for (const text of ['Hello <brea', 'Hi. <b', 'x <', 'a<b', 'Go <b stop. Then']) {
      expect(pieces([text]).join('')).toBe(text);
      expect(pieces([...text]).join('')).toBe(text);
    }
  });

  it('is not at a boundary while a tag is undecided; at one without it (control)', () => {
    const held = createSentenceSegmenter({ locale: 'en-us' });
    held.feed('Hello there. <b');
    expect(held.atBoundary()).toBe(false);
    expect(held.undecidedFrom()).toBe('Hello there'.length); // from the stop
    const control = createSentenceSegmenter({ locale: 'en-us' });
    control.feed('Hello there. ');
    expect(control.atBoundary()).toBe(true);
  });
});
