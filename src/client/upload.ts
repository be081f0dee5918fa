/**
 * Multipart uploads: a file part from a path, a Buffer / Uint8Array (with a filename),
 * a Blob / File, or a Node Readable. The extension (or, failing that, the MIME type) is
 * checked locally, so a wrong file is a `ValidationError` at `['body', <field>]` before
 * anything is sent; so is an empty file (0 bytes: the service would take, and charge
 * for, a call that cannot succeed).
 *
 * Memory: a path, a file URL, or an `fs.ReadStream` (re-opened by its path) is streamed
 * from disk (`fs.openAsBlob`: a file-backed Blob that undici's multipart encoder reads
 * chunk by chunk), so an upload of any size holds a few chunks in memory, and a retried
 * call reads the file again from its start. Any other Readable is read into memory
 * first, since a retry must send it again and a stream cannot be replayed: pass a path
 * for large files.
 */
// a namespace import: Node before 19.8 lacks openAsBlob, and a named import of it would
// fail the whole import before the version check can say so
import * as fs from 'node:fs';
import { constants, ReadStream } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { loadUndici } from './undici.js';
import { ValidationError } from '../core/errors.js';

/** What a file part can be made from. */
export type UploadSource = string | URL | Uint8Array | Blob | NodeJS.ReadableStream;

/** A file part: the data, and a filename when the data carries none (Buffer, Readable, Blob). */
export interface UploadFile {
  data: UploadSource;
  /** Name of the file as sent; its extension is checked. Derived from paths and `File` names. */
  filename?: string;
  /** MIME type; derived from the extension when omitted. */
  contentType?: string;
}

/** A file part given either bare (a path or a `File`) or with its name. */
export type UploadInput = UploadSource | UploadFile;

const MIME_BY_EXTENSION: Record<string, string> = {
  '.aac': 'audio/aac',
  '.flac': 'audio/flac',
  '.mp3': 'audio/mpeg',
  '.wav': 'audio/wav',
  '.txt': 'text/plain',
  '.docx': 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
};
const EXTENSION_BY_MIME: Record<string, string> = {
  'audio/aac': '.aac',
  'audio/x-aac': '.aac',
  'audio/flac': '.flac',
  'audio/x-flac': '.flac',
  'audio/mpeg': '.mp3',
  'audio/mp3': '.mp3',
  'audio/wav': '.wav',
  'audio/x-wav': '.wav',
  'audio/wave': '.wav',
  'text/plain': '.txt',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': '.docx',
};

function isUploadFile(input: UploadInput): input is UploadFile {
  return (
    typeof input === 'object' &&
    input !== null &&
    !(input instanceof Uint8Array) &&
    !(input instanceof URL) &&
    !(typeof Blob !== 'undefined' && input instanceof Blob) &&
    'data' in input
  );
}

function isReadable(v: unknown): v is NodeJS.ReadableStream {
  return typeof v === 'object' && v !== null && typeof (v as NodeJS.ReadableStream).pipe === 'function' && typeof (v as NodeJS.ReadableStream).on === 'function';
}

function fail(field: string, msg: string, type = 'value_error', endpoint?: string): never {
  throw new ValidationError([{ loc: ['body', field], msg, type }], { source: 'local', ...(endpoint ? { endpoint } : {}) });
}

/** A file part checked synchronously (name and extension); the data is read later. */
export interface CheckedUpload {
  field: string;
  filename: string;
  contentType: string;
  data: UploadSource;
}

/**
 * Check a file part: an accepted extension is required (from the filename, the path,
 * the `File` name, a Readable's `path`, or else the MIME type). Throws `ValidationError`.
 */
export function checkUpload(
  field: string,
  input: UploadInput | undefined | null,
  extensions: readonly string[],
  endpoint?: string,
): CheckedUpload {
  if (input === undefined || input === null) fail(field, 'Field required', 'missing', endpoint);
  const file: UploadFile = isUploadFile(input) ? input : { data: input };
  const { data } = file;
  let name = file.filename;
  if (typeof data === 'string' || data instanceof URL) {
    const path = data instanceof URL ? fileURLToPath(data) : data;
    name ??= basename(path);
  } else if (typeof Blob !== 'undefined' && data instanceof Blob) {
    const fileName = (data as Blob & { name?: unknown }).name;
    if (!name && typeof fileName === 'string' && fileName) name = fileName;
  } else if (isReadable(data)) {
    const path = (data as { path?: unknown }).path;
    if (!name && typeof path === 'string') name = basename(path);
  } else if (!(data instanceof Uint8Array)) {
    fail(field, 'must be a file path, a Buffer or Uint8Array, a Blob or File, or a Readable', 'value_error', endpoint);
  }
  let ext = name ? extname(name).toLowerCase() : '';
  const mime = file.contentType ?? (typeof Blob !== 'undefined' && data instanceof Blob ? data.type : '');
  if (!ext && mime) ext = EXTENSION_BY_MIME[mime.split(';')[0]!.trim().toLowerCase()] ?? '';
  if (!ext) {
    fail(field, `needs a filename with one of the extensions ${extensions.join(', ')}`, 'value_error', endpoint);
  }
  if (!extensions.includes(ext)) {
    fail(field, `file type ${ext} is not accepted; use one of ${extensions.join(', ')}`, 'value_error', endpoint);
  }
  const filename = name && extname(name) ? name : `upload${ext}`;
  return { field, filename, contentType: file.contentType ?? MIME_BY_EXTENSION[ext] ?? 'application/octet-stream', data };
}

/**
 * Turn a checked file part into a Blob: paths, file URLs and unread `fs.ReadStream`s as
 * file-backed Blobs (`fs.openAsBlob`, read from disk as the body is sent), other sources
 * in memory. Rejects with `ValidationError` when the file is missing, not a regular
 * file, or empty.
 */
export async function toBlob(upload: CheckedUpload, endpoint?: string): Promise<Blob> {
  const { data, contentType } = upload;
  const path = typeof data === 'string' ? data : data instanceof URL ? fileURLToPath(data) : unreadFilePath(data);
  let blob: Blob;
  if (path !== undefined) {
    try {
      const info = await stat(path);
      if (!info.isFile()) fail(upload.field, 'is not a regular file', 'value_error', endpoint);
      await access(path, constants.R_OK);
    } catch (error) {
      if (error instanceof ValidationError) throw error;
      fail(upload.field, 'file not found or not readable', 'value_error', endpoint);
    }
    if (isReadable(data)) (data as Readable).destroy();
    blob = await fs.openAsBlob(path, { type: contentType });
  } else if (typeof Blob !== 'undefined' && data instanceof Blob) blob = data;
  else if (data instanceof Uint8Array) blob = new Blob([data as Uint8Array<ArrayBuffer>], { type: contentType });
  else {
    const chunks: Uint8Array<ArrayBuffer>[] = [];
    const readable = data instanceof Readable ? data : Readable.from(data as AsyncIterable<unknown>);
    for await (const chunk of readable) {
      chunks.push((typeof chunk === 'string' ? Buffer.from(chunk) : chunk) as Uint8Array<ArrayBuffer>);
    }
    blob = new Blob(chunks, { type: contentType });
  }
  if (blob.size === 0) fail(upload.field, 'is empty (0 bytes); nothing was sent', 'value_error', endpoint);
  return blob;
}

/**
 * The path of an `fs.ReadStream` that has read nothing yet and reads a whole file (no
 * `start`/`end`), so the file can be streamed from disk again on a retry; else undefined.
 */
function unreadFilePath(data: UploadSource): string | undefined {
  if (!(data instanceof ReadStream)) return undefined;
  const { path, bytesRead } = data;
  const ranged = (data as ReadStream & { start?: number; end?: number }).start !== undefined || (data as ReadStream & { end?: number }).end !== Infinity;
  if (bytesRead > 0 || ranged || (typeof path !== 'string' && !Buffer.isBuffer(path))) return undefined;
  return path.toString();
}

/** Build a multipart body factory: fields (skipping null / undefined) and file parts. */
export async function buildForm(
  fields: Record<string, unknown>,
  files: CheckedUpload[],
  endpoint?: string,
): Promise<() => FormData> {
  const blobs = await Promise.all(files.map(async (f) => ({ f, blob: await toBlob(f, endpoint) })));
  const { FormData: UndiciFormData } = await loadUndici();
  return () => {
    const form = new UndiciFormData();
    for (const [key, value] of Object.entries(fields)) {
      if (value === undefined || value === null) continue;
      if (Array.isArray(value)) for (const item of value) form.append(key, String(item));
      else form.append(key, String(value));
    }
    for (const { f, blob } of blobs) form.append(f.field, blob, f.filename);
    return form as unknown as FormData;
  };
}
