/**
 * The speech service of the examples: the one `RXVOICE_API_KEY` / `RXVOICE_BASE_URL`
 * name, or, when neither is set, an embedded emulator.
 */
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import { createClient, type RxVoiceClient } from '../../src/index.js';

export interface SpeechService {
  client: RxVoiceClient;
  /** The embedded emulator, when the environment named no service (close it at the end). */
  emulator: Emulator | undefined;
}

/** A client of the service the environment names, else of a new embedded emulator speaking with `synth` (`tone`, else espeak). */
export async function speechService(synth: string | undefined): Promise<SpeechService> {
  let emulator: Emulator | undefined;
  let apiKey = process.env['RXVOICE_API_KEY'];
  let baseUrl = process.env['RXVOICE_BASE_URL'];
  if (!apiKey && !baseUrl) {
    emulator = await startEmulator({ synth: synth === 'tone' ? 'tone' : 'espeak' });
    apiKey = emulator.apiKey;
    baseUrl = emulator.baseUrl;
  }
  return { client: createClient({ apiKey, baseUrl }), emulator };
}
