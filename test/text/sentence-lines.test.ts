/**
 * Boundaries that are not stops: line breaks, list markers, bullets, rules and roman numerals
 * (`sentence-breaks.ts`, `sentence-lists.ts`), and the contract's chunk-end rule
 * (`chunkEnd.ts`). Each segmentation case is checked fed whole and one code unit at a time
 * (the same pieces). Not in the sentence table, whose size the segmentation bench reports.
 */
import { describe, expect, it } from 'vitest';
import { sentenceEndingChunk } from '../../src/text/chunkEnd.js';
import { createSentenceSegmenter } from '../../src/text/sentences.js';

function segmentAll(text: string, locale: string, oneAtATime: boolean): string[] {
  const segmenter = createSentenceSegmenter({ locale });
  const out: string[] = [];
  if (oneAtATime) for (let k = 0; k < text.length; k++) out.push(...segmenter.feed(text.slice(k, k + 1)));
  else out.push(...segmenter.feed(text));
  out.push(...segmenter.end());
  return out;
}

/** `pieces` joined, segmented whole and one code unit at a time, gives `pieces` back. */
function expectPieces(pieces: string[], locale = 'en-us'): void {
  const input = pieces.join('');
  expect(segmentAll(input, locale, false), 'fed whole').toEqual(pieces);
  expect(segmentAll(input, locale, true), 'one code unit at a time').toEqual(pieces);
}

/** A line of more than `SHORT_LINE` code units without a stop: no title, so only the list rules cut around it. */
const LONG = 'This continuation line is long enough to be no title at all';

/** A table of named cases: one `it` each. */
function cases(table: [string, string[]][]): void {
  for (const [name, pieces] of table) it(name, () => expectPieces(pieces));
}

describe('a list line ends at its single line break (LIST_MARKER at a line start)', () => {
  cases([
    ['a three-digit marker', ['100. one', `\n${LONG}`]],
    ['a marker with a dot and a bracket', ['1.) one', `\n${LONG}`]],
    ['a bracketed marker with a dot', ['(1.) one', `\n${LONG}`]],
    ['a bracketed letter with a dot', ['(a.) one', `\n${LONG}`]],
    ['control: a plain marker', ['1. one', `\n${LONG}`]],
    ['control: no marker, no cut', [`one\n${LONG}`]],
    ['control: four digits are no marker', [`1000. one\n${LONG}`]],
  ]);
});

describe('a single line break ends a piece before a list marker (nextLineCut)', () => {
  cases([
    ['a three-digit marker', [LONG, '\n100. one']],
    ['a bracketed marker', [LONG, '\n(1) one']],
    // the `)` after a stop goes to the stop's run; the marker is still `(1.)` (it used to be missed)
    ['a bracketed marker with a dot', [LONG, '\n(1.) one', '\n(2.) two']],
    ['a bracketed roman numeral with a dot', [LONG, '\n(ii.) one']],
    ['the longest marker (nine code units)', [LONG, '\n(xxviii.) one']],
    ['a marker with a dot and a bracket', [LONG, '\n1.) one']],
    ['after a title', ['Intro', '\n(1.) one', '\nmore']],
    // `(1.` reads as the marker `1.`, which a capital after it does not end (it cut after `(1.)`)
    ['a bracketed marker with a dot before a capital', [LONG, '\n(1.) The one', '\n(2.) The two']],
    ['a bracketed marker with a dot before a sentence', [LONG, '\n(1.) The one.', ' And more.']],
    ['control: a bracketed letter with a dot before a capital', [LONG, '\n(a.) The one', '\n(b.) The two']],
    ['control: mid-line, a bracketed number with a dot ends as the number does', ['We tried it (1.)', ' Then it broke.']],
    ['control: a plain marker', [LONG, '\n1. one']],
    ['control: two dots are no marker', [`${LONG}\n(1.. one`]],
  ]);
});

describe('inline list markers (markerOf, isNextMarker)', () => {
  cases([
    // a bullet glued to the marker (`⁃10.`, `•2)`) is part of it
    ['a bullet glued to a marker with a dot', ['• 9. nine', ' ⁃10. ten']],
    ['a bullet glued to a marker with a bracket', ['Buy:', ' •1) milk', ' •2) eggs']],
    // `(b.` opens a bracket that never closes: no marker
    ['an opening bracket without a closing one is no marker', ['a. one (b. two']],
    ['control: the same marker without the bracket', ['a. one', ' b. two']],
    // the next marker of a sequence keeps the suffix: `2.` does not follow `1)`
    ['another suffix does not follow', ['Steps: 1) one 2. two']],
    ['control: the same suffix follows', ['Steps:', ' 1) one', ' 2) two']],
    // a roman numeral of two letters is no letter: `ii)` does not follow `h)`, `i)` does
    ['a roman numeral does not follow a letter', ['Steps: h) one ii) two']],
    ['control: the next letter follows', ['Steps:', ' h) one', ' i) two']],
    // roman numerals count below 40: `xl` is no numeral
    ['xl is no roman numeral', ['Steps: xxxix) one xl) two']],
    ['control: xxxv follows xxxiv', ['Steps:', ' xxxiv) one', ' xxxv) two']],
  ]);
});

describe('rules (RULE)', () => {
  cases([
    ['a rule of tildes underlines the text before it', ['RESULTS ~~~~~', ' Nothing was found.']],
    ['control: a rule of equals signs', ['RESULTS =====', ' Nothing was found.']],
  ]);
});

describe('short lines: titles and menu items (lineEndCut, lastLineCut, SHORT_LINE)', () => {
  const FORTY = 'A title line of exactly forty code units';
  const FORTY_ONE = 'A title line of exactly forty-one c units';
  it('the lines below are 40 and 41 code units', () => {
    expect([FORTY.length, FORTY_ONE.length]).toEqual([40, 41]);
  });
  cases([
    ['two short lines are two pieces', ['Home', '\nAbout us']],
    ['a line of 40 code units is short (first line)', [FORTY, '\nAbout us']],
    ['a line of 40 code units is short (last line)', ['Home', `\n${FORTY}`]],
    ['control: a line of 41 is not (first line)', [`${FORTY_ONE}\nAbout us`]],
    ['control: a line of 41 is not (last line)', [`Home\n${FORTY_ONE}`]],
    // whitespace after the input's last line is no part of it, however long (it used to count)
    ['the last line with whitespace after it', ['Home', `\nContact${' '.repeat(200)}`]],
    ['the last line with a line break after it', ['Home', '\nContact  \n  ']],
    // a short line ending with a stop that ends no sentence (`Dr.`) is no title
    ['a short line ending with a stop is no title (first line)', ['See Dr.\nSmith']],
    ['control: the stop ends the line only (two titles after it)', ['See Dr.\nSmith', '\nJones']],
  ]);
});

describe('a line of no letters or digits is a piece (lineEndCut)', () => {
  const rule = (n: number): string => '_'.repeat(n);
  const TEXT = 'Text here and more text and lots more text so long';
  cases([
    ['after text, up to 160 code units: it ends the piece', [`${TEXT}\n${rule(160)}`, `\n${TEXT}`]],
    ['control: a line of 161 is read as no line of its own', [`${TEXT}\n${rule(161)}\n${TEXT}`]],
  ]);
});

describe('a line ending in an omission (`[...]`) is no title, first or last (endsWithStop in lineEndCut, lastLineCut)', () => {
  cases([
    ['last line', ['Home\nWell [...]']],
    ['first line', ['Well [...]\nHome']],
    ['control: without the omission, two titles', ['Home', '\nWell']],
  ]);
});

describe('the chunk-end rule (chunkEnd.ts, sentenceEndingChunk)', () => {
  /** Each chunk fed as a `text.chunk`: what its feed and the chunk-end rule flush, and what stays buffered at the end. */
  function chunkEnds(chunks: string[]): { flushed: string[][]; buffered: string } {
    const segmenter = createSentenceSegmenter({ locale: 'en-us' });
    const flushed = chunks.map((chunk) => [...segmenter.feed(chunk), ...sentenceEndingChunk(segmenter)]);
    return { flushed, buffered: segmenter.pending() };
  }

  it('a stop at the chunk end ends the sentence; the whitespace after it stays buffered, to lead the next segment', () => {
    expect(chunkEnds(['Hello there. '])).toEqual({ flushed: [['Hello there.']], buffered: ' ' });
    expect(chunkEnds(['Hello there. ', 'How are you?'])).toEqual({ flushed: [['Hello there.'], [' How are you?']], buffered: '' });
    expect(chunkEnds(['Hello there. The end.  '])).toEqual({ flushed: [['Hello there.', ' The end.']], buffered: '  ' });
  });

  it('the word after a stop ended at the chunk end stays buffered (`the U.S. The`)', () => {
    expect(chunkEnds(['See the U.S. The'])).toEqual({ flushed: [['See the U.S.']], buffered: ' The' });
    expect(chunkEnds(['See the U.S. The', ' end.'])).toEqual({ flushed: [['See the U.S.'], [' The end.']], buffered: '' });
  });

  it('nothing buffered, or only whitespace: nothing to flush', () => {
    expect(chunkEnds([''])).toEqual({ flushed: [[]], buffered: '' });
    expect(chunkEnds(['  '])).toEqual({ flushed: [[]], buffered: '  ' });
    // control: the same whitespace after a sentence is kept, and the sentence flushed
    expect(chunkEnds(['Yes.', '  '])).toEqual({ flushed: [['Yes.'], []], buffered: '  ' });
  });

  it('a stop that may not end the sentence waits (`Dr.`); words without a stop wait', () => {
    expect(chunkEnds(['See Dr.', ' Smith today.'])).toEqual({ flushed: [[], ['See Dr. Smith today.']], buffered: '' });
    expect(chunkEnds(['no stop here'])).toEqual({ flushed: [[]], buffered: 'no stop here' });
  });
});
