/**
 * rxvoice's errors as LiveKit's (`APIStatusError`, `APIConnectionError`, `APITimeoutError`,
 * `APIError`), so that an agent session reports them as it reports any TTS plugin's.
 *
 * Every one is `retryable: false`: the retries that are safe were already made by rxvoice
 * (its HTTP retry policy before any audio, the live session's reconnect that resends only
 * the unspoken text). A LiveKit retry would start the request over, so the listener would
 * hear again what was already played and the service would be paid twice.
 */
import { APIConnectionError, APIError, APIStatusError, APITimeoutError } from '@livekit/agents';
import {
  AbortError,
  ApiError,
  AuthenticationError,
  ConnectionError,
  LiveSessionError,
  RxVoiceError,
  TimeoutError,
  ValidationError,
} from '../core/errors.js';

/** HTTP-like status of a live session's refusal, by its code. */
const LIVE_STATUS: Partial<Record<string, number>> = { authentication: 401, session_rejected: 400, credits_exhausted: 402 };

/** Whether `error` is the caller's abort (then nothing is reported: the stream was closed). */
export function isAbort(error: unknown): boolean {
  return error instanceof AbortError || (error instanceof Error && error.name === 'AbortError');
}

/**
 * LiveKit's error for an error of rxvoice (or anything thrown): the message as rxvoice wrote
 * it (it never holds the API key), `body` with rxvoice's `code` (and, for a live session, the
 * text not yet spoken), the original as `cause`.
 */
export function toLiveKitError(error: unknown): Error {
  const message = error instanceof Error ? error.message : String(error);
  const body: Record<string, unknown> = { code: error instanceof RxVoiceError ? error.code : 'unknown' };
  if (error instanceof LiveSessionError) body['unspoken'] = error.unspoken;
  const options = { body, retryable: false };
  let mapped: APIError;
  if (error instanceof LiveSessionError && LIVE_STATUS[error.code] !== undefined) {
    mapped = new APIStatusError({ message, options: { ...options, statusCode: LIVE_STATUS[error.code] } });
  } else if (error instanceof LiveSessionError && error.code === 'timeout') {
    mapped = new APITimeoutError({ message, options });
  } else if (error instanceof LiveSessionError && error.code === 'connection') {
    mapped = new APIConnectionError({ message, options });
  } else if (error instanceof ApiError) {
    mapped = new APIStatusError({ message, options: { ...options, statusCode: error.status, requestId: error.requestId ?? null } });
  } else if (error instanceof AuthenticationError) {
    mapped = new APIStatusError({ message, options: { ...options, statusCode: error.status ?? 401 } });
  } else if (error instanceof ValidationError) {
    mapped = new APIStatusError({ message, options: { ...options, statusCode: 422 } });
  } else if (error instanceof TimeoutError) {
    mapped = new APITimeoutError({ message, options });
  } else if (error instanceof ConnectionError) {
    mapped = new APIConnectionError({ message, options });
  } else {
    mapped = new APIError(message, options);
  }
  // LiveKit's connection errors set no body of their own
  if (mapped.body === null) Object.defineProperty(mapped, 'body', { value: body, enumerable: true });
  Object.defineProperty(mapped, 'cause', { value: error, enumerable: false, configurable: true, writable: true });
  return mapped;
}
