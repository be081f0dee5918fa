/**
 * The messages of a Twilio Media Streams WebSocket, as zod schemas: what Twilio sends
 * (`connected`, `start`, `media`, `dtmf`, `mark`, `stop`), parsed, never trusted, and what a
 * bidirectional stream sends back (`media`, `mark`, `clear`).
 * See https://www.twilio.com/docs/voice/media-streams/websocket-messages.
 */
import * as z from 'zod/mini';

/** The audio of the stream, both ways: `audio/x-mulaw` at 8000 Hz, mono. */
export const MediaFormatSchema = z.object({
  encoding: z.string(),
  sampleRate: z.number(),
  channels: z.number(),
});

/** `start`: the stream's id and metadata, once, after `connected`. */
export const StartMessageSchema = z.object({
  event: z.literal('start'),
  streamSid: z.string(),
  start: z.object({
    streamSid: z.optional(z.string()),
    accountSid: z.optional(z.string()),
    callSid: z.optional(z.string()),
    tracks: z.optional(z.array(z.string())),
    customParameters: z.optional(z.record(z.string(), z.string())),
    mediaFormat: MediaFormatSchema,
  }),
});

/** Every message Twilio sends that the adapter reads, by `event`. */
export const TwilioInboundSchema = z.discriminatedUnion('event', [
  z.object({ event: z.literal('connected'), protocol: z.optional(z.string()), version: z.optional(z.string()) }),
  StartMessageSchema,
  z.object({
    event: z.literal('media'),
    media: z.object({ payload: z.string(), track: z.optional(z.string()), chunk: z.optional(z.string()), timestamp: z.optional(z.string()) }),
  }),
  z.object({ event: z.literal('dtmf'), dtmf: z.object({ digit: z.string(), track: z.optional(z.string()) }) }),
  z.object({ event: z.literal('mark'), mark: z.object({ name: z.string() }) }),
  z.object({ event: z.literal('stop'), stop: z.optional(z.object({ accountSid: z.optional(z.string()), callSid: z.optional(z.string()) })) }),
]);
/** A message from Twilio, parsed. */
export type TwilioInbound = z.infer<typeof TwilioInboundSchema>;

/** The call as its `start` message describes it. */
export interface TwilioStreamStart {
  streamSid: string;
  callSid: string | undefined;
  accountSid: string | undefined;
  /** `<Parameter>`s of the TwiML `<Stream>`. */
  customParameters: Record<string, string>;
  mediaFormat: z.infer<typeof MediaFormatSchema>;
}

/** One message from the socket, parsed; undefined for what is not JSON or not a known event. */
export function parseTwilioMessage(data: unknown): TwilioInbound | undefined {
  const text = typeof data === 'string' ? data : data instanceof Uint8Array ? new TextDecoder().decode(data) : undefined;
  if (text === undefined) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return undefined;
  }
  const parsed = TwilioInboundSchema.safeParse(json);
  return parsed.success ? parsed.data : undefined;
}

/** `media` to Twilio: base64 mu-law at 8 kHz. */
export function mediaMessage(streamSid: string, mulaw: Uint8Array): string {
  return JSON.stringify({ event: 'media', streamSid, media: { payload: toBase64(mulaw) } });
}
/** `mark` to Twilio: echoed back when the audio sent before it has played (or was cleared). */
export function markMessage(streamSid: string, name: string): string {
  return JSON.stringify({ event: 'mark', streamSid, mark: { name } });
}
/** `clear` to Twilio: drops the audio it holds that has not played yet. */
export function clearMessage(streamSid: string): string {
  return JSON.stringify({ event: 'clear', streamSid });
}

/** Base64 of bytes with the runtime's `btoa` (Node, Deno, Bun, workers and browsers have it). */
export function toBase64(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i++) binary += String.fromCharCode(bytes[i]!);
  return btoa(binary);
}
/** Bytes of base64 text, or undefined when it is not base64. */
export function fromBase64(text: string): Uint8Array | undefined {
  let binary: string;
  try {
    binary = atob(text);
  } catch {
    return undefined; // `InvalidCharacterError`
  }
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}
