/**
 * The live protocol's constants (close codes, frame limits, defaults), apart from its zod
 * schemas (`protocol.ts`, which re-exports them) so that the browser path, which imports
 * only these, does not load a schema library.
 */

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
  /** Not in the contract; `rxvoice/relay`'s, after HTTP 403: the page's origin is not allowed (not retried). */
  forbidden: 4403,
} as const;
