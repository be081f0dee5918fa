/**
 * The live session's hand-checked frame fast path (`fastServerFrame` in
 * src/live/session.ts) against the zod schema it stands in for: on any JSON frame, when
 * the fast path answers, zod accepts the frame and produces exactly the same value; when
 * it declines, the session falls back to zod, so only agreement on accepted frames matters.
 * Also the ledger's cheap `hasUnspoken()` against `unspoken()`.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { fastServerFrame } from '../src/live/session.js';
import { ServerFrameSchema } from '../src/live/protocol.js';
import { SpeechLedger } from '../src/live/ledger.js';

const TYPES = ['session.ready', 'segment.start', 'segment.done', 'segment.skipped', 'session.error', 'session.done'];

const anyValue = fc.oneof(
  fc.constant(undefined),
  fc.constant(null),
  fc.boolean(),
  fc.string(),
  fc.integer(),
  fc.double(),
  fc.constantFrom(0, -0, -1, 1.5, 2 ** 53, 2 ** 53 - 1, -(2 ** 53), Number.MAX_VALUE),
  fc.array(fc.integer(), { maxLength: 3 }),
  fc.jsonValue({ maxDepth: 2 }),
);
const id = fc.oneof(fc.nat(), fc.nat({ max: 5 }), anyValue);
const key = fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom('__proto__', 'constructor', 'toString', 'type', '0'));
/** Records with tricky keys (an own `__proto__` after the JSON round trip), or anything else. */
const config = fc.oneof(
  fc.dictionary(key, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 6 }),
  fc.constant({ voice_id: 1, language: 'en-us', output_format: 'wav', word_timestamps: false }),
  anyValue,
);
const wordTimestamps = fc.oneof(
  fc.array(fc.record({ word: fc.string(), start: fc.double({ noNaN: true }), end: fc.double({ noNaN: true }) }), { maxLength: 3 }),
  anyValue,
);

/** A frame of each known type with fields right, wrong or missing, plus extra keys. */
const frame = fc
  .record(
    {
      type: fc.oneof(fc.constantFrom(...TYPES), anyValue),
      segment_id: id,
      text: fc.oneof(fc.string(), anyValue),
      word_timestamps: wordTimestamps,
      session_id: fc.oneof(fc.string(), anyValue),
      run_id: id,
      config,
      error: fc.oneof(fc.string(), anyValue),
      extra: anyValue,
    },
    { requiredKeys: ['type'] },
  )
  .map((f) => JSON.stringify(f));

describe('fastServerFrame', () => {
  it('agrees with ServerFrameSchema on every frame it accepts (and accepts the usual ones)', () => {
    let fast = 0;
    let total = 0;
    fc.assert(
      fc.property(fc.oneof(frame, fc.json({ maxDepth: 3 })), (text) => {
        total++;
        const json: unknown = JSON.parse(text);
        const result = fastServerFrame(json);
        if (result === undefined) return;
        fast++;
        const parsed = ServerFrameSchema.safeParse(json);
        expect(parsed.success, text).toBe(true);
        expect(result, text).toStrictEqual(parsed.data);
      }),
      { numRuns: 3000, seed: 2026 },
    );
    // the fast path must actually be exercised
    expect(fast).toBeGreaterThan(total / 20);
  });

  it('takes the frames of a usual session, and declines the unusual ones', () => {
    const cases: [unknown, boolean][] = [
      [{ type: 'session.ready', session_id: 's', run_id: 3, config: { voice_id: 1, language: 'en-us' } }, true],
      [{ type: 'session.ready', session_id: 's', run_id: 3 }, true],
      [{ type: 'segment.start', segment_id: 0, text: 'Hi.' }, true],
      [{ type: 'segment.done', segment_id: 0 }, true],
      [{ type: 'segment.skipped', segment_id: 1, text: 'x' }, true],
      [{ type: 'session.error', error: 'no' }, true],
      [{ type: 'session.done' }, true],
      [{ type: 'segment.start', segment_id: 0, text: 'Hi.', word_timestamps: [] }, false],
      [JSON.parse('{"type":"session.ready","session_id":"s","run_id":3,"config":{"__proto__":{"a":1}}}'), false],
      [{ type: 'session.ready', session_id: 's', run_id: 3, config: [1] }, false],
      [{ type: 'session.ready', session_id: 's', run_id: 1.5 }, false],
      [{ type: 'segment.done', segment_id: -1 }, false],
      [{ type: 'nope' }, false],
    ];
    for (const [json, accepted] of cases) {
      const result = fastServerFrame(json);
      expect(result !== undefined, JSON.stringify(json)).toBe(accepted);
      if (result !== undefined) expect(result).toStrictEqual(ServerFrameSchema.parse(json));
    }
  });
});

describe('SpeechLedger.hasUnspoken', () => {
  it('is unspoken() !== "" after any pushes and segments (whitespace of every kind)', () => {
    const piece = fc.oneof(
      fc.string({ maxLength: 6 }),
      fc.constantFrom(' ', '\n', '\u00a0', '\u3000', '\ufeff', '\u2028', 'a', '. ', ' b ', '\ud83d\ude00'),
    );
    fc.assert(
      fc.property(fc.array(fc.oneof(piece.map((t) => ({ push: t })), piece.map((t) => ({ segment: t }))), { maxLength: 12 }), (ops) => {
        const ledger = new SpeechLedger();
        let id = 0;
        for (const op of ops) {
          if ('push' in op) ledger.push(op.push);
          else {
            ledger.segmentStarted(id, op.segment);
            ledger.segmentDelivered(id++);
          }
          expect(ledger.hasUnspoken()).toBe(ledger.unspoken() !== '');
          expect(ledger.mismatchCount).toBe(ledger.stats().mismatches);
        }
      }),
      { numRuns: 2000, seed: 2026 },
    );
  });
});
