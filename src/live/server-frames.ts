/**
 * A text frame from the live service, read: JSON checked against the zod schema of
 * `protocol.ts`, or the protocol error that ends the session (session.ts).
 */
import { ServerFrameSchema, type ServerFrame } from './protocol.js';

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
  const parsed = ServerFrameSchema.safeParse(json);
  if (!parsed.success) {
    const type = json !== null && typeof json === 'object' ? (json as { type?: unknown }).type : undefined;
    return { error: `The server sent an invalid frame${typeof type === 'string' ? ` (${scrub(type).slice(0, 64)})` : ''}` };
  }
  return { frame: parsed.data };
}
