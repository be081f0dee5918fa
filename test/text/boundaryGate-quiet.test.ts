/**
 * The gate lets a quiet token (letters, marks, digits and spaces: `isQuietText`) out at once
 * without its segmenter when nothing is held and the segmenter holds no undecided stop, and
 * gives it to the segmenter with the next token that is not quiet (`Gate.feed`). That is only
 * right if everything the gate says is what it said when every token went through the
 * segmenter at once: here two gates are fed the same tokens, one of them made to feed every
 * token at once (its `quiet` answering no), with idle flushes and ends between, and all they
 * release, hold and hand over is compared. A control shows the inputs reach the case the
 * condition is for: letting a quiet token out while a stop is held (`See Dr.` then ` Smith`)
 * does change what goes out.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createBoundaryGate, type BoundaryGate } from '../../src/text/boundaryGate.js';
import { isQuietText } from '../../src/text/sentence-marks.js';
import { cut } from '../fixtures/cut.js';

const FRAGMENTS = [
  'Hello', ' world', '.', ' ', '  ', 'Dr', '. ', ' Smith', '?', '!', '"', '3.5', 'U.S.', ' Then', ' Th', 'en', ' Government', '...',
  '。', '你好', '\n', 'e.g.', ' and', 'p.m.', ' 5', '1.', ' a)', ' b)', '<break time="1s"/>', 'Hi! ', '(', ')', 'am 3.', ' Oktober',
  ' Danach', 'z.B.', ' नमस्ते', '।', 'J.', ' K', ' Rowling', ' number 3! ', 'Word', ' i', 'ii', ' 42', '\n\n', 'Home\n',
];
const LOCALES = ['en-us', 'de-de', 'hi-in', 'ja-jp', undefined] as const;

/** A text said as word tokens: split before each run of spaces. */
const wordTokens = (text: string): string[] => text.match(/\s*\S+|\s+$/g) ?? [];

type Step = { feed: string } | { flush: true } | { end: true };

/** Everything a gate says over `steps`, in order. */
function transcript(gate: BoundaryGate, steps: readonly Step[]): unknown[] {
  const said: unknown[] = [];
  for (const step of steps) {
    if ('feed' in step) said.push(gate.feed(step.feed), gate.held());
    else if ('flush' in step) {
      const flushed = gate.flushWhole();
      // the segmenter handed over, by what it still holds (the ledger ends it as the service would)
      said.push(flushed && { text: flushed.text, handed: flushed.segmenter?.pending() });
    } else said.push(gate.end());
  }
  return said;
}

interface GateInside {
  quiet(text: string): boolean;
  unsent: string;
  unfed: string;
}

/** A gate that sends every token through its segmenter at once (the reference), or (`control`) lets quiet tokens out whatever it holds. */
function gate(locale: string | undefined, holdWords: boolean, kind: 'deferring' | 'reference' | 'control'): BoundaryGate {
  const made = createBoundaryGate(locale === undefined ? { holdWords } : { locale, holdWords });
  const inside = made as unknown as GateInside;
  if (kind === 'reference') inside.quiet = () => false;
  if (kind === 'control') inside.quiet = (text) => isQuietText(text);
  return made;
}

const steps = fc
  .tuple(
    fc.array(fc.constantFrom(...FRAGMENTS), { maxLength: 30 }).map((a) => a.join('')),
    fc.array(fc.nat(), { maxLength: 12 }),
    fc.boolean(),
    fc.array(fc.nat(), { maxLength: 4 }),
    fc.boolean(),
  )
  .map(([text, at, asWords, flushAt, endMidway]) => {
    const tokens = asWords ? wordTokens(text) : cut(text, at);
    const out: Step[] = [];
    tokens.forEach((token, i) => {
      out.push({ feed: token });
      if (flushAt.some((f) => f % (tokens.length + 1) === i)) out.push({ flush: true });
      if (endMidway && i === Math.floor(tokens.length / 2)) out.push({ end: true });
    });
    out.push({ end: true });
    return out;
  });

describe('the gate lets quiet tokens out without its segmenter', () => {
  it('property: what it releases, holds, flushes and hands over is what it was when every token went through the segmenter', () => {
    let deferred = 0;
    let controlDiffers = 0;
    fc.assert(
      fc.property(steps, fc.constantFrom(...LOCALES), fc.boolean(), (script, locale, holdWords) => {
        const subject = gate(locale, holdWords, 'deferring');
        const inside = subject as unknown as GateInside;
        const reference = transcript(gate(locale, holdWords, 'reference'), script);
        const said: unknown[] = [];
        for (const step of script) {
          said.push(...transcript(subject, [step]));
          if (inside.unfed !== '') deferred++;
        }
        expect(said).toEqual(reference);
        if (JSON.stringify(transcript(gate(locale, holdWords, 'control'), script)) !== JSON.stringify(reference)) controlDiffers++;
      }),
      { numRuns: 2000 },
    );
    expect(deferred).toBeGreaterThan(1000); // quiet tokens did go out without the segmenter (often)
    expect(controlDiffers).toBeGreaterThan(0); // control: while a stop is held it would change what goes out
  });

  it('a sentence said word by word takes a segmenter at its stop, not at its first word', () => {
    const g = gate('en-us', true, 'deferring');
    const inside = g as unknown as GateInside & { segmenter: unknown };
    for (const token of ['Hotel', ' kilo', ' bravo', ' number', ' 0']) expect(g.feed(token)).toEqual([token]);
    expect(inside.segmenter).toBeUndefined();
    expect(inside.unfed).toBe('Hotel kilo bravo number 0');
    expect(g.feed('! ')).toEqual([]); // the stop is held (undecided: no next token yet)
    expect(inside.unfed).toBe('');
    expect(g.held()).toBe('! ');
    expect(g.feed(' Next')).toEqual(['!', '  Next']); // as every token through the segmenter gives
  });

  it('while a stop is held a quiet token goes through the segmenter (the condition)', () => {
    const g = gate('en-us', false, 'deferring');
    const inside = g as unknown as GateInside;
    expect(g.feed('See Dr.')).toEqual(['See Dr']);
    expect(g.feed(' Smith')).toEqual(['. Smith']);
    expect(inside.unfed).toBe('');
    expect(g.feed(' said')).toEqual([' said']);
    expect(inside.unfed).toBe(' said'); // the stop was decided by ` Smith`: ` said` goes past the segmenter
  });

  it('near the buffer size a quiet token goes through the segmenter: its forced cuts are what they were', () => {
    const subject = createBoundaryGate({ locale: 'en-us', maxBufferSize: 64 });
    const reference = createBoundaryGate({ locale: 'en-us', maxBufferSize: 64 });
    (reference as unknown as GateInside).quiet = () => false;
    const inside = subject as unknown as GateInside;
    const script: Step[] = [...Array.from({ length: 12 }, () => ({ feed: ' abcdefghi' })), { end: true }];
    let late = 0;
    const said: unknown[] = [];
    for (const step of script) {
      said.push(...transcript(subject, [step]));
      if (inside.unfed !== '') late++;
    }
    expect(said).toEqual(transcript(reference, script));
    expect(late).toBeGreaterThan(0); // some went out past the segmenter
    expect(late).toBeLessThan(12); // and not the ones that reach the buffer size
  });
});
