/**
 * speakableText on what LLMs stream (issue 31): thoughts and tool calls, links and addresses,
 * SSML-like markup, lexicons and spoken forms, in several languages; every case whole, one
 * character at a time and under random token splits.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { from, lastValueFrom, toArray } from 'rxjs';
import { cut } from '../fixtures/cut.js';
import { createSpeakableText, loadNumberWords, segmentSentences, speakableText, type HiddenBlock, type Lexicon, type NumberWords, type SpeakablePiece, type SpeakableTextOptions } from '../../src/operators/index.js';
import { ValidationError } from '../../src/core/errors.js';
import { createBoundaryGate } from '../../src/text/boundaryGate.js';

function pieces(tokens: readonly string[], options?: SpeakableTextOptions): SpeakablePiece[] {
  const core = createSpeakableText(options);
  const out: SpeakablePiece[] = [];
  for (const t of tokens) out.push(...core.feed(t));
  out.push(...core.end());
  return out;
}
const spoken = (ps: readonly SpeakablePiece[]): string => ps.filter((p) => p.hidden === undefined).map((p) => p.text).join('');
const hiddenText = (ps: readonly SpeakablePiece[]): string => ps.filter((p) => p.hidden !== undefined).map((p) => p.text).join('');

/** `text` spoken whole, one character at a time, and under 200 random splits: all the same. */
function expectSpoken(text: string, expected: string, options?: SpeakableTextOptions): void {
  expect(spoken(pieces([text], options))).toBe(expected);
  expect(spoken(pieces([...text], options))).toBe(expected);
  fc.assert(
    fc.property(fc.array(fc.nat(), { maxLength: 10 }), (at) => {
      expect(spoken(pieces(cut(text, at), options))).toBe(expected);
    }),
    { numRuns: 200 },
  );
}

describe('thoughts and tool calls', () => {
  const issue =
    '<think>The user wants a number. Let me compute 2+2.</think>The answer is **4**. Call <tool_call>{"name":"x","arguments":{}}</tool_call> done. Visit https://example.com/a?b=1 now.';
  it('the issue example: only the answer is spoken', () => {
    expectSpoken(issue, 'The answer is 4. Call  done. Visit example.com now.');
  });
  it('keeps them for captions as hidden pieces, with their source ranges', () => {
    const ps = pieces([issue]);
    const hidden = ps.filter((p) => p.hidden);
    expect(hidden.map((p) => [p.hidden, p.text, issue.slice(p.start, p.end)])).toEqual([
      ['thought', 'The user wants a number. Let me compute 2+2.', 'The user wants a number. Let me compute 2+2.'],
      ['tool_call', '{"name":"x","arguments":{}}', '{"name":"x","arguments":{}}'],
    ]);
  });
  const cases: Array<[string, string, string]> = [
    ['thinking, multi-line, in German', '<thinking>\nSchritt 1: rechnen.\n- a\n</thinking>\n\nDie Antwort ist vier.', '\n\nDie Antwort ist vier.'],
    ['reasoning with attributes and upper case', '<Reasoning effort="high">Hmm, <b>no</b>.</REASONING >¿Qué tal? Bien.', '¿Qué tal? Bien.'],
    ['Qwen empty think', '<think>\n\n</think>\n\nBonjour à tous.', '\n\nBonjour à tous.'],
    ['a "<" inside a thought', '<think>if a < b then </thin k> </think>Done.', 'Done.'],
    ['a stray closing tag is not spoken', 'Answer: yes.</think> Bye.', 'Answer: yes. Bye.'],
    ['a bullet right after a thought at a line start', '<think>x</think>- item one\n- item two', 'item one\n\nitem two'],
    // self-closing: an empty thought, not the start of one (the rest is spoken); the control is the thought above
    ['a self-closing <think/> opens nothing', 'Hello <think/> world. <think /> Bye.', 'Hello  world.  Bye.'],
  ];
  for (const [name, input, expected] of cases) it(name, () => expectSpoken(input, expected));

  it('a text ending inside a thought: the rest is not spoken, unclosed and onHiddenBlock say so', () => {
    const blocks: HiddenBlock[] = [];
    const core = createSpeakableText({ onHiddenBlock: (b) => blocks.push(b) });
    const out = [...core.feed('Sure. <think>done here</think>Ok <tool_call>{"name": "sea'), ...core.feed('rch"'), ...core.end()];
    expect(spoken(out)).toBe('Sure. Ok ');
    expect(hiddenText(out)).toBe('done here{"name": "search"');
    expect(core.unclosed).toBe('tool_call');
    expect(blocks).toEqual([
      { kind: 'thought', start: 6, end: 30, closed: true },
      { kind: 'tool_call', start: 33, end: 61, closed: false },
    ]);
    // control: a closed block leaves unclosed unset
    const closed = createSpeakableText();
    closed.feed('<think>a</think>b');
    closed.end();
    expect(closed.unclosed).toBeUndefined();
  });
  it("thoughts: 'speak' and toolCalls: 'speak' speak them (tags dropped)", () => {
    expectSpoken('<think>Hmm.</think> Yes. <tool_call>x</tool_call>', 'Hmm. Yes. ', { toolCalls: 'drop', thoughts: 'speak' });
    // (the space after the thought begins the line: indentation, not spoken, as without the thought)
    expectSpoken('<think>Hmm.</think> Yes. <tool_call>x</tool_call>', 'Yes. x', { toolCalls: 'speak' });
  });
  it('the operator emits only spoken text', async () => {
    const out = await lastValueFrom(from([...'<think>a b</think>Hi there.']).pipe(speakableText(), toArray()));
    expect(out.join('')).toBe('Hi there.');
  });
});

describe('links and addresses', () => {
  const cases: Array<[string, string, string, SpeakableTextOptions?]> = [
    ['host', 'Visit https://www.example.com/a?b=1, or (http://x.org/p).', 'Visit example.com, or (x.org).'],
    ['www', 'Go to www.wikipedia.org/wiki/Main now.', 'Go to wikipedia.org now.'],
    ['drop', 'See https://example.com/a for more.', 'See  for more.', { links: 'drop' }],
    ['verbatim', 'See https://example.com/a.', 'See https://example.com/a.', { links: 'verbatim' }],
    ['markdown link keeps its text', 'Read [the guide](https://x.y/g) and <https://a.b/c>.', 'Read the guide and a.b.'],
    ['e-mail, English', 'Write to jane.doe@mail.example.de today.', 'Write to jane dot doe at mail dot example dot de today.'],
    ['e-mail, German', 'Schreib an a.b@c.de!', 'Schreib an a Punkt b at c Punkt de!', { language: 'de-de' }],
    ['e-mail, Spanish', 'Escribe a ana@correo.es.', 'Escribe a ana arroba correo punto es.', { language: 'es-es' }],
    ['e-mail, French', 'Écrivez à paul@site.fr.', 'Écrivez à paul arobase site point fr.', { language: 'fr-fr' }],
    ['paths', 'Edit ~/config.json and /etc/hosts/x, not and/or.', 'Edit tilde slash config dot json and slash etc slash hosts slash x, not and/or.'],
    ['addresses verbatim', 'Mail a.b@c.de.', 'Mail a.b@c.de.', { addresses: 'verbatim' }],
    ['in curly, German and CJK quotes and brackets', 'The site “https://example.com/a/b?x=1” is down, „https://x.org/a“ too, [https://a.b/c] and （https://c.d/e）.', 'The site “example.com” is down, „x.org“ too, [a.b] and （c.d）.'],
    ['e-mail in curly quotes', 'Write to “support@example.com”.', 'Write to “support at example dot com”.'],
    ['CJK punctuation after a link is kept', '请看 https://example.com/a。', '请看 example.com。'],
    ["a bracket the link opened is the link's", '(see https://en.wikipedia.org/wiki/Rust_(programming_language)).', '(see en.wikipedia.org).'],
  ];
  for (const [name, input, expected, options] of cases) it(name, () => expectSpoken(input, expected, options));

  it('a word longer than the look ahead (512) is spoken as written however it comes; a shorter one is read (control)', () => {
    // a signed URL's query can be that long; streamed, the part after the first 512 code units
    // was once read as a word of its own (its tail a link here, spoken as its host)
    for (const length of [512, 513, 600, 1100]) {
      const word = `https://example.com/s?sig=${'x'.repeat(length - 'https://example.com/s?sig='.length - 'https://x.org/a'.length)}https://x.org/a`;
      expect(word).toHaveLength(length);
      expectSpoken(`Open ${word} now. Or https://a.b/c.`, `Open ${word} now. Or a.b.`);
    }
    const short = `https://example.com/s?sig=${'x'.repeat(400)}`;
    expectSpoken(`Open ${short} now.`, 'Open example.com now.');
  });

  it('maps a rewritten link back to the whole address as written', () => {
    const text = 'Visit https://example.com/a?b=1 now.';
    const link = pieces([...text]).find((p) => p.text === 'example.com')!;
    expect(text.slice(link.start, link.end)).toBe('https://example.com/a?b=1');
  });

  it('never ends a sentence inside a link or an address', async () => {
    const text = 'Visit example.com today. Mail a.b@c.de now. Or https://x.org/a.b?c=d. End.';
    for (const tokens of [[text], [...text], cut(text, [10, 13, 14, 33, 36, 37, 55, 60])]) {
      const sentences = await lastValueFrom(from(tokens).pipe(speakableText(), segmentSentences(), toArray()));
      expect(sentences.map((s) => s.trim())).toEqual(['Visit example.com today.', 'Mail a dot b at c dot de now.', 'Or x.org.', 'End.']);
    }
  });
});

describe('markup', () => {
  const text = 'Wait <break time="1.5s"/>then say <say-as interpret-as="characters">SQL</say-as>, <phoneme alphabet="ipa" ph="təˈmeɪtoʊ">tomato</phoneme> and <spell>abc</spell>.';
  it('strips SSML-like tags by default (a break becomes a space)', () => {
    expectSpoken(text, 'Wait  then say SQL, tomato and abc.');
  });
  it("passes them intact with markup: 'keep'", () => {
    expectSpoken(text, text, { markup: 'keep' });
  });
  it("with markup: 'keep', no sentence boundary falls inside a tag", async () => {
    const ssml = 'One <sub alias="World Wide Web. Consortium">W3C</sub> rule. Two <break time="1s"/> here. Three.';
    for (const tokens of [[ssml], [...ssml]]) {
      const sentences = await lastValueFrom(from(tokens).pipe(speakableText({ markup: 'keep' }), segmentSentences(), toArray()));
      expect(sentences.map((s) => s.trim())).toEqual(['One <sub alias="World Wide Web. Consortium">W3C</sub> rule.', 'Two <break time="1s"/> here.', 'Three.']);
    }
  });
});

describe('angle brackets that are no markup', () => {
  it("a placeholder's name is spoken (a hyphen or a capital in it), the brackets dropped", () => {
    expectSpoken('Replace <your-api-key> with your key, run git clone <repo-url>, press <Enter>, set <API_KEY>.', 'Replace your-api-key with your key, run git clone repo-url, press Enter, set API_KEY.');
  });
  it("a type's parameters glued to their word are text", () => {
    expectSpoken('Use Vec<T> or Option<T>, and std::vector<int>.', 'Use Vec<T> or Option<T>, and std::vector<int>.');
  });
  it('control: HTML, wrappers, custom elements and hidden blocks are still dropped, glued to a word or not', () => {
    expectSpoken('This is <b>bold</b>, <DIV>x</DIV>, <answer>42</answer>, <custom-el a="1">y</custom-el>, 5<think>hmm</think> km.', 'This is bold, x, 42, y, 5 km.');
  });
});

describe('a tag as long as the look for its > goes', () => {
  // the `>` at the last place looked at (MARKER_LOOKAHEAD code units after the `<`) closes a tag
  // however the text comes; one place further the `<` is text. Streamed, the `<` was once taken
  // for text one code unit before its `>` could be seen, and a thought's opening tag spoken.
  const LOOK = 512;
  const longBreak = (length: number): string => `<break time="${'1'.repeat(length - 16)}"/>`;
  const longThink = (length: number): string => `<think a="${'1'.repeat(length - 12)}">`;
  it('a break tag whose > is the last code unit looked at is a tag, whole or streamed', () => {
    expect(longBreak(LOOK + 1)).toHaveLength(LOOK + 1);
    expectSpoken(`Go ${longBreak(LOOK + 1)} on.`, 'Go   on.');
    // control: one code unit longer, the `<` is text, whole or streamed
    const text = `Go ${longBreak(LOOK + 2)} on.`;
    expectSpoken(text, text);
  });
  it('a thought whose opening tag is that long is hidden, whole or streamed', () => {
    expect(longThink(LOOK + 1)).toHaveLength(LOOK + 1);
    expectSpoken(`Go ${longThink(LOOK + 1)}secret</think> on.`, 'Go  on.');
    expect(hiddenText(pieces([...`Go ${longThink(LOOK + 1)}secret</think> on.`]))).toContain('secret');
  });
});

describe('markup kept: no boundary inside a tag', () => {
  const attr = fc.array(fc.constantFrom('Dr', 'W', 'Yes', ' ', '. ', '! ', '? ', '.', '1.5', 'it is'), { minLength: 1, maxLength: 6 }).map((a) => a.join(''));
  const tag = fc.oneof(
    attr.map((a) => `<break time="${a}"/>`),
    attr.map((a) => `<sub alias="${a}">x</sub>`),
    attr.map((a) => `<phoneme alphabet="ipa" ph="${a}">word</phoneme>`),
    attr.map((a) => `<say-as interpret-as="${a}">42</say-as>`),
  );
  const text = fc.array(fc.oneof(tag, fc.constantFrom('Hello', ' ', 'there', '. ', '! ', 'Next', '.', '\n\n', 'Mr. ', 'ok')), { maxLength: 14 }).map((a) => a.join(''));
  /** [start, end) of every tag in `s`. */
  const tagsOf = (s: string): Array<[number, number]> => [...s.matchAll(/<[^<>]*>/g)].map((m) => [m.index, m.index + m[0].length]);

  /**
   * Offsets where segmentSentences or the boundary gate cut `input` (spoken with kept markup)
   * inside a tag; with `asText`, the tags' brackets are made `[` `]` first (no longer tags),
   * but the same ranges are checked.
   */
  async function cutsInsideTags(input: string, at: number[], asText = false): Promise<number[]> {
    const spokenText = spoken(pieces([input], { markup: 'keep' }));
    const tags = tagsOf(spokenText);
    const text = asText ? spokenText.replace(/[<>]/g, (c) => (c === '<' ? '[' : ']')) : spokenText;
    const inside = (cutAt: number): boolean => tags.some(([a, b]) => cutAt > a && cutAt < b);
    const bad: number[] = [];
    const sentences = await lastValueFrom(from(cut(text, at)).pipe(segmentSentences(), toArray()));
    expect(sentences.join('')).toBe(text);
    let offset = 0;
    for (const sentence of sentences.slice(0, -1)) if (inside((offset += sentence.length))) bad.push(offset);
    // the gate: a chunk never ends just after a stop inside a tag (where the service would end a segment)
    const gate = createBoundaryGate();
    const chunks = [...cut(text, at).flatMap((t) => gate.feed(t)), ...gate.end()];
    offset = 0;
    for (const chunk of chunks.slice(0, -1)) {
      offset += chunk.length;
      if (/[.!?]\s*$/.test(chunk) && inside(offset)) bad.push(offset);
    }
    return bad;
  }

  it('segmentSentences and the live boundary gate never cut inside a kept tag, however the text is split', async () => {
    await fc.assert(
      fc.asyncProperty(text, fc.array(fc.nat(), { maxLength: 10 }), async (input, at) => {
        expect(await cutsInsideTags(input, at)).toEqual([]);
        const sentences = await lastValueFrom(from(cut(input, at)).pipe(speakableText({ markup: 'keep' }), segmentSentences(), toArray()));
        expect(sentences.join('')).toBe(spoken(pieces([input], { markup: 'keep' })));
      }),
      { numRuns: 400 },
    );
  });
  it('control: the same texts with the brackets made text are cut there (the check sees a cut)', async () => {
    const found = await fc.check(
      fc.asyncProperty(text, fc.array(fc.nat(), { maxLength: 10 }), async (input, at) => {
        expect(await cutsInsideTags(input, at, true)).toEqual([]);
      }),
      { numRuns: 400 },
    );
    expect(found.failed).toBe(true);
  });
});

describe('lexicon', () => {
  const lexicon: Lexicon[] = [
    { words: { SQL: 'sequel', Nguyen: 'Win' } },
    { language: 'de', words: { GmbH: 'Gesellschaft mit beschränkter Haftung' } },
    { rules: [{ match: /^v(\d+)\b/, replace: 'version $1' }, { match: 'C++', replace: 'C plus plus' }] },
  ];
  it('replaces whole words and applies rules, for the text’s language', () => {
    expectSpoken('Ask Nguyen about SQL, SQLite and v2 in C++.', 'Ask Win about sequel, SQLite and version 2 in C plus plus.', { lexicon });
    expectSpoken('Die GmbH nutzt SQL.', 'Die Gesellschaft mit beschränkter Haftung nutzt sequel.', { lexicon, language: 'de-de' });
    expectSpoken('La GmbH usa SQL.', 'La GmbH usa sequel.', { lexicon, language: 'es-es' }); // control: German words only in German
  });
  it('maps a replaced word back to the word as written (captions)', () => {
    const text = 'Ask Nguyen now.';
    const win = pieces([...text], { lexicon }).find((p) => p.text === 'Win')!;
    expect(text.slice(win.start, win.end)).toBe('Nguyen');
  });
  it('rejects a bad lexicon at creation', () => {
    expect(() => speakableText({ lexicon: { words: { 'two words': 'x' } } })).toThrow(ValidationError);
    expect(() => speakableText({ lexicon: { rules: [{ match: 3 as never, replace: 'x' }] } })).toThrow(ValidationError);
  });
});

describe('spoken forms', () => {
  const words: Record<string, NumberWords> = {};
  const cases: Array<[string, string, string]> = [
    ['en-us', 'It costs $3.50, 25% off 1,234.5 kg.', 'It costs three dollars and fifty cents, twenty-five percent off one thousand two hundred thirty-four point five kilograms.'],
    ['en-us', 'On 2024-03-05 at 3:30 p.m., the 21st run took 5 km.', 'On March fifth, two thousand twenty-four at three thirty p.m., the twenty-first run took five kilometers.'],
    ['en-us', 'Meet at 3:00 PM or 9:05, not 007 or COVID-19.', "Meet at three PM or nine oh five, not 007 or COVID-19."],
    ['de-de', 'Es kostet 1.234,5 € und 25 % am 3. Mai um 15:30.', 'Es kostet eintausendzweihundertvierunddreißig Euro und fünfzig Cent und fünfundzwanzig Prozent am dritte Mai um fünfzehn Uhr dreißig.'],
    ['de-de', 'Am 05.03.2024 waren es 20 °C.', 'Am fünfte März zweitausendvierundzwanzig waren es zwanzig Grad Celsius.'],
    ['es-es', 'Cuesta 3,50 € y 25 %, el 1.º, a las 15:30.', 'Cuesta tres euros con cincuenta céntimos y veinticinco por ciento, el primero, a las quince y treinta.'],
    ['fr-fr', 'Ça coûte 3,50 € le 1er, à 15h30 le 05/03/2024.', 'Ça coûte trois euros et cinquante centimes le premier, à quinze heures trente le cinq mars deux mille vingt-quatre.'],
    // decimals digit by digit, money with a scale word, a negative unit glued on, a year of the 1900s, curly quotes
    ['en-us', 'Pi is 3.14159, up 12.25 % to $3 million or $1.2 billion at -5°C, born 1999-03-05.', 'Pi is three point one four one five nine, up twelve point two five percent to three million dollars or one point two billion dollars at minus five degrees Celsius, born March fifth, nineteen ninety-nine.'],
    ['en-us', 'He said “$5” and ‘25%’.', 'He said “five dollars” and ‘twenty-five percent’.'],
    // `Uhr` said once, `ein` before a noun, an ordinal of unknown case left as written
    ['de-de', 'Um 15:30 Uhr und 1:00 Uhr, 1 km weit, im 20. Jahrhundert, am 05.03.1999.', 'Um fünfzehn Uhr dreißig und ein Uhr, ein Kilometer weit, im 20. Jahrhundert, am fünfte März neunzehnhundertneunundneunzig.'],
    ['es-es', 'Son 1 km y 21 km.', 'Son un kilómetro y veintiún kilómetros.'],
    ['fr-fr', 'Il est 1h et 21h.', 'Il est une heure et vingt et une heures.'],
  ];
  for (const [language, input, expected] of cases) {
    it(`${language}: ${input}`, async () => {
      words[language] ??= await loadNumberWords(language);
      expectSpoken(input, expected, { language, spokenForm: true, numberWords: words[language] });
    });
  }
  it('takes an n2words locale module as numberWords (what a browser bundle imports itself)', async () => {
    const de = await import('n2words/de-DE');
    expectSpoken('Nur 25 % für 3,50 €.', 'Nur fünfundzwanzig Prozent für drei Euro und fünfzig Cent.', { language: 'de-de', spokenForm: true, numberWords: de });
    expect(() => createSpeakableText({ spokenForm: true, numberWords: {} as never })).toThrow(ValidationError);
  });
  it('is off by default (the service may normalize)', () => {
    expectSpoken('It costs $3.50.', 'It costs $3.50.');
  });
  it('the operator loads the number words itself; tokens wait, none is lost', async () => {
    const out = await lastValueFrom(from(['Il y a ', '2', '1 ', 'km.']).pipe(speakableText({ language: 'fr-fr', spokenForm: true }), toArray()));
    expect(out.join('')).toBe('Il y a vingt et un kilomètres.');
  });
  it('rejects what it cannot do at creation', () => {
    expect(() => speakableText({ spokenForm: true, language: 'ja-jp' })).toThrow(ValidationError);
    expect(() => createSpeakableText({ spokenForm: true })).toThrow(/numberWords/);
    expect(() => speakableText({ links: 'short' as never })).toThrow(ValidationError);
  });
});

describe('properties', () => {
  // (no backtick: inside a code span a tag is code, spoken as written)
  const outside = ['word', ' ', 'Tip', '.', '\n', '\n\n', '*', '**', '_', '# ', '- ', '1. ', '[a](#)', '<b>', ' < ', '|', 'www', 'x.y', '@', 'é', '42nd', ',', '\ud83c\udf89'];
  const thought = fc.string({ maxLength: 30 }).filter((s) => !/<\/think/i.test(s));
  const options: SpeakableTextOptions = { links: 'verbatim', addresses: 'verbatim' };
  const letters = (s: string): string => s.replace(/[^\p{L}\p{N}]+/gu, '');
  const partsArb = (frags: string[]) =>
    fc.array(fc.tuple(fc.array(fc.constantFrom(...frags), { maxLength: 6 }).map((a) => a.join('')), fc.option(thought, { nil: undefined })), { maxLength: 6 });
  const join = (parts: Array<[string, string | undefined]>, withThoughts: boolean): string =>
    parts.map(([text, t]) => (t === undefined || !withThoughts ? text : `${text}<think>${t}</think>`)).join('');

  it('dropping thoughts never drops text outside them (every letter and digit, in order), and keeps them all as hidden', () => {
    fc.assert(
      fc.property(partsArb(outside), fc.array(fc.nat(), { maxLength: 10 }), (parts, at) => {
        const expected = letters(spoken(pieces([join(parts, false)], options)));
        const got = pieces(cut(join(parts, true), at), options);
        expect(letters(spoken(got))).toBe(expected);
        expect(hiddenText(got)).toBe(parts.map(([, t]) => t ?? '').join(''));
      }),
      { numRuns: 1000 },
    );
  });
  it('without markers that look ahead on their line (emphasis, links, tags, table pipes, list numbers, `- - -` rules), the text around a thought is as without it (up to whitespace)', () => {
    const words = (s: string): string => s.replace(/\s+/g, ' ').trim();
    const plain = outside.filter((f) => !/[*_[<|\d-]/.test(f));
    fc.assert(
      fc.property(partsArb(plain), fc.array(fc.nat(), { maxLength: 10 }), (parts, at) => {
        expect(words(spoken(pieces(cut(join(parts, true), at), options)))).toBe(words(spoken(pieces([join(parts, false)], options))));
      }),
      { numRuns: 1000 },
    );
  });
  it('with every option on, the same text however it is split, pieces in source order', async () => {
    const numberWords = await loadNumberWords('en');
    const options: SpeakableTextOptions = { spokenForm: true, numberWords, lexicon: { words: { SQL: 'sequel' } }, markup: 'keep' };
    const frags = ['SQL', ' ', '3', '.5', ',', '$', '%', ' km', 'https://', 'a.b', '/', '@', '<think>', '</think>', '<break/>', '\n', '2024-03-05', '3:30', ' p.m.', 'st', '- '];
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...frags), { maxLength: 20 }), fc.array(fc.nat(), { maxLength: 10 }), (parts, at) => {
        const text = parts.join('');
        const whole = pieces([text], options);
        const split = pieces(cut(text, at), options);
        expect(spoken(split)).toBe(spoken(whole));
        let last = 0;
        for (const p of split) {
          expect(p.text.length).toBeGreaterThan(0);
          expect(p.start).toBeGreaterThanOrEqual(last);
          expect(p.end).toBeGreaterThan(p.start);
          last = p.end;
        }
      }),
      { numRuns: 500 },
    );
  });
});
