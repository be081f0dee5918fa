/**
 * The process's spare sentence segmenter (`takeSentenceSegmenter` / `releaseSentenceSegmenter`
 * in src/text/sentences.ts): a segmenter let go of is reset and handed to the next taker with
 * the same options. The invariants: a reset segmenter cuts every text exactly as a new one
 * (whatever it was fed before: a waiting stop, a tag cut in half, a list marker, a quote),
 * and the spare is never handed to a taker of other options.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createSentenceSegmenter, releaseSentenceSegmenter, takeSentenceSegmenter, type SentenceSegmenter } from '../../src/text/sentences.js';
import { cut } from '../fixtures/cut.js';

/** Pieces that leave state behind: a waiting stop, a tag or quote cut open, list markers, line breaks, scripts. */
const FRAGMENTS = [
  'Hello', ' world', '.', ' ', '\n', '\n\n', 'Dr.', ' Smith', 'U.S.', ' Then', '1)', ' one', ' 2)', ' two', 'a.', ' b.', '"', '«', '(',
  '<break time="1s"/>', '<brea', 'k/>', '<', '3.5', '...', '!', '?', '。', '你好', 'Привет!', ' т.е.', 'am 3.', ' Oktober', '- item', '=====', 'Home\n',
];
const text = (max: number): fc.Arbitrary<string> => fc.array(fc.constantFrom(...FRAGMENTS), { minLength: 1, maxLength: max }).map((a) => a.join(''));
const LOCALES = ['en-us', 'de-de', 'ja-jp', 'ru-ru', undefined] as const;

/** Everything a segmenter says for `tokens`: each feed's pieces, then a probe of its state, then end()'s. */
function transcript(segmenter: SentenceSegmenter, tokens: string[]): unknown[] {
  const out: unknown[] = [];
  for (const token of tokens) out.push(segmenter.feed(token), segmenter.undecidedFrom(), segmenter.atBoundary());
  out.push(segmenter.pending(), segmenter.end());
  return out;
}

const options = (locale: string | undefined): { locale?: string } => (locale === undefined ? {} : { locale });

describe('the spare sentence segmenter', () => {
  it('property: a segmenter let go of mid-text and taken again cuts the next text as a new one', () => {
    fc.assert(
      fc.property(text(12), fc.array(fc.nat(), { maxLength: 6 }), text(20), fc.array(fc.nat(), { maxLength: 8 }), fc.constantFrom(...LOCALES), (before, beforeCuts, after, afterCuts, locale) => {
        const used = takeSentenceSegmenter(options(locale));
        for (const token of cut(before, beforeCuts)) used.feed(token); // left in any state: nothing ended
        releaseSentenceSegmenter(used);
        const again = takeSentenceSegmenter(options(locale));
        expect(again).toBe(used); // the spare, not a new one
        const tokens = cut(after, afterCuts);
        expect(transcript(again, tokens)).toEqual(transcript(createSentenceSegmenter(options(locale)), tokens));
        releaseSentenceSegmenter(again);
      }),
      { numRuns: 1500 },
    );
  });

  it('control: without the reset, a segmenter fed before cuts the next text differently (the property above would see it)', () => {
    const used = createSentenceSegmenter({ locale: 'en-us' });
    used.feed('See Dr.');
    expect(transcript(used, [' Smith. He left.'])).not.toEqual(transcript(createSentenceSegmenter({ locale: 'en-us' }), [' Smith. He left.']));
  });

  it('is taken only with the same options: the locale\'s rules and maxBufferSize', () => {
    const en = takeSentenceSegmenter({ locale: 'en-us' });
    releaseSentenceSegmenter(en);
    expect(takeSentenceSegmenter({ locale: 'de-de' })).not.toBe(en);
    expect(takeSentenceSegmenter({ locale: 'en-us', maxBufferSize: 64 })).not.toBe(en);
    expect(takeSentenceSegmenter({ locale: 'en-US' })).toBe(en); // the same rules: a locale's case does not matter
    // a spare of other options is replaced by the next one let go of, and handed once only
    const small = takeSentenceSegmenter({ maxBufferSize: 64 });
    releaseSentenceSegmenter(small);
    const taken = takeSentenceSegmenter({ maxBufferSize: 64 });
    expect(taken).toBe(small);
    expect(takeSentenceSegmenter({ maxBufferSize: 64 })).not.toBe(small);
    // its bound holds after the reset: a run of 70 code units without a space is force-cut as by a new one
    releaseSentenceSegmenter(taken);
    const cutByNew = createSentenceSegmenter({ maxBufferSize: 64 }).feed('x'.repeat(70));
    expect(cutByNew).toHaveLength(1);
    expect(takeSentenceSegmenter({ maxBufferSize: 64 }).feed('x'.repeat(70))).toEqual(cutByNew);
  });

  it('keeps the last two let go of (a token stream\'s gate and ledger let go of theirs together), the last first', () => {
    const [gate, model, third] = [takeSentenceSegmenter({ locale: 'fr-fr' }), takeSentenceSegmenter({ locale: 'fr-fr' }), takeSentenceSegmenter({ locale: 'fr-fr' })];
    expect(new Set([gate, model, third]).size).toBe(3);
    releaseSentenceSegmenter(third);
    releaseSentenceSegmenter(gate);
    releaseSentenceSegmenter(model); // three let go of: the oldest (`third`) is not kept
    expect(takeSentenceSegmenter({ locale: 'fr-fr' })).toBe(model);
    expect(takeSentenceSegmenter({ locale: 'fr-fr' })).toBe(gate);
    const next = takeSentenceSegmenter({ locale: 'fr-fr' });
    expect([gate, model, third]).not.toContain(next); // control: none left, a new one
  });

  it('options are checked when taken, spare or not', () => {
    expect(() => takeSentenceSegmenter({ maxBufferSize: 3 })).toThrow(/maxBufferSize/);
    releaseSentenceSegmenter(createSentenceSegmenter());
    expect(() => takeSentenceSegmenter({ maxBufferSize: 3 })).toThrow(/maxBufferSize/);
  });

  it('a segmenter it did not make is never kept', () => {
    const foreign: SentenceSegmenter = { feed: () => [], end: () => [], pending: () => '', flushAt: () => [], atBoundary: () => true, undecidedFrom: () => -1 };
    releaseSentenceSegmenter(foreign);
    expect(takeSentenceSegmenter()).not.toBe(foreign);
  });
});
