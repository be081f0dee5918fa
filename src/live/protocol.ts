/**
 * Frames of the live speech WebSocket (`/live-tts/ws`), as zod schemas shared by the
 * client session, the relay and the emulator. Server frames are parsed, never trusted.
 * Written with `zod/mini`, with the messages given here. A session in a page checks frames
 * and options with the plain checks of `checks.ts` (proven to agree), not with these.
 */
import * as z from 'zod/mini';
import { LanguageSchema, LiveOutputFormatSchema, VoiceIdSchema } from '../core/primitives.js';

export { LIVE_OUTPUT_FORMATS, LiveOutputFormatSchema, type LiveOutputFormat } from '../core/primitives.js';

export { CloseCodes, DEFAULT_IDLE_TIMEOUT, MAX_AUDIO_FRAME_BYTES } from './protocol-constants.js';
import { DEFAULT_IDLE_TIMEOUT } from './protocol-constants.js';

/** The configuration carried by `session.start` (everything but `type`). */
const flagOff = () => z._default(z.boolean({ error: 'must be true or false' }), false);
/** An integer >= 0 (ids and indexes of the protocol). */
const index = () => z.int({ error: 'must be an integer' }).check(z.nonnegative({ error: 'must be an integer >= 0' }));

export const SessionConfigSchema = z.object({
  voice_id: VoiceIdSchema,
  language: z._default(LanguageSchema, 'en-us'),
  /** `speak` and `client.speak` send `wav` when it is not given (the `session.start` frame itself, and so the service, defaults to mp3). @default wav */
  output_format: z._default(LiveOutputFormatSchema, 'mp3'),
  sample_rate: z.nullish(
    z.int({ error: 'must be an integer number of hertz' }).check(
      z.minimum(8000, { error: 'must be at least 8000 Hz' }),
      z.maximum(48000, { error: 'must be at most 48000 Hz' }),
    ),
  ),
  word_timestamps: flagOff(),
  idle_timeout: z._default(
    z.number({ error: 'must be a number of seconds' }).check(
      z.positive({ error: 'must be more than 0 seconds' }),
      z.maximum(60, { error: 'must be at most 60 seconds' }),
    ),
    DEFAULT_IDLE_TIMEOUT,
  ),
  enhance_named_entities_pronunciation: flagOff(),
  enhance_reference_audio_quality: flagOff(),
  maintain_source_accent: flagOff(),
  apply_enhancement: z.nullish(z.boolean({ error: 'must be true or false' })),
  speaking_rate: z.nullish(
    z.number({ error: 'must be a number' }).check(
      z.minimum(0.25, { error: 'must be at least 0.25' }),
      z.maximum(4, { error: 'must be at most 4' }),
    ),
  ),
});
/**
 * The session options of a `session.start` frame, as given: `voice_id` (required),
 * `language` (default `en-us`), `output_format` (`wav` | `mp3` | `flac` | `aac`; the
 * service defaults to `mp3`), `sample_rate` (or null), `word_timestamps` (default false),
 * `idle_timeout` (seconds, default 1.0), the enhancement flags (default false) and
 * `speaking_rate` (0.25 to 4, or null).
 */
export type SessionConfigInput = z.input<typeof SessionConfigSchema>;
export type SessionConfig = z.infer<typeof SessionConfigSchema>;

// Client -> server
export const SessionStartFrameSchema = z.extend(SessionConfigSchema, { type: z.literal('session.start') });
export const TextChunkFrameSchema = z.object({
  type: z.literal('text.chunk'),
  text: z.string(),
  index: z.optional(index()),
});
export const TextDoneFrameSchema = z.object({ type: z.literal('text.done') });
export const ClientFrameSchema = z.discriminatedUnion('type', [
  SessionStartFrameSchema,
  TextChunkFrameSchema,
  TextDoneFrameSchema,
]);
export type SessionStartFrame = z.input<typeof SessionStartFrameSchema>;
export type TextChunkFrame = z.infer<typeof TextChunkFrameSchema>;
export type TextDoneFrame = z.infer<typeof TextDoneFrameSchema>;
export type ClientFrame = z.infer<typeof ClientFrameSchema>;

// Server -> client
export const WordTimestampSchema = z.object({
  /** The word as spoken. */
  word: z.string(),
  /** Seconds, relative to the start of the segment's audio. */
  start: z.number(),
  /** Seconds, relative to the start of the segment's audio. */
  end: z.number(),
});
/**
 * When a word of a segment is spoken: `start` and `end` in seconds from the start of its
 * segment's audio (`wordTimeline()` puts them on one timeline across segments).
 */
export type WordTimestamp = z.infer<typeof WordTimestampSchema>;

export const SessionReadyFrameSchema = z.object({
  type: z.literal('session.ready'),
  session_id: z.string(),
  run_id: z.int(),
  config: z.optional(z.record(z.string(), z.unknown())),
});
export const SegmentStartFrameSchema = z.object({
  type: z.literal('segment.start'),
  segment_id: index(),
  text: z.string(),
  word_timestamps: z.optional(z.array(WordTimestampSchema)),
});
export const SegmentDoneFrameSchema = z.object({ type: z.literal('segment.done'), segment_id: index() });
export const SegmentSkippedFrameSchema = z.object({
  type: z.literal('segment.skipped'),
  segment_id: index(),
  text: z.string(),
});
export const SessionErrorFrameSchema = z.object({ type: z.literal('session.error'), error: z.string() });
export const SessionDoneFrameSchema = z.object({ type: z.literal('session.done') });
export const ServerFrameSchema = z.discriminatedUnion('type', [
  SessionReadyFrameSchema,
  SegmentStartFrameSchema,
  SegmentDoneFrameSchema,
  SegmentSkippedFrameSchema,
  SessionErrorFrameSchema,
  SessionDoneFrameSchema,
]);
export type SessionReadyFrame = z.infer<typeof SessionReadyFrameSchema>;
export type SegmentStartFrame = z.infer<typeof SegmentStartFrameSchema>;
export type SegmentDoneFrame = z.infer<typeof SegmentDoneFrameSchema>;
export type SegmentSkippedFrame = z.infer<typeof SegmentSkippedFrameSchema>;
export type SessionErrorFrame = z.infer<typeof SessionErrorFrameSchema>;
export type SessionDoneFrame = z.infer<typeof SessionDoneFrameSchema>;
export type ServerFrame = z.infer<typeof ServerFrameSchema>;
