/**
 * Frames of the live speech WebSocket (`/live-tts/ws`), as zod schemas shared by the
 * client session and the emulator. Server frames are parsed, never trusted.
 */
import { z } from 'zod';
import { LanguageSchema, LiveOutputFormatSchema, VoiceIdSchema } from '../core/schemas.js';

export { LIVE_OUTPUT_FORMATS, LiveOutputFormatSchema, type LiveOutputFormat } from '../core/schemas.js';

/** Largest binary frame the service sends. */
export const MAX_AUDIO_FRAME_BYTES = 64 * 1024;
/** Default idle timeout, seconds. */
export const DEFAULT_IDLE_TIMEOUT = 1.0;

/** Close codes of the live session. */
export const CloseCodes = {
  normal: 1000,
  invalidKey: 4401,
  rejected: 4400,
  creditsExhausted: 4402,
  /** Not in the contract (its other codes are "not shown"); the emulator's choice, after HTTP 408: the session sat idle. */
  idleTimeout: 4408,
  /** Not in the contract; the emulator's choice, after HTTP 429: too many live sessions open for the key. */
  tooManySessions: 4429,
} as const;

/** The configuration carried by `session.start` (everything but `type`). */
export const SessionConfigSchema = z.object({
  voice_id: VoiceIdSchema,
  language: LanguageSchema.default('en-us'),
  /** The service defaults to mp3. */
  output_format: LiveOutputFormatSchema.default('mp3'),
  sample_rate: z.int().min(8000).max(48000).nullable().optional(),
  word_timestamps: z.boolean().default(false),
  idle_timeout: z.number().positive().max(60).default(DEFAULT_IDLE_TIMEOUT),
  enhance_named_entities_pronunciation: z.boolean().default(false),
  enhance_reference_audio_quality: z.boolean().default(false),
  maintain_source_accent: z.boolean().default(false),
  apply_enhancement: z.boolean().nullable().optional(),
  speaking_rate: z.number().min(0.25).max(4).nullable().optional(),
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
export const SessionStartFrameSchema = SessionConfigSchema.extend({ type: z.literal('session.start') });
export const TextChunkFrameSchema = z.object({
  type: z.literal('text.chunk'),
  text: z.string(),
  index: z.int().nonnegative().optional(),
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
  config: z.record(z.string(), z.unknown()).optional(),
});
export const SegmentStartFrameSchema = z.object({
  type: z.literal('segment.start'),
  segment_id: z.int().nonnegative(),
  text: z.string(),
  word_timestamps: z.array(WordTimestampSchema).optional(),
});
export const SegmentDoneFrameSchema = z.object({ type: z.literal('segment.done'), segment_id: z.int().nonnegative() });
export const SegmentSkippedFrameSchema = z.object({
  type: z.literal('segment.skipped'),
  segment_id: z.int().nonnegative(),
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
