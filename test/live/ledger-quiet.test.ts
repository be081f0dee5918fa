/**
 * The ledger gives its model of the service's segmenter the quiet chunks (letters, marks,
 * digits and spaces) late: a chunk sent while the model holds no undecided stop waits, and
 * goes to the model with the next chunk that is not quiet, or before a segment is matched
 * (`SpeechLedger.push`, `catchUp`). That is only right if the model then finds the sentence
 * ends the service finds, the service giving its segmenter every chunk as it comes and
 * applying the chunk-end rule after each (contract rule 1, as the emulator does).
 *
 * Here random text is sent in word tokens and in random cuts, and the ledger's sentence ends
 * are compared with that reference. A control shows the inputs reach the case the rule's
 * condition is for: deferring a quiet chunk after an undecided stop (`the U.S.` then ` Th`)
 * does change where sentences end, so a ledger that did would be caught.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SpeechLedger } from '../../src/live/ledger.js';
import { sentenceEndingChunk } from '../../src/text/chunkEnd.js';
import { isQuietText } from '../../src/text/sentence-marks.js';
import { createSentenceSegmenter } from '../../src/text/sentences.js';
import { cut } from '../fixtures/cut.js';

const FRAGMENTS = [
  'Hello', ' world', '.', ' ', '  ', 'Dr', '. ', ' Smith', '?', '!', '"', '3.5', 'U.S.', ' Then', ' Th', 'en', ' Government', '...',
  '。', '你好', '\n', 'e.g.', ' and', 'p.m.', ' 5', '1.', ' a)', '<break time="1s"/>', 'Hi! ', '(', ')', 'am 3.', ' Oktober',
  ' Danach', 'z.B.', ' नमस्ते', '।', 'J.', ' K', ' Rowling', ' number 3! ', 'Word', ' i', 'ii', ' 42', '  ',
];
const LOCALES = ['en-us', 'de-de', 'hi-in', 'ja-jp', undefined] as const;

/** A text said as word tokens: split before each run of spaces. */
const wordTokens = (text: string): string[] => text.match(/\s*\S+|\s+$/g) ?? [];

/**
 * The service's sentence ends: a segmenter given every chunk as it comes, the chunk-end rule
 * after each, the offsets where a piece with words ends. With `deferAllQuiet` (the control),
 * quiet chunks wait for the next other one whatever the model holds.
 */
function serviceEnds(chunks: readonly string[], locale: string | undefined, deferAllQuiet = false): number[] {
  const model = createSentenceSegmenter(locale === undefined ? {} : { locale });
  const ends: number[] = [];
  let cursor = 0;
  const add = (pieces: readonly string[]): void => {
    for (const piece of pieces) {
      cursor += piece.length;
      if (piece.trim() !== '') ends.push(cursor);
    }
  };
  let waiting = '';
  for (const chunk of chunks) {
    if (chunk.length === 0) continue;
    if (deferAllQuiet && isQuietText(chunk)) {
      waiting += chunk;
      continue;
    }
    add(model.feed(waiting + chunk));
    waiting = '';
    add(sentenceEndingChunk(model));
  }
  add(model.feed(waiting));
  return ends;
}

/** The ledger's sentence ends after `chunks`, its quiet chunks given to the model (as before a segment is matched). */
function ledgerEnds(chunks: readonly string[], locale: string | undefined): { ends: number[]; waited: number } {
  const ledger = new SpeechLedger(locale === undefined ? {} : { locale });
  const inside = ledger as unknown as { unmodelled: number; catchUp(): void; sentenceEnds: { items: number[]; head: number } };
  let waited = 0;
  for (const chunk of chunks) {
    ledger.push(chunk);
    if (inside.unmodelled > 0) waited++;
  }
  inside.catchUp();
  return { ends: inside.sentenceEnds.items.slice(inside.sentenceEnds.head), waited };
}

describe('the ledger gives its model quiet chunks late', () => {
  it('property: word tokens and random cuts, the same sentence ends as a service given every chunk', () => {
    let waited = 0;
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...FRAGMENTS), { maxLength: 30 }).map((a) => a.join('')),
        fc.array(fc.nat(), { maxLength: 12 }),
        fc.boolean(),
        fc.constantFrom(...LOCALES),
        (text, at, asWords, locale) => {
          const chunks = asWords ? wordTokens(text) : cut(text, at);
          const reference = serviceEnds(chunks, locale);
          const ledger = ledgerEnds(chunks, locale);
          waited += ledger.waited;
          expect(ledger.ends).toEqual(reference);
        },
      ),
      { numRuns: 2000 },
    );
    expect(waited).toBeGreaterThan(1000); // chunks did wait (often)
    // control: waiting after an undecided stop changes the ends (a case of these fragments that
    // the random draws reach in most runs, not all: here it is fixed), and the ledger does not wait there
    for (const chunks of [['U', '.S.? i', '你好'], ['?z', '.', 'B', '.']]) {
      expect(serviceEnds(chunks, 'en-us', true)).not.toEqual(serviceEnds(chunks, 'en-us'));
      expect(ledgerEnds(chunks, 'en-us').ends).toEqual(serviceEnds(chunks, 'en-us'));
    }
  });

  it('a sentence said word by word: the model is given its words at the sentence end, once', () => {
    const ledger = new SpeechLedger({ locale: 'en-us' });
    const inside = ledger as unknown as { unmodelled: number; model: unknown };
    for (const token of ['Hotel', ' kilo', ' bravo', ' number', ' 0']) ledger.push(token);
    expect(inside.unmodelled).toBe('Hotel kilo bravo number 0'.length);
    expect(inside.model).toBeUndefined(); // no segmenter held through the sentence
    ledger.push('! ');
    expect(inside.unmodelled).toBe(0);
    expect(ledger.segmentStarted(0, 'Hotel kilo bravo number 0!')).toEqual({ sent: 'Hotel kilo bravo number 0!', matches: true });
  });

  it('after an undecided stop a quiet chunk goes to the model at once (control of the condition)', () => {
    const ledger = new SpeechLedger({ locale: 'en-us' });
    const inside = ledger as unknown as { unmodelled: number };
    ledger.push('See Dr.'); // `Dr.` never ends a sentence at a chunk's end: undecided
    ledger.push(' Smith');
    expect(inside.unmodelled).toBe(0);
    ledger.push(' said');
    expect(inside.unmodelled).toBe(' said'.length); // the stop was decided by ` Smith`: ` said` waits
  });

  it('a segment started before the quiet chunks were given: matched after giving them', () => {
    const ledger = new SpeechLedger({ locale: 'en-us' });
    for (const token of ['One', ' two', ' three']) ledger.push(token);
    // the service flushed the words at idle_timeout: the segment covers them
    expect(ledger.segmentStarted(0, 'One two three')).toEqual({ sent: 'One two three', matches: true });
    ledger.segmentDelivered(0);
    ledger.push(' four');
    ledger.push('.');
    expect(ledger.segmentStarted(1, 'four.')).toEqual({ sent: ' four.', matches: true });
    ledger.segmentDelivered(1);
    expect(ledger.unspoken()).toBe('');
  });

  it('a flush inside the words not given yet: the model is made anew from there, each word given once', () => {
    const ledger = new SpeechLedger({ locale: 'en-us' });
    for (const token of ['One', ' two', ' three']) ledger.push(token);
    // idle_timeout after ` two`: the service flushed `One two`, then received ` three`
    expect(ledger.segmentStarted(0, 'One two')).toEqual({ sent: 'One two', matches: true });
    ledger.segmentDelivered(0);
    ledger.push('.');
    expect(ledger.segmentStarted(1, 'three.')).toEqual({ sent: ' three.', matches: true });
    ledger.segmentDelivered(1);
    ledger.push(' Four.');
    expect(ledger.segmentStarted(2, 'Four.')).toEqual({ sent: ' Four.', matches: true });
    expect(ledger.mismatches).toBe(0);
  });

  it('a reconnect while words wait: they are re-sent once, and modelled once', () => {
    const ledger = new SpeechLedger({ locale: 'en-us' });
    for (const token of ['One', ' two']) ledger.push(token);
    expect(ledger.resend()).toBe('One two');
    ledger.push('.');
    expect(ledger.segmentStarted(0, 'One two.')).toEqual({ sent: 'One two.', matches: true });
    ledger.segmentDelivered(0);
    expect(ledger.unspoken()).toBe('');
    expect(ledger.mismatches).toBe(0);
  });
});
