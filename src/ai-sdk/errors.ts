/**
 * The AI SDK's error classes for rxvoice's errors. `@ai-sdk/provider` (the optional peer
 * that defines them) is imported on the first call of a model, never when
 * `rxvoice/ai-sdk` is loaded; without it that call fails with an error naming the package.
 *
 * @internal
 */
import { createRequire } from 'node:module';
import { shouldRetry } from '../client/retry-policy.js';
import {
  AbortError,
  ApiError,
  AuthenticationError,
  RateLimitError,
  RxVoiceError,
  TaskError,
  TaskFailedError,
  ValidationError,
} from '../core/errors.js';

/** The module `@ai-sdk/provider`, as the provider uses it. */
export type AiSdkProvider = typeof import('@ai-sdk/provider');

const PEER = '@ai-sdk/provider';
let loading: Promise<AiSdkProvider> | undefined;
let loaded: AiSdkProvider | undefined;

/**
 * Import `@ai-sdk/provider` once. Rejects with an {@link RxVoiceError} (code `config`)
 * naming the package when it is not installed. The specifier is a parameter for tests only.
 */
export function loadAiSdkProvider(specifier = PEER): Promise<AiSdkProvider> {
  if (specifier !== PEER) return importPeer(specifier);
  loading ??= importPeer(specifier).then(
    (module) => (loaded = module),
    (error: unknown) => {
      loading = undefined;
      throw error;
    },
  );
  return loading;
}

/**
 * `@ai-sdk/provider` at once, for what must throw synchronously: the module imported
 * before when there is one, else its CommonJS build (whose errors the AI SDK's
 * `isInstance` checks recognize all the same).
 */
export function aiSdkProviderNow(): AiSdkProvider {
  return loaded ?? (createRequire(import.meta.url)(PEER) as AiSdkProvider);
}

async function importPeer(specifier: string): Promise<AiSdkProvider> {
  try {
    return (await import(specifier)) as AiSdkProvider;
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException;
    const missing = (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') && message.includes(`'${specifier}'`);
    if (!missing) throw error;
    throw new RxVoiceError('config', `rxvoice/ai-sdk needs the package ${specifier} (an optional peer): npm install ai ${specifier}`, { cause: error });
  }
}

/** Where a failed call went, for `APICallError`. */
export interface CallSite {
  url: string;
  requestBodyValues: unknown;
  /**
   * True once a task was created: then no error is retryable by the AI SDK (its retry
   * repeats the whole call, which would create and pay for a second task).
   */
  paid: boolean;
}

/**
 * The AI SDK's error for an error of rxvoice's client: `InvalidArgumentError` for bad
 * input found before sending; `APICallError` for what the service answered (401, 422,
 * other statuses, a task that ended in ERROR, TIMEOUT or PAYMENT_REQUIRED) and for
 * connection problems, with the rxvoice error as `cause`. An abort (`AbortError`, whose
 * `name` the AI SDK recognizes) and errors not of rxvoice pass unchanged.
 */
export function toAiSdkError(sdk: AiSdkProvider, error: unknown, site: CallSite): unknown {
  if (!(error instanceof RxVoiceError) || error instanceof AbortError) return error;
  if (error instanceof ValidationError && error.source === 'local') {
    return new sdk.InvalidArgumentError({ argument: error.issues[0]?.loc.join('.') ?? 'options', message: error.message, cause: error });
  }
  const base = { message: error.message, url: site.url, requestBodyValues: site.requestBodyValues, cause: error };
  // The AI SDK repeats the whole call: only when the failed request surely cost nothing
  // (a rate limit, a request that never left: the retry policy of rxvoice's creation
  // calls), and no task exists that a repeat would pay for again.
  const isRetryable = shouldRetry(error, { kind: 'creation' }) && !site.paid;
  if (error instanceof ValidationError) {
    const detail = { detail: error.issues };
    return new sdk.APICallError({ ...base, statusCode: 422, responseBody: JSON.stringify(detail), data: detail, isRetryable: false });
  }
  if (error instanceof AuthenticationError) {
    return new sdk.APICallError({ ...base, statusCode: error.status ?? 401, isRetryable: false });
  }
  if (error instanceof RateLimitError) {
    const responseHeaders = error.retryAfter === undefined ? undefined : { 'retry-after': String(error.retryAfter) };
    return new sdk.APICallError({ ...base, statusCode: 429, ...(responseHeaders ? { responseHeaders } : {}), isRetryable });
  }
  if (error instanceof ApiError) {
    const responseBody = typeof error.body === 'string' ? error.body : error.body === undefined ? undefined : JSON.stringify(error.body);
    const responseHeaders = error.retryAfter === undefined ? undefined : { 'retry-after': String(error.retryAfter) };
    return new sdk.APICallError({
      ...base,
      statusCode: error.status,
      ...(responseBody === undefined ? {} : { responseBody }),
      ...(responseHeaders ? { responseHeaders } : {}),
      data: error.body,
      isRetryable,
    });
  }
  if (error instanceof TaskError) {
    const message = error instanceof TaskFailedError ? error.serviceMessage : undefined;
    const data = { task_id: error.taskId, status: error.status, ...(message === undefined ? {} : { message }) };
    return new sdk.APICallError({ ...base, data, responseBody: JSON.stringify(data), isRetryable: false });
  }
  return new sdk.APICallError({ ...base, isRetryable });
}
