/**
 * The one retry policy of rxvoice's HTTP calls, used by the client's transport (each
 * exchange) and by the batch runner (each job's creation call and polling): data, then
 * the rules as one commented list (the way undici's retry handler keeps its defaults as
 * data and openai-node's `shouldRetry` keeps its rules in one place).
 *
 * What makes an error retryable at all (connection failures, timeouts, 408 / 429 / 5xx)
 * is the error's own `retryable` flag, set once where the error is made (`core/errors.ts`).
 * This file narrows it by what a call costs.
 */
import { backoffDelay } from '../core/backoff.js';
import { ConnectionError, RateLimitError, RxVoiceError } from '../core/errors.js';

/** What a call costs when repeated: `'idempotent'` (GET, bulk results) or `'creation'` (credits). */
export type CallKind = 'idempotent' | 'creation';

/**
 * Error codes of connection failures that prove the request never left this machine
 * (the connection was refused, the host not found or unreachable, the connect timed out).
 */
export const NOT_SENT_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'UND_ERR_CONNECT_TIMEOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

/** How deep {@link errorCodes} follows `cause` links (a cycle stops there too). */
const MAX_CAUSE_DEPTH = 6;

/**
 * The `code`s of an error, of its `cause` chain and of every error an `AggregateError`
 * (Node's happy-eyeballs connect, one per address tried) holds, outermost first.
 */
export function errorCodes(error: unknown, depth = 0): string[] {
  const codes: string[] = [];
  let cur: unknown = error;
  for (let level = depth; level < MAX_CAUSE_DEPTH && cur !== null && typeof cur === 'object'; level += 1) {
    const code = (cur as { code?: unknown }).code;
    if (typeof code === 'string') codes.push(code);
    const errors = (cur as { errors?: unknown }).errors;
    if (Array.isArray(errors)) for (const inner of errors) codes.push(...errorCodes(inner, level + 1));
    cur = (cur as { cause?: unknown }).cause;
  }
  return codes;
}

/**
 * Was this request surely never sent? True for a `ConnectionError` the transport marked
 * `notSent`, and for any error whose code chain (causes and `AggregateError.errors`
 * included) holds one of {@link NOT_SENT_CODES}. When in doubt, false: it may have been.
 *
 * For example an undici `fetch failed` whose cause is an `AggregateError` of
 * `ECONNREFUSED`s (every address refused) was not sent; an `ECONNRESET` may have been.
 */
export function wasNotSent(error: unknown): boolean {
  if (error instanceof ConnectionError && error.notSent) return true;
  return errorCodes(error).some((code) => NOT_SENT_CODES.has(code));
}

/** What the policy needs to know of a failed call besides its error. */
export interface FailedCall {
  kind: CallKind;
  /** The answer's body failed after values were handed out to the subscriber. */
  valuesHandedOut?: boolean;
}

/**
 * May a failed call be sent again? The rules, in order:
 * 1. Only rxvoice's own errors, and only those marked `retryable` where they were made
 *    (connection failures, timeouts, 408, 429, 5xx). A validation error, a refused key, a
 *    redirect elsewhere, an abort or a caller's bug never are.
 * 2. A body that failed after values were handed out is never repeated: the subscriber
 *    would see them twice.
 * 3. A creation call costs credits: it is repeated only when the service surely created
 *    nothing: it answered 429, or the request was never sent ({@link wasNotSent}). A
 *    timeout, a reset or a 5xx after sending may have created a task: not repeated.
 * 4. Anything else (idempotent calls: GET, bulk results) is repeated.
 *
 * For example a 429 is retried for a creation call, a 500 only for an idempotent one.
 */
export function shouldRetry(error: unknown, call: FailedCall): boolean {
  if (!(error instanceof RxVoiceError) || !error.retryable) return false; // 1
  if (call.valuesHandedOut === true) return false; // 2
  if (call.kind === 'creation') return error instanceof RateLimitError || wasNotSent(error); // 3
  return true; // 4
}

/** Delay before retry number `attempt` (0-based): the service's `Retry-After` (capped) when given, else {@link backoffDelay}. */
export function retryDelay(
  attempt: number,
  options: { baseDelayMs: number; maxDelayMs: number; maxRetryAfterMs: number },
  random: () => number,
  retryAfterSeconds?: number,
): number {
  if (retryAfterSeconds !== undefined && Number.isFinite(retryAfterSeconds) && retryAfterSeconds >= 0) {
    return Math.min(retryAfterSeconds * 1000, options.maxRetryAfterMs);
  }
  return backoffDelay(attempt, options, random);
}

/** Parse `Retry-After`: seconds, or an HTTP date. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, (date - now) / 1000);
}
