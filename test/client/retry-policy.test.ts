import { describe, expect, it } from 'vitest';
import { isRetryable } from '../../src/batch/run-job.js';
import { shouldRetry, wasNotSent, errorCodes, parseRetryAfter, type CallKind } from '../../src/client/retry-policy.js';
import {
  ApiError,
  AuthenticationError,
  ConnectionError,
  RateLimitError,
  RedirectError,
  TimeoutError,
  ValidationError,
  type RxVoiceError,
} from '../../src/core/errors.js';

const coded = (code: string, message = code): Error => Object.assign(new Error(message), { code });
/** undici's `fetch failed` TypeError whose cause is Node's happy-eyeballs AggregateError (no code of its own). */
const refusedEverywhere = (): Error => new TypeError('fetch failed', { cause: new AggregateError([coded('ECONNREFUSED'), coded('ECONNREFUSED')], 'connect failed') });
/** A ConnectionError made elsewhere than the transport (no `notSent` flag), the raw failure as its cause. */
const connection = (cause: unknown): ConnectionError => new ConnectionError('could not reach the service', { cause });

describe('wasNotSent: one rule for "was this request sent?"', () => {
  it('finds a not-sent code anywhere in the cause chain, AggregateError.errors included', () => {
    expect(wasNotSent(coded('ECONNREFUSED'))).toBe(true);
    expect(wasNotSent(new Error('wrapped', { cause: coded('ENOTFOUND') }))).toBe(true);
    expect(wasNotSent(refusedEverywhere())).toBe(true);
    expect(wasNotSent(connection(refusedEverywhere()))).toBe(true);
    expect(wasNotSent(new ConnectionError('x', { notSent: true }))).toBe(true);
  });

  it('each failure that happens before a byte is sent: refused, no such host, DNS try again, connect timeout, host or network unreachable', () => {
    for (const code of ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT', 'EHOSTUNREACH', 'ENETUNREACH']) {
      expect(wasNotSent(connection(coded(code))), code).toBe(true);
      // so a creation call failing so is tried again
      expect(shouldRetry(connection(coded(code)), { kind: 'creation' }), code).toBe(true);
    }
  });

  it('controls: a reset, a timeout after connecting, nothing at all: may have been sent', () => {
    expect(wasNotSent(coded('ECONNRESET'))).toBe(false);
    expect(wasNotSent(connection(new AggregateError([coded('ECONNRESET')])))).toBe(false);
    expect(wasNotSent(coded('UND_ERR_HEADERS_TIMEOUT'))).toBe(false);
    expect(wasNotSent(new Error('no code'))).toBe(false);
    expect(wasNotSent(undefined)).toBe(false);
  });

  it('stops on a cause cycle', () => {
    const a = coded('EPIPE') as Error & { cause?: unknown };
    a.cause = a;
    expect(errorCodes(a)).toEqual(['EPIPE', 'EPIPE', 'EPIPE', 'EPIPE', 'EPIPE', 'EPIPE']);
    expect(wasNotSent(a)).toBe(false);
  });
});

describe('shouldRetry: the rules in order', () => {
  const table: Array<[string, unknown, CallKind, boolean | undefined, boolean]> = [
    ['not an rxvoice error', coded('ECONNREFUSED'), 'idempotent', false, false],
    ['validation', new ValidationError([], { source: 'server', endpoint: 'POST /x' }), 'idempotent', false, false],
    ['refused key', new AuthenticationError('401', { status: 401 }), 'idempotent', false, false],
    ['redirect elsewhere', new RedirectError(302, undefined, 'elsewhere'), 'idempotent', false, false],
    ['400', new ApiError(400, 'bad'), 'idempotent', false, false],
    ['500 idempotent', new ApiError(500, 'oops'), 'idempotent', false, true],
    ['408 idempotent', new ApiError(408, 'slow'), 'idempotent', false, true],
    ['timeout idempotent', new TimeoutError('slow'), 'idempotent', false, true],
    ['reset idempotent', connection(coded('ECONNRESET')), 'idempotent', false, true],
    ['reset after values', connection(coded('ECONNRESET')), 'idempotent', true, false],
    ['429 creation', new RateLimitError('429'), 'creation', false, true],
    ['refused creation', connection(refusedEverywhere()), 'creation', false, true],
    ['reset creation', connection(coded('ECONNRESET')), 'creation', false, false],
    ['timeout creation', new TimeoutError('slow'), 'creation', false, false],
    ['500 creation', new ApiError(500, 'oops'), 'creation', false, false],
  ];
  it.each(table)('%s', (_, error, kind, valuesHandedOut, expected) => {
    expect(shouldRetry(error, { kind, valuesHandedOut })).toBe(expected);
  });

  it('the batch decides with the same policy: a creation call refused on every address is retried (the old codesOf missed AggregateError.errors)', () => {
    const refused = connection(refusedEverywhere());
    expect(isRetryable(refused, 'create')).toBe(true);
    // control: a reset after sending is not (it may have created a task)
    expect(isRetryable(connection(coded('ECONNRESET')), 'create')).toBe(false);
    // polling is idempotent: the reset is retried there; a task that ended TIMEOUT is not (a new one would be paid again)
    expect(isRetryable(connection(coded('ECONNRESET')), 'task')).toBe(true);
    expect(isRetryable({ code: 'task_timeout', retryable: false } as unknown as RxVoiceError, 'task')).toBe(false);
  });
});

describe('parseRetryAfter: what the service asks to wait, in seconds', () => {
  it('an empty or blank header asks for nothing (not "retry at once")', () => {
    expect(parseRetryAfter('')).toBeUndefined();
    expect(parseRetryAfter('   ')).toBeUndefined();
    // control: a real zero is a zero
    expect(parseRetryAfter('0')).toBe(0);
  });

  it('never a negative wait: a negative number or a date already past is 0', () => {
    expect(parseRetryAfter('-5')).toBe(0);
    expect(parseRetryAfter(new Date(10_000).toUTCString(), 20_000)).toBe(0);
    // control: a date ahead is the seconds until it
    expect(parseRetryAfter(new Date(30_000).toUTCString(), 20_000)).toBe(10);
  });
});
