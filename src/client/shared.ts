/**
 * Helpers shared by the resource families: bulk result batching, the deprecation
 * warning for numeric language ids, local validation inside a cold Observable, and the
 * reading of streamed answers (number headers, body bytes).
 */
import { Observable, defer, from, map, mergeMap, reduce, tap, throwError, timeout, type ObservableInput } from 'rxjs';
import { StreamIdleError, ValidationError } from '../core/errors.js';
import { bodyBytes, type CallOptions, type HttpTransport } from './request.js';
import { BulkResultsSchema, type OutputUrlEntry } from '../core/schemas.js';

/**
 * Split `count` ids into batches of 2 to 5, as even as possible, never a batch of 1:
 * 2..5 -> one batch, 6 -> 3+3, 11 -> 4+4+3, 12 -> 4+4+4. `count` must be >= 2.
 */
export function batchSizes(count: number, max = 5): number[] {
  if (count < 2) return count === 1 ? [1] : [];
  const batches = Math.ceil(count / max);
  const small = Math.floor(count / batches);
  const extra = count % batches;
  return Array.from({ length: batches }, (_, i) => small + (i < extra ? 1 : 0));
}

/** A bulk result entry: `output_url` from the bulk call, or `audio` bytes when fetched alone. */
export interface BulkResultEntry {
  /** Temporary pre-signed address of the audio (bulk path, 2+ ids). */
  output_url?: string;
  /** The audio itself (single path, exactly 1 id). */
  audio?: Uint8Array;
}

/** Results keyed by run id (as a string). */
export type BulkResultMap = Record<string, BulkResultEntry>;

/** Check run ids locally: integers >= 1. Duplicates are removed (order kept). */
export function checkRunIds(runIds: readonly number[], endpoint: string): number[] {
  if (!Array.isArray(runIds) || runIds.length === 0) {
    throw new ValidationError([{ loc: ['body', 'run_ids'], msg: 'needs at least 1 run id', type: 'too_short' }], {
      source: 'local',
      endpoint,
    });
  }
  const issues = runIds.flatMap((id, i) =>
    Number.isInteger(id) && id >= 1 ? [] : [{ loc: ['body', 'run_ids', i], msg: 'must be a positive integer', type: 'int_type' }],
  );
  if (issues.length > 0) throw new ValidationError(issues, { source: 'local', endpoint });
  return [...new Set(runIds)];
}

/**
 * Bulk results for any number of ids: 1 id goes to the single-result path (the entry
 * carries `audio`), 2+ ids are split in batches of 2 to 5 sent concurrently (bounded by
 * `bulkConcurrency`) and merged (entries carry `output_url`). Ids of runs this client's
 * task Observables produced are checked locally for the kind (`family`).
 */
export function bulkResults(
  transport: HttpTransport,
  runIds: readonly number[],
  bulkPath: string,
  family: string,
  single: (runId: number, options: CallOptions) => Observable<Uint8Array>,
  options: CallOptions,
): Observable<BulkResultMap> {
  const endpoint = `POST ${bulkPath}`;
  return defer(() => {
    const ids = checkRunIds(runIds, endpoint);
    // Runs this client's own task Observables produced have a known kind: a run of
    // another kind is rejected locally (the service would answer 422).
    const foreign = runIds.flatMap((id, i) => {
      const kind = transport.runFamily(id);
      return kind !== undefined && kind !== family
        ? [{ loc: ['body', 'run_ids', i], msg: `run ${id} is a ${kind} run, not a ${family} run`, type: 'value_error' }]
        : [];
    });
    if (foreign.length > 0) throw new ValidationError(foreign, { source: 'local', endpoint });
    if (ids.length === 1) {
      const id = ids[0]!;
      return single(id, options).pipe(map((audio): BulkResultMap => ({ [String(id)]: { audio } })));
    }
    const batches: number[][] = [];
    let offset = 0;
    for (const size of batchSizes(ids.length)) {
      batches.push(ids.slice(offset, offset + size));
      offset += size;
    }
    return from(batches).pipe(
      mergeMap(
        (batch) =>
          transport.json(
            { method: 'POST', path: bulkPath, json: { run_ids: batch }, kind: 'idempotent', endpoint, signal: options.signal },
            BulkResultsSchema,
          ),
        transport.config.bulkConcurrency,
      ),
      reduce((acc: BulkResultMap, answer: Record<string, OutputUrlEntry>) => {
        for (const [key, entry] of Object.entries(answer)) acc[key] = { output_url: entry.output_url };
        return acc;
      }, {}),
    );
  });
}

const LANGUAGE_FIELDS = ['language', 'source_language', 'target_language', 'target_languages'] as const;

function isNumericLanguage(value: unknown): boolean {
  return typeof value === 'number' || (typeof value === 'string' && /^[0-9]+$/.test(value));
}

/** Warn once when a request uses a numeric language id (deprecated; use locale tags). */
export function warnNumericLanguage(transport: HttpTransport, body: Record<string, unknown>): void {
  for (const field of LANGUAGE_FIELDS) {
    const value = body[field];
    const values = Array.isArray(value) ? value : [value];
    if (values.some(isNumericLanguage)) {
      transport.warnOnce(
        'numeric_language_id',
        'rxvoice: numeric language ids are deprecated by the service; use locale tags such as "en-us".',
      );
      return;
    }
  }
}

/** Run `build` at subscription (validation errors become error notifications). */
export function lazily<T>(build: () => ObservableInput<T>): Observable<T> {
  return defer(build);
}

/** A number answer header (`X-Credits-Required`, ...); undefined when missing, blank or not a number. */
export function headerNumber(response: Response, name: string): number | undefined {
  const raw = response.headers.get(name);
  if (raw === null || raw.trim() === '') return undefined;
  const value = Number(raw);
  return Number.isFinite(value) ? value : undefined;
}

/**
 * The bytes of a streamed answer's body, ending with a {@link StreamIdleError} when
 * nothing arrives for the client's `streamIdleTimeoutMs` (timed on its scheduler);
 * `received()` gives the text the caller has decoded so far. Unsubscribing cancels the body.
 */
export function streamedBody(transport: HttpTransport, response: Response, endpoint: string, received: () => string): Observable<Uint8Array> {
  const { streamIdleTimeoutMs: idleMs, scheduler } = transport.config;
  let bytes = 0;
  return bodyBytes(response).pipe(
    tap((chunk) => {
      bytes += chunk.byteLength;
    }),
    timeout({ each: idleMs, scheduler, with: () => throwError(() => new StreamIdleError(endpoint, idleMs, received(), bytes)) }),
  );
}
