/**
 * Raw HTTP for the contract tests: fetch with the table's bodies, no project code.
 */
import { AUTH, type Body } from './contract-table.js';

/** Fill `{name}` placeholders of a table path. */
export function fill(path: string, params: Record<string, string | number> = {}): string {
  return path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`no value for {${name}} in ${path}`);
    return encodeURIComponent(String(value));
  });
}

/** A tiny valid WAV file (16-bit mono 8 kHz, 0.1 s of a ramp), written out by hand. */
export function wavBytes(): Uint8Array<ArrayBuffer> {
  const samples = 800;
  const out = Buffer.alloc(44 + samples * 2);
  out.write('RIFF', 0, 'ascii');
  out.writeUInt32LE(36 + samples * 2, 4);
  out.write('WAVEfmt ', 8, 'ascii');
  out.writeUInt32LE(16, 16);
  out.writeUInt16LE(1, 20); // PCM
  out.writeUInt16LE(1, 22); // mono
  out.writeUInt32LE(8000, 24);
  out.writeUInt32LE(16000, 28);
  out.writeUInt16LE(2, 32);
  out.writeUInt16LE(16, 34);
  out.write('data', 36, 'ascii');
  out.writeUInt32LE(samples * 2, 40);
  for (let i = 0; i < samples; i++) out.writeInt16LE(((i * 97) % 4000) - 2000, 44 + i * 2);
  return new Uint8Array(out);
}

/** Seconds of audio in a PCM WAV file: its `data` chunk's size over the byte rate of its `fmt ` chunk. */
export function wavSeconds(bytes: Uint8Array): number {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let byteRate = 0;
  for (let at = 12; at + 8 <= buf.length; ) {
    const id = buf.toString('ascii', at, at + 4);
    const size = buf.readUInt32LE(at + 4);
    if (id === 'fmt ') byteRate = buf.readUInt32LE(at + 16);
    if (id === 'data') return size / byteRate;
    at += 8 + size + (size % 2);
  }
  throw new Error('no data chunk in the WAV file');
}

const STORY_TEXT = 'Once upon a time a lighthouse keeper found a letter in a bottle.\n"Who wrote this?" she asked.\n';

/** The fetch init of a table body (JSON, or multipart with the named files). */
export function bodyInit(body: Body | undefined): { body?: string | FormData; headers: Record<string, string> } {
  if (body === undefined) return { headers: {} };
  if (body.kind === 'json') return { body: JSON.stringify(body.value), headers: { 'content-type': 'application/json' } };
  const form = new FormData();
  for (const [name, value] of Object.entries(body.fields)) form.append(name, value);
  for (const [name, file] of Object.entries(body.files)) {
    const bytes = file.content === 'wav' ? wavBytes() : new TextEncoder().encode(STORY_TEXT);
    form.append(name, new Blob([bytes], { type: file.type }), file.name);
  }
  return { body: form, headers: {} };
}

export interface RawAnswer {
  status: number;
  headers: Headers;
  bytes: Uint8Array;
  json(): unknown;
}

/** One raw request; `key` undefined sends no key header. */
export async function send(baseUrl: string, method: string, path: string, body: Body | undefined, key: string | undefined): Promise<RawAnswer> {
  const init = bodyInit(body);
  const headers: Record<string, string> = { ...init.headers };
  if (key !== undefined) headers[AUTH.header] = key;
  const res = await fetch(baseUrl + path, { method, headers, ...(init.body !== undefined ? { body: init.body } : {}) });
  const bytes = new Uint8Array(await res.arrayBuffer());
  return { status: res.status, headers: res.headers, bytes, json: () => JSON.parse(Buffer.from(bytes).toString('utf8')) as unknown };
}

/** A JSON body. */
export const json = (value: Record<string, unknown>): Body => ({ kind: 'json', value });

/** Wait `ms` of real time (between status polls only, never before a negative check). */
export const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
