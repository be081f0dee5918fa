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

/**
 * The synth an example's `--synth espeak|tone` asks for. `npm start --synth tone` hands
 * the flag to npm, not to the script: npm (10, 11) sets `npm_config_synth=true` and passes
 * `tone` on as the script's first argument (`npm start --synth=tone` sets
 * `npm_config_synth=tone`); both are read here, so `npm start --synth tone`,
 * `npm start --synth=tone` and `npm start -- --synth tone` all work. Returns the synth
 * and the arguments left. None asked: undefined, and the emulator speaks with espeak-ng
 * when it loads, else tones.
 */
export function synthOption(
  flag: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
  positionals: readonly string[] = [],
): { synth: 'espeak' | 'tone' | undefined; positionals: string[] } {
  let rest = [...positionals];
  let asked = flag ?? env['npm_config_synth'];
  if (flag === undefined && asked === 'true' && (rest[0] === 'espeak' || rest[0] === 'tone')) {
    asked = rest[0];
    rest = rest.slice(1);
  }
  if (asked === undefined || asked === '' || asked === 'true') return { synth: undefined, positionals: rest };
  if (asked === 'espeak' || asked === 'tone') return { synth: asked, positionals: rest };
  throw new Error(`--synth must be espeak or tone, not ${JSON.stringify(asked)}`);
}

/** A client of the service the environment names, else of a new embedded emulator speaking with `synth` (see {@link synthOption}). */
export async function speechService(synth: 'espeak' | 'tone' | undefined): Promise<SpeechService> {
  let emulator: Emulator | undefined;
  let apiKey = process.env['RXVOICE_API_KEY'];
  let baseUrl = process.env['RXVOICE_BASE_URL'];
  if (!apiKey && !baseUrl) {
    emulator = await startEmulator(synth ? { synth } : {});
    apiKey = emulator.apiKey;
    baseUrl = emulator.baseUrl;
  }
  return { client: createClient({ apiKey, baseUrl }), emulator };
}
