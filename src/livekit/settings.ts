/**
 * What the plugin's streams need of their TTS: the rxvoice client, the live session's
 * options, and the audio shape. Made once by the TTS (options checked there).
 */
import type { RxVoiceClient } from '../client/client.js';
import type { ClientSpeakOptions } from '../client/client.js';

export interface StreamSettings {
  client: RxVoiceClient;
  /** Options of each live session (`client.speak`), without `metrics` (each stream adds its own). */
  speak: ClientSpeakOptions;
  sampleRate: number;
  /** Samples per audio frame. */
  frameSamples: number;
  /** Locale of the text (sentence rules of `synthesize` when a text is split). */
  locale: string | undefined;
  provider: string;
  model: string;
}
