/**
 * The stop decision (`sentence-decision.ts`, `sentence-scan.ts`, `abbreviations.ts`,
 * `sentence-marks.ts`): rules a mutation sweep found unpinned. Each case is checked fed whole
 * and fed one code unit at a time (the same pieces). Not in the sentence table
 * (`sentenceCases.ts`), whose size the segmentation bench reports.
 */
import { describe, expect, it } from 'vitest';
import { createSentenceSegmenter } from '../../src/text/sentences.js';

function segment(text: string, locale: string, oneUnitAtATime: boolean): string[] {
  const segmenter = createSentenceSegmenter({ locale });
  const out: string[] = [];
  if (oneUnitAtATime) for (let k = 0; k < text.length; k++) out.push(...segmenter.feed(text[k]!));
  else out.push(...segmenter.feed(text));
  out.push(...segmenter.end());
  return out;
}

/** One `it` per case: the pieces joined, segmented whole and one code unit at a time, give the pieces back. */
function cases(locale: string, list: [name: string, pieces: string[]][]): void {
  for (const [name, pieces] of list) {
    it(name, () => {
      const input = pieces.join('');
      expect(segment(input, locale, false)).toEqual(pieces);
      expect(segment(input, locale, true)).toEqual(pieces);
    });
  }
}

/** `n` times the letter `c`. */
const letters = (c: string, n: number): string => c.repeat(n);

describe('a closing corner bracket after a hard stop (「はい。」と, 『はい。』と)', () => {
  cases('ja-jp', [
    ['「」 glued to the next word goes on', ['彼は「はい。」と言った。']],
    ['『』 glued to the next word goes on, as 「」 does', ['彼は『はい。』と言った。']],
    ['「」 then a space ends', ['「はい。」', ' そして次へ。']],
    ['「」 glued to a character beyond the BMP (a surrogate pair) goes on', ['彼は「はい。」𠮟った。']],
  ]);
});

describe('a paragraph separator (U+2029) after a stop is a blank line', () => {
  cases('en-us', [
    ['after a title it ends, as a blank line does', ['Ask the Dr.', '\u2029Then leave.']],
    ['control: a blank line ends there', ['Ask the Dr.', '\n\nThen leave.']],
    ['control: a single line break does not', ['Ask the Dr.\nThen leave.']],
  ]);
});

describe('the word before a dot: its length (LOOKBACK)', () => {
  cases('en-us', [
    ['a word of forty letters glued to a capitalized word ends there', [`We saw ${letters('a', 40)}.`, 'Next one.']],
  ]);
});

describe('a short abbreviation before a number (Blvd. 9)', () => {
  cases('en-us', [
    ['four letters go on', ['Take Blvd. 9 north.']],
    ['control: a five-letter word ends', ['We met at the Hotel.', ' 9 guests came.']],
  ]);
});

describe('a URL or address glued to ? or ! (its query goes on)', () => {
  cases('en-us', [
    ['an e-mail address', ['Mail bob@x.org?1 now.']],
    ['a www. address', ['Open www.x.org?1 now.']],
    ['a URL', ['Open http://x.org/?1 now.']],
    ['control: a plain word ends', ['Is it you?', '1 more try.']],
  ]);
});

describe('a one-letter unit after a number is ASCII only (150 г. is a year)', () => {
  cases('ru-ru', [['a Cyrillic letter after a number goes on', ['В 1812 г. Наполеон вошёл в Москву.']]]);
  cases('en-us', [['control: an ASCII unit after a number ends', ['We waited 12 h.', ' Then we left.']]]);
});

describe('an ordinal after a dash (dem 1. -3. Jahrhundert)', () => {
  cases('de-de', [
    ['a hyphen', ['Das geschah vom 1. -3. Jahrhundert in Rom.']],
    ['an en dash', ['Das geschah vom 1. –3. Jahrhundert in Rom.']],
    ['control: a sentence starter after an ordinal ends', ['Lies Kapitel 4.', ' Danach schlafen.']],
  ]);
});

describe('spaced dots after a period (He stopped. . . .)', () => {
  cases('en-us', [
    ['a closer glued to the last dot and to a capital goes on', ['He stopped. . . .)Then what?']],
    ['control: a space after the closer ends after the period', ['He stopped.', ' . . .) Then what?']],
  ]);
});

describe('a question glued to a quote, then a capital', () => {
  cases('en-us', [
    ['an address before the ? does not hold it once the quote closes', ['"Is it www.x.org?"', 'Yes, it is.']],
    ['control: a plain word before it', ['"Is it Tom?"', 'Yes, it is.']],
  ]);
});

describe('a line break after a dot ends where the same words on one line go on', () => {
  cases('en-us', [
    ['initials then a capitalized word', ['She works for the U.S.', '\nGovernment jobs are rare.']],
    ['control: on one line they go on', ['She works for the U.S. Government now.']],
    ['No. then a number', ['Read No.', '\n5 is next.']],
    ['control: No. then a number on one line', ['Read No. 5 now.']],
  ]);
});

describe('an ellipsis before an opening quote', () => {
  cases('en-us', [['ends, as before a capital', ['He waited…', ' "Go now," she said.']]]);
});

describe('No., Fig. and their kin before a bracketed number (Fig. (3))', () => {
  cases('en-us', [
    ['a number in brackets goes on', ['See Fig. (3) for details.']],
    ['control: a letter in brackets ends', ['See Fig.', ' (a) for details.']],
    ['a bracket at the end of the text ends', ['See Fig.', ' (']],
  ]);
});

describe('an abbreviation before a bracket (etc. [see])', () => {
  cases('en-us', [
    ['a square bracket goes on, as a round one does', ['We sold pens, ink, etc. [see the list] last year.']],
    ['control: a plain word before a square bracket ends', ['We sold pens, ink, and more.', ' [See the list.]']],
  ]);
});

describe('a lower-case letter glued to a dot and a capital (e.Coli)', () => {
  cases('en-us', [
    ['a single letter goes on', ['We found e.Coli in the water.']],
    ['control: a word of two letters ends', ['We found it.', 'Then we left.']],
  ]);
});

describe('a time (a.m.) before a number', () => {
  cases('en-us', [
    ['ends', ['We opened at 9 a.m.', ' 20 people were waiting.']],
    ['control: initials before a number go on', ['He is in the U.S. 20 days a year.']],
  ]);
});

describe('an ordinal then a sentence starter of the language (sie wurde 3. Danach)', () => {
  cases('de-de', [
    ['after a lower-case word it ends', ['Im Rennen wurde sie 3.', ' Danach ging sie heim.']],
    ['control: another capitalized word goes on', ['Im Rennen wurde sie 3. Platz eins war weg.']],
  ]);
});

describe('initials before a title (the U.S. Dr. Smith)', () => {
  cases('en-us', [
    ['end', ['He grew up in the U.S.', ' Dr. Smith did not.']],
    ['control: another capitalized word goes on', ['He grew up in the U.S. Army camps.']],
  ]);
});

describe('a regnal I. before a sentence starter (Albert I. Then)', () => {
  cases('en-us', [
    ['ends', ['The first king was Albert I.', ' Then came his son.']],
    ['control: a name goes on', ['The first king was Albert I. Jones came later.']],
  ]);
});

describe('nested brackets: a closer closes the innermost one', () => {
  cases('en-us', [['the outer bracket still holds the stop', ['He said (see (the notes) first. Then go) and left.']]]);
  cases('en-us', [['control: one bracket holds it', ['He said (see the notes first. Then go) and left.']]]);
});

describe('how long an open bracket holds a stop (QUOTE_SPAN, 300 code units)', () => {
  /** `He said (` then words, so that the dot stands `distance` code units after the `(`. */
  const bracketed = (distance: number): [string, string] => {
    const words = 'word '.repeat(Math.floor((distance - 6) / 5));
    return [`He said (${words}${letters('z', distance - 1 - words.length)}.`, ' Then it ended) for all.'];
  };
  it('the texts put the dot that far from the bracket', () => {
    for (const distance of [300, 301]) {
      const [head] = bracketed(distance);
      expect(head.length - 1 - head.indexOf('(')).toBe(distance);
    }
  });
  cases('en-us', [
    ['a stop 300 code units after the bracket is held', [bracketed(300).join('')]],
    ['a stop 301 code units after it ends', bracketed(301)],
  ]);
});

describe('tokenized text: a lone spaced dot is a stop, however many came before', () => {
  cases('en-us', [
    ['each spaced dot ends its sentence', ['It rose .', ' Then it fell .', ' He left .']],
    ['after a glued one', ['It rose.', ' Then it fell ( 22 ) .', ' He left.']],
    ['after a spaced one earlier in the sentence that did not end', ['He waited . and then fell ( 22 ) .', ' He left.']],
  ]);
});

describe('a number after a bullet is a list marker only at an item start', () => {
  cases('en-us', [
    ['mid-line, the bullet is a separator and the dot ends', ['We rated it • 9.', ' Then we left.']],
    ['control: at the start of the text it is a marker', ['• 9. Then we left.']],
  ]);
});

describe('abbreviations in the common tables', () => {
  cases('en-us', [
    ['Ste. (a title) never ends', ['We prayed at Ste. Anne church.']],
    ['ect. (etc. misspelt) before a bracket goes on', ['We sold pens, ect. (and more) there.']],
    ['control: a plain word before a bracket ends', ['We sold pens, and more.', ' (And more.)']],
  ]);
});

describe('whitespace and line breaks after a stop', () => {
  cases('en-us', [
    ['a tab is a gap', ['It ended.', '\tThen more.']],
    ['a narrow no-break space (U+202F) is a gap', ['It ended.', '\u202fThen more.']],
    ['NEL (U+0085) is a line break: initials then a capital end', ['She works for the U.S.', '\u0085Government jobs are rare.']],
  ]);
});

describe('marks after a spaced dot that continue the sentence', () => {
  cases('en-us', [
    ['a percent sign', ['It rose 5. % more.']],
    ['control: a symbol that is no continuer ends', ['It rose 5.', ' # more.']],
  ]);
});

describe('French closers after a space stay with their sentence', () => {
  cases('fr-fr', [
    ['»', ['Il dit : « Oui ! »', ' Puis il part.']],
    ['›', ['Il dit : ‹ Oui ! ›', ' Puis il part.']],
  ]);
});

describe('a dash glued to ? or ! then a lower-case word goes on, as a spaced one does', () => {
  cases('en-us', [
    ['an em dash glued to ?', ['Was it love?—or was it fear?']],
    ['control: a spaced em dash', ['Was it love? —or was it fear?']],
    ['a hyphen glued to !', ['Yahoo!-owned sites grew.']],
    ['control: a glued dash then a capital ends', ['Was it love?', '—Or was it fear?']],
    ['control: a glued dash at the end of the text ends', ['Really?', '—']],
  ]);
});
