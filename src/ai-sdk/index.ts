/**
 * rxvoice/ai-sdk: the service as a provider of the Vercel AI SDK (`ai` 6). The AI SDK
 * is an optional peer: `@ai-sdk/provider` is imported on a model's first call, never
 * when this entry is loaded, and no public type here names one of its types.
 *
 * ```ts
 * import { experimental_generateSpeech as generateSpeech } from 'ai';
 * import { camb } from 'rxvoice/ai-sdk'; // CAMB_API_KEY (and CAMB_BASE_URL, default the public service)
 *
 * const { audio } = await generateSpeech({ model: camb.speech(), text: 'Hello there.', voice: '1' });
 * ```
 */
export {
  camb,
  createCamb,
  type CambProvider,
  type CambProviderSettings,
  type CambSpeechModelId,
  type CambTranscriptionModelId,
} from './provider.js';
export type {
  CambSpeechCallOptions,
  CambSpeechModel,
  CambSpeechResult,
  CambTranscriptionCallOptions,
  CambTranscriptionModel,
  CambTranscriptionResult,
  CambWarning,
  JsonObject,
  JsonValue,
} from './types.js';
