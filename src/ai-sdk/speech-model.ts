/**
 * The speech model of the AI SDK provider: `generateSpeech` over `POST /tts-stream`.
 *
 * @internal
 */
import { lastValueFrom, tap } from 'rxjs';
import { z } from 'zod';
import { unwrapWav } from '../audio/pcm.js';
import { wavHeader } from '../audio/wav.js';
import { routes } from '../core/routes.js';
import { TTS_STREAM_FORMATS, type TtsStreamFormat, type TtsStreamRequest } from '../core/schemas.js';
import { ValidationError } from '../core/errors.js';
import { concatBytes } from '../core/bytes.js';
import { speakableString } from '../client/speakable.js';
import type { SpeakableTextOptions } from '../text/speakable.js';
import { cambOptions, headerWarnings, localeOf, type ProviderContext } from './call.js';
import { loadAiSdkProvider, toAiSdkError, type AiSdkProvider } from './errors.js';
import type { CambSpeechCallOptions, CambSpeechModel, CambSpeechResult, CambWarning } from './types.js';

/** `providerOptions.camb` of `generateSpeech`: the fields of `/tts-stream` the AI SDK has no name for. */
const SpeechOptionsSchema = z.strictObject({
  /** `output_configuration.sample_rate`, 8000 to 48000. */
  sampleRate: z.int().min(8000).max(48000).optional(),
  /** `output_configuration.apply_enhancement`. */
  applyEnhancement: z.boolean().optional(),
  /** `enhance_named_entities_pronunciation`. */
  enhanceNamedEntitiesPronunciation: z.boolean().optional(),
  /** `voice_settings.enhance_reference_audio_quality`. */
  enhanceReferenceAudioQuality: z.boolean().optional(),
  /** `voice_settings.maintain_source_accent`. */
  maintainSourceAccent: z.boolean().optional(),
  /**
   * Speak the text as a listener would want it (rxvoice's `speakableText` options: thoughts,
   * tool calls, markdown and link addresses not spoken; `lexicon`, `spokenForm`...). Default
   * true (LLM text is this model's input); `false` sends the text as it is.
   */
  speakable: z.union([z.boolean(), z.looseObject({})]).optional(),
});

/** Output formats the AI SDK may name otherwise than the service. */
const FORMAT_ALIASES: Readonly<Record<string, TtsStreamFormat>> = { aac: 'adts', pcm: 'pcm_s16le' };

function formatOf(sdk: AiSdkProvider, outputFormat: string | undefined, warnings: CambWarning[]): TtsStreamFormat {
  if (outputFormat === undefined) return 'wav';
  const given = outputFormat.toLowerCase();
  if ((TTS_STREAM_FORMATS as readonly string[]).includes(given)) return given as TtsStreamFormat;
  const alias = FORMAT_ALIASES[given];
  if (alias === undefined) {
    throw new sdk.InvalidArgumentError({ argument: 'outputFormat', message: `outputFormat "${outputFormat}": use one of ${TTS_STREAM_FORMATS.join(', ')}` });
  }
  warnings.push({ type: 'compatibility', feature: 'outputFormat', details: `"${outputFormat}" sent as ${alias}` });
  return alias;
}

function voiceOf(sdk: AiSdkProvider, voice: string | undefined, fallback: number | undefined): number {
  if (voice === undefined) {
    if (fallback !== undefined) return fallback;
    throw new sdk.InvalidArgumentError({ argument: 'voice', message: "voice is required: a voice id such as '1' (or createCamb({ voice }))" });
  }
  if (!/^\d+$/.test(voice.trim())) throw new sdk.InvalidArgumentError({ argument: 'voice', message: `voice "${voice}" is not a voice id (a non-negative integer)` });
  return Number(voice.trim());
}

/**
 * The streamed answer as one file: a WAV's placeholder sizes (a stream of unknown length)
 * made true, as a canonical header (`wavHeader`) before the PCM. A WAV whose header is already
 * of that length (the service's 44 bytes) gets it written in place: the audio is copied once, not twice.
 *
 * @internal
 */
export function wholeFile(format: TtsStreamFormat, chunks: readonly Uint8Array[]): Uint8Array {
  const bytes = concatBytes(chunks);
  const wav = format === 'wav' ? unwrapWav(bytes) : undefined;
  if (!wav) return bytes;
  const header = wavHeader(wav.format, wav.pcm.byteLength);
  if (wav.info.dataOffset !== header.byteLength) return concatBytes([header, wav.pcm]);
  const file = bytes.subarray(0, header.byteLength + wav.pcm.byteLength);
  file.set(header, 0);
  return file;
}

/** The text to send: speakable (by default, in the call's language) or as it is. */
async function spokenText(sdk: AiSdkProvider, text: string, speakable: boolean | Record<string, unknown>, language: string): Promise<string> {
  if (speakable === false) return text;
  const options = { language, ...(speakable === true ? {} : speakable) } as SpeakableTextOptions;
  try {
    return await speakableString(text, options);
  } catch (error) {
    if (error instanceof ValidationError || error instanceof RangeError) {
      throw new sdk.InvalidArgumentError({ argument: 'providerOptions.camb.speakable', message: error.message });
    }
    throw error;
  }
}

/** A speech model over `/tts-stream` (see `createCamb`). */
export class CambSpeechModelImpl implements CambSpeechModel {
  readonly specificationVersion = 'v3';
  readonly provider = 'camb.speech';
  readonly modelId: string;
  readonly #context: ProviderContext;

  constructor(modelId: string, context: ProviderContext) {
    this.modelId = modelId;
    this.#context = context;
  }

  async doGenerate(options: CambSpeechCallOptions): Promise<CambSpeechResult> {
    const sdk = await loadAiSdkProvider();
    // empty or only whitespace is nothing to speak: an error, never a file of 0 bytes
    if (typeof options.text === 'string' && options.text.trim() === '') {
      throw new sdk.InvalidArgumentError({ argument: 'text', message: 'text is empty or only whitespace: there is nothing to speak' });
    }
    const warnings: CambWarning[] = [];
    const extra = cambOptions(sdk, SpeechOptionsSchema, options.providerOptions);
    if (options.instructions !== undefined) warnings.push({ type: 'unsupported', feature: 'instructions' });
    headerWarnings(options.headers, warnings);
    const format = formatOf(sdk, options.outputFormat, warnings);
    const language = localeOf(sdk, options.language, this.#context.language, warnings);
    const body: TtsStreamRequest = {
      text: await spokenText(sdk, options.text, extra.speakable ?? true, language),
      voice_id: voiceOf(sdk, options.voice, this.#context.voice),
      language,
      ...(this.modelId === 'default' ? {} : { speech_model: this.modelId }),
      ...(extra.enhanceNamedEntitiesPronunciation === undefined ? {} : { enhance_named_entities_pronunciation: extra.enhanceNamedEntitiesPronunciation }),
      output_configuration: {
        format,
        ...(extra.sampleRate === undefined ? {} : { sample_rate: extra.sampleRate }),
        ...(extra.applyEnhancement === undefined ? {} : { apply_enhancement: extra.applyEnhancement }),
      },
      ...(options.speed === undefined && extra.enhanceReferenceAudioQuality === undefined && extra.maintainSourceAccent === undefined
        ? {}
        : {
            voice_settings: {
              ...(options.speed === undefined ? {} : { speaking_rate: options.speed }),
              ...(extra.enhanceReferenceAudioQuality === undefined ? {} : { enhance_reference_audio_quality: extra.enhanceReferenceAudioQuality }),
              ...(extra.maintainSourceAccent === undefined ? {} : { maintain_source_accent: extra.maintainSourceAccent }),
            },
          }),
    };
    const client = this.#context.client(sdk);
    const timestamp = new Date();
    const chunks: Uint8Array[] = [];
    let headers: Record<string, string> = {};
    let creditsRequired: number | undefined;
    let sampleRate: number | undefined;
    try {
      await lastValueFrom(
        client.ttsStream(body, { signal: options.abortSignal, onHeaders: (h) => (headers = h) }).pipe(
          tap((chunk) => {
            chunks.push(chunk.bytes);
            creditsRequired = chunk.creditsRequired;
            sampleRate = chunk.sampleRate;
          }),
        ),
        { defaultValue: undefined },
      );
    } catch (error) {
      throw toAiSdkError(sdk, error, { url: `${client.baseUrl}${routes.ttsStream}`, requestBodyValues: body, paid: false });
    }
    return {
      audio: wholeFile(format, chunks),
      warnings,
      request: { body },
      response: { timestamp, modelId: this.modelId, headers },
      providerMetadata: {
        camb: {
          format,
          ...(creditsRequired === undefined ? {} : { creditsRequired }),
          ...(sampleRate === undefined ? {} : { sampleRate }),
        },
      },
    };
  }
}
