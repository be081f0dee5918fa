import { describe, expect, it } from 'vitest';
import { LiveSessionError, MIN_REDACTED_SECRET_LENGTH, ValidationError, WITHHELD_TEXT, liveSessionError, redact } from '../../src/core/errors.js';

describe('redact', () => {
  it(`cuts out a secret of ${MIN_REDACTED_SECRET_LENGTH} characters or more; withholds a text holding a shorter one`, () => {
    const eight = 'k'.repeat(MIN_REDACTED_SECRET_LENGTH - 1) + 'Z';
    expect(redact(`failed with ${eight} at ${eight}`, [eight])).toBe('failed with *** at ***');
    const seven = eight.slice(1);
    expect(redact(`failed with ${seven}`, [seven])).toBe(WITHHELD_TEXT);
    // control: a text without the short secret is left as it is
    expect(redact('Connection refused', [seven, undefined, ''])).toBe('Connection refused');
  });
});

describe('the errors callers branch on', () => {
  it('a live session that timed out waiting for ready, or lost its connection, may be retried; one rejected may not', () => {
    const options = { unspoken: 'Hello.' };
    expect(new LiveSessionError('timeout', 'no session.ready', options).retryable).toBe(true);
    expect(new LiveSessionError('connection', 'dropped', options).retryable).toBe(true);
    expect(new LiveSessionError('protocol', 'bad frame', options).retryable).toBe(false);
    expect(liveSessionError('session_rejected', 'bad voice', options)).toMatchObject({ name: 'SessionRejectedError', retryable: false, closeCode: 4400 });
    expect(liveSessionError('credits_exhausted', 'no credits', options)).toMatchObject({ name: 'CreditsExhaustedError', closeCode: 4402 });
  });

  it('a ValidationError says options when every issue is an option, request otherwise (no issues included)', () => {
    const issue = (loc: (string | number)[]) => ({ loc, msg: 'bad', type: 'value_error' });
    expect(new ValidationError([issue(['options', 'x'])], { source: 'local', endpoint: 'op' }).message).toBe('Invalid options for op: options.x: bad');
    expect(new ValidationError([issue(['options', 'x']), issue(['body', 'y'])], { source: 'local' }).message).toMatch(/^Invalid request: /);
    expect(new ValidationError([], { source: 'server', endpoint: 'POST /tts' }).message).toBe('Invalid request for POST /tts: ');
  });
});
