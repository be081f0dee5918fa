/**
 * `segmentSentences` and `concatSegments` check their options without zod (a page using
 * them loads no schema library): they throw exactly when the zod schemas they used to be
 * checked with reject, with the same issues (`loc` and `type`; the message where the
 * schema gave one: zod's own messages depend on the zod locale loaded).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as z from 'zod/mini';
import { ValidationError } from '../../src/core/errors.js';
import { milliseconds, scheduler } from '../../src/core/options.js';
import type { ValidationIssue } from '../../src/core/schemas.js';
import { toValidationIssues } from '../../src/core/validation.js';
import { concatSegments, segmentSentences } from '../../src/operators/index.js';
import { asyncScheduler } from 'rxjs';
import { sentenceSegmenterOptions } from '../../src/text/sentences.js';

/** The schemas these operators were checked with (the reference). */
const SegmentSchema = z.object({
  locale: z.optional(z.string()),
  maxBufferSize: z.optional(z.number()),
  idleTimeout: z.optional(milliseconds()),
  firstIdleTimeout: z.optional(milliseconds()),
  scheduler: z.optional(scheduler()),
});
const ConcatSchema = z.object({ maxSegmentBytes: z.optional(z.int().check(z.positive())) });

const anyValue = fc.oneof(
  fc.constantFrom(undefined, null, true, 0, -0, 1, -1, 1.5, 16, 15, NaN, Infinity, -Infinity, 1e20, -1e20, 'en-us', '', [], {}, asyncScheduler, { now: () => 0 }, () => 0),
  fc.integer({ min: -5, max: 100 }),
  fc.double(),
  fc.string({ maxLength: 6 }),
);
const optionsOf = (keys: readonly string[]) =>
  fc.oneof(
    { arbitrary: fc.tuple(fc.subarray([...keys]), fc.array(anyValue, { minLength: keys.length, maxLength: keys.length })).map(([present, values]) => Object.fromEntries(present.map((k, i) => [k, values[i]]))), weight: 9 },
    { arbitrary: anyValue.filter((v) => v !== undefined), weight: 1 },
  );

/** The issues an operator throws (undefined when it takes the options), by loc and type, with the messages the schema gives. */
function thrown(make: () => unknown): ValidationIssue[] | undefined {
  try {
    make();
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return (error as ValidationError).issues;
  }
}
const shape = (issues: ValidationIssue[] | undefined, keepMsg: (i: ValidationIssue) => boolean) => issues?.map((i) => ({ loc: i.loc, type: i.type, ...(keepMsg(i) ? { msg: i.msg } : {}) }));

describe('operator option checks against the zod schemas they replace', () => {
  const cases = [
    // options the schema takes then go to the sentence core's own check (maxBufferSize >= 16, a known locale), as before
    ['segmentSentences', SegmentSchema, ['locale', 'maxBufferSize', 'idleTimeout', 'firstIdleTimeout', 'scheduler'], (o: unknown) => segmentSentences(o as never), (o: Record<string, unknown>) => thrown(() => sentenceSegmenterOptions({ ...(o['locale'] === undefined ? {} : { locale: o['locale'] as string }), ...(o['maxBufferSize'] === undefined ? {} : { maxBufferSize: o['maxBufferSize'] as number }) }))],
    ['concatSegments', ConcatSchema, ['maxSegmentBytes'], (o: unknown) => concatSegments(o as never), () => undefined],
  ] as const;
  for (const [name, schema, keys, make, after] of cases) {
    it(`${name}: throws exactly when the schema rejects, with the same issues`, () => {
      let rejected = 0;
      let accepted = 0;
      fc.assert(
        fc.property(optionsOf(keys), (options) => {
          const zod = schema.safeParse(options);
          const expected = zod.success ? after(zod.data as Record<string, unknown>) : toValidationIssues(zod.error, options, ['options']);
          const ours = thrown(() => make(options));
          // the messages the schema itself gives (milliseconds, scheduler); zod's defaults elsewhere
          const given = (i: ValidationIssue) => zod.success || /milliseconds|ms$|scheduler/.test(i.msg);
          expect(shape(ours, (i) => given(i))).toStrictEqual(shape(expected, (i) => given(i)));
          if (zod.success) accepted++;
          else rejected++;
        }),
        { numRuns: 2000 },
      );
      expect(accepted).toBeGreaterThan(50);
      expect(rejected).toBeGreaterThan(50);
    });
  }
});
