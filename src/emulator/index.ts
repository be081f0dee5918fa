/**
 * rxvoice/emulator: a local stand-in for the speech and localization service, over
 * real HTTP and WebSocket, with real speech (espeak-ng) or deterministic tones.
 *
 * @example
 * const emulator = await startEmulator({ synth: 'tone' });
 * const res = await fetch(`${emulator.baseUrl}/list-voices`, { headers: { 'x-api-key': emulator.apiKey } });
 * await emulator.close();
 */
import { routes } from '../core/routes.js';
import { EmulatorOptionsSchema, type EmulatorOptions } from './options.js';
import { startNetworkRelay, type NetworkRelay } from './network.js';
import { startServer } from './server.js';
import { createEmulatorState, type EmulatorState, type RequestLogEntry } from './state.js';
import { loadMp3Encoder } from '../audio/encode.js';
import { startSynthesizer } from './synth/index.js';

export { EmulatorOptionsSchema, FaultsSchema, DEFAULT_DEV_API_KEY } from './options.js';
export type { EmulatorOptions, ResolvedEmulatorOptions, Faults, Latency } from './options.js';
export { DEFAULT_VOICE_ID, LIBRARY_VOICES } from './state.js';
export type { EmulatorState, RequestLogEntry, TaskRecord } from './state.js';
export type { EmulatorContext } from './types.js';
export { pseudoLocalize } from './pseudo.js';
export { EspeakUnavailableError } from './synth/espeak.js';
export { TRANSLATION_FAIL_TRIGGER, STREAMING_WAV_SIZE } from './http-stream.js';

/** A running emulator. */
export interface Emulator {
  /** HTTP base address, e.g. `http://127.0.0.1:41234`. */
  readonly baseUrl: string;
  /** Live speech WebSocket address, e.g. `ws://127.0.0.1:41234/live-tts/ws`. */
  readonly wsUrl: string;
  /** The first accepted API key. */
  readonly apiKey: string;
  /** The TCP port it listens on. */
  readonly port: number;
  /** The synthesizer it speaks with: `synth` as asked, or the fallback (`'tone'` without espeak-ng). */
  readonly synth: 'espeak' | 'tone';
  /** Shared state (credits, runs, tasks, voices, faults via `context.options.faults`). */
  readonly context: EmulatorState;
  /** Every HTTP request received (method and path, no query, no key), in order. */
  readonly requests: readonly RequestLogEntry[];
  /** Live speech WebSockets the server holds open right now (what it sees of closes). */
  readonly liveConnections: number;
  /**
   * Stop: ends every HTTP connection (keep-alive ones too), terminates every WebSocket,
   * clears every timer; resolves once the server is closed. Safe to call twice.
   */
  close(): Promise<void>;
}

/**
 * Start an emulator. Options are validated with {@link EmulatorOptionsSchema}; by
 * default it listens on 127.0.0.1 at a free port, accepts the development key
 * {@link DEFAULT_DEV_API_KEY} and speaks with espeak-ng when the optional package is
 * installed, else with tones after one warning line naming `npm install espeak-ng`
 * (`synth: 'tone'` for fast, deterministic tones; `synth: 'espeak'` rejects with an
 * {@link EspeakUnavailableError} when espeak-ng cannot be loaded).
 */
export async function startEmulator(options: EmulatorOptions = {}): Promise<Emulator> {
  const resolved = EmulatorOptionsSchema.parse(options);
  await loadMp3Encoder();
  const synthesizer = await startSynthesizer(resolved);
  const state = createEmulatorState(resolved, synthesizer);
  // A wildcard address is reached through loopback.
  const reachable = resolved.host === '0.0.0.0' ? '127.0.0.1' : resolved.host === '::' ? '::1' : resolved.host;
  const emulated = resolved.latencyMs !== 0 || resolved.bandwidthBytesPerSecond !== undefined;
  // With an emulated network, the server listens on a free port behind the relay.
  const running = await startServer(state, emulated ? 0 : resolved.port).catch(async (error: unknown) => {
    await synthesizer.close?.();
    throw error;
  });
  let network: NetworkRelay | undefined;
  try {
    if (emulated) {
      network = await startNetworkRelay(
        { latencyMs: resolved.latencyMs, bandwidthBytesPerSecond: resolved.bandwidthBytesPerSecond },
        { host: resolved.host, port: resolved.port },
        { host: reachable, port: running.port },
      );
    }
  } catch (error) {
    await running.close();
    await synthesizer.close?.();
    throw error;
  }
  const port = network?.port ?? running.port;
  const host = reachable.includes(':') ? `[${reachable}]` : reachable;
  const origin = `${host}:${port}`;
  const apiKey = resolved.apiKeys[0];
  if (apiKey === undefined) throw new Error('no API key configured');
  return {
    baseUrl: `http://${origin}`,
    wsUrl: `ws://${origin}${routes.liveTts}`,
    apiKey,
    port,
    context: state,
    requests: state.requests,
    get liveConnections() {
      return running.liveConnections();
    },
    synth: synthesizer.name,
    close: async () => {
      await Promise.all([running.close(), network?.close()]);
      await synthesizer.close?.();
    },
  };
}
