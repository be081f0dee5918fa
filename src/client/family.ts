/**
 * Building blocks of the resource families: a creation call, a status call and a
 * result call, each a cold Observable validated locally before anything is sent.
 */
import { defer, from, switchMap, throwError, type Observable } from 'rxjs';
import { ValidationError } from '../core/errors.js';
import type { z } from 'zod';
import type { GatedCallOptions, HttpTransport } from './request.js';
import type { CallOptions } from './spec.js';
import { RunIdSchema, TaskCreatedSchema, TaskIdSchema, type TaskCreated, type TaskStatus } from '../core/schemas.js';
import { TaskStatusAnswerSchema } from './tasks.js';
import { lazily, streamedBody, warnNumericLanguage } from './shared.js';
import { buildForm, checkUpload, type UploadInput } from './upload.js';

/** POST a JSON creation call validated with `schema`. */
export function createJson<S extends z.ZodType>(
  transport: HttpTransport,
  path: string,
  schema: S,
  request: unknown,
  options: GatedCallOptions = {},
): Observable<TaskCreated> {
  const endpoint = `POST ${path}`;
  return lazily(() => {
    const body = transport.validate(schema, request, endpoint) as Record<string, unknown>;
    warnNumericLanguage(transport, body);
    const { signal, lastByteGate } = options;
    return transport.json({ method: 'POST', path, json: body, kind: 'creation', endpoint, signal, lastByteGate }, TaskCreatedSchema);
  });
}

/** GET the status of a task (a bare status string, as the contract shows for audio separation, is read too). */
export function getStatus(
  transport: HttpTransport,
  pathOf: (taskId: string) => string,
  name: string,
  taskId: string,
  options: CallOptions = {},
): Observable<TaskStatus> {
  const endpoint = `GET ${name} status`;
  return lazily(() => {
    const id = transport.validate(TaskIdSchema, taskId, endpoint, ['path', 'task_id']);
    return transport.json({ method: 'GET', path: pathOf(id), kind: 'idempotent', endpoint, signal: options.signal }, TaskStatusAnswerSchema);
  });
}

/** GET a JSON result by run id, parsed with `schema`. */
export function getResult<S extends z.ZodType>(
  transport: HttpTransport,
  pathOf: (runId: number) => string,
  name: string,
  schema: S,
  runId: number,
  options: CallOptions = {},
): Observable<z.infer<S>> {
  const endpoint = `GET ${name} result`;
  return lazily(() => {
    const id = transport.validate(RunIdSchema, runId, endpoint, ['path', 'run_id']);
    return transport.json({ method: 'GET', path: pathOf(id), kind: 'idempotent', endpoint, signal: options.signal }, schema);
  });
}

/**
 * GET a binary result (audio bytes) by run id: collected into one array (at most the
 * client's `maxResponseBytes`), or with `stream: true` emitted chunk by chunk.
 */
export function getBytes(
  transport: HttpTransport,
  pathOf: (runId: number) => string,
  name: string,
  runId: number,
  options: CallOptions = {},
  stream = false,
): Observable<Uint8Array> {
  const endpoint = `GET ${name} result`;
  return lazily(() => {
    const id = transport.validate(RunIdSchema, runId, endpoint, ['path', 'run_id']);
    const spec = { method: 'GET', path: pathOf(id), kind: 'idempotent', endpoint, accept: '*/*', signal: options.signal } as const;
    if (!stream) return transport.bytes(spec);
    // streamed to a sink: `timeoutMs` covers the wait for the headers, then the body is bounded by
    // `streamIdleTimeoutMs` of silence, not by its length (a long download is not cut off)
    return transport.exchange({ ...spec, stream: true }, (response) =>
      defer(() => transport.refuseJson(spec, response)).pipe(switchMap(() => streamedBody(transport, response, endpoint, () => ''))),
    );
  });
}

/** A file part of a multipart call: field name, input and accepted extensions. */
export interface FilePart {
  field: string;
  input: UploadInput | undefined;
  extensions: readonly string[];
  /** When false, a missing file is allowed (e.g. `media_url` given instead). */
  required?: boolean;
}

/**
 * POST a multipart call: `fields` validated with `schema`, file parts checked locally
 * (extension), then the form is built and sent. The answer is parsed with `answer`.
 */
export function postMultipart<S extends z.ZodType, A extends z.ZodType>(
  transport: HttpTransport,
  path: string,
  schema: S,
  fields: unknown,
  files: FilePart[],
  answer: A,
  kind: 'creation' | 'idempotent',
  options: GatedCallOptions = {},
  check?: (fields: Record<string, unknown>, present: Record<string, boolean>) => void,
): Observable<z.infer<A>> {
  const endpoint = `POST ${path}`;
  return lazily(() => {
    const body = transport.validate(schema, fields, endpoint) as Record<string, unknown>;
    const present: Record<string, boolean> = {};
    const checked = files.flatMap((part) => {
      present[part.field] = part.input !== undefined && part.input !== null;
      if (!present[part.field] && part.required === false) return [];
      return [checkUpload(part.field, part.input, part.extensions, endpoint)];
    });
    check?.(body, present);
    warnNumericLanguage(transport, body);
    return from(buildForm(body, checked, endpoint)).pipe(
      switchMap((form) => transport.json({ method: 'POST', path, form, kind, endpoint, signal: options.signal, lastByteGate: options.lastByteGate }, answer)),
    );
  });
}

/**
 * A multipart request that is not an object (JS callers): a local `ValidationError` at
 * `['body']`, as zod gives for JSON bodies, instead of a TypeError while destructuring.
 */
export function notAnObject(request: unknown, path: string): Observable<never> | undefined {
  if (request !== null && typeof request === 'object' && !Array.isArray(request)) return undefined;
  const received = request === null ? 'null' : Array.isArray(request) ? 'array' : typeof request;
  return throwError(
    () =>
      new ValidationError([{ loc: ['body'], msg: `Invalid input: expected object, received ${received}`, type: 'object_type' }], {
        source: 'local',
        endpoint: `POST ${path}`,
      }),
  );
}
