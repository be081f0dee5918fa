/**
 * HTTP answers and low-level failures to rxvoice's error tree. Pure: given what the
 * service answered (status, headers, body already read) and a scrubber of the key, the
 * error; no I/O.
 */
import { ApiError, AuthenticationError, RateLimitError, ValidationError, type RxVoiceError } from '../core/errors.js';
import { ErrorBodySchema, ValidationErrorBodySchema, type ValidationIssue } from '../core/schemas.js';
import { errorCodes, parseRetryAfter } from './retry-policy.js';
import { refusedKeyMessage } from './config.js';

/** A non-2xx answer, its body read (JSON when it parses, else the text; undefined when empty). */
export interface StatusAnswer {
  status: number;
  statusText: string;
  headers: Pick<Headers, 'get'>;
  body: unknown;
}

/** The body of an answer as read: JSON when it parses, else the text itself, undefined when empty. */
export function parseBody(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/**
 * The error of a non-2xx answer: 422 a server `ValidationError` (its issues), 401/403
 * `AuthenticationError`, 429 `RateLimitError` (with `Retry-After`), anything else an
 * `ApiError` carrying the status, the scrubbed body, `x-request-id` and `Retry-After`.
 * Every string from the service goes through `scrub` (the key never shows).
 *
 * For example a 429 with `Retry-After: 2` is a `RateLimitError` with `retryAfter` 2.
 */
export function statusError(endpoint: string, answer: StatusAnswer, scrub: (text: string) => string): RxVoiceError {
  const { status, headers, body } = answer;
  if (status === 422) {
    const parsed = ValidationErrorBodySchema.safeParse(body);
    const issues: ValidationIssue[] = parsed.success
      ? parsed.data.detail.map((i) => ({
          // every string the service sends back is scrubbed, field names included
          loc: i.loc.map((part) => (typeof part === 'string' ? scrub(part) : part)),
          msg: scrub(i.msg),
          type: scrub(i.type),
        }))
      : [{ loc: ['body'], msg: 'the service rejected the request', type: 'value_error' }];
    return new ValidationError(issues, { source: 'server', endpoint });
  }
  const serviceMessage = scrub(messageOf(body) ?? answer.statusText ?? '');
  const suffix = serviceMessage ? `: ${serviceMessage}` : '';
  if (status === 401 || status === 403) {
    return new AuthenticationError(refusedKeyMessage(endpoint, status, serviceMessage), { status });
  }
  const retryAfter = parseRetryAfter(headers.get('retry-after'));
  if (status === 429) {
    return new RateLimitError(`${endpoint} answered 429 (rate limited)${suffix}`, retryAfter === undefined ? {} : { retryAfter });
  }
  const rawRequestId = headers.get('x-request-id');
  const requestId = rawRequestId === null ? undefined : scrub(rawRequestId);
  // 402: the credits do not cover the call (the contract's "credits are insufficient")
  const payment = status === 402;
  return new ApiError(status, `${endpoint} answered ${status}${suffix}${payment ? '. Add credits, then retry.' : ''}`, {
    body: scrubBody(body, scrub),
    ...(requestId ? { requestId } : {}),
    ...(retryAfter === undefined ? {} : { retryAfter }),
    ...(payment ? { code: 'payment_required' as const } : {}),
  });
}

/** The service's message in an error body: `{ error }`, `message`, `detail`, or the text itself (500 characters at most). */
export function messageOf(body: unknown): string | undefined {
  if (typeof body === 'string') return body.slice(0, 500) || undefined;
  const parsed = ErrorBodySchema.safeParse(body);
  if (parsed.success) return parsed.data.error;
  if (body && typeof body === 'object') {
    const o = body as Record<string, unknown>;
    for (const key of ['message', 'detail', 'error']) {
      if (typeof o[key] === 'string') return o[key];
    }
  }
  return undefined;
}

function scrubBody(body: unknown, scrub: (text: string) => string): unknown {
  if (body === undefined) return undefined;
  try {
    return JSON.parse(scrub(JSON.stringify(body))) as unknown;
  } catch {
    return undefined;
  }
}

/** A plain copy of a low-level error: name, message and code only (no sockets, no headers), scrubbed. */
export function sanitizeCause(error: unknown, scrub: (text: string) => string): Error {
  const codes = errorCodes(error);
  let message = error instanceof Error ? error.message : String(error);
  const inner = error instanceof Error && error.cause instanceof Error ? error.cause.message : undefined;
  if (inner && inner !== message) message = `${message}: ${inner}`;
  const copy = new Error(scrub(message));
  copy.name = error instanceof Error ? error.name : 'Error';
  if (codes[0]) (copy as Error & { code?: string }).code = codes[0];
  copy.stack = undefined;
  return copy;
}
