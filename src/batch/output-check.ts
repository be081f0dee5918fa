/**
 * Is an output file whole? Used by `trustOutputs` before it takes an output the journal
 * knows nothing of as a finished job: a half-written, empty or error-page file must never
 * stand for a job done (the job is then run again instead).
 *
 * - every file: not empty, and not an HTML page (a proxy's or a portal's error page);
 * - `.wav`: a RIFF/WAVE header with a `fmt ` chunk and a `data` chunk, the file as long
 *   as its header says (the RIFF size and the data chunk's; a stream's placeholder sizes
 *   claim nothing), some audio, and whole sample frames;
 * - `.json`: JSON that parses;
 * - `.srt` / `.vtt`: text (UTF-8, no NUL bytes).
 */
import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { STREAMING_WAV_SIZE } from '../audio/pcm.js';
import { parseWavHeader } from '../audio/wav.js';

/** Why an output is not trusted, or `undefined` when it is whole. */
export async function outputProblem(path: string): Promise<string | undefined> {
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (error) {
    return `cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`;
  }
  if (bytes.byteLength === 0) return 'is empty';
  if (looksLikeHtml(bytes)) return 'is an HTML page';
  switch (extname(path).toLowerCase()) {
    case '.wav':
      return wavProblem(bytes);
    case '.json':
      try {
        JSON.parse(bytes.toString('utf8'));
        return undefined;
      } catch {
        return 'is not valid JSON (cut short?)';
      }
    default:
      return bytes.includes(0) ? 'is not text' : undefined;
  }
}

function looksLikeHtml(bytes: Buffer): boolean {
  const start = bytes.subarray(0, 512).toString('utf8').replace(/^\uFEFF/, '').trimStart().toLowerCase();
  return start.startsWith('<!doctype html') || start.startsWith('<html') || start.startsWith('<head') || start.startsWith('<body');
}

/** Sizes that claim no length (a stream's header): the bytes present are the data. */
const PLACEHOLDER_SIZES = new Set([0, 0x7fffffff, STREAMING_WAV_SIZE]);

/** Whether `bytes` is a whole WAV file: a valid header, and the lengths it claims present. */
function wavProblem(bytes: Buffer): string | undefined {
  const info = parseWavHeader(bytes);
  if (!info || info.channels === 0 || info.bitsPerSample === 0) return 'is not a WAV file with a valid header';
  const riffSize = bytes.readUInt32LE(4);
  const present = bytes.byteLength - info.dataOffset;
  if (!PLACEHOLDER_SIZES.has(riffSize) && 8 + riffSize > bytes.byteLength) return `is cut short (its header claims ${8 + riffSize} bytes, the file holds ${bytes.byteLength})`;
  if (!PLACEHOLDER_SIZES.has(info.dataBytes) && info.dataBytes > present) return `is cut short (its data chunk claims ${info.dataBytes} bytes, ${present} are there)`;
  const data = PLACEHOLDER_SIZES.has(info.dataBytes) ? present : info.dataBytes;
  if (data <= 0) return 'holds no audio';
  const frame = info.channels * Math.ceil(info.bitsPerSample / 8);
  if (data % frame !== 0) return `is cut short (its audio ends inside a sample frame of ${frame} bytes)`;
  return undefined;
}
