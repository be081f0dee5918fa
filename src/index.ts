/**
 * rxvoice: the public face. `createClient` and the types and errors callers need.
 */
import { RxVoiceClient } from './client/client.js';
import type { ClientOptions } from './client/config.js';

/**
 * Make a client. With no `apiKey` / `baseUrl` it reads `RXVOICE_API_KEY` and
 * `RXVOICE_BASE_URL`; a missing one is an `RxVoiceError` with code `'config'`.
 * Plain `http://` is refused for hosts other than loopback unless `allowInsecureHttp`.
 *
 * ## Example
 * ```ts
 * const client = createClient({ apiKey, baseUrl });
 * const wav = await lastValueFrom(client.textToSound({ prompt: 'rain on a tin roof' }).pipe(taskResult()));
 * ```
 */
export function createClient(options: ClientOptions = {}): RxVoiceClient {
  return new RxVoiceClient(options);
}

export { RxVoiceClient, TasksResource, type WarmSpeaker, type TaskFamilyName, type TaskResultByFamily } from './client/client.js';
export { type ClientOptions, type PollingOptions, type RetryOptions, type ResolvedConfig, type FetchLike, type WarnHook, type WebSocketConstructor } from './client/config.js';
export type { CallOptions } from './client/request.js';
export {
  taskResult,
  pollDelay,
  TaskDeadlineError,
  type TaskEvent,
  type TaskCreatedEvent,
  type TaskPendingEvent,
  type TaskResultEvent,
  type TaskTiming,
} from './client/tasks.js';
export type { BulkResultEntry, BulkResultMap } from './client/shared.js';
export { createPcmAligner, pcmSampleBytes, type TtsStreamChunk, type PcmAligner } from './client/tts-stream.js';
export { StreamError, type TranslationStreamEvent, type TranslateStreamOptions } from './client/translation-stream.js';
export { SseError, createSseParser, type SseEvent, type SseParser, type SseParserOptions, type SseErrorType } from './text/sse.js';
export type { UploadInput, UploadFile, UploadSource } from './client/upload.js';
export type { CreateCustomVoiceRequest } from './client/voices.js';
export type { AudioSeparationRequest } from './client/separation.js';
export type { CreateStoryRequest, TranslatedResultOptions } from './client/stories.js';
export type { TranscriptionRequest } from './client/transcription.js';
export type { SubtitlesRequest } from './client/subtitles.js';
export {
  AbortError,
  ApiError,
  AuthenticationError,
  ConnectionError,
  LimitExceededError,
  PaymentRequiredError,
  ProtocolError,
  RateLimitError,
  RedirectError,
  StreamIdleError,
  TaskError,
  TaskFailedError,
  TaskTimeoutError,
  TimeoutError,
  type LiveSessionErrorOptions,
  type RxVoiceErrorCode,
  type RxVoiceErrorOptions,
} from './core/errors.js';
export type * from './core/schemas.js';
// The live session's entry (`rxvoice/live`): speak, its events, SpeechLedger, close codes.
export * from './live/index.js';
// Chains above the client and the operators.
export { translateThenSpeak, type TranslateThenSpeakOptions, type TranslateThenSpeakClient } from './chains/translateThenSpeak.js';
