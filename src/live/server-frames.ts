/**
 * A frame from the live service, read: a text frame as JSON checked as `ServerFrameSchema`
 * of `protocol.ts` decides (by `checkServerFrame` of checks.ts, no schema library loaded),
 * a binary frame as audio bytes; or the protocol error that ends the session
 * (live-session.ts).
 */
import { checkServerFrame } from './checks.js';
import { scrubKey, toBytes } from './connection.js';
import { MAX_AUDIO_FRAME_BYTES } from './protocol-constants.js';
import type { ServerFrame } from './protocol.js';

/**
 * The frame in `data`, or the message of the protocol error it is: not JSON, or not a
 * frame of the contract (its `type`, the key scrubbed, cut to 64 characters, named).
 */
export function parseServerFrame(data: string, apiKey: string): { frame: ServerFrame } | { error: string } {
  let json: unknown;
  try {
    json = JSON.parse(data);
  } catch {
    return { error: 'The server sent a text frame that is not JSON' };
  }
  const frame = checkServerFrame(json); // decides as ServerFrameSchema (checks.ts)
  if (frame === undefined) {
    const type = json !== null && typeof json === 'object' ? (json as { type?: unknown }).type : undefined;
    return { error: `The server sent an invalid frame${typeof type === 'string' ? ` (${scrubKey(type, apiKey).slice(0, 64)})` : ''}` };
  }
  return { frame };
}

/** A binary frame's audio bytes (a view, no copy), or the message of the protocol error it is (an unknown type, over 64 KiB). */
export function readAudioFrame(data: unknown): Uint8Array | string {
  const bytes = toBytes(data);
  if (!bytes) return 'The server sent a binary frame of an unsupported type';
  if (bytes.byteLength > MAX_AUDIO_FRAME_BYTES) return `The server sent an audio frame of ${bytes.byteLength} bytes (at most ${MAX_AUDIO_FRAME_BYTES})`;
  return bytes;
}
