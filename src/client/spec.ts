/**
 * What one exchange with the service is ({@link RequestSpec}), and the per-call options
 * every client method takes ({@link CallOptions}).
 */
import type { LastByteGate } from './last-byte.js';
import type { CallKind } from './retry-policy.js';

export type HttpMethod = 'GET' | 'POST';

/** One exchange with the service. */
export interface RequestSpec {
  method: HttpMethod;
  /** Path from `routes` (never hard-coded). */
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  /** JSON body (serialized), or a factory of a multipart body (called once per attempt). */
  json?: unknown;
  form?: () => FormData;
  /** `'idempotent'` (GET, bulk results) or `'creation'` (costs credits). */
  kind: CallKind;
  /** Human name of the endpoint for messages, e.g. `POST /text-to-sound`. */
  endpoint: string;
  /** Streaming answer: the timeout covers the wait for headers only. */
  stream?: boolean;
  accept?: string;
  signal?: AbortSignal | undefined;
  /** A creation call's last byte waits for this (the batch journal's `sent` record): see {@link LastByteGate}. */
  lastByteGate?: LastByteGate | undefined;
}

/**
 * Per-call options every method takes.
 *
 * @example
 * ```ts
 * import type { CallOptions } from 'rxvoice';
 *
 * const controller = new AbortController();
 * const options: CallOptions = { signal: controller.signal };
 * ```
 */
export interface CallOptions {
  /** Aborts the call (the Observable errors with `AbortError`). */
  signal?: AbortSignal | undefined;
}

/**
 * Call options with the batch's last-byte gate, which the creation methods hand to their
 * request (`RequestSpec.lastByteGate`). Internal: the batch runner passes them to the
 * client's public methods, whose `CallOptions` they extend; not exported by `rxvoice`.
 *
 * @internal
 */
export interface GatedCallOptions extends CallOptions {
  lastByteGate?: LastByteGate | undefined;
}
