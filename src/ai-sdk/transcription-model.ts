/**
 * The transcription model of the AI SDK provider: `transcribe` over the transcription
 * task (upload, poll, result) of rxvoice's client.
 *
 * @internal
 */
import { lastValueFrom, tap } from 'rxjs';
import { z } from 'zod';
import { unwrapWav } from '../audio/pcm.js';
import { routes } from '../core/routes.js';
import { cambOptions, headerWarnings, localeOf, type ProviderContext } from './call.js';
import { loadAiSdkProvider, toAiSdkError } from './errors.js';
import type { CambTranscriptionCallOptions, CambTranscriptionModel, CambTranscriptionResult, CambWarning } from './types.js';

/** `providerOptions.camb` of `transcribe`. */
const TranscriptionOptionsSchema = z.strictObject({
  /** The language spoken in the audio: a locale tag (`en-us`) or an ISO 639-1 code; default the provider's `language`. */
  language: z.string().optional(),
});

/** Seconds of a WAV file's audio (a streaming header's placeholder size read as the bytes present); undefined for other formats. */
function wavSeconds(bytes: Uint8Array): number | undefined {
  const wav = unwrapWav(bytes);
  const bytesPerSecond = wav ? wav.format.sampleRate * wav.format.channels * (wav.format.bitsPerSample / 8) : 0;
  return wav && bytesPerSecond > 0 ? wav.pcm.byteLength / bytesPerSecond : undefined;
}

/** A transcription model over the transcription task (see `createCamb`). */
export class CambTranscriptionModelImpl implements CambTranscriptionModel {
  readonly specificationVersion = 'v3';
  readonly provider = 'camb.transcription';
  readonly modelId: string;
  readonly #context: ProviderContext;

  constructor(modelId: string, context: ProviderContext) {
    this.modelId = modelId;
    this.#context = context;
  }

  async doGenerate(options: CambTranscriptionCallOptions): Promise<CambTranscriptionResult> {
    const sdk = await loadAiSdkProvider();
    const warnings: CambWarning[] = [];
    const extra = cambOptions(sdk, TranscriptionOptionsSchema, options.providerOptions);
    if (this.modelId !== 'default') warnings.push({ type: 'unsupported', feature: 'modelId', details: `the service has one transcription model; "${this.modelId}" is not sent` });
    headerWarnings(options.headers, warnings);
    const language = localeOf(sdk, extra.language, this.#context.language, warnings);
    const audio = typeof options.audio === 'string' ? new Uint8Array(Buffer.from(options.audio, 'base64')) : options.audio;
    const client = this.#context.client(sdk);
    const timestamp = new Date();
    let taskId: string | undefined;
    let last;
    try {
      last = await lastValueFrom(
        client
          .transcribe({ language, media_file: { data: audio, contentType: options.mediaType } }, { signal: options.abortSignal })
          .pipe(tap((event) => (taskId = event.task_id))),
      );
    } catch (error) {
      const url = `${client.baseUrl}${taskId === undefined ? routes.transcription : routes.transcriptionStatus(taskId)}`;
      const requestBodyValues = { language, media_file: { mediaType: options.mediaType, bytes: audio.byteLength } };
      throw toAiSdkError(sdk, error, { url, requestBodyValues, paid: taskId !== undefined });
    }
    if (last.type !== 'result') throw new sdk.APICallError({ message: 'The transcription task ended without a result', url: client.baseUrl, requestBodyValues: { language } });
    const transcript = last.result.transcript;
    return {
      text: transcript.map((item) => item.text.trim()).filter((text) => text !== '').join(' '),
      segments: transcript.map((item) => ({ text: item.text, startSecond: item.start, endSecond: item.end })),
      language: language.split('-')[0],
      durationInSeconds: wavSeconds(audio),
      warnings,
      response: { timestamp, modelId: this.modelId, body: last.result },
      providerMetadata: { camb: { taskId: last.task_id, runId: last.run_id, transcript } },
    };
  }
}
