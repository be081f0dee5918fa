/**
 * What every command gets (streams, interrupt signal, secrets to scrub), and how it
 * reaches the service: `CAMB_API_KEY` / `CAMB_BASE_URL` (or their `RXVOICE_` forms; the
 * public service when only a key is set), or with neither an embedded emulator.
 */
import { createClient, type RxVoiceClient } from '../index.js';
import { startEmulator } from '../emulator/index.js';
import { AuthenticationError, RxVoiceError } from '../core/errors.js';
import { API_KEY_VARIABLES, BASE_URL_VARIABLES, DEFAULT_BASE_URL, envValue } from '../client/config.js';
import { UsageError } from './exit-codes.js';
import { writeLine, type CliIo } from './io.js';

export interface CommandContext {
  io: CliIo;
  /** Aborted on SIGINT/SIGTERM. */
  signal: AbortSignal;
  /** Values never to print (the API key); commands add to it. */
  secrets: Array<string | undefined>;
}

export interface Connection {
  client: RxVoiceClient;
  baseUrl: string;
  /** True when an embedded emulator serves this command. */
  embedded: boolean;
  /** Release the client and, if any, the embedded emulator. */
  close(): Promise<void>;
}

/**
 * Synth of the embedded emulator, from `RXVOICE_EMULATOR_SYNTH`; unset: the emulator's
 * default (espeak when espeak-ng is installed, else tone with one warning).
 */
export function embeddedSynth(io: CliIo): 'espeak' | 'tone' | undefined {
  const value = io.env['RXVOICE_EMULATOR_SYNTH']?.trim().toLowerCase();
  if (value === undefined || value === '') return undefined;
  if (value === 'espeak' || value === 'tone') return value;
  throw new UsageError(`RXVOICE_EMULATOR_SYNTH must be espeak or tone, not ${JSON.stringify(value)}`);
}

/**
 * Connect to the service named by the environment: the key from `CAMB_API_KEY` (then
 * `RXVOICE_API_KEY`), the address from `CAMB_BASE_URL` (then `RXVOICE_BASE_URL`, then the
 * public service). With neither a key nor an address, an embedded emulator is started
 * (one line on stderr says so).
 */
export async function connect(context: CommandContext): Promise<Connection> {
  const { io } = context;
  const apiKey = envValue(io.env, API_KEY_VARIABLES);
  const baseUrl = envValue(io.env, BASE_URL_VARIABLES);
  if (apiKey === undefined && baseUrl === undefined) {
    const synth = embeddedSynth(io);
    const emulator = await startEmulator({ ...(synth ? { synth } : {}), warn: (line) => writeLine(io.stderr, line) });
    context.secrets.push(emulator.apiKey);
    writeLine(
      io.stderr,
      `rxvoice: CAMB_API_KEY and CAMB_BASE_URL are not set; using an embedded emulator at ${emulator.baseUrl} (synth ${emulator.synth})`,
    );
    const client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.baseUrl, env: {}, warn: quiet });
    return {
      client,
      baseUrl: emulator.baseUrl,
      embedded: true,
      async close() {
        await closeClient(client);
        await emulator.close();
      },
    };
  }
  if (apiKey === undefined) {
    throw new AuthenticationError('CAMB_BASE_URL (or RXVOICE_BASE_URL) is set but CAMB_API_KEY is not: set the API key (or unset both to use the embedded emulator)');
  }
  context.secrets.push(apiKey);
  const address = baseUrl ?? DEFAULT_BASE_URL;
  let client: RxVoiceClient;
  try {
    client = createClient({ apiKey, baseUrl: address, env: {}, warn: quiet });
  } catch (error) {
    // a base address the client refuses (no scheme, plain http to a remote host) is a usage error
    if (error instanceof RxVoiceError && error.code === 'config') throw new UsageError(`${error.message} (from CAMB_BASE_URL / RXVOICE_BASE_URL)`);
    throw error;
  }
  return {
    client,
    baseUrl: client.baseUrl,
    embedded: false,
    close: () => closeClient(client),
  };
}

async function closeClient(client: RxVoiceClient): Promise<void> {
  await client.close();
}

/**
 * Deprecation warnings are for library callers; `rxvoice translate` uses the deprecated
 * streaming translation on purpose, and stderr must stay one line per error.
 */
const quiet = (): void => undefined;


/** Run `body` with a connection, closing it afterwards whatever happens. */
export async function withConnection<T>(context: CommandContext, body: (connection: Connection) => Promise<T>): Promise<T> {
  const connection = await connect(context);
  try {
    return await body(connection);
  } finally {
    await connection.close();
  }
}
