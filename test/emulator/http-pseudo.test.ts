/**
 * Pseudo-localization (the emulator's translation) and the SSE encoder used by
 * `/translation/stream`.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { accentLetters, pseudoLocalize } from '../../src/emulator/pseudo.js';
import { translationPieces } from '../../src/emulator/http-stream.js';
import { encodeSseEvent } from '../../src/text/sse-encode.js';
import { createSentenceSegmenter } from '../../src/text/sentences.js';

function sentences(text: string, locale: string): string[] {
  const s = createSentenceSegmenter({ locale });
  return [...s.feed(text), ...s.end()];
}

describe('pseudoLocalize', () => {
  it('tags the language, accents letters, keeps the rest', () => {
    expect(pseudoLocalize('Hello, world.', 'fr-fr')).toBe('[fr-fr] Ĥéĺĺö, ŵöŕĺď.');
    expect(pseudoLocalize('Hi', '3')).toBe('[fr-fr] Ĥí');
    expect(pseudoLocalize('', 'de-de')).toBe('');
    expect(accentLetters('Hi {name}, you have %d <b>new</b> items: 42!')).toBe('Ĥí {name}, ýöü ĥáṽé %d <b>ñéŵ</b> íŧéɱš: 42!');
  });

  it('is deterministic and keeps whitespace, punctuation, digits and the sentence count', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (text) => {
        const out = accentLetters(text);
        expect(accentLetters(text)).toBe(out);
        expect([...out].length).toBe([...text].length);
        const keep = (s: string) => [...s].filter((c) => !/[A-Za-z]/.test(c) && !/[^\x00-\x7f]/.test(c)).join('');
        expect(keep(out)).toBe(keep(text));
      }),
    );
    const text = 'First one. Second one! Third one? Fourth';
    expect(sentences(pseudoLocalize(text, 'de-de'), 'de-de')).toHaveLength(sentences(text, 'en-us').length);
  });
});

describe('translationPieces', () => {
  it('splits into words with their following whitespace, losing nothing', () => {
    expect(translationPieces('  Hello there,\nfriend. ')).toEqual(['  ', 'Hello ', 'there,\n', 'friend. ']);
    fc.assert(fc.property(fc.string(), (text) => translationPieces(text).join('') === text));
  });
});

describe('encodeSseEvent', () => {
  it('round-trips through an SSE parser, multi-line data included', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            event: fc.option(fc.stringMatching(/^[a-z]{1,8}$/), { nil: undefined }),
            data: fc.string({ maxLength: 40 }),
          }),
          { maxLength: 8 },
        ),
        (events) => {
          const got: EventSourceMessage[] = [];
          const parser = createParser({ onEvent: (e) => got.push(e) });
          parser.feed(events.map((e) => encodeSseEvent(e.event === undefined ? { data: e.data } : { event: e.event, data: e.data })).join(''));
          expect(got.map((e) => ({ event: e.event, data: e.data }))).toEqual(
            events.map((e) => ({ event: e.event, data: e.data.replace(/\r\n|\r/g, '\n') })),
          );
        },
      ),
    );
    expect(encodeSseEvent({ event: 'error', data: 'a\nb', id: '7' })).toBe('event: error\nid: 7\ndata: a\ndata: b\n\n');
  });
});
