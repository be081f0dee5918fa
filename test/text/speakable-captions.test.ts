/**
 * CaptionMap (issue 31): spoken runs map back to the text as written, for any split of the
 * tokens; a rewrite maps each of its spoken words to the whole original; dropped text maps to
 * nothing; `forget` frees what is behind without changing later answers.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { cut } from '../fixtures/cut.js';
import { createSpeakableText, loadNumberWords, type SpeakableTextOptions } from '../../src/operators/index.js';
import { CaptionMap } from '../../src/text/speakable-captions.js';

const numberWords = await loadNumberWords('en-us');
const options: SpeakableTextOptions = { lexicon: { words: { SQL: 'sequel' } }, spokenForm: true, numberWords };
const TEXT = '<think>SQL?</think>Use **SQL** and [docs](https://x.y/z). See https://example.com/a?b=1 now, pay $3.50.\n- last item\n';

function mapOf(tokens: readonly string[]): CaptionMap {
  const core = createSpeakableText(options);
  const map = new CaptionMap();
  for (const t of tokens) map.add(t, core.feed(t));
  map.add('', core.end());
  return map;
}
/** Each spoken word (whitespace-separated) and the source it maps to, in order. */
function words(map: CaptionMap, spoken: readonly string[]): Array<[string, string]> {
  let at = 0;
  return spoken.map((w) => {
    const span = map.locate(w, at)!;
    at = span[1];
    return [w, map.sourceOf(span[0], span[1])];
  });
}
const SPOKEN = 'Use sequel and docs. See example.com now, pay three dollars and fifty cents. last item'.split(' ');
const EXPECTED: Array<[string, string]> = [
  ['Use', 'Use'], ['sequel', 'SQL'], ['and', 'and'], ['docs.', 'docs.'], ['See', 'See'],
  ['example.com', 'https://example.com/a?b=1'], ['now,', 'now,'], ['pay', 'pay'],
  ['three', '$3.50'], ['dollars', '$3.50'], ['and', '$3.50'], ['fifty', '$3.50'], ['cents.', '$3.50.'],
  ['last', 'last'], ['item', 'item'],
];

describe('CaptionMap', () => {
  it('maps every spoken word to the words as written, for any split of the tokens', () => {
    expect(words(mapOf([TEXT]), SPOKEN)).toEqual(EXPECTED);
    expect(words(mapOf([...TEXT]), SPOKEN)).toEqual(EXPECTED);
    fc.assert(fc.property(fc.array(fc.nat(), { maxLength: 12 }), (at) => {
      expect(words(mapOf(cut(TEXT, at)), SPOKEN)).toEqual(EXPECTED);
    }), { numRuns: 200 });
  });

  it('a run gives its source with markup, link addresses and thoughts left out', () => {
    const map = mapOf([TEXT]);
    const span = map.locate('Use sequel and docs.', 0)!;
    expect(map.sourceOf(...span)).toBe('Use SQL and docs.');
  });

  it('control: reading spoken offsets as source offsets (no map) gives wrong words', () => {
    const map = mapOf([TEXT]);
    const span = map.locate('three dollars', 0)!;
    expect(TEXT.slice(span[0], span[1])).not.toBe('$3.50'); // the offsets differ: the map is needed
    expect(map.sourceOf(...span)).toBe('$3.50');
  });

  it('finds segments without regard to whitespace and case; a reworded one is not found', () => {
    const map = mapOf([TEXT]);
    expect(map.locate('  USE   sequel and docs.', 0)).toEqual(map.locate('Use sequel and docs.', 0));
    expect(map.locate('Doctor sequel', 0)).toBeUndefined();
  });

  it('forget frees what is behind; later answers are the same', () => {
    const map = mapOf([TEXT]);
    const span = map.locate('See example.com now,', 0)!;
    const before = map.sourceOf(...span);
    map.forget(span[0]);
    expect(map.sourceOf(...span)).toBe(before);
    expect(map.locate('Use', 0)).toBeUndefined(); // gone: it was before the offset
    const rest = map.locate('pay three', span[1])!;
    expect(map.sourceOf(...rest)).toBe('pay $3.50');
  });
});
