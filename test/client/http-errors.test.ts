import { describe, expect, it } from 'vitest';
import { messageOf, parseBody, sanitizeCause, statusError } from '../../src/client/http-errors.js';
import { ApiError, AuthenticationError, RateLimitError, ValidationError } from '../../src/core/errors.js';

const KEY = 'sk-secret-key';
const scrub = (text: string): string => text.split(KEY).join('***');
const answer = (status: number, body: unknown, headers: Record<string, string> = {}, statusText = '') => ({ status, statusText, headers: new Headers(headers), body });

describe('statusError: a non-2xx answer to the error tree (pure)', () => {
  it('422 with the service detail: a server ValidationError, every string scrubbed', () => {
    const error = statusError('POST /tts', answer(422, { detail: [{ loc: ['body', `voice ${KEY}`], msg: `bad ${KEY}`, type: 'value_error' }] }), scrub);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).issues).toEqual([{ loc: ['body', 'voice ***'], msg: 'bad ***', type: 'value_error' }]);
    expect((error as ValidationError).source).toBe('server');
  });

  it('422 without a readable detail: one generic issue', () => {
    const error = statusError('POST /tts', answer(422, 'nope'), scrub) as ValidationError;
    expect(error.issues).toEqual([{ loc: ['body'], msg: 'the service rejected the request', type: 'value_error' }]);
  });

  it.each([401, 403])('%i: AuthenticationError naming the key, not retryable', (status) => {
    const error = statusError('GET /voices', answer(status, { error: 'invalid key' }), scrub);
    expect(error).toBeInstanceOf(AuthenticationError);
    const what = status === 401 ? 'The API key was refused' : 'This API key is not allowed here';
    expect(error.message).toBe(`GET /voices answered ${status}: invalid key. ${what}: check CAMB_API_KEY (or the \`apiKey\` option).`);
    expect(error.retryable).toBe(false);
  });

  it('429: RateLimitError with Retry-After (seconds or a date)', () => {
    const error = statusError('POST /tts', answer(429, undefined, { 'retry-after': '2' }, 'Too Many Requests'), scrub) as RateLimitError;
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error.retryAfter).toBe(2);
    expect(error.message).toBe('POST /tts answered 429 (rate limited): Too Many Requests');
  });

  it.each([
    [500, true],
    [503, true],
    [408, true],
    [404, false],
    [409, false],
  ])('%i: ApiError, retryable %s, body scrubbed, request id kept', (status, retryable) => {
    const error = statusError('GET /x', answer(status, { message: `boom ${KEY}` }, { 'x-request-id': `req-${KEY}` }), scrub) as ApiError;
    expect(error).toBeInstanceOf(ApiError);
    expect(error.status).toBe(status);
    expect(error.retryable).toBe(retryable);
    expect(error.message).toBe(`GET /x answered ${status}: boom ***`);
    expect(error.body).toEqual({ message: 'boom ***' });
    expect(error.requestId).toBe('req-***');
    expect(JSON.stringify(error)).not.toContain(KEY);
  });

  it('402: an ApiError of code payment_required (as a task that ended PAYMENT_REQUIRED), the CLI exits 5; control: 404 is api', async () => {
    const { exitCodeOf, ExitCode } = await import('../../src/cli/exit-codes.js');
    const error = statusError('POST /tts-stream', answer(402, { error: 'insufficient credits' }), scrub) as ApiError;
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 402, code: 'payment_required', retryable: false });
    expect(error.message).toBe('POST /tts-stream answered 402: insufficient credits. Add credits, then retry.');
    expect(exitCodeOf(error)).toBe(ExitCode.payment);
    const control = statusError('POST /tts-stream', answer(404, { error: 'no such thing' }), scrub);
    expect(control.code).toBe('api');
    expect(exitCodeOf(control)).not.toBe(ExitCode.payment);
  });

  it('reads the message where services put it', () => {
    expect(messageOf({ error: 'a' })).toBe('a');
    expect(messageOf({ detail: 'b' })).toBe('b');
    expect(messageOf({ message: 'c' })).toBe('c');
    expect(messageOf('x'.repeat(600))).toHaveLength(500);
    expect(messageOf('')).toBeUndefined();
    expect(messageOf({ other: 1 })).toBeUndefined();
    expect(parseBody('')).toBeUndefined();
    expect(parseBody('{"a":1}')).toEqual({ a: 1 });
    expect(parseBody('{not json')).toBe('{not json');
  });

  it('sanitizeCause: name, scrubbed message with the inner one, first code; no stack, no other fields', () => {
    const raw = Object.assign(new TypeError(`fetch failed ${KEY}`, { cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) }), {
      socket: { headers: { 'x-api-key': KEY } },
    });
    const copy = sanitizeCause(raw, scrub) as Error & { code?: string };
    expect(copy.name).toBe('TypeError');
    expect(copy.message).toBe('fetch failed ***: connect ECONNREFUSED');
    expect(copy.code).toBe('ECONNREFUSED');
    expect(copy.stack).toBeUndefined();
    expect(Object.keys(copy).sort()).toEqual(['code', 'name']);
  });
});
