import { describe, expect, it } from 'vitest';
import { liveSessionError, CreditsExhaustedError, SessionRejectedError } from '../../src/core/errors.js';
import { closeError, isRefusal } from '../../src/live/close-error.js';
import { protocolViolation } from '../../src/live/node-socket.js';

// code, reason, session.error, transport error -> error code, message, retryable (as the
// LiveSessionError built from it says), whether the code refuses the session
const table: Array<[number, string, string | undefined, string | undefined, string, string, boolean, boolean]> = [
  [4401, '', undefined, undefined, 'authentication', 'The live session rejected the API key (close 4401)', false, true],
  [4401, 'bad key', 'invalid key', undefined, 'authentication', 'The live session rejected the API key (close 4401)', false, true],
  [4400, '', 'voice_id 99 does not exist', undefined, 'session_rejected', 'The live session was rejected: voice_id 99 does not exist', false, true],
  [4400, 'bad config', undefined, undefined, 'session_rejected', 'The live session was rejected: bad config', false, true],
  [4400, '', undefined, undefined, 'session_rejected', 'The live session was rejected: no reason given', false, true],
  [4403, 'origin', undefined, undefined, 'session_rejected', 'The live session was refused (close 4403: origin)', false, true],
  [4403, '', 'ignored', undefined, 'session_rejected', 'The live session was refused (close 4403)', false, true],
  [4402, '', 'balance 0', undefined, 'credits_exhausted', 'Credits ran out during the live session: balance 0', false, true],
  [4402, 'out', undefined, undefined, 'credits_exhausted', 'Credits ran out during the live session', false, true],
  [1011, '', 'engine crashed', undefined, 'session_error', 'The live session failed: engine crashed (close 1011)', false, false],
  [1011, 'internal', 'engine crashed', undefined, 'session_error', 'The live session failed: engine crashed (close 1011: internal)', false, false],
  // a session.error with an empty message is still the service's error (not a retryable drop)
  [1011, '', '', undefined, 'session_error', 'The live session failed:  (close 1011)', false, false],
  [1001, '', 'going away', undefined, 'session_error', 'The live session failed: going away (close 1001)', true, false],
  [1012, '', 'restart', undefined, 'session_error', 'The live session failed: restart (close 1012)', true, false],
  [1013, '', 'later', undefined, 'session_error', 'The live session failed: later (close 1013)', true, false],
  [4408, 'idle', 'idle', undefined, 'session_error', 'The live session failed: idle (close 4408: idle)', true, false],
  [4429, '', 'too many', undefined, 'session_error', 'The live session failed: too many (close 4429)', true, false],
  [1006, '', undefined, undefined, 'connection', 'The live session closed abnormally (code 1006)', true, false],
  [1006, '', undefined, 'ECONNRESET', 'connection', 'The live session closed abnormally (code 1006: ECONNRESET)', true, false],
  [1006, 'gone', undefined, 'ECONNRESET', 'connection', 'The live session closed abnormally (code 1006: gone)', true, false],
  [1000, '', undefined, undefined, 'connection', 'The live session closed before session.done (code 1000)', true, false],
  [4408, '', undefined, undefined, 'connection', 'The live session closed abnormally (code 4408)', true, false],
];

describe('closeError: what a close that ended a live session means', () => {
  it.each(table)('close %i reason %j session.error %j transport %j: %s', (code, reason, sessionError, transport, errorCode, message, retryable, refusal) => {
    const spec = closeError(code, reason, sessionError, transport);
    expect(spec.code).toBe(errorCode);
    expect(spec.message).toBe(message);
    expect(spec.closeCode).toBe(code);
    expect(spec.reason).toBe(reason === '' ? undefined : reason);
    expect(isRefusal(code)).toBe(refusal);
    // the error the session builds from it (as LiveSession.error does)
    const { code: c, message: m, ...options } = spec;
    const error = liveSessionError(c, m, { ...options, unspoken: 'left' });
    expect(error.retryable).toBe(retryable);
    expect(error.closeCode).toBe(code);
    expect(error.unspoken).toBe('left');
    if (errorCode === 'session_rejected') expect(error).toBeInstanceOf(SessionRejectedError);
    if (errorCode === 'credits_exhausted') expect(error).toBeInstanceOf(CreditsExhaustedError);
  });

  it('sets retryable only where the code rule would be wrong (never undefined, which would turn a connection error unretryable)', () => {
    expect('retryable' in closeError(1006, '', undefined)).toBe(false);
    expect(closeError(1011, '', 'x').retryable).toBe(false);
    expect(closeError(1013, '', 'x').retryable).toBe(true);
  });
});

describe('protocolViolation', () => {
  it("names a ws WS_ERR_* error a protocol error, and nothing else", () => {
    expect(protocolViolation({ error: Object.assign(new RangeError('Max payload size exceeded'), { code: 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH' }) }, 1024)).toBe(
      'The server sent a message larger than maxPayload (1024 bytes)',
    );
    expect(protocolViolation({ error: Object.assign(new Error('Invalid opcode 3'), { code: 'WS_ERR_INVALID_OPCODE' }) }, 1024)).toBe(
      'The server broke the WebSocket protocol (WS_ERR_INVALID_OPCODE)',
    );
    // a refused connection, a browser's bare error event, a code that is not ws's: no protocol error
    expect(protocolViolation({ error: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) }, 1024)).toBeUndefined();
    expect(protocolViolation({}, 1024)).toBeUndefined();
    expect(protocolViolation({ error: { code: 42 } }, 1024)).toBeUndefined();
  });
});
