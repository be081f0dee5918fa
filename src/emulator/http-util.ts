/**
 * Small HTTP helpers of the emulator: answers, errors, body reading (with a size
 * limit), JSON and multipart parsing, validation into the service's 422 shape, and
 * route patterns compiled from the shared routes table.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import type { ValidationIssue } from '../core/schemas.js';
import { toValidationIssues } from '../core/validation.js';
import type { EmulatorState } from './state.js';

/** An HTTP answer other than success, thrown by handlers and sent by the dispatcher. */
export class HttpProblem extends Error {
  override name = 'HttpProblem';
  readonly status: number;
  readonly body: unknown;
  readonly headers: Record<string, string>;
  constructor(status: number, body: unknown, headers: Record<string, string> = {}) {
    super(`HTTP ${status}`);
    this.status = status;
    this.body = body;
    this.headers = headers;
  }
}

/** `{ error, status }` answer (401, 403, 404, 413, 429, ...). */
export function problem(status: number, error: string, headers: Record<string, string> = {}): HttpProblem {
  return new HttpProblem(status, { error, status }, headers);
}

/** 422 with the service's `{ detail: [{ loc, msg, type }] }`. */
export function unprocessable(detail: ValidationIssue[]): HttpProblem {
  return new HttpProblem(422, { detail });
}

/** 422 naming one location. */
export function invalidAt(loc: Array<string | number>, msg: string, type = 'value_error'): HttpProblem {
  return unprocessable([{ loc, msg, type }]);
}

/** Parse `input` with `schema`; on failure throw a 422 with `loc` prefixed by `prefix`. */
export function validate<S extends z.core.$ZodType>(
  schema: S,
  input: unknown,
  prefix: ReadonlyArray<string | number> = ['body'],
): z.infer<S> {
  const result = z.safeParse(schema, input);
  if (!result.success) throw unprocessable(toValidationIssues(result.error, input, prefix));
  return result.data;
}

/** Send a JSON answer. */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(text)),
    ...headers,
  });
  res.end(text);
}

/** Send binary bytes. */
export function sendBytes(res: ServerResponse, contentType: string, bytes: Uint8Array, headers: Record<string, string> = {}): void {
  res.writeHead(200, { 'content-type': contentType, 'content-length': String(bytes.byteLength), ...headers });
  res.end(bytes);
}

/** Read the whole request body, refusing (413) more than `limit` bytes. */
export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) throw tooLarge(limit);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.byteLength;
    if (size > limit) throw tooLarge(limit);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}

function tooLarge(limit: number): HttpProblem {
  return problem(413, `request body larger than ${limit} bytes`, { connection: 'close' });
}

/** Parse a JSON body; malformed JSON is a 422 of type `json_invalid`. An empty body is `undefined`. */
export function parseJsonBody(body: Buffer): unknown {
  if (body.byteLength === 0) return undefined;
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch (error) {
    throw invalidAt(['body'], `JSON decode error: ${(error as Error).message}`, 'json_invalid');
  }
}

/** Parse a `multipart/form-data` (or url-encoded) body with the platform's `Request`. */
export async function parseFormBody(req: IncomingMessage, body: Buffer): Promise<FormData> {
  const contentType = req.headers['content-type'] ?? '';
  if (!/^multipart\/form-data|^application\/x-www-form-urlencoded/i.test(contentType)) {
    throw invalidAt(['body'], 'expected a multipart/form-data body', 'multipart_invalid');
  }
  try {
    return await new Request('http://emulator.invalid/', {
      method: 'POST',
      headers: { 'content-type': contentType },
      body: new Uint8Array(body),
    }).formData();
  } catch (error) {
    throw invalidAt(['body'], `malformed multipart body: ${(error as Error).message}`, 'multipart_invalid');
  }
}

/** How a form field is coerced from its string value before validation. */
export type FieldKind = 'string' | 'int' | 'bool' | 'intArray' | 'number';

/**
 * Read the text fields of a form into an object, coercing by `kinds`. A value that does
 * not coerce is kept as given, so validation reports it with the right type.
 */
export function formFields(form: FormData, kinds: Record<string, FieldKind>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, kind] of Object.entries(kinds)) {
    const values = form.getAll(name).filter((v): v is string => typeof v === 'string');
    if (values.length === 0) continue;
    const first = values[0] ?? '';
    switch (kind) {
      case 'string':
        out[name] = first;
        break;
      case 'int':
        out[name] = /^-?[0-9]+$/.test(first.trim()) ? Number(first.trim()) : first;
        break;
      case 'number':
        out[name] = first.trim() !== '' && Number.isFinite(Number(first)) ? Number(first) : first;
        break;
      case 'bool': {
        const lower = first.trim().toLowerCase();
        out[name] = lower === 'true' || lower === '1' ? true : lower === 'false' || lower === '0' ? false : first;
        break;
      }
      case 'intArray': {
        let items: unknown[] = values;
        if (values.length === 1 && first.trim().startsWith('[')) {
          try {
            const parsed: unknown = JSON.parse(first);
            items = Array.isArray(parsed) ? parsed : [parsed];
          } catch {
            items = [first];
          }
        } else if (values.length === 1 && first.includes(',')) {
          items = first.split(',');
        }
        out[name] = items.map((v) => (typeof v === 'string' && /^-?[0-9]+$/.test(v.trim()) ? Number(v.trim()) : v));
        break;
      }
    }
  }
  return out;
}

/** A file part of a form. */
export interface UploadedFile {
  name: string;
  bytes: Uint8Array;
  type: string;
}

/**
 * The file part `field` of a form, checked for one of `extensions`. Missing: 422
 * `missing`; wrong extension: 422 `value_error`; both at `['body', field]`.
 */
export async function formFile(
  form: FormData,
  field: string,
  extensions: readonly string[] | undefined,
  required = true,
): Promise<UploadedFile | undefined> {
  const value = form.get(field);
  if (value === null || typeof value === 'string') {
    if (!required) return undefined;
    throw invalidAt(['body', field], 'Field required: a file part', 'missing');
  }
  const name = value.name || 'upload';
  const lower = name.toLowerCase();
  if (extensions && !extensions.some((ext) => lower.endsWith(ext))) {
    throw invalidAt(['body', field], `file must have one of the extensions ${extensions.join(', ')}`, 'value_error');
  }
  return { name, bytes: new Uint8Array(await value.arrayBuffer()), type: value.type };
}

/** A compiled route: method, pattern and parameter names. */
export interface CompiledRoute<H> {
  method: string;
  regex: RegExp;
  params: string[];
  handler: H;
}

/**
 * Compile a route of the shared table: a fixed path, or a path function whose arguments
 * are named by `params` (the function is called with placeholders to find their places).
 */
export function compileRoute<H>(
  method: string,
  path: string | ((...args: never[]) => string),
  params: string[],
  handler: H,
): CompiledRoute<H> {
  let pattern: string;
  if (typeof path === 'string') {
    pattern = escapeRegex(path);
  } else {
    const placeholders = params.map((_, i) => `RXVPARAM${i}X`);
    const sample = (path as (...args: string[]) => string)(...placeholders);
    pattern = escapeRegex(sample);
    for (const placeholder of placeholders) pattern = pattern.replace(placeholder, '([^/]+)');
  }
  return { method, regex: new RegExp(`^${pattern}$`), params, handler };
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Positive integer path parameter (`run_id`); else 422 at `['path', name]`. */
export function pathRunId(params: Record<string, string>, name = 'run_id'): number {
  const raw = params[name] ?? '';
  if (!/^[0-9]+$/.test(raw)) {
    throw invalidAt(['path', name], 'Input should be a valid integer, unable to parse string as an integer', 'int_parsing');
  }
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 1) throw invalidAt(['path', name], 'Input should be greater than 0', 'greater_than');
  return value;
}

/** Absolute base address of this emulator as the client reached it. */
export function baseUrlOf(req: IncomingMessage, state: EmulatorState): string {
  const host = req.headers.host ?? `${state.options.host}:${state.options.port}`;
  return `http://${host}`;
}

/** What a route handler receives. */
export interface HandlerContext {
  req: IncomingMessage;
  res: ServerResponse;
  state: EmulatorState;
  /** The accepted key of this request (never logged or echoed). */
  apiKey: string;
  params: Record<string, string>;
  url: URL;
  /** Absolute base address (`http://host:port`). */
  baseUrl: string;
  /** The request body, read once with the size limit. */
  body(): Promise<Buffer>;
}

/** A route handler. */
export type Handler = (ctx: HandlerContext) => Promise<void>;

/** Path prefix of the temporary result files the emulator serves. */
export const FILES_PREFIX = '/files/';

/** Absolute address of a temporary file registered with `state.addFile`. */
export function fileUrl(ctx: HandlerContext, fileName: string): string {
  return `${ctx.baseUrl}${FILES_PREFIX}${fileName}`;
}
