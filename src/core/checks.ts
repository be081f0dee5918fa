/**
 * Building blocks of plain option and frame checks (no schema library), for code a browser
 * loads: each adds issues in the service's `{ loc, msg, type }` shape, with the `type` a
 * zod schema would give (see `toValidationIssues`), so a check written with these and the
 * zod schema it stands in for can be proven to agree (`test/live/checks.test.ts`,
 * `test/operators/option-checks.test.ts`).
 *
 * @internal
 */
import { ValidationError } from './errors.js';
import type { ValidationIssue } from './schemas.js';

/** A value that is an object (not null, not an array), as zod's `object` takes. */
export const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
/** A finite number, as zod's `number` takes. */
export const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/** Where the issues of a check go, and under which `loc` prefix. */
export type Issues = { readonly out: ValidationIssue[]; readonly prefix: ReadonlyArray<string | number> };

/** Adds one issue at `key`. */
export function add(issues: Issues, key: string, msg: string, type: string): void {
  issues.out.push({ loc: [...issues.prefix, key], msg, type });
}

/** A number with bounds: false (issues added) when it is not one, or out of them. */
export interface NumberRule {
  /** Whole numbers only: `msg` also reports a non-integer. */
  int?: boolean;
  msg: string;
  /** [bound, inclusive, message] */
  min?: readonly [number, boolean, string];
  max?: readonly [number, boolean, string];
}

/** Checks a number as zod's `number` / `int` with `minimum` / `maximum` checks would (the same issues, in order). */
export function checkNumber(issues: Issues, key: string, v: unknown, rule: NumberRule): boolean {
  if (!isNumber(v)) {
    add(issues, key, rule.msg, v === undefined ? 'missing' : 'number_type');
    return false;
  }
  let ok = true;
  if (rule.int === true) {
    if (!Number.isInteger(v)) {
      add(issues, key, rule.msg, 'int_type');
      return false;
    }
    if (!Number.isSafeInteger(v)) {
      add(issues, key, rule.msg, v > 0 ? 'less_than_equal' : 'greater_than_equal');
      ok = false;
    }
  }
  const { min, max } = rule;
  if (min && (min[1] ? v < min[0] : v <= min[0])) {
    add(issues, key, min[2], min[1] ? 'greater_than_equal' : 'greater_than');
    ok = false;
  }
  if (max && (max[1] ? v > max[0] : v >= max[0])) {
    add(issues, key, max[2], max[1] ? 'less_than_equal' : 'less_than');
    ok = false;
  }
  return ok;
}

/**
 * Throws the {@link ValidationError} of `issues` (`source: 'local'`) when there are any:
 * the one validation policy of `checkOptions`, for options checked without a schema.
 */
export function throwIfIssues(issues: readonly ValidationIssue[], where: string): void {
  if (issues.length > 0) throw new ValidationError([...issues], { source: 'local', endpoint: where });
}

/** The issues of an options object checked without a schema: `loc` under `['options']`. */
export function optionIssues(): Issues {
  return { out: [], prefix: ['options'] };
}
