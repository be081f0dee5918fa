/**
 * The parts of the AI SDK's provider specification (`@ai-sdk/provider` 3, the `ai` 6
 * major: `SpeechModelV3`, `TranscriptionModelV3`) that rxvoice's models implement,
 * written out structurally: the public types of `rxvoice/ai-sdk` name no type of the
 * peer, so they compile where `@ai-sdk/provider` is not installed. The test
 * `test/ai-sdk/ai-sdk.test.ts` checks that they are assignable to the peer's own types.
 */

/** A JSON value (`JSONValue` of `@ai-sdk/provider`). */
export type JsonValue = null | string | number | boolean | JsonObject | JsonValue[];
/** A JSON object (`JSONObject` of `@ai-sdk/provider`). */
export type JsonObject = { [key: string]: JsonValue | undefined };

/** A warning of a call (`SharedV3Warning`): a setting the model does not support, or another remark. */
export type CambWarning =
  | { type: 'unsupported'; feature: string; details?: string }
  | { type: 'compatibility'; feature: string; details?: string }
  | { type: 'other'; message: string };

/** What `generateSpeech` of `ai` passes to the speech model (`SpeechModelV3CallOptions`). */
export interface CambSpeechCallOptions {
  text: string;
  voice?: string;
  outputFormat?: string;
  instructions?: string;
  speed?: number;
  language?: string;
  providerOptions?: Record<string, JsonObject>;
  abortSignal?: AbortSignal;
  headers?: Record<string, string | undefined>;
}

/** What the speech model answers (the result of `SpeechModelV3.doGenerate`). */
export interface CambSpeechResult {
  audio: Uint8Array;
  warnings: CambWarning[];
  request?: { body?: unknown };
  response: { timestamp: Date; modelId: string; headers?: Record<string, string>; body?: unknown };
  providerMetadata?: Record<string, JsonObject>;
}

/** What `transcribe` of `ai` passes to the transcription model (`TranscriptionModelV3CallOptions`). */
export interface CambTranscriptionCallOptions {
  audio: Uint8Array | string;
  mediaType: string;
  providerOptions?: Record<string, JsonObject>;
  abortSignal?: AbortSignal;
  headers?: Record<string, string | undefined>;
}

/** What the transcription model answers (the result of `TranscriptionModelV3.doGenerate`). */
export interface CambTranscriptionResult {
  text: string;
  segments: Array<{ text: string; startSecond: number; endSecond: number }>;
  language: string | undefined;
  durationInSeconds: number | undefined;
  warnings: CambWarning[];
  request?: { body?: string };
  response: { timestamp: Date; modelId: string; headers?: Record<string, string>; body?: unknown };
  providerMetadata?: Record<string, JsonObject>;
}

/** A speech model of the provider: a `SpeechModelV3` of the AI SDK. */
export interface CambSpeechModel {
  readonly specificationVersion: 'v3';
  /** `'camb.speech'`. */
  readonly provider: string;
  readonly modelId: string;
  /** Speaks `options.text` over `/tts-stream`; what `generateSpeech` of `ai` calls. */
  doGenerate(options: CambSpeechCallOptions): Promise<CambSpeechResult>;
}

/** A transcription model of the provider: a `TranscriptionModelV3` of the AI SDK. */
export interface CambTranscriptionModel {
  readonly specificationVersion: 'v3';
  /** `'camb.transcription'`. */
  readonly provider: string;
  readonly modelId: string;
  /** Transcribes `options.audio` as a transcription task; what `transcribe` of `ai` calls. */
  doGenerate(options: CambTranscriptionCallOptions): Promise<CambTranscriptionResult>;
}
