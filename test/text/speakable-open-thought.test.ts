/**
 * `thoughts: 'drop-open'` (issue 31): the model's chat template already sent `<think>` (DeepSeek
 * R1), so the stream starts inside a thought and only `</think>` appears. Whole, one character
 * at a time and under random splits.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { cut } from '../fixtures/cut.js';
import { createSpeakableText, type HiddenBlock, type SpeakablePiece, type SpeakableTextOptions } from '../../src/operators/index.js';
import { ValidationError } from '../../src/core/errors.js';

function run(tokens: readonly string[], options: SpeakableTextOptions): { pieces: SpeakablePiece[]; blocks: HiddenBlock[]; unclosed: string | undefined } {
  const blocks: HiddenBlock[] = [];
  const core = createSpeakableText({ ...options, onHiddenBlock: (b) => blocks.push(b) });
  const pieces: SpeakablePiece[] = [];
  for (const t of tokens) pieces.push(...core.feed(t));
  pieces.push(...core.end());
  return { pieces, blocks, unclosed: core.unclosed };
}
const spoken = (ps: readonly SpeakablePiece[]): string => ps.filter((p) => p.hidden === undefined).map((p) => p.text).join('');
const hidden = (ps: readonly SpeakablePiece[]): string => ps.filter((p) => p.hidden !== undefined).map((p) => p.text).join('');

/** The same spoken and hidden text, events and `unclosed` for the text whole, per character and under random splits. */
function expectSame(text: string, options: SpeakableTextOptions, want: { spoken: string; hidden: string; blocks: HiddenBlock[]; unclosed?: string }): void {
  const check = (tokens: readonly string[]): void => {
    const r = run(tokens, options);
    expect(spoken(r.pieces)).toBe(want.spoken);
    expect(hidden(r.pieces)).toBe(want.hidden);
    expect(r.blocks).toEqual(want.blocks);
    expect(r.unclosed).toBe(want.unclosed);
  };
  check([text]);
  check([...text]);
  fc.assert(fc.property(fc.array(fc.nat(), { maxLength: 12 }), (at) => check(cut(text, at))), { numRuns: 300 });
}

describe("thoughts: 'drop-open'", () => {
  const r1 = 'Okay, the user asks for 2+2. That is 4.\n</think>\n\nThe answer is **4**.';

  it('speaks nothing before the first </think>, then the answer', () => {
    expectSame(r1, { thoughts: 'drop-open' }, {
      spoken: '\n\nThe answer is 4.',
      hidden: 'Okay, the user asks for 2+2. That is 4.\n',
      blocks: [{ kind: 'thought', start: 0, end: r1.indexOf('</think>') + 8, closed: true }],
    });
  });

  it("control: with the default 'drop' the thought is spoken, since its <think> never came", () => {
    const r = run([r1], {});
    expect(spoken(r.pieces)).toContain('Okay, the user asks');
    expect(r.blocks).toEqual([]);
  });

  it('a stream that does send <think> itself: the tag is part of the thought, the answer is spoken', () => {
    const text = '<think>hm, 2+2</think>Four.';
    expectSame(text, { thoughts: 'drop-open' }, {
      spoken: 'Four.',
      hidden: '<think>hm, 2+2',
      blocks: [{ kind: 'thought', start: 0, end: text.indexOf('Four'), closed: true }],
    });
  });

  it('later thoughts and tool calls are still dropped; text outside them is kept', () => {
    const text = 'plan</think>Yes. <think>again</think>Done <tool_call>{"a":1}</tool_call>now.';
    expectSame(text, { thoughts: 'drop-open' }, { spoken: 'Yes. Done now.', hidden: 'planagain{"a":1}', blocks: expect.any(Array) as unknown as HiddenBlock[] });
    expect(run([text], { thoughts: 'drop-open' }).blocks.map((b) => [b.kind, b.closed])).toEqual([
      ['thought', true],
      ['thought', true],
      ['tool_call', true],
    ]);
  });

  it('no </think> at all: nothing is spoken, the thought is reported unclosed (as a cut-off block)', () => {
    const text = 'Still thinking about the **answer** and https://example.com';
    expectSame(text, { thoughts: 'drop-open' }, {
      spoken: '',
      hidden: text,
      blocks: [{ kind: 'thought', start: 0, end: text.length, closed: false }],
      unclosed: 'thought',
    });
  });

  it('a lone </ at the end is thought, not a lost closing tag', () => {
    expectSame('abc</thi', { thoughts: 'drop-open' }, { spoken: '', hidden: 'abc</thi', blocks: [{ kind: 'thought', start: 0, end: 8, closed: false }], unclosed: 'thought' });
  });

  it('a bad value throws a ValidationError at creation', () => {
    expect(() => createSpeakableText({ thoughts: 'open' as never })).toThrow(ValidationError);
  });
});
