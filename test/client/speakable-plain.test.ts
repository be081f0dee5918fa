/**
 * The plain-prose fast path of `speakableString` (`isPlainProse`): a text it accepts must
 * be exactly what the speakable engine makes of it. Random texts from an alphabet of
 * letters, stops, spacing, the engine's own syntax and word triggers (hosts, abbreviations,
 * markup, emoji, their companions, astral letters, controls), under several languages and
 * options; every accepted text is compared with the engine's output. Controls: texts one
 * step outside the set (a leading space, a host, an emoji companion, an emoji letter) are
 * rejected and are indeed changed by the engine, and options that rewrite words turn the
 * fast path off.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isPlainProse, speakableString } from '../../src/client/speakable.js';
import { createSpeakableText, speakableTextOptions, type SpeakableTextOptions } from '../../src/text/speakable.js';

/** What the engine itself makes of `text` (no fast path). */
function engine(text: string, options: SpeakableTextOptions): string {
  const core = createSpeakableText(options);
  let out = '';
  for (const p of [...core.feed(text), ...core.end()]) if (p.hidden === undefined) out += p.text;
  return out;
}

const LETTERS = [...'abcdefghijklmnopqrstuvwxyzAIXZéñßçøıİ', 'e\u0301', 'ж', 'Ω', 'ع', '中', 'ǀ', 'ﬁ'];
const STOPS = [' ', ',', '.', ';', ':', '?', '!', "'", '"', '\u2019', '\u201c', '\u201d', '-', '\n', '. ', ': ', '\n\n', '...', '  '];
const TRIGGERS = ['www', 'com', 'http', 'e.g', 'Mr.', 'Dr', 'co.uk', 'example.com', 'txt', '/', '@', '#', '*', '_', '`', '[', ']', '(', ')', '<', '>', '|', '~', '\\', '+', '&', '=', '%', '$', '€', '1', '2.', '3)'];
const ODD = ['\uFE0F', '\uFE0E', '\u20E3', '\u200D', '\u2139', '\u2122', '\u{1F600}', '\u{1D400}', '\u{1F3FB}', '\u0007', '\u00A0', '\t', '\r', '\uD800', '\u0345'];

const piece = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(...LETTERS) },
  { weight: 4, arbitrary: fc.constantFrom(...STOPS) },
  { weight: 1, arbitrary: fc.constantFrom(...TRIGGERS) },
  { weight: 1, arbitrary: fc.constantFrom(...ODD) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 2 }) },
);
const text = fc.array(piece, { maxLength: 40 }).map((pieces) => pieces.join(''));
const options = fc.record(
  {
    language: fc.constantFrom('en-us', 'de-de', 'fr-fr', 'es-es', 'ja-jp'),
    links: fc.constantFrom('host' as const, 'drop' as const, 'verbatim' as const),
    addresses: fc.constantFrom('readable' as const, 'verbatim' as const),
    thoughts: fc.constantFrom('drop' as const, 'speak' as const),
    markup: fc.constantFrom('strip' as const, 'keep' as const),
    codeBlocks: fc.constantFrom('skip' as const, 'speak' as const),
  },
  { requiredKeys: ['language'] },
);

describe('speakableString: the plain-prose fast path', () => {
  it('every text it accepts is what the engine gives back (random texts and options)', () => {
    let accepted = 0;
    let rejected = 0;
    fc.assert(
      fc.property(text, options, (t, o) => {
        if (!isPlainProse(t, speakableTextOptions(o))) {
          rejected += 1;
          return;
        }
        accepted += 1;
        expect(engine(t, o)).toBe(t);
      }),
      { numRuns: 6000 },
    );
    // both sides were exercised
    expect(accepted).toBeGreaterThan(500);
    expect(rejected).toBeGreaterThan(500);
  });

  it('controls: one step outside the set is rejected, and the engine does change it', () => {
    const o = speakableTextOptions({ language: 'en-us' });
    for (const t of [' Hello there.', 'Go to https://example.com/a now.', 'Nice\uFE0F work.', 'Info \u2139 here.', 'Hi\n there.', 'a **b** c', '1. Call now']) {
      expect(isPlainProse(t, o), t).toBe(false);
      expect(engine(t, { language: 'en-us' }), t).not.toBe(t);
    }
    expect(isPlainProse('Sure, I can help with that. Your train leaves at noon from platform four.', o)).toBe(true);
  });

  it('options that rewrite words turn it off: a lexicon, spokenForm, a text starting inside a thought', async () => {
    const prose = 'Sure, the train leaves at noon.';
    expect(isPlainProse(prose, speakableTextOptions({}))).toBe(true);
    const lexicon = [{ words: { noon: 'twelve o clock' } }];
    expect(isPlainProse(prose, speakableTextOptions({ lexicon }))).toBe(false);
    expect(await speakableString(prose, { lexicon })).toBe(engine(prose, { lexicon }));
    expect(await speakableString(prose, { lexicon })).not.toBe(prose);
    expect(isPlainProse(prose, speakableTextOptions({ thoughts: 'drop-open' }))).toBe(false);
    expect(await speakableString(prose, { thoughts: 'drop-open' })).toBe('');
    expect(isPlainProse(prose, speakableTextOptions({ spokenForm: true, language: 'en-us' }))).toBe(false);
  });
});
