/**
 * The speech ledger drops its model of the service's segmenter between sentences (a waiting
 * session keeps none) and, at the next chunk, builds a new one fed the spaces the old one
 * held. That is only right if a new segmenter fed those spaces is the same segmenter: here
 * the pieces of a model kept for the whole text and of one replaced whenever the ledger
 * would replace it are compared, chunk by chunk, on random text and chunkings (tags, line
 * breaks, quotes, abbreviations, lists, several languages).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sentenceEndingChunk } from '../../src/text/chunkEnd.js';
import { createSentenceSegmenter, type SentenceSegmenter } from '../../src/text/sentences.js';
import { SpeechLedger } from '../../src/live/ledger.js';
import { cut } from '../fixtures/cut.js';

const SPACES = /^[ \t]*$/;
const FRAGMENTS = ['Hello', ' world', '.', ' ', '  ', '\t', 'Dr', '. ', 'Smith', '?', '!', '"', '3.5', 'U.S.', ' Then', '...', '。', '你好', '\n', '\n\n', 'e.g.', ' and', 'p.m.', '1.', ' a)', '<break time="1s"/>', '<', 'Hi! ', '(', ')', '¿Qué?', ' él.'];

/** The model's pieces for each chunk, as the ledger feeds it (the chunk, then the sentence it ends with), then at the end. */
function piecesByChunk(chunks: string[], locale: string | undefined, replace: boolean): { pieces: string[][]; replaced: number } {
  const make = (): SentenceSegmenter => createSentenceSegmenter(locale === undefined ? {} : { locale });
  let model = make();
  let replaced = 0;
  const pieces: string[][] = [];
  for (const chunk of chunks) {
    const ending: string[] = [];
    const out = [...model.feed(chunk), ...(ending.push(...sentenceEndingChunk(model)), ending)];
    pieces.push(out);
    const rest = model.pending();
    if (replace && ending.length > 0 && SPACES.test(rest)) {
      model = make();
      expect(model.feed(rest)).toEqual([]); // spaces alone cut nothing
      replaced++;
    }
  }
  pieces.push(model.end()); // and what the text's end cuts
  return { pieces, replaced };
}

describe('the ledger model dropped between sentences', () => {
  it('property: a new segmenter fed the spaces the old one held cuts the rest of the text as the old one would', () => {
    let replacedAtAll = 0;
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...FRAGMENTS), { maxLength: 40 }).map((a) => a.join('')),
        fc.array(fc.nat(), { maxLength: 12 }),
        fc.constantFrom(undefined, 'en-us', 'de-de', 'es-es', 'ja-jp'),
        (text, at, locale) => {
          const chunks = cut(text, at);
          const kept = piecesByChunk(chunks, locale, false);
          const replaced = piecesByChunk(chunks, locale, true);
          replacedAtAll += replaced.replaced;
          expect(replaced.pieces).toEqual(kept.pieces);
        },
      ),
      { numRuns: 1500 },
    );
    expect(replacedAtAll).toBeGreaterThan(100); // control: the replacement happened (often)
  });

  it('a session between sentences: the ledger holds no segmenter, and the next sentence is modelled as before', () => {
    const ledger = new SpeechLedger({ locale: 'en-us' });
    ledger.push('Hello there. ');
    ledger.segmentStarted(0, 'Hello there.');
    ledger.segmentDelivered(0);
    expect((ledger as unknown as { model: unknown }).model).toBeUndefined();
    ledger.push('See Dr.');
    expect((ledger as unknown as { model: unknown }).model).toBeDefined(); // control: held while "Dr." is undecided
    ledger.push(' Smith. Bye.');
    ledger.segmentStarted(1, 'See Dr. Smith.');
    ledger.segmentDelivered(1);
    expect(ledger.unspoken()).toBe('Bye.');
    ledger.segmentStarted(2, 'Bye.');
    ledger.segmentDelivered(2);
    expect(ledger.unspoken()).toBe('');
    expect(ledger.mismatches).toBe(0);
  });
});
