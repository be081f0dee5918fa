import { describe, expect, it } from 'vitest';
import { cut } from '../fixtures/cut.js';
import fc from 'fast-check';
import { createBoundaryGate } from '../../src/text/boundaryGate.js';
import { createSentenceSegmenter } from '../../src/text/sentences.js';
import { SENTENCE_CASES } from './sentenceCases.js';

const STOP_AT_END = /[.!?;:…。！？｡．।॥؟։።፧။"'”’»)\]」』》]$/u;

/** Offsets just after each sentence of the whole text (trailing whitespace excluded). */
function sentenceEnds(text: string, locale?: string): Set<number> {
  const s = createSentenceSegmenter(locale ? { locale } : {});
  const ends = new Set<number>();
  let at = 0;
  for (const piece of [...s.feed(text), ...s.end()]) {
    at += piece.length;
    ends.add(at - (piece.length - piece.trimEnd().length));
  }
  return ends;
}


describe('boundary gate', () => {
  it('holds a stop whose sentence end is undecided, releases words at once', () => {
    const g = createBoundaryGate();
    expect(g.feed('I work for the U.S.')).toEqual(['I work for the U.S']);
    expect(g.held()).toBe('.');
    expect(g.feed(' Gov')).toEqual([]); // after "U.S." the next word decides: it is not complete
    // a completed sentence goes out as its own chunk, ending at its boundary
    expect(g.feed('ernment. The')).toEqual(['. Government.', ' The']);
    expect(g.feed(' train leaves at 6 p.m.')).toEqual([' train leaves at 6 p.m']);
    expect(g.feed(' tomorrow')).toEqual(['. tomorrow']);
    expect(g.end()).toEqual([]);
  });

  it('releases everything on flush (idle) and at the end', () => {
    const g = createBoundaryGate();
    expect(g.feed('See docs.')).toEqual(['See docs']);
    expect(g.flush()).toEqual(['.']);
    expect(g.flush()).toEqual([]);
    expect(g.feed(' example.com/start for setup.')).toEqual([' example.com/start for setup']);
    expect(g.end()).toEqual(['.']);
  });

  it('never lets a chunk end just after a stop that is no sentence end; lossless; table cases', () => {
    for (const c of SENTENCE_CASES) {
      const text = c.pieces.join('');
      for (const size of [1, 2, 3, 5, 8]) {
        const g = createBoundaryGate({ locale: c.locale });
        const ends = sentenceEnds(text, c.locale);
        let sent = '';
        for (let i = 0; i < text.length; i += size) {
          for (const chunk of g.feed(text.slice(i, i + size))) {
            expect(chunk.length).toBeGreaterThan(0);
            sent += chunk;
            if (STOP_AT_END.test(chunk)) expect(ends.has(sent.length), `${JSON.stringify(text)} at ${sent.length}`).toBe(true);
          }
        }
        sent += g.end().join('');
        expect(sent).toBe(text);
      }
    }
  });

  it('property: lossless with flushes interleaved, and no chunk ends at an undecided stop', () => {
    const fragments = ['Hello', ' world', '.', ' ', 'Dr', '. ', 'Smith', '?', '!', '"', '3.5', 'U.S.', ' Then', '...', '。', '你好', '\n\n', 'e.g.', ' and', 'p.m.'];
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...fragments), { maxLength: 30 }).map((a) => a.join('')),
        fc.array(fc.nat(), { maxLength: 10 }),
        fc.array(fc.boolean(), { maxLength: 10 }),
        (text, at, flushes) => {
          const g = createBoundaryGate();
          const ends = sentenceEnds(text);
          let sent = '';
          let flushed = false;
          cut(text, at).forEach((token, k) => {
            for (const chunk of g.feed(token)) {
              sent += chunk;
              if (!flushed && STOP_AT_END.test(chunk)) expect(ends.has(sent.length)).toBe(true);
            }
            if (flushes[k]) {
              const out = g.flush();
              if (out.length > 0) flushed = true; // a flush may end anywhere: time decided it
              sent += out.join('');
            }
            expect(sent + g.held()).toBe(text.slice(0, sent.length + g.held().length));
          });
          sent += g.end().join('');
          expect(sent).toBe(text);
        },
      ),
      { numRuns: 800 },
    );
  });
});
