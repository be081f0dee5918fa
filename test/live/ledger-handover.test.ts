/**
 * One sentence engine where two ran: at an idle flush (the boundary hold's timer) the gate
 * hands its sentence segmenter to the ledger when that segmenter saw exactly the chunk
 * released, and the ledger takes it as its model of the service's segmenter instead of
 * running its own over the same text (`BoundaryGate.flushWhole`, `SpeechLedger.push`).
 *
 * The invariant: the ledger's segment ends are what its own model gives. Here a session's
 * text path is played (tokens through a `holdWords` gate, idle flushes at random places,
 * the end of input) into two ledgers, one handed the gate's segmenters and one not, and
 * their models compared after every chunk: the sentence ends, where the model's last piece
 * ends, and what it still holds. A control hands over segmenters of the wrong language's
 * rules and must be caught.
 */
import fc from 'fast-check';
import { VirtualTimeScheduler } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { SpeechLedger } from '../../src/live/ledger.js';
import { BoundaryHold } from '../../src/live/text-path.js';
import { createBoundaryGate, type GateFlush } from '../../src/text/boundaryGate.js';
import { createSentenceSegmenter, releaseSentenceSegmenter, takeSentenceSegmenter, type SentenceSegmenter } from '../../src/text/sentences.js';
import { cut } from '../fixtures/cut.js';

/** Text pieces that exercise the rules: stops decided late, abbreviations, ordinals, lists, quotes, tags, scripts. */
const FRAGMENTS = [
  'Hello', ' world', '.', ' ', '  ', '\t', 'Dr', '. ', 'Smith', '?', '!', '! ', '"', '3.5', 'U.S.', ' Then', ' Government', '...',
  '。', '你好', '\n', '\n\n', 'e.g.', ' and', 'p.m.', '1.', ' a)', '<break time="1s"/>', '<', 'Hi! ', '(', ')', ' she said',
  'am 3.', ' Oktober', 'Kapitel 4.', ' Danach', 'z.B.', ' Nr.', ' 5', 'M.', ' « Oui ! »', ' etc.', 'т.е.', ' г.', ' Он',
  'Привет!', 'こんにちは。', '東京です', '！', ' number 3! ', 'Word', ' S.',
];
const LOCALES = ['en-us', 'de-de', 'fr-fr', 'ja-jp', 'ru-ru', undefined] as const;

interface ModelState {
  ends: number[];
  cursor: number;
  held: string | undefined;
  rest: string;
}

/** The ledger's model, read from its private fields (the test's window on the invariant). */
function modelState(ledger: SpeechLedger): ModelState {
  const inside = ledger as unknown as {
    sentenceEnds: { items: number[]; head: number };
    modelCursor: number;
    model: SentenceSegmenter | undefined;
    modelRest: string;
  };
  return {
    ends: inside.sentenceEnds.items.slice(inside.sentenceEnds.head),
    cursor: inside.modelCursor,
    held: inside.model?.pending(),
    rest: inside.modelRest,
  };
}

type HandOver = (flushed: GateFlush, locale: string | undefined) => SentenceSegmenter | undefined;
const none: HandOver = () => undefined;
const gates: HandOver = (flushed) => flushed.segmenter;
/** The control: a segmenter of another language's rules, fed the same chunk. */
const wrongRules: HandOver = (flushed, locale) => {
  const other = createSentenceSegmenter({ locale: locale?.startsWith('de') ? 'en-us' : 'de-de' });
  other.feed(flushed.text);
  return other;
};

/** A session's text path: tokens into the gate, idle flushes after the tokens in `flushAfter`, then the end. */
function play(tokens: string[], flushAfter: ReadonlySet<number>, locale: string | undefined, handOver: HandOver): { states: ModelState[]; adopted: number } {
  const gate = createBoundaryGate(locale === undefined ? { holdWords: true } : { locale, holdWords: true });
  const ledger = new SpeechLedger(locale === undefined ? {} : { locale });
  const states: ModelState[] = [];
  let adopted = 0;
  const push = (text: string, segmenter?: SentenceSegmenter): void => {
    ledger.push(text, segmenter);
    // taken: `sentenceEndingChunk` ended it; not taken: untouched, still holding the chunk
    if (segmenter !== undefined && segmenter.pending() !== text) adopted++;
    states.push(modelState(ledger));
  };
  tokens.forEach((token, i) => {
    for (const chunk of gate.feed(token)) push(chunk);
    if (flushAfter.has(i)) {
      const flushed = gate.flushWhole();
      if (flushed !== undefined) push(flushed.text, handOver(flushed, locale));
    }
  });
  for (const chunk of gate.end()) push(chunk);
  return { states, adopted };
}

const fragments = (max: number): fc.Arbitrary<string> => fc.array(fc.constantFrom(...FRAGMENTS), { minLength: 1, maxLength: max }).map((a) => a.join(''));
/** Tokens: a text cut anywhere (an LLM's stream), or a few fragments a token (whole sentences, as the bench says them). */
const tokenLists = fc.oneof(
  fc.tuple(fragments(30), fc.array(fc.nat(), { maxLength: 12 })).map(([text, at]) => cut(text, at)),
  fc.array(fragments(5), { minLength: 1, maxLength: 10 }),
);
const sessions = fc.record({
  tokens: tokenLists,
  /** After which tokens an idle flush comes (about every other one). */
  flushes: fc.array(fc.boolean(), { minLength: 31, maxLength: 31 }).map((after) => new Set(after.flatMap((flush, i) => (flush ? [i] : [])))),
  locale: fc.constantFrom(...LOCALES),
});

/**
 * Sessions played step by step, interleaved: each session's gate and ledger take and let go
 * of segmenters through the process's spare (`takeSentenceSegmenter`), so one session's
 * released segmenter is the next one's. Returns each session's model states, as `play`.
 */
function playInterleaved(plans: ReadonlyArray<{ tokens: string[]; flushes: ReadonlySet<number>; locale: string | undefined }>, order: number[], leak = false): { states: ModelState[][]; shared: number } {
  /** Which session last held each segmenter: one held by another session before counts as shared. */
  const holder = new WeakMap<object, number>();
  let shared = 0;
  const note = (segmenter: SentenceSegmenter | undefined, session: number): void => {
    if (segmenter === undefined) return;
    const before = holder.get(segmenter);
    if (before !== undefined && before !== session) shared++;
    holder.set(segmenter, session);
  };
  const runs = plans.map((plan, session) => ({
    plan,
    session,
    gate: createBoundaryGate(plan.locale === undefined ? { holdWords: true } : { locale: plan.locale, holdWords: true }),
    ledger: new SpeechLedger(plan.locale === undefined ? {} : { locale: plan.locale }),
    next: 0,
    states: [] as ModelState[],
  }));
  const step = (run: (typeof runs)[number]): void => {
    const push = (text: string, segmenter?: SentenceSegmenter): void => {
      run.ledger.push(text, segmenter);
      run.states.push(modelState(run.ledger));
    };
    const i = run.next++;
    if (i < run.plan.tokens.length) {
      for (const chunk of run.gate.feed(run.plan.tokens[i]!)) push(chunk);
      if (run.plan.flushes.has(i)) {
        const flushed = run.gate.flushWhole();
        if (flushed !== undefined) push(flushed.text, flushed.segmenter);
      }
    } else if (i === run.plan.tokens.length) for (const chunk of run.gate.end()) push(chunk);
    const live = (run.gate as unknown as { segmenter: SentenceSegmenter | undefined }).segmenter;
    note(live, run.session);
    note((run.ledger as unknown as { model: SentenceSegmenter | undefined }).model, run.session);
    // the control's bug: the gate's segmenter let go of while the gate goes on with it
    if (leak && live !== undefined) releaseSentenceSegmenter(live);
  };
  for (const k of order) step(runs[k % runs.length]!);
  for (const run of runs) while (run.next <= run.plan.tokens.length) step(run);
  return { states: runs.map((run) => run.states), shared };
}

describe('the gate hands its segmenter to the ledger', () => {
  it('property: a ledger handed the gate\'s segmenters models the same segment ends as one running its own model', () => {
    let adopted = 0;
    fc.assert(
      fc.property(sessions, ({ tokens, flushes, locale }) => {
        const own = play(tokens, flushes, locale, none);
        const handed = play(tokens, flushes, locale, gates);
        adopted += handed.adopted;
        expect(handed.states).toEqual(own.states);
      }),
      { numRuns: 2000 },
    );
    expect(adopted).toBeGreaterThan(300); // control: the hand-over happened, often
  });

  it('property: sessions interleaved, sharing the spare segmenter, model what each models alone', () => {
    const interleaved = fc.record({ plans: fc.array(sessions, { minLength: 2, maxLength: 4 }), order: fc.array(fc.nat(), { minLength: 10, maxLength: 60 }) });
    let shared = 0;
    fc.assert(
      fc.property(interleaved, ({ plans, order }) => {
        const alone = plans.map(({ tokens, flushes, locale }) => play(tokens, flushes, locale, none).states);
        const together = playInterleaved(plans, order);
        shared += together.shared;
        expect(together.states).toEqual(alone);
      }),
      { numRuns: 700 },
    );
    // control: a session often went on with a segmenter another session had let go of
    expect(shared).toBeGreaterThan(20); // 73-99 in four runs of 700
  });

  it('control: the interleaving catches a segmenter let go of while still used', () => {
    const interleaved = fc.record({ plans: fc.array(sessions, { minLength: 2, maxLength: 4 }), order: fc.array(fc.nat(), { minLength: 10, maxLength: 60 }) });
    const found = fc.check(
      fc.property(interleaved, ({ plans, order }) => {
        const alone = plans.map(({ tokens, flushes, locale }) => play(tokens, flushes, locale, none).states);
        expect(playInterleaved(plans, order, true).states).toEqual(alone);
      }),
      { numRuns: 700 },
    );
    expect(found.failed).toBe(true);
  });

  it('control: the comparison catches a wrong hand-over (another language\'s rules)', () => {
    const found = fc.check(
      fc.property(sessions, ({ tokens, flushes, locale }) => {
        expect(play(tokens, flushes, locale, wrongRules).states).toEqual(play(tokens, flushes, locale, none).states);
      }),
      { numRuns: 2000 },
    );
    expect(found.failed).toBe(true);
  });

  it('the bench\'s sentence: held whole by the gate, flushed with its segmenter, taken by the ledger', () => {
    const gate = createBoundaryGate({ locale: 'en-us', holdWords: true });
    const ledger = new SpeechLedger({ locale: 'en-us' });
    for (const sentence of ['Alpha beta gamma number 0! ', 'Delta epsilon zeta number 1! ']) {
      expect(gate.feed(sentence)).toEqual([]); // `!` and a space: a speech tag may follow
      const flushed = gate.flushWhole();
      expect(flushed?.text).toBe(sentence);
      expect(flushed?.segmenter?.pending()).toBe(sentence);
      ledger.push(sentence, flushed?.segmenter);
      // taken: ended by the ledger, which kept only the space after the stop and let the
      // segmenter go: it is the process's spare, reset, for the next sentence of any session
      expect(flushed?.segmenter?.pending()).toBe('');
      expect(takeSentenceSegmenter({ locale: 'en-us' })).toBe(flushed?.segmenter);
    }
    expect(modelState(ledger)).toMatchObject({ ends: [26, 55], cursor: 55, held: undefined, rest: ' ' });
    ledger.segmentStarted(0, 'Alpha beta gamma number 0!');
    ledger.segmentDelivered(0);
    ledger.segmentStarted(1, 'Delta epsilon zeta number 1!');
    ledger.segmentDelivered(1);
    expect(ledger.unspoken()).toBe('');
    expect(ledger.mismatches).toBe(0);
  });

  it('no hand-over when part of the segmenter\'s text went out before the flush, or the model holds text', () => {
    const gate = createBoundaryGate({ locale: 'en-us', holdWords: true });
    expect(gate.feed('Hello')).toEqual(['Hello']); // words without a stop go at once
    expect(gate.feed(' there!')).toEqual([]);
    expect(gate.flushWhole()).toEqual({ text: ' there!', segmenter: undefined }); // it saw "Hello" too
    // control: from a fresh start with everything held, it is handed over
    expect(gate.feed('See Dr.')).toEqual([]);
    const flushed = gate.flushWhole();
    expect(flushed?.segmenter?.pending()).toBe('See Dr.');
    // the ledger takes it only at a sentence end: "See Dr." ends none, its own model goes on
    const ledger = new SpeechLedger({ locale: 'en-us' });
    ledger.push('See Dr.', flushed?.segmenter);
    expect(flushed?.segmenter?.pending()).toBe('See Dr.'); // untouched
    const next = createSentenceSegmenter({ locale: 'en-us' });
    next.feed(' Smith. ');
    ledger.push(' Smith. ', next); // a model holds "See Dr.": not taken
    expect(next.pending()).toBe(' Smith. ');
    expect(modelState(ledger)).toMatchObject({ ends: [14], held: undefined, rest: ' ' });
  });

  it('the boundary hold sends a held sentence at its timer with the gate\'s segmenter, and text released at once without', () => {
    const scheduler = new VirtualTimeScheduler();
    const sent: Array<{ text: string; at: number; segmenter: boolean }> = [];
    const host = {
      pushText: (): void => {},
      textFailed: (): void => {},
      textCompleted: (): void => {},
      sendText: (text: string, segmenter?: SentenceSegmenter): void => {
        sent.push({ text, at: scheduler.now(), segmenter: segmenter !== undefined });
      },
    };
    const hold = new BoundaryHold({ locale: 'en-us', holdMs: 250, scheduler }, host);
    hold.push('Alpha beta number 0! ');
    expect(sent).toEqual([]); // held: a speech tag may follow
    scheduler.flush();
    expect(sent).toEqual([{ text: 'Alpha beta number 0! ', at: 250, segmenter: true }]);
    // control: words go at once, and the stop after them is flushed without a segmenter (it saw "Hello")
    hold.push('Hello');
    hold.push(' there!');
    scheduler.flush();
    expect(sent.slice(1)).toEqual([
      { text: 'Hello', at: 250, segmenter: false },
      { text: ' there!', at: 500, segmenter: false },
    ]);
  });
});
