/**
 * The frames a client sends an emulated live session (live.ts), read. The first: a JSON
 * `session.start` text frame checked with the contract's zod schema, then against what
 * the emulator has (the voice, an encoder for the output format, the synthesizer's
 * languages), or the reason the session is rejected (4400). The rest: `text.chunk` and
 * `text.done`; anything else is ignored.
 */
import type { RawData } from 'ws';
import { canEncode, encodedSampleRate, missingEncoderHint } from '../audio/encode.js';
import type { Voice } from '../core/schemas.js';
import { SessionStartFrameSchema, TextChunkFrameSchema, type SessionConfig } from '../live/protocol.js';
import { resolveLanguage } from './state.js';
import type { EmulatorContext, Synthesizer } from './types.js';

/** Sample rate when `session.start` gives none (both synthesizers' native rate). */
export const DEFAULT_LIVE_SAMPLE_RATE = 22050;

/** The configuration echoed in `session.ready`: output format and rate resolved. */
export type ResolvedSessionConfig = SessionConfig & { sample_rate: number };

/** What a valid `session.start` resolves to. */
export interface AcceptedStart {
  config: ResolvedSessionConfig;
  voice: Voice;
  /** The session's language, resolved (`en` -> `en-us`). */
  language: string;
  synth: Synthesizer;
}

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

/**
 * Read the first frame and check it against what the emulator has: the session's
 * configuration resolved, or why it is rejected. Throws when the synthesizer cannot be
 * loaded (a server-side failure).
 */
export async function acceptSessionStart(
  data: RawData,
  isBinary: boolean,
  context: EmulatorContext,
): Promise<AcceptedStart | { reject: string }> {
  const first = readSessionStart(data, isBinary);
  if ('reject' in first) return first;
  const { config } = first;
  const voice = context.voice(config.voice_id);
  if (!voice) return { reject: `voice ${config.voice_id} is not available` };
  if (!canEncode(config.output_format)) {
    return {
      reject:
        `output_format "${config.output_format}" is not supported by the emulator; use "wav"` +
        (canEncode('mp3') ? ' or "mp3"' : '') +
        missingEncoderHint(config.output_format),
    };
  }
  const synth = await context.synthesizer();
  const language = resolveLanguage(config.language);
  if (!synth.supportsLanguage(language)) {
    return { reject: `language "${config.language}" is not supported by the ${synth.name} synthesizer` };
  }
  const sampleRate = encodedSampleRate(config.output_format, config.sample_rate ?? DEFAULT_LIVE_SAMPLE_RATE);
  return { config: { ...config, sample_rate: sampleRate }, voice, language, synth };
}

/** A frame after `session.start`: text to speak, the end of the text, or nothing we read. */
export function readSessionFrame(text: string): { text: string } | 'text.done' | undefined {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return undefined; // not JSON: ignored mid-session
  }
  const type = typeof json === 'object' && json !== null ? (json as { type?: unknown }).type : undefined;
  if (type === 'text.chunk') {
    const parsed = TextChunkFrameSchema.safeParse(json);
    return parsed.success ? { text: parsed.data.text } : undefined;
  }
  // Anything else (a second session.start, unknown types) is ignored.
  return type === 'text.done' ? 'text.done' : undefined;
}
