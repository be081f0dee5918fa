/**
 * The TTS plugin for LiveKit Agents: rxvoice's client behind LiveKit's `tts.TTS`.
 */
import { tts } from '@livekit/agents';
import * as z from 'zod/mini';
import { RxVoiceClient, type ClientSpeakOptions, type WarmSpeaker } from '../client/client.js';
import { flag, integerAtLeast } from '../core/options.js';
import { checkOptions } from '../core/validation.js';
import type { ReconnectOptions, SpeakOptions, StallOptions } from '../live/options.js';
import { HeardTracker, type HeardReport } from '../live/heard.js';
import type { WarmPoolOptions } from '../live/warm.js';
import type { SessionConfigInput } from '../live/protocol.js';
import type { SpeakableTextOptions } from '../text/speakable.js';
import { ChunkedStream } from './chunked.js';
import type { APIConnectOptions, LiveKitAgents } from './peer.js';
import type { StreamSettings } from './settings.js';
import { SynthesizeStream } from './stream.js';

/** Options of {@link TTS}. */
export interface TTSOptions {
  /** The voice (an id of the service's voice list). */
  voice_id: number;
  /** Locale of the text, e.g. `en-us` (the default), `de-de`. */
  language?: SessionConfigInput['language'];
  /** The service's API key; default `CAMB_API_KEY`, then `RXVOICE_API_KEY` (ignored when `client` is given). */
  apiKey?: string;
  /** The service's address; default `CAMB_BASE_URL`, then `RXVOICE_BASE_URL`, then `https://client.camb.ai/apis` (ignored when `client` is given). */
  baseUrl?: string;
  /** An rxvoice client to use as it is (its key, address, WebSocket, warm sessions); the TTS does not close it. */
  client?: RxVoiceClient;
  /** Sample rate of the audio frames, Hz (8000 to 48000). Default 24000. */
  sampleRate?: number;
  /** Duration of each audio frame, ms (10 to 1000). Default 100, as LiveKit's `AudioByteStream`. */
  frameMs?: number;
  /** Speaking rate, 0.25 to 4 (the service's `speaking_rate`). Default: the voice's own. */
  speaking_rate?: number;
  /** Ask for word timestamps (LiveKit's aligned transcript). Default true. */
  wordTimestamps?: boolean;
  /** Reconnect policy of the live sessions of `stream()` (rxvoice's `reconnect`); `false` never reconnects. Default `{ maxAttempts: 3 }`. */
  reconnect?: ReconnectOptions | false;
  /** rxvoice's client-side sentence boundaries in `stream()`. Default true. */
  clientBoundaries?: boolean;
  /**
   * Keep live sessions open before the text exists (rxvoice's `warmSpeaker`), so that a
   * `stream()` starts with no connection round trips: `true` for one session, or the pool's
   * options. Default false; `prewarm()` opens one later.
   */
  warm?: boolean | WarmPoolOptions;
  /**
   * Speak the LLM's text as a listener would want it (rxvoice's `speakableText`: thoughts and
   * tool calls, markdown, emoji and link addresses not spoken; `lexicon`, `spokenForm`...), in
   * `stream()` and `synthesize()`. Default true; `false` sends the text as it is.
   */
  speakable?: boolean | SpeakableTextOptions;
  /**
   * A stall is not silence (rxvoice's `stall`): a live session of `stream()` that sends no
   * audio for `afterMs` speaks its sentences over `POST /tts-stream` instead
   * (`fallback: 'tts-stream'`) or fails (`'error'`). Default: none.
   */
  stall?: StallOptions;
}

/** Default reconnect policy of `stream()`: 3 attempts in a row. */
export const DEFAULT_LIVEKIT_RECONNECT: ReconnectOptions = { maxAttempts: 3 };

const OptionsSchema = z.object({
  sampleRate: z._default(integerAtLeast(8000).check(z.maximum(48000, { error: 'must be at most 48000 Hz' })), 24000),
  frameMs: z._default(integerAtLeast(10).check(z.maximum(1000, { error: 'must be at most 1000 ms' })), 100),
  wordTimestamps: z._default(flag(), true),
  clientBoundaries: z.optional(flag()),
  client: z.optional(z.custom<RxVoiceClient>((value) => value instanceof RxVoiceClient, { error: 'must be an rxvoice client (createClient)' })),
  apiKey: z.optional(z.string({ error: 'must be a string' })),
  baseUrl: z.optional(z.string({ error: 'must be a string' })),
});

const Base: LiveKitAgents['tts']['TTS'] = tts.TTS;

/**
 * A LiveKit Agents TTS speaking with the service through rxvoice.
 *
 * `synthesize(text)` goes over `POST /tts-stream` (PCM at `sampleRate`); `stream()` over
 * the live session, with rxvoice's client-side sentence boundaries, reconnect without loss,
 * warm sessions, word timestamps as LiveKit's aligned transcript, and LiveKit's TTS
 * metrics from rxvoice's. Audio comes as 16-bit mono `AudioFrame`s of `frameMs`.
 *
 * ## Example
 * ```ts
 * import { voice } from '@livekit/agents';
 * import { TTS } from 'rxvoice/livekit';
 *
 * const session = new voice.AgentSession({ tts: new TTS({ voice_id: 1, language: 'en-us' }) });
 * ```
 *
 * @throws {ValidationError} At once, for bad options (nothing is sent).
 * @throws {RxVoiceError} With code `'config'` when no `client` is given and no key or address is found.
 */
export class TTS extends Base {
  label = 'rxvoice.TTS';
  readonly #settings: StreamSettings;
  readonly #ownsClient: boolean;
  readonly #warmPool: WarmPoolOptions;
  #warm: WarmSpeaker | undefined;
  #lastStream: SynthesizeStream | undefined;

  constructor(options: TTSOptions) {
    const checked = checkOptions(OptionsSchema, options, 'rxvoice/livekit TTS');
    super(checked.sampleRate, 1, { streaming: true, alignedTranscript: checked.wordTimestamps });
    const { voice_id, language, speaking_rate, reconnect = DEFAULT_LIVEKIT_RECONNECT, warm = false, speakable = true } = options;
    const client = checked.client ?? new RxVoiceClient({ ...(checked.apiKey === undefined ? {} : { apiKey: checked.apiKey }), ...(checked.baseUrl === undefined ? {} : { baseUrl: checked.baseUrl }) });
    const speak: ClientSpeakOptions = {
      voice_id,
      output_format: 'wav',
      sample_rate: checked.sampleRate,
      word_timestamps: checked.wordTimestamps,
      ...(language === undefined ? {} : { language }),
      ...(speaking_rate === undefined ? {} : { speaking_rate }),
      ...(reconnect === false ? {} : { reconnect }),
      ...(checked.clientBoundaries === undefined ? {} : { clientBoundaries: checked.clientBoundaries }),
      speakable,
      ...(options.stall === undefined ? {} : { stall: options.stall }),
    };
    // Checks the session options now (ValidationError); nothing is opened.
    client.speak(speak);
    this.#ownsClient = checked.client === undefined;
    this.#warmPool = typeof warm === 'object' ? warm : {};
    this.#settings = {
      client,
      speak,
      sampleRate: checked.sampleRate,
      frameSamples: Math.round((checked.sampleRate * checked.frameMs) / 1000),
      locale: typeof language === 'string' ? language : undefined,
      provider: 'camb',
      model: 'live-tts',
    };
    if (warm !== false) this.prewarm();
  }

  override get provider(): string {
    return this.#settings.provider;
  }

  override get model(): string {
    return this.#settings.model;
  }

  /** The rxvoice client this TTS speaks through. */
  get client(): RxVoiceClient {
    return this.#settings.client;
  }

  /** The audio of one text over `POST /tts-stream`, as LiveKit's `ChunkedStream`. */
  synthesize(text: string, connOptions?: APIConnectOptions, abortSignal?: AbortSignal): InstanceType<LiveKitAgents['tts']['ChunkedStream']> {
    return new ChunkedStream(this, this.#settings, text, connOptions, abortSignal);
  }

  /** Text in as it comes, audio out, over the live session, as LiveKit's `SynthesizeStream`. */
  stream(options?: { connOptions?: APIConnectOptions }): InstanceType<LiveKitAgents['tts']['SynthesizeStream']> {
    const stream = new SynthesizeStream(this, this.#settings, options?.connOptions);
    this.#lastStream = stream;
    return stream;
  }

  /**
   * What the listener heard of the latest `stream()` after `playbackPosition` seconds of its
   * audio (see `SynthesizeStream.heard`): LiveKit reports playout on the session's audio
   * output, not to the TTS.
   *
   * ## Example
   * ```ts
   * import { voice } from '@livekit/agents';
   * import { TTS } from 'rxvoice/livekit';
   *
   * const tts = new TTS({ voice_id: 1 });
   * const session = new voice.AgentSession({ tts });
   * session.output.audio?.on('playbackFinished', (event: { playbackPosition: number }) => {
   *   console.log(tts.heard(event.playbackPosition).heard);
   * });
   * ```
   */
  heard(playbackPosition: number): HeardReport {
    return this.#lastStream?.heard(playbackPosition) ?? new HeardTracker().report(playbackPosition);
  }

  /**
   * Opens a live session ahead of the text (LiveKit calls it when an agent switches to
   * this TTS): the next `stream()` takes it, with no connection round trips. Once is
   * enough; the pool opens a replacement whenever one is taken.
   */
  prewarm(): void {
    if (this.#warm) return;
    const { client, speak } = this.#settings;
    this.#warm = client.warmSpeaker(speak, this.#warmPool);
  }

  /** Closes the warm sessions, and the client when the TTS made it. Streams already open go on. */
  override async close(): Promise<void> {
    this.#warm?.close();
    this.#warm = undefined;
    if (this.#ownsClient) await this.#settings.client.close();
    await super.close();
  }
}
