/**
 * `createCamb` and `camb`: the service as a provider of the Vercel AI SDK (`ai` 6,
 * specification `v3`), with a speech model (`generateSpeech`) and a transcription model
 * (`transcribe`) on rxvoice's client.
 */
import { z } from 'zod';
import { RxVoiceClient } from '../client/client.js';
import { API_KEY_VARIABLES, BASE_URL_VARIABLES, ClientOptionsSchema, DEFAULT_BASE_URL, envValue, type ClientOptions } from '../client/config.js';
import { LocaleTagSchema, VoiceIdSchema } from '../core/primitives.js';
import { checkOptions, optionError } from '../core/validation.js';
import type { ProviderContext } from './call.js';
import { aiSdkProviderNow, type AiSdkProvider } from './errors.js';
import { CambSpeechModelImpl } from './speech-model.js';
import { CambTranscriptionModelImpl } from './transcription-model.js';
import type { CambSpeechModel, CambTranscriptionModel } from './types.js';

/**
 * Options of {@link createCamb}: those of `createClient` (`apiKey`, `baseUrl`,
 * `timeoutMs`, `maxRetries`, `polling`, ...), or a `client` to use as it is, and the
 * defaults of the models.
 */
export interface CambProviderSettings extends ClientOptions {
  /**
   * An rxvoice client to use as it is (then `apiKey`, `baseUrl` and the other client
   * options must not be given). Default: one made on the first call from `apiKey` and
   * `baseUrl`, else the environment variables `CAMB_API_KEY` (then `RXVOICE_API_KEY`) and
   * `CAMB_BASE_URL` (then `RXVOICE_BASE_URL`, then the public service `https://client.camb.ai/apis`).
   */
  client?: RxVoiceClient;
  /** Voice id used when `generateSpeech` gets no `voice`. Default: none (then `voice` is required). */
  voice?: number;
  /**
   * Locale tag used when `generateSpeech` gets no `language` (or `auto`), and as the
   * language of the audio `transcribe` gets (unless `providerOptions.camb.language`
   * says). Default `en-us`.
   */
  language?: string;
}

/** A model id of speech: `default` (the service's), or the name of a `speech_model`. */
export type CambSpeechModelId = 'default' | (string & {});
/** A model id of transcription: the service has one, `default`. */
export type CambTranscriptionModelId = 'default' | (string & {});

/**
 * The provider: `speech()` and `transcription()` models for `generateSpeech` and
 * `transcribe` of `ai`. It has the shape of the AI SDK's `ProviderV3`, so it fits
 * `createProviderRegistry`; it has no language, embedding or image models (they throw
 * the AI SDK's `NoSuchModelError`).
 */
export interface CambProvider {
  readonly specificationVersion: 'v3';
  /** A speech model over `/tts-stream`: `generateSpeech({ model: camb.speech(), text, voice: '1' })`. */
  speech(modelId?: CambSpeechModelId): CambSpeechModel;
  /** A transcription model over the transcription task: `transcribe({ model: camb.transcription(), audio })`. */
  transcription(modelId?: CambTranscriptionModelId): CambTranscriptionModel;
  /** {@link CambProvider.speech}, by the name the AI SDK's registry calls. */
  speechModel(modelId: CambSpeechModelId): CambSpeechModel;
  /** {@link CambProvider.transcription}, by the name the AI SDK's registry calls. */
  transcriptionModel(modelId: CambTranscriptionModelId): CambTranscriptionModel;
  /** Throws `NoSuchModelError`: the service has no language models. */
  languageModel(modelId: string): never;
  /** Throws `NoSuchModelError`: the service has no embedding models. */
  embeddingModel(modelId: string): never;
  /** Throws `NoSuchModelError`: the service has no image models. */
  imageModel(modelId: string): never;
  /** Closes the client the provider made (its keep-alive connections); a given `client` is left open. */
  close(): Promise<void>;
}

const SettingsSchema = ClientOptionsSchema.extend({
  client: z.custom<RxVoiceClient>((value) => value instanceof RxVoiceClient, { error: 'must be a client made by createClient' }).optional(),
  voice: z.optional(VoiceIdSchema),
  language: z.optional(LocaleTagSchema),
});

const CLIENT_FIELDS = Object.keys(ClientOptionsSchema.shape);

/**
 * Makes a provider of the AI SDK for the service.
 *
 * Nothing is read or checked against the environment until a model's first call: a
 * missing API key then fails that call with the AI SDK's `LoadAPIKeyError`, a missing
 * base address with `LoadSettingError`. Options of the wrong type throw a
 * `ValidationError` here, at once.
 *
 * Speech (`generateSpeech`) goes over `POST /tts-stream`: `voice` is the voice id (a
 * string of digits), `outputFormat` one of the service's formats (`wav`, the default,
 * `mp3`, `flac`, `adts` or `aac`, `pcm_s16le` or `pcm`, ...), `speed` the speaking rate
 * (0.25 to 4), `language` a locale tag or an ISO 639-1 code (`en` is sent as `en-us`,
 * with a warning). `instructions` are not supported (a warning). Other fields of the
 * service go in `providerOptions.camb`: `sampleRate`, `applyEnhancement`,
 * `enhanceNamedEntitiesPronunciation`, `enhanceReferenceAudioQuality`,
 * `maintainSourceAccent`. The answer's headers are the response's `headers`;
 * `providerMetadata.camb` holds `format`, `creditsRequired` (`X-Credits-Required`) and
 * `sampleRate`.
 *
 * Transcription (`transcribe`) uploads the audio (WAV, MP3, FLAC or AAC) as a
 * transcription task, polls it and fetches the transcript: one segment per line of the
 * transcript, with its start and end in seconds; `durationInSeconds` for WAV audio;
 * `providerMetadata.camb` holds `taskId`, `runId` and the transcript with speakers.
 *
 * Errors are the AI SDK's: `APICallError` for what the service answered (a 401, a 422,
 * a task that ended in ERROR), with the rxvoice error as `cause`, and `isRetryable` only
 * where repeating the call cannot pay twice (a 429, a request that never left, and no
 * task created); `InvalidArgumentError` for bad input, before anything is sent. The
 * client retries what is safe itself (`maxRetries`, default 2).
 *
 * ## Example
 * ```ts
 * import { experimental_generateSpeech as generateSpeech } from 'ai';
 * import { createCamb } from 'rxvoice/ai-sdk';
 *
 * const camb = createCamb({ apiKey: process.env.MY_SERVICE_KEY, baseUrl: 'https://speech.example.com' });
 * const { audio } = await generateSpeech({ model: camb.speech(), text: 'Hello there.', voice: '1' });
 * ```
 *
 * @param settings API key and address (else the environment), client options, defaults of the models.
 * @return The provider.
 * @throws ValidationError for options of the wrong type.
 */
export function createCamb(settings: CambProviderSettings = {}): CambProvider {
  checkOptions(SettingsSchema, settings, 'createCamb');
  const { client: given, voice, language, ...clientOptions } = settings;
  if (given !== undefined) {
    const extra = Object.keys(clientOptions).filter((key) => CLIENT_FIELDS.includes(key));
    if (extra.length > 0) throw optionError('createCamb', ['client'], `give either a client or client options (${extra.join(', ')}), not both`);
  }
  let client = given;
  let made: RxVoiceClient | undefined;
  const context: ProviderContext = {
    voice,
    language: language ?? 'en-us',
    client(sdk: AiSdkProvider): RxVoiceClient {
      if (client) return client;
      const env = clientOptions.env ?? process.env;
      const apiKey = clientOptions.apiKey ?? envValue(env, API_KEY_VARIABLES);
      if (!apiKey) {
        throw new sdk.LoadAPIKeyError({ message: 'The API key is missing: pass it as createCamb({ apiKey }) or set the environment variable CAMB_API_KEY (or RXVOICE_API_KEY).' });
      }
      const baseUrl = clientOptions.baseUrl ?? envValue(env, BASE_URL_VARIABLES) ?? DEFAULT_BASE_URL;
      try {
        made = new RxVoiceClient({ ...clientOptions, apiKey, baseUrl });
      } catch (error) {
        // messages of the configuration name fields, never the key
        throw new sdk.LoadSettingError({ message: (error as Error).message });
      }
      client = made;
      return client;
    },
  };
  const noSuchModel = (modelType: 'languageModel' | 'embeddingModel' | 'imageModel') => (modelId: string): never => {
    const { NoSuchModelError } = aiSdkProviderNow();
    throw new NoSuchModelError({ modelId, modelType, message: `camb has no ${modelType} (only speech and transcription): ${modelId}` });
  };
  const speech = (modelId: CambSpeechModelId = 'default'): CambSpeechModel => new CambSpeechModelImpl(modelId, context);
  const transcription = (modelId: CambTranscriptionModelId = 'default'): CambTranscriptionModel => new CambTranscriptionModelImpl(modelId, context);
  return {
    specificationVersion: 'v3',
    speech,
    transcription,
    speechModel: speech,
    transcriptionModel: transcription,
    languageModel: noSuchModel('languageModel'),
    embeddingModel: noSuchModel('embeddingModel'),
    imageModel: noSuchModel('imageModel'),
    async close() {
      const owned = made;
      made = undefined;
      if (owned) {
        client = undefined;
        await owned.close();
      }
    },
  };
}

/**
 * The default provider: `createCamb()`, reading `CAMB_API_KEY` and `CAMB_BASE_URL` (or their `RXVOICE_` forms)
 * on its first call (not when imported).
 *
 * ## Example
 * ```ts
 * import { experimental_transcribe as transcribe } from 'ai';
 * import { readFile } from 'node:fs/promises';
 * import { camb } from 'rxvoice/ai-sdk';
 *
 * const { text, segments } = await transcribe({ model: camb.transcription(), audio: await readFile('talk.wav') });
 * ```
 */
export const camb: CambProvider = createCamb();
