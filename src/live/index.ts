/**
 * The live speech session on its own, without the HTTP client: the entry for browsers
 * (and any runtime with a WHATWG WebSocket). It loads only `rxjs`, `zod` and `ws` (the
 * default WebSocket constructor, which a browser bundle maps to its stub and which is
 * never used when `WebSocket` is injected); no Node built-in module.
 *
 * It is the one home of the live session's names and of the errors it raises:
 * `RxVoiceError` (the base of every rxvoice error, the HTTP client's included),
 * `ValidationError`, `LiveSessionError`, `SessionRejectedError`, `CreditsExhaustedError`,
 * so `instanceof` works without loading the client. `rxvoice` does not re-export them.
 *
 * ```ts
 * import { speak } from 'rxvoice/live';
 * import { concatSegments } from 'rxvoice/operators';
 *
 * text$.pipe(
 *   speak({ wsUrl, apiKey, WebSocket: globalThis.WebSocket }, { voice_id: 1 }), // key sent as api_key
 *   concatSegments(),
 * );
 * ```
 */
export { speak } from './session.js';
export {
  DEFAULT_LIVE_OUTPUT_FORMAT,
  DEFAULT_LIVE_MAX_PAYLOAD,
  DEFAULT_RESPONSE_TIMEOUT_MS,
  DEFAULT_CLOSE_GRACE_MS,
  type SpeakOptions,
  type LiveConnection,
  type ReconnectOptions,
  type StallOptions,
  type FallbackSpeech,
  type WebSocketLike as LiveWebSocketLike,
  type WebSocketConstructorLike,
} from './options.js';
export type {
  LiveSpeechEvent,
  ReadyEvent,
  SegmentStartEvent,
  SegmentWordTimestamp,
  AudioEvent,
  SegmentDoneEvent,
  SegmentSkippedEvent,
  SegmentMismatchEvent,
  ReconnectedEvent,
  SegmentFallbackEvent,
  DoneEvent,
  SpokenSegment,
} from './events.js';
export { heardText, HeardTracker, HeardReportSchema, HeardMethodSchema, type HeardReport, type HeardMethod, type HeardInput } from './heard.js';
export { WarmSessionPool, WARM_POOL_DEFAULTS, type WarmPoolOptions } from './warm.js';
export type { SpeechMetrics, SpeechMetricsObserver, SegmentMetrics, SessionMetrics } from './metrics.js';
export {
  CloseCodes,
  DEFAULT_IDLE_TIMEOUT,
  LIVE_OUTPUT_FORMATS,
  MAX_AUDIO_FRAME_BYTES,
  type LiveOutputFormat,
  type SessionConfigInput,
  type WordTimestamp,
} from './protocol.js';
export {
  RxVoiceError,
  LiveSessionError,
  CreditsExhaustedError,
  SessionRejectedError,
  ValidationError,
  type LiveSessionErrorCode,
  type LiveSessionErrorOptions,
  type RxVoiceErrorCode,
  type RxVoiceErrorOptions,
} from '../core/errors.js';
