/**
 * Local rejections in the service's 422 shape: each kind of zod issue gets the `type` the
 * service (pydantic) gives it, and the plain number check of browser code (`checks.ts`)
 * gives the issues the zod checks it stands in for give, for any bounds.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { checkNumber, optionIssues, type NumberRule } from '../../src/core/checks.js';
import { checkOptions, toValidationIssues } from '../../src/core/validation.js';
import { ValidationError } from '../../src/core/errors.js';

/** The issue types a schema gives `input`, by `loc` joined with dots. */
function types(schema: z.ZodType, input: unknown): Record<string, string> {
  const result = schema.safeParse(input);
  if (result.success) return {};
  return Object.fromEntries(toValidationIssues(result.error, input).map((issue) => [issue.loc.join('.'), issue.type]));
}

describe('toValidationIssues: the type of each kind of issue', () => {
  const schema = z.strictObject({
    name: z.string().min(3).max(5),
    tags: z.array(z.string()).min(1).max(2),
    ids: z.set(z.number()).min(1).max(2),
    count: z.number().gt(0).lt(10),
    level: z.number().gte(0).lte(10),
    code: z.string().regex(/^[a-z]+$/),
    site: z.url(),
    mode: z.enum(['a', 'b']),
    either: z.union([z.number(), z.boolean()]),
    nested: z.object({ deep: z.number() }),
  });
  const valid = { name: 'abcd', tags: ['x'], ids: new Set([1]), count: 5, level: 5, code: 'abc', site: 'https://x.test/', mode: 'a', either: 1, nested: { deep: 1 } };

  it('a valid input has none (control)', () => {
    expect(types(schema, valid)).toEqual({});
  });

  it('too short and too long: strings, arrays and sets each their own', () => {
    expect(types(schema, { ...valid, name: 'ab', tags: [], ids: new Set() })).toEqual({
      'body.name': 'string_too_short',
      'body.tags': 'too_short',
      'body.ids': 'too_short',
    });
    expect(types(schema, { ...valid, name: 'abcdef', tags: ['x', 'y', 'z'], ids: new Set([1, 2, 3]) })).toEqual({
      'body.name': 'string_too_long',
      'body.tags': 'too_long',
      'body.ids': 'too_long',
    });
  });

  it('bounds: exclusive and inclusive, below and above', () => {
    expect(types(schema, { ...valid, count: 0, level: -1 })).toEqual({ 'body.count': 'greater_than', 'body.level': 'greater_than_equal' });
    expect(types(schema, { ...valid, count: 10, level: 11 })).toEqual({ 'body.count': 'less_than', 'body.level': 'less_than_equal' });
  });

  it('a pattern, a format, an enum, a union, an unknown key, a missing and a mistyped field', () => {
    expect(types(schema, { ...valid, code: 'ABC', site: 'not a url', mode: 'c', either: 'x', extra: 1 })).toEqual({
      'body.code': 'string_pattern_mismatch',
      'body.site': 'url_parsing',
      'body.mode': 'enum',
      'body.either': 'union_error',
      body: 'extra_forbidden',
    });
    expect(types(schema, { ...valid, nested: {} })).toEqual({ 'body.nested.deep': 'missing' });
    expect(types(schema, { ...valid, nested: { deep: 'x' } })).toEqual({ 'body.nested.deep': 'number_type' });
  });

  it('checkOptions: the parsed options, or a local ValidationError with issues under options', () => {
    expect(checkOptions(z.object({ n: z.number().default(3) }), {}, 'op')).toEqual({ n: 3 });
    let error: unknown;
    try {
      checkOptions(z.object({ n: z.number() }), { n: 'x' }, 'myOperator');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ValidationError);
    expect(error).toMatchObject({ source: 'local', issues: [{ loc: ['options', 'n'], type: 'number_type' }] });
  });
});

describe('checkNumber gives the issues of the zod checks it stands in for', () => {
  // few bounds and values, so that a value on a bound (where inclusive and exclusive differ) is drawn often
  const bound = fc.tuple(fc.integer({ min: -2, max: 2 }), fc.boolean());
  const value = fc.oneof(fc.integer({ min: -3, max: 3 }), fc.constantFrom(0.5, -2.5, 2 ** 60, -(2 ** 60), NaN, Infinity, undefined, 'x'));

  it('for any bounds (inclusive or not), integer or not, and any value', () => {
    fc.assert(
      fc.property(fc.option(bound, { nil: undefined }), fc.option(bound, { nil: undefined }), fc.boolean(), value, (min, max, int, v) => {
        const rule: NumberRule = {
          int,
          msg: 'must be a number',
          ...(min && { min: [min[0], min[1], 'too small'] as const }),
          ...(max && { max: [max[0], max[1], 'too big'] as const }),
        };
        let schema = int ? z.int({ error: 'must be a number' }) : z.number({ error: 'must be a number' });
        if (min) schema = schema.check(min[1] ? z.gte(min[0], { error: 'too small' }) : z.gt(min[0], { error: 'too small' }));
        if (max) schema = schema.check(max[1] ? z.lte(max[0], { error: 'too big' }) : z.lt(max[0], { error: 'too big' }));
        const issues = optionIssues();
        const ok = checkNumber(issues, 'n', v, rule);
        const zod = z.object({ n: schema }).safeParse({ n: v });
        expect(ok).toBe(zod.success);
        expect(issues.out).toEqual(zod.success ? [] : toValidationIssues(zod.error, { n: v }, ['options']));
      }),
      { numRuns: 500 },
    );
  });
});
