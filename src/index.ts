/**
 * rxvoice: the HTTP client. `createClient`, its resources and types, the HTTP errors, the
 * service's wire types, and chains such as `translateThenSpeak`.
 *
 * Each public name has one entry. The live session (`speak`, its events, the warm pool) and
 * the errors a live session raises (`RxVoiceError`, the base of every error here too,
 * `ValidationError`, `LiveSessionError`, ...) come from `rxvoice/live`, which browsers load
 * without this client; `parseSse`, `createSseParser` and `SseError` from `rxvoice/operators`.
 */
// first: an older Node fails here with one clear sentence
import './core/node-version.js';
import { RxVoiceClient } from './client/client.js';
import type { ClientOptions } from './client/config.js';

/**
 * Make a client. With no `apiKey` / `baseUrl` it reads `CAMB_API_KEY` (then `RXVOICE_API_KEY`)
 * and `CAMB_BASE_URL` (then `RXVOICE_BASE_URL`, then the public service `https://client.camb.ai/apis`);
 * a missing key is an `RxVoiceError` with code `'config'`. `liveUrl` overrides the derived live address.
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

export { RxVoiceClient, TasksResource, type WarmSpeaker, type TaskFamilyName, type TaskResultByFamily, type ClientSpeakOptions, type ClientTtsStreamOptions } from './client/client.js';
export type { SpeechCacheHook } from './client/cache-hook.js';
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
export { createPcmAligner, pcmSampleBytes, type TtsStreamChunk, type TtsStreamOptions, type PcmAligner } from './client/tts-stream.js';
export { StreamError, type TranslationStreamEvent, type TranslateStreamOptions } from './client/translation-stream.js';
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
} from './core/errors.js';
// The service's wire types (inferred from the zod schemas; `LiveOutputFormat` is rxvoice/live's).
export type {
  Language,
  Gender,
  Formality,
  AudioType,
  TaskStatusValue,
  ValidationIssue,
  ValidationErrorBody,
  ErrorBody,
  TaskCreated,
  TaskStatus,
  DialogueItem,
  TextToSoundRequest,
  RunIdsRequest,
  OutputUrlEntry,
  BulkResults,
  TtsRequest,
  TtsStreamFormat,
  TtsStreamRequest,
  CreateCustomVoiceFields,
  CreateCustomVoiceResponse,
  Voice,
  AudioSeparationResult,
  CreateStoryFields,
  StoryRun,
  TranslatedStoryResult,
  TranslatedStoryQuery,
  ProjectSetupRequest,
  ProjectSetupResult,
  TranslationStreamRequest,
  TranslationRequest,
  TranslationResult,
  TranscriptionFields,
  TranscriptionResult,
  SubtitlesFields,
  SubtitlesResult,
  EndToEndDubbingRequest,
  DubbedRunInfo,
  RunKind,
} from './core/schemas.js';
// Chains above the client and the operators.
export { translateThenSpeak, type TranslateThenSpeakOptions, type TranslateThenSpeakClient } from './chains/translateThenSpeak.js';
