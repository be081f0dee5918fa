/**
 * One cached sentence as bytes, the form every store keeps: a 4-byte big-endian length,
 * that many bytes of JSON (text, word timestamps, format, sample rate, when it expires),
 * then the audio bytes as received. Decoding checks the JSON with a zod schema and the
 * audio length, so a truncated or foreign value is a miss, never wrong audio.
 */
import * as z from 'zod/mini';

const MetaSchema = z.object({
  text: z.string(),
  word_timestamps: z.optional(z.array(z.object({ word: z.string(), start: z.number(), end: z.number() }))),
  format: z.optional(z.string()),
  sample_rate: z.optional(z.nullable(z.number())),
  /** ms since the epoch after which the entry is a miss; absent: no expiry. */
  expiresAt: z.optional(z.number()),
  audioBytes: z.int(),
});

/** A cached sentence: what a hit replays. */
export interface CacheEntry {
  /** The text the service reported for the segment (what `segmentStart` carried). */
  text: string;
  word_timestamps?: { word: string; start: number; end: number }[] | undefined;
  /** Output format of the audio (`wav`, `mp3`, ... or a /tts-stream format). */
  format?: string | undefined;
  sample_rate?: number | null | undefined;
  expiresAt?: number | undefined;
  /** The segment's audio, every byte the service sent for it, in order. */
  audio: Uint8Array;
}

/** The entry as bytes (see the file comment). */
export function encodeEntry(entry: CacheEntry): Uint8Array {
  const { audio, ...rest } = entry;
  const meta = new TextEncoder().encode(JSON.stringify({ ...rest, audioBytes: audio.byteLength }));
  const out = new Uint8Array(4 + meta.byteLength + audio.byteLength);
  new DataView(out.buffer).setUint32(0, meta.byteLength);
  out.set(meta, 4);
  out.set(audio, 4 + meta.byteLength);
  return out;
}

/** The entry in `bytes`, or undefined when they are not a whole entry. */
export function decodeEntry(bytes: Uint8Array): CacheEntry | undefined {
  if (bytes.byteLength < 4) return undefined;
  const metaBytes = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(0);
  if (4 + metaBytes > bytes.byteLength) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder().decode(bytes.subarray(4, 4 + metaBytes)));
  } catch {
    return undefined;
  }
  const meta = MetaSchema.safeParse(json);
  if (!meta.success || 4 + metaBytes + meta.data.audioBytes !== bytes.byteLength) return undefined;
  const { audioBytes: _audioBytes, ...rest } = meta.data;
  return { ...rest, audio: bytes.slice(4 + metaBytes) };
}
