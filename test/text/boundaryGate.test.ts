import { describe, expect, it } from 'vitest';
import { cut } from '../fixtures/cut.js';
import fc from 'fast-check';
import { createBoundaryGate, type BoundaryGate } from '../../src/text/boundaryGate.js';
import { createSentenceSegmenter } from '../../src/text/sentences.js';
import { SENTENCE_CASES } from './sentenceCases.js';

/** An idle flush of `gate`: the chunk it releases (zero or one). */
function flush(gate: BoundaryGate): string[] {
  const released = gate.flushWhole();
  return released === undefined ? [] : [released.text];
}

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



/** A gate's random run: a text of tricky fragments, where it is cut into tokens, and where idle flushes come. */
const GATE_FRAGMENTS = ['Hello', ' world', '.', ' ', 'Dr', '. ', 'Smith', '?', '!', '"', '3.5', 'U.S.', ' Then', '...', '。', '你好', '\n\n', 'e.g.', ' and', 'p.m.'];
const gateRun = [
  fc.array(fc.constantFrom(...GATE_FRAGMENTS), { maxLength: 30 }).map((a) => a.join('')),
  fc.array(fc.nat(), { maxLength: 10 }),
  fc.array(fc.boolean(), { maxLength: 10 }),
] as const;

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

  it('a stop at the very start of the text waits like any other, with the spaces after it', () => {
    const g = createBoundaryGate();
    expect(g.feed('...')).toEqual([]);
    expect(g.feed(' ')).toEqual([]); // the spaces decide nothing: "... " is still undecided
    expect(g.held()).toBe('... ');
    expect(g.feed('and so on')).toEqual(['... and so on']); // no sentence end: it goes out with what decided it
    expect(g.end()).toEqual([]);
  });

  it('releases everything on flush (idle) and at the end', () => {
    const g = createBoundaryGate();
    expect(g.feed('See docs.')).toEqual(['See docs']);
    expect(flush(g)).toEqual(['.']);
    expect(flush(g)).toEqual([]);
    expect(g.feed(' example.com/start for setup.')).toEqual([' example.com/start for setup']);
    expect(g.end()).toEqual(['.']);
  });

  it('never lets a chunk end just after a stop that is no sentence end; lossless; table cases (with and without holdWords)', () => {
    for (const c of SENTENCE_CASES) {
      const text = c.pieces.join('');
      for (const [size, holdWords] of [1, 2, 3, 5, 8].flatMap((n) => [[n, false], [n, true]] as const)) {
        const g = createBoundaryGate({ locale: c.locale, holdWords });
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
    fc.assert(
      fc.property(
        ...gateRun,
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
              const out = flush(g);
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

  it('holdWords: the words before a held stop wait with it, so a sentence end is one chunk', () => {
    const g = createBoundaryGate({ holdWords: true });
    expect(g.feed('I work for the U.S.')).toEqual([]); // control: without holdWords, ['I work for the U.S'] (above)
    expect(g.held()).toBe('I work for the U.S.');
    expect(g.feed(' Gov')).toEqual([]);
    expect(g.feed('ernment. The')).toEqual(['I work for the U.S. Government.', ' The']); // words with no stop after them: at once
    expect(g.feed(' train leaves')).toEqual([' train leaves']);
    expect(g.feed(' at 6 p.m.')).toEqual([]);
    expect(g.feed(' tomorrow')).toEqual([' at 6 p.m. tomorrow']);
    expect(g.feed('. Bye.')).toEqual(['.']);
    expect(flush(g)).toEqual([' Bye.']); // an idle flush releases the held sentence whole
    expect(g.end()).toEqual([]);
  });

  it('property (holdWords): lossless, no chunk ends at an undecided stop, and while text is held the last chunk ends a sentence', () => {
    fc.assert(
      fc.property(
        ...gateRun,
        (text, at, flushes) => {
          const g = createBoundaryGate({ holdWords: true });
          const plain = createBoundaryGate();
          const ends = sentenceEnds(text);
          let sent = '';
          let chunks = 0;
          let plainChunks = 0;
          let flushed = false;
          cut(text, at).forEach((token, k) => {
            const out = g.feed(token);
            plainChunks += plain.feed(token).length;
            for (const chunk of out) {
              sent += chunk;
              chunks++;
              if (!flushed && STOP_AT_END.test(chunk)) expect(ends.has(sent.length)).toBe(true);
            }
            // held words never trail a chunk: what went out last ends a sentence (or nothing is held)
            if (!flushed && out.length > 0 && g.held() !== '') expect(ends.has(sent.length), `${JSON.stringify(text)} at ${sent.length}`).toBe(true);
            if (flushes[k]) {
              const released = flush(g);
              plainChunks += flush(plain).length;
              if (released.length > 0) flushed = true;
              chunks += released.length;
              sent += released.join('');
            }
            expect(sent + g.held()).toBe(text.slice(0, sent.length + g.held().length));
          });
          sent += g.end().join('');
          expect(sent).toBe(text);
          // never more chunks than the gate without holdWords
          if (!flushed) expect(chunks).toBeLessThanOrEqual(plainChunks + plain.end().length);
        },
      ),
      { numRuns: 800 },
    );
  });
  it('an idle flush that releases held text starts the gate afresh: what follows is cut as by a new gate', () => {
    const fragments = ['Hello', ' world', '.', ' ', 'Dr', '. ', 'Smith', '?', '!', '"', '3.5', 'U.S.', ' Then', '...', 'e.g.', ' and', 'p.m.', ' he'];
    let flushedHeld = 0;
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...fragments), { minLength: 1, maxLength: 12 }).map((a) => a.join('')),
        fc.array(fc.constantFrom(...fragments), { minLength: 1, maxLength: 12 }).map((a) => a.join('')),
        fc.array(fc.nat(), { maxLength: 6 }),
        fc.boolean(),
        (before, after, at, holdWords) => {
          const g = createBoundaryGate({ holdWords });
          for (const token of cut(before, at)) g.feed(token);
          const held = g.held();
          const released = flush(g);
          expect(released.join('')).toBe(held);
          if (held === '') return; // nothing held: the sentence goes on (the properties above)
          flushedHeld++;
          const fresh = createBoundaryGate({ holdWords });
          const tokens = cut(after, at);
          expect(tokens.map((token) => g.feed(token))).toEqual(tokens.map((token) => fresh.feed(token)));
          expect(g.end()).toEqual(fresh.end());
        },
      ),
      { numRuns: 400 },
    );
    expect(flushedHeld).toBeGreaterThan(50); // control: the flushes released held text
  });
});

describe('boundary gate: the text held back at a stop, and a gate used again after end()', () => {
  /** Each token fed: the chunks released for it (the end's as the last entry). */
  function run(tokens: string[], options: { holdWords?: boolean } = {}): string[][] {
    const g = createBoundaryGate({ locale: 'en-us', ...options });
    return [...tokens.map((token) => g.feed(token)), g.end()];
  }

  it('closers before an undecided stop wait with it, however many (`"this")).`)', () => {
    // a chunk ending `"this"` would end just after a closer, with the stop still undecided
    expect(run(['He said (see "this")).', ' Then'])).toEqual([['He said (see "this'], ['")).', ' Then'], []]);
  });

  it('after end(), the gate cuts what follows as a new gate does', () => {
    const tokens = ['Hello', ' there.', ' How are', ' you?', ' Fine'];
    for (const holdWords of [false, true]) {
      const g = createBoundaryGate({ locale: 'en-us', holdWords });
      g.feed('See the U.S. Government and Dr.');
      // control: the sentence is not over when end() comes (its segmenter holds it)
      expect(g.end().join('')).toBe(holdWords ? 'See the U.S. Government and Dr.' : '.');
      expect([...tokens.map((token) => g.feed(token)), g.end()]).toEqual(run(tokens, { holdWords }));
    }
  });
});
