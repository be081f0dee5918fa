import { describe, expect, it } from 'vitest';
import { cut } from '../fixtures/cut.js';
import fc from 'fast-check';
import { from, lastValueFrom, toArray } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { createSpeakableText, speakableText, segmentSentences, type SpeakablePiece, type SpeakableTextOptions } from '../../src/operators/index.js';
import { ValidationError } from '../../src/core/errors.js';

/** No word stage: links and addresses as written, no lexicon, no spoken forms. */
const verbatim: SpeakableTextOptions = { links: 'verbatim', addresses: 'verbatim' };
const newScheduler = () => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

function pieces(tokens: readonly string[], options?: SpeakableTextOptions): SpeakablePiece[] {
  const core = createSpeakableText(options);
  const out: SpeakablePiece[] = [];
  for (const t of tokens) out.push(...core.feed(t));
  out.push(...core.end());
  return out;
}
const speak = (markdown: string, options?: SpeakableTextOptions): string => pieces([markdown], options).map((p) => p.text).join('');
const perChar = (markdown: string, options?: SpeakableTextOptions): string => pieces([...markdown], options).map((p) => p.text).join('');


describe('speakableText: what is not spoken', () => {
  const cases: Array<[string, string, string]> = [
    ['emphasis', '**Tip:** use *this* or _that_ or __both__ ~~not~~.', 'Tip: use this or that or both not.'],
    ['heading', '## Getting started\nRead on.', 'Getting started\n\nRead on.'],
    ['quote', '> To be or not.\n> That is it\nAfter.', 'To be or not.\n\nThat is it\n\nAfter.'],
    ['bullets', '- milk\n* eggs\n+ bread\n', 'milk\n\neggs\n\nbread\n\n'],
    ['numbers', '1. First\n2) Second\n10. Tenth\n', 'First\n\nSecond\n\nTenth\n\n'],
    ['nested', '- outer\n  - inner\n    1. deep\n', 'outer\n\ninner\n\ndeep\n\n'],
    ['task boxes', '- [ ] todo\n- [x] done\n', 'todo\n\ndone\n\n'],
    ['rules', 'Above.\n\n---\n\nBelow.\n***\n', 'Above.\n\n\n\n\nBelow.\n\n\n'],
    ['html', 'A <b>bold</b> word<br/>next <!-- note --> end.', 'A bold word next  end.'],
    ['link', 'See [the docs](https://example.com/a_(b)) now.', 'See the docs now.'],
    ['image', 'Look: ![a cat](cat.png).', 'Look: a cat.'],
    ['autolink', 'Go to <https://example.com>.', 'Go to example.com.'],
    ['inline code', 'Run `npm test` and ``a `b` c``.', 'Run npm test and a `b` c.'],
    ['emoji', 'Done ✅ and 👍🏽, family 👨‍👩‍👧 ❤️ 🇫🇷.', 'Done  and , family   .'],
    ['table', '| Name | Age |\n|---|---:|\n| Ann | 30 |\n', ' Name , Age \n\n Ann , 30 \n\n'],
    ['list after text', 'Steps:\n- one\n- two', 'Steps:\n\none\n\ntwo'],
    ['control characters', 'a\u0000b\u0007c', 'abc'],
  ];
  for (const [name, input, expected] of cases) {
    it(`${name}: ${JSON.stringify(input)}`, () => {
      expect(speak(input)).toBe(expected);
      expect(perChar(input)).toBe(expected);
    });
  }
});

describe('speakableText: what is kept', () => {
  const kept = [
    'Set my_value_2 to snake_case_name.',
    'It is 2 * 3 = 6, and 2*3 too.',
    'It is 20 °C, 50 % off, €10 or 10 €.',
    'If a < b and c > d, fine.',
    'About ~5 minutes.',
    'A #hashtag and C# code.',
    '-5 degrees and +3 points.',
    'In 2024. we left.',
    'Copyright © 2024 ACME™.',
    'Why? [1] and [sic] stay.',
    'Hello wörld, 你好，世界。',
  ];
  for (const text of kept) {
    it(JSON.stringify(text), () => {
      expect(speak(text)).toBe(text);
      expect(perChar(text)).toBe(text);
    });
  }

  it('speaks escaped markers as characters', () => {
    expect(speak('\\*not italic\\* and \\_x\\_')).toBe('*not italic* and _x_');
  });
});

describe('speakableText: code blocks', () => {
  const md = 'Try this:\n\n```js\nconsole.log("hi");\n```\n\nThen run it.';
  it('skips fenced blocks by default, ending the sentence before them', () => {
    expect(speak(md)).toBe('Try this:\n\n\n\n\nThen run it.');
  });
  it("speaks them with codeBlocks: 'speak'", () => {
    expect(speak(md, { codeBlocks: 'speak' })).toBe('Try this:\n\nconsole.log("hi");\n\n\n\nThen run it.');
  });
  it('says a phrase with codeBlocks: { say }', () => {
    expect(speak(md, { codeBlocks: { say: 'Here is some code.' } })).toBe('Try this:\n\nHere is some code.\n\n\nThen run it.');
  });
  it('speaks an unterminated fence at the end: its text is not lost', () => {
    expect(speak('Code:\n```\nlet x = 1;\nlet y = 2;')).toBe('Code:\nlet x = 1;\nlet y = 2;');
    // a language's name is not run into the code (`jsconst`); control: an info string of words is text, kept
    expect(speak('Code:\n```js\nconst a = 1;')).toBe('Code:\nconst a = 1;');
    expect(speak('Code:\n```c++\nint a;')).toBe('Code:\nint a;');
    expect(speak('Code:\n```two words\nx')).toBe('Code:\ntwo wordsx');
  });
  it('speaks a skipped block once it is longer than maxBufferSize', () => {
    const body = 'x'.repeat(40) + '\n';
    expect(speak('```\n' + body.repeat(3) + '```\nafter', { maxBufferSize: 64 })).toBe(body.repeat(3) + '\n\nafter');
  });
});

describe('speakableText: bad input', () => {
  it('drops lone surrogates and NUL, keeps the words around them', () => {
    expect(speak('a\ud800b\udc00c\u0000d')).toBe('abcd');
    expect(speak('end\ud83d')).toBe('end');
  });
  it('speaks unterminated emphasis and code spans (markers dropped)', () => {
    expect(speak('This is **bold and `code')).toBe('This is bold and code');
  });
  it('gives defined output for nested and mismatched markers', () => {
    expect(speak('***a** b* _c **d_ e**')).toBe('a b c d e');
    expect(speak('[a [b](c) d](e)')).toBe('[a b d](e)');
  });
  it('streams a megabyte without a line break in linear time, losing nothing', { timeout: 30_000 }, () => {
    const text = 'word '.repeat(200_000);
    const core = createSpeakableText();
    let total = 0;
    for (let i = 0; i < text.length; i += 7) for (const p of core.feed(text.slice(i, i + 7))) total += p.text.length;
    for (const p of core.end()) total += p.text.length;
    expect(total).toBe(text.length);
  });
  it('throws a ValidationError at creation for bad options', () => {
    expect(() => speakableText({ codeBlocks: 'read' as never })).toThrow(ValidationError);
    expect(() => speakableText({ maxBufferSize: 3 })).toThrow(ValidationError);
    expect(() => createSpeakableText({ codeBlocks: { say: 1 as never } })).toThrow(ValidationError);
  });
});

describe('speakableText: source offsets', () => {
  it('maps every piece to the markdown it renders', () => {
    const md = '## **Tip**\n- see [docs](https://x.y) 🎉\n';
    const out = pieces([md]);
    expect(out.map((p) => [p.text, md.slice(p.start, p.end)])).toEqual([
      ['Tip', 'Tip'],
      ['\n\n', '\n'],
      ['see ', 'see '],
      ['docs', 'docs'],
      [' ', ' '],
      ['\n\n', '\n'],
    ]);
  });
});

describe('speakableText: streaming', () => {
  it('waits only where a marker is undecided (a "*" at a chunk end), with no word stage', () => {
    const core = createSpeakableText(verbatim);
    expect(core.feed('Hello wor').map((p) => p.text)).toEqual(['Hello wor']);
    expect(core.feed('ld *').map((p) => p.text)).toEqual(['ld ']);
    expect(core.feed('b').map((p) => p.text)).toEqual(['b']); // "*b": a marker
    expect(core.feed('*').map((p) => p.text)).toEqual([]); // "b*": undecided until the run ends
    expect(core.feed(' 2').map((p) => p.text)).toEqual([' 2']); // "b* ": a closing marker
  });

  it('a table row longer than the marker lookahead: a pipe at a chunk end waits to know if a cell follows', () => {
    // the row's start is decided before its line break arrives, so its pipes meet chunk ends
    const row = `| ${'x'.repeat(600)} |  | b |\n`;
    const whole = speak(row, verbatim);
    expect(whole).toBe(` ${'x'.repeat(600)} ,  , b \n\n`);
    for (let at = 600; at < row.length; at++) expect(pieces([row.slice(0, at), row.slice(at)], verbatim).map((p) => p.text).join(''), `cut at ${at}`).toBe(whole);
  });

  it('with the word stage (the default) a word waits for the whitespace after it', () => {
    const core = createSpeakableText();
    expect(core.feed('Hello wor').map((p) => p.text)).toEqual(['Hello ']);
    expect(core.feed('ld ').map((p) => p.text)).toEqual(['world ']);
    expect(core.feed('https://exa').map((p) => p.text)).toEqual([]);
    expect(core.feed('mple.com/a?b=1 now').map((p) => p.text)).toEqual(['example.com', ' ']);
    expect(core.end().map((p) => p.text)).toEqual(['now']);
  });

  it('marble: emits what each token decides; the rest on completion', () => {
    newScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('-a----b-----c--|', { a: '**Ti', b: 'p:** use `npm', c: ' test`.\n- one\n' });
      expectObservable(source.pipe(speakableText(verbatim))).toBe('-x----y-----z--|', { x: 'Ti', y: 'p: use npm', z: ' test.\n\none\n\n' });
      expectObservable(source.pipe(speakableText())).toBe('------y-----z--|', { y: 'Tip: use ', z: 'npm test.\n\none\n\n' });
      expectSubscriptions(source.subscriptions).toBe(['^--------------!', '^--------------!']);
    });
  });

  it('marble: a marker waiting at the end is spoken on completion, and before an error', () => {
    newScheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('a-|', { a: 'x *' }).pipe(speakableText())).toBe('a-(b|)', { a: 'x ', b: '*' });
      expectObservable(cold('a-#', { a: 'x *' }, new Error('boom'))).toBe('a-#', { a: 'x *' }, new Error('boom'));
      expectObservable(cold('a-#', { a: 'x *' }, new Error('boom')).pipe(speakableText())).toBe('a-(b#)', { a: 'x ', b: '*' }, new Error('boom'));
      expectObservable(cold<string>('-').pipe(speakableText())).toBe('-');
      expectObservable(cold<string>('|').pipe(speakableText())).toBe('|');
    });
  });

  it('feeds a sentence splitter: list items and headings end sentences without a stop', async () => {
    const md = '## Plan\n1. **Boil** water 🍵\n2. Pour it\n\nEnjoy. It is *hot*.';
    const sentences = await lastValueFrom(from([...md]).pipe(speakableText(), segmentSentences(), toArray()));
    expect(sentences.map((s) => s.trim()).filter((s) => s.length > 0)).toEqual(['Plan', 'Boil water', 'Pour it', 'Enjoy.', 'It is hot.']);
  });
});

// ---------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------

const fragments = [
  'word', ' ', 'Tip', '.', '\n', '\n\n', '*', '**', '_', '__', '~~', '~', '`', '```', '```js\n', '# ', '## ', '> ', '- ', '* ',
  '1. ', '2) ', '[', ']', '(', ')', '](https://x.y)', '![', '<b>', '</b>', '<', '>', ' < ', '\\', '|', '---', '- [ ] ',
  '\ud83c\udf89', '\u2764\ufe0f', '\u200d', '\ud800', '\u0000', 'my_value_2', '2 * 3', '°', '%', '€', '你好', ' | ',
];
const markdownArb = fc.oneof(
  fc.array(fc.constantFrom(...fragments), { maxLength: 40 }).map((a) => a.join('')),
  fc.string({ unit: 'binary', maxLength: 80 }),
);
const optionsArb = fc.constantFrom<SpeakableTextOptions>({}, { codeBlocks: 'speak' }, { codeBlocks: { say: 'Code.' } }, { maxBufferSize: 16 });

describe('speakableText: properties', () => {
  it('gives the same text however the markdown is split, and never throws', () => {
    fc.assert(
      fc.property(markdownArb, fc.array(fc.nat(), { maxLength: 12 }), optionsArb, (md, at, options) => {
        const whole = pieces([md], options).map((p) => p.text).join('');
        expect(pieces(cut(md, at), options).map((p) => p.text).join('')).toBe(whole);
        expect(perChar(md, options)).toBe(whole);
      }),
      { numRuns: 1500 },
    );
  });

  it('pieces are in source order, never empty, and copies are the source itself', () => {
    fc.assert(
      fc.property(markdownArb, fc.array(fc.nat(), { maxLength: 8 }), (md, at) => {
        let last = 0;
        for (const p of pieces(cut(md, at))) {
          expect(p.text.length).toBeGreaterThan(0);
          expect(p.end).toBeGreaterThan(p.start);
          expect(p.start).toBeGreaterThanOrEqual(last);
          expect(p.end).toBeLessThanOrEqual(md.length);
          last = p.end;
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('loses no letter or digit, in order', () => {
    // no fences, list numbers, tags or escapes here: those drop characters by design (so no
    // bare number token: '7' then '.' then ' ' at a line start is the list marker "7. ")
    // (link addresses here are `#`: no letters, so every letter of the input must be spoken)
    const safe = ['word', ' ', 'Tip', '.', '\n', '\n\n', '*', '**', '_', '__', '~~', '~', '# ', '> ', '- ', '* ', '[', ']', '](#)', '![', '|', '---', '\ud83c\udf89', 'my_value_2', '2 * 3', '°', '%', '你好'];
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...safe, 'alpha', 'beta', '42nd'), { maxLength: 30 }), fc.array(fc.nat(), { maxLength: 8 }), (parts, at) => {
        const md = parts.join('');
        // `~~` then `~` at a line start opens a code fence (`~~~word`: its info string is not spoken)
        fc.pre(!/(^|\n)[ \t]{0,3}(~~~|```)/.test(md));
        // letters and digits, in order (markers between two words may join them: `a**b`)
        const words = (s: string): string => s.replace(/[^\p{L}\p{N}]+/gu, '');
        const expected = words(md);
        expect(words(pieces(cut(md, at)).map((p) => p.text).join(''))).toEqual(expected);
      }),
      { numRuns: 1000 },
    );
  });
});
