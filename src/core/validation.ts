/**
 * Turns zod issues into the service's own 422 shape (`{ loc, msg, type }`), so that a
 * local rejection by the client and a 422 from the server (or the emulator) look the same.
 */
import type { z } from 'zod';
import { ValidationError } from './errors.js';
import type { ValidationIssue } from './schemas.js';

function issueType(issue: z.core.$ZodIssue, input: unknown): string {
  switch (issue.code) {
    case 'invalid_type':
      return input === undefined ? 'missing' : `${issue.expected}_type`;
    case 'too_small':
      if (issue.origin === 'string') return 'string_too_short';
      if (issue.origin === 'array' || issue.origin === 'set') return 'too_short';
      return issue.inclusive === false ? 'greater_than' : 'greater_than_equal';
    case 'too_big':
      if (issue.origin === 'string') return 'string_too_long';
      if (issue.origin === 'array' || issue.origin === 'set') return 'too_long';
      return issue.inclusive === false ? 'less_than' : 'less_than_equal';
    case 'invalid_value':
      return 'enum';
    case 'invalid_union':
      return 'union_error';
    case 'invalid_format':
      return issue.format === 'regex' ? 'string_pattern_mismatch' : `${issue.format}_parsing`;
    case 'unrecognized_keys':
      return 'extra_forbidden';
    default:
      return 'value_error';
  }
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let cur: unknown = root;
  for (const key of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[key];
  }
  return cur;
}

/** Convert a ZodError (of `zod` or `zod/mini`) into `{ loc, msg, type }` issues, `loc` prefixed (e.g. `['body', ...]`). */
export function toValidationIssues(
  error: { readonly issues: readonly z.core.$ZodIssue[] },
  input: unknown,
  prefix: ReadonlyArray<string | number> = ['body'],
): ValidationIssue[] {
  return error.issues.map((issue) => ({
    loc: [...prefix, ...issue.path.map((p) => (typeof p === 'number' ? p : String(p)))],
    msg: issue.message,
    type: issueType(issue, valueAt(input, issue.path)),
  }));
}

/** What {@link checkOptions} needs of a schema: `zod` and `zod/mini` schemas both have it. */
export interface OptionsSchema<T> {
  safeParse(input: unknown): { success: true; data: T } | { success: false; error: { readonly issues: readonly z.core.$ZodIssue[] } };
}

/**
 * The one validation policy for options: check the options of an operator, sink or
 * session with its schema when it is created, and throw a {@link ValidationError}
 * (`source: 'local'`, issues at `['options', ...]`) when they do not fit. No clamping.
 *
 * @param schema The options' schema.
 * @param input The options as given.
 * @param where Who takes them, for the message (e.g. `segmentSentences`).
 * @return The parsed options (defaults filled in).
 */
export function checkOptions<T>(schema: OptionsSchema<T>, input: unknown, where: string): T {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  throw new ValidationError(toValidationIssues(result.error, input, ['options']), { source: 'local', endpoint: where });
}

/**
 * A {@link ValidationError} for one bad option (`loc` `['options', ...path]`), for checks
 * written without a schema; throw it when the operator is created.
 */
export function optionError(where: string, path: ReadonlyArray<string | number>, msg: string, type = 'value_error'): ValidationError {
  return new ValidationError([{ loc: ['options', ...path], msg, type }], { source: 'local', endpoint: where });
}
