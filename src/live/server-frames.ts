/**
 * A text frame from the live service, read: JSON checked as `ServerFrameSchema` of
 * `protocol.ts` decides (by `checkServerFrame` of checks.ts, no schema library loaded), or
 * the protocol error that ends the session (session.ts).
 */
import { checkServerFrame } from './checks.js';
import type { ServerFrame } from './protocol.js';

/**
 * The frame in `data`, or the message of the protocol error it is: not JSON, or not a
 * frame of the contract (its `type`, scrubbed with `scrub` and cut to 64 characters, named).
 */
export function parseServerFrame(data: string, scrub: (text: string) => string): { frame: ServerFrame } | { error: string } {
  let json: unknown;
  try {
    json = JSON.parse(data);
  } catch {
    return { error: 'The server sent a text frame that is not JSON' };
  }
  const frame = checkServerFrame(json); // decides as ServerFrameSchema (checks.ts)
  if (frame === undefined) {
    const type = json !== null && typeof json === 'object' ? (json as { type?: unknown }).type : undefined;
    return { error: `The server sent an invalid frame${typeof type === 'string' ? ` (${scrub(type).slice(0, 64)})` : ''}` };
  }
  return { frame };
}
