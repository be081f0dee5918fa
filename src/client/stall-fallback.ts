/**
 * The second way `client.speak` speaks when its live session stalls
 * (`stall: { fallback: 'tts-stream' }`): `POST /tts-stream`, one call per sentence, with the
 * session's voice and settings, answering audio in the session's output format.
 */
import { map } from 'rxjs';
import type { SpeakOptions } from '../live/options.js';
import type { FallbackSpeech } from '../live/stall-fallback.js';
import type { TtsStreamFormat } from '../core/schemas.js';
import type { HttpTransport } from './request.js';
import { ttsStream } from './tts-stream.js';

/** The `/tts-stream` format of a live output format (the live `aac` is ADTS). */
const FORMATS: Record<string, TtsStreamFormat> = { wav: 'wav', mp3: 'mp3', flac: 'flac', aac: 'adts' };

/**
 * `options` with `fallbackSpeech` wired to `POST /tts-stream` when the stall fallback asks
 * for it and none was given; otherwise `options` as they are.
 */
export function withTtsStreamFallback(transport: HttpTransport, options: SpeakOptions): SpeakOptions {
  if (options.stall?.fallback !== 'tts-stream' || options.fallbackSpeech !== undefined) return options;
  const format = FORMATS[options.output_format ?? 'wav'] ?? 'wav';
  const fallbackSpeech: FallbackSpeech = (text) =>
    ttsStream(transport, {
      text,
      voice_id: options.voice_id,
      language: options.language ?? 'en-us',
      enhance_named_entities_pronunciation: options.enhance_named_entities_pronunciation ?? false,
      output_configuration: { format, sample_rate: options.sample_rate ?? null, apply_enhancement: options.apply_enhancement ?? null },
      voice_settings: {
        enhance_reference_audio_quality: options.enhance_reference_audio_quality ?? false,
        maintain_source_accent: options.maintain_source_accent ?? false,
        speaking_rate: options.speaking_rate ?? null,
      },
    }).pipe(map((chunk) => chunk.bytes));
  return { ...options, fallbackSpeech };
}
