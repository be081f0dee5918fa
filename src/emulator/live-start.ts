/**
 * The first frame of an emulated live session, read: a JSON `session.start` text frame
 * checked with the contract's zod schema, or the reason the session is rejected (4400).
 */
import type { RawData } from 'ws';
import { SessionStartFrameSchema, type SessionConfig } from '../live/protocol.js';

/** A frame's text (ws hands a Buffer, an ArrayBuffer or fragments). */
export function rawToString(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  if (data instanceof ArrayBuffer) return Buffer.from(data).toString('utf8');
  return data.toString('utf8');
}

export function describeIssues(error: { issues: readonly { path: readonly PropertyKey[]; message: string }[] }): string {
  return error.issues
    .map((issue) => `${issue.path.length > 0 ? issue.path.map(String).join('.') : 'frame'}: ${issue.message}`)
    .join('; ');
}

/** The configuration of a first frame, or why it is not a valid `session.start`. */
export function readSessionStart(data: RawData, isBinary: boolean): { config: SessionConfig } | { reject: string } {
  if (isBinary) return { reject: 'the first frame must be a JSON session.start text frame, not binary' };
  let json: unknown;
  try {
    json = JSON.parse(rawToString(data));
  } catch {
    return { reject: 'the first frame is not valid JSON; expected session.start' };
  }
  const type = typeof json === 'object' && json !== null ? (json as { type?: unknown }).type : undefined;
  if (type !== 'session.start') return { reject: `the first frame must be session.start, got ${JSON.stringify(type ?? null).slice(0, 60)}` };
  const parsed = SessionStartFrameSchema.safeParse(json);
  if (!parsed.success) return { reject: `invalid session.start: ${describeIssues(parsed.error)}` };
  const { type: _type, ...config } = parsed.data;
  return { config };
}
