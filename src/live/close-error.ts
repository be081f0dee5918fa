/**
 * What a WebSocket close that ended a live session before its end means: the close code,
 * its reason and the `session.error` that came before it, to the error the session ends
 * (or reconnects) with. Pure: the session adds the text not yet spoken.
 */
import type { LiveSessionErrorCode } from '../core/errors.js';
import { CloseCodes } from './protocol-constants.js';

/**
 * Close codes after a `session.error` that say the same request may succeed later: going
 * away (1001), restarting (1012), try again later (1013), idle (4408), too many sessions
 * (4429). After any other (1011, internal error, ...) the error is not retryable.
 */
const RETRY_AFTER_SESSION_ERROR: ReadonlySet<number> = new Set([1001, 1012, 1013, CloseCodes.idleTimeout, CloseCodes.tooManySessions]);

/** Close codes by which the service (or a relay) refuses the session: asking again cannot change the answer. */
const REFUSALS: ReadonlySet<number> = new Set([CloseCodes.invalidKey, CloseCodes.rejected, CloseCodes.creditsExhausted, CloseCodes.forbidden]);

/**
 * Whether a close code refuses the session (4401 key, 4400 rejected, 4402 credits, 4403
 * forbidden): the session ends with the error, never reconnects, even when every text
 * was already delivered.
 */
export function isRefusal(code: number): boolean {
  return REFUSALS.has(code);
}

/** The error a close means, without the unspoken text (which only the session knows). */
export interface CloseErrorSpec {
  code: LiveSessionErrorCode;
  message: string;
  closeCode: number;
  /** The close reason, when one was given. */
  reason: string | undefined;
  /** Set only where it differs from the code's own rule (`'connection'` retryable, the others not). */
  retryable?: boolean;
}

/**
 * The error of a close that ended a live session before its clean end.
 *
 * | close | error code | retryable |
 * | --- | --- | --- |
 * | 4401 | `authentication` | no |
 * | 4400 | `session_rejected` (the `session.error`'s message) | no |
 * | 4403 | `session_rejected` | no |
 * | 4402 | `credits_exhausted` | no |
 * | any other, after a `session.error` | `session_error` | 1001, 1012, 1013, 4408, 4429 only |
 * | any other | `connection` | yes |
 *
 * @param code The WebSocket close code.
 * @param reason The close reason, already scrubbed of the key ('' when none).
 * @param sessionError The message of a `session.error` received before the close (scrubbed).
 * @param transportError The socket's last error message (scrubbed), said when no reason was given.
 * @internal
 *
 * For example `closeError(1006, '', undefined)` is a retryable `'connection'` error,
 * "The live session closed abnormally (code 1006)".
 */
export function closeError(code: number, reason: string, sessionError: string | undefined, transportError?: string): CloseErrorSpec {
  const close = { closeCode: code, reason: reason || undefined };
  switch (code) {
    case CloseCodes.invalidKey:
      return { code: 'authentication', message: 'The live session rejected the API key (close 4401)', ...close };
    case CloseCodes.rejected:
      return { code: 'session_rejected', message: `The live session was rejected: ${sessionError ?? (reason || 'no reason given')}`, ...close };
    case CloseCodes.forbidden:
      // a relay refusing this page's origin: asking again cannot change the answer
      return { code: 'session_rejected', message: `The live session was refused (close 4403${reason ? `: ${reason}` : ''})`, ...close };
    case CloseCodes.creditsExhausted:
      return { code: 'credits_exhausted', message: `Credits ran out during the live session${sessionError ? `: ${sessionError}` : ''}`, ...close };
  }
  if (sessionError !== undefined) {
    // the service said what went wrong: its message, not a bare close code
    const message = `The live session failed: ${sessionError} (close ${code}${reason ? `: ${reason}` : ''})`;
    return { code: 'session_error', message, ...close, retryable: RETRY_AFTER_SESSION_ERROR.has(code) };
  }
  const detail = reason || transportError;
  const how = code === CloseCodes.normal ? 'before session.done' : 'abnormally';
  return { code: 'connection', message: `The live session closed ${how} (code ${code}${detail ? `: ${detail}` : ''})`, ...close };
}
