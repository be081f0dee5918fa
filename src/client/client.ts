/**
 * `RxVoiceClient`: every endpoint of the service as cold Observables, grouped by
 * resource family, plus the task pattern as event streams.
 *
 * What lives where:
 * - the resource families (`sound`, `ttsTask`, `voices`, `translation`, ...): one file
 *   each in `src/client/`, built on `family.ts` (create, status, result) and `tasks.ts`
 *   (the task as events, polling);
 * - the HTTP transport, which holds the key: `request.ts` (and the files it names);
 * - the shortcuts here (`translate`, `transcribe`, `subtitle`, ...): a family's `task`;
 * - streaming: `ttsStream` (`tts-stream.ts`), `translateStream` (deprecated SSE,
 *   `translation-stream.ts`);
 * - live speech: `speak` and `warmSpeaker` hand `wsUrl`, the key and the client's
 *   WebSocket and scheduler to `src/live/` (`session.ts`, `warm.ts`).
 * The key lives only in the transport's private field; never copy it to a public field.
 */
import { inspect } from 'node:util';
import type { Observable } from 'rxjs';
import { resolveConfig, type ClientOptions, type ResolvedConfig } from './config.js';
import { DubbingResource } from './dubbing.js';
import { HttpTransport, type CallOptions } from './request.js';
import type {
  AudioSeparationResult,
  DubbedRunInfo,
  EndToEndDubbingRequest,
  ProjectSetupRequest,
  ProjectSetupResult,
  StoryRun,
  SubtitlesResult,
  TextToSoundRequest,
  TranscriptionResult,
  TranslationRequest,
  TranslationResult,
  TtsStreamRequest,
} from '../core/schemas.js';
import { SeparationResource, type AudioSeparationRequest } from './separation.js';
import { SoundResource } from './sound.js';
import { SpeechResource } from './speech.js';
import { StoriesResource, type CreateStoryRequest } from './stories.js';
import { SubtitlesResource, type SubtitlesRequest } from './subtitles.js';
import { pollTask, type TaskEvent, type TaskFamilyDefinition, type TaskPendingEvent, type TaskResultEvent } from './tasks.js';
import { TranscriptionResource, type TranscriptionRequest } from './transcription.js';
import { TranslationResource } from './translation.js';
import { ttsStream, type TtsStreamChunk, type TtsStreamOptions } from './tts-stream.js';
import { withTtsStreamFallback } from './stall-fallback.js';
import {
  translateStream,
  translateStreamEvents,
  type TranslateStreamOptions,
  type TranslationStreamEvent,
} from './translation-stream.js';
import type { TranslationStreamRequest } from '../core/schemas.js';
import { VoicesResource } from './voices.js';
import { lazily } from './shared.js';
import { ValidationError } from '../core/errors.js';
import { TaskIdSchema } from '../core/schemas.js';
import { isSpeechCacheHook, type SpeechCacheHook } from './cache-hook.js';
import { optionError } from '../core/validation.js';
import type { OperatorFunction } from 'rxjs';
import type { LiveSpeechEvent } from '../live/events.js';
import { sessionPlan, type LiveConnection, type SpeakOptions, type WebSocketConstructorLike, type WebSocketLike } from '../live/options.js';
import { speak as speakLive } from '../live/session.js';
import { resolveSpeakable, speakWithCaptions } from './speakable.js';
import type { SpeakableTextOptions } from '../text/speakable.js';
import { WarmSessionPool, type WarmPoolOptions } from '../live/warm.js';
import { SpeakOperators } from './speak-operators.js';

/**
 * Options of `client.speak`: the live session's, plus `cache` (a `speechCache(...)` of
 * `rxvoice/cache`) and `speakable`.
 *
 * @example
 * ```ts
 * import { createClient, type ClientSpeakOptions } from 'rxvoice';
 * import { from } from 'rxjs';
 * const options: ClientSpeakOptions = { voice_id: 1, speakable: { lexicon: { words: { SQL: 'sequel' } } } };
 * from(['<think>hm</think>Use ', 'SQL, see https://example.com/a now.']).pipe(createClient().speak(options)).subscribe();
 * ```
 */
export type ClientSpeakOptions = SpeakOptions & {
  /** Replay sentences said before from this cache (`speechCache` of `rxvoice/cache`); misses are spoken live and stored. */
  cache?: SpeechCacheHook | undefined;
  /**
   * Speak the text as a listener would want it (`speakableText` before the session): `true`
   * for the defaults, or its options (thoughts and tool calls not spoken, links as their host,
   * markdown and emoji dropped, `lexicon`, `spokenForm`...). The session's `language` is used
   * when the options give none. What is sent (and recorded for a reconnect) is the rewritten
   * text. Off by default (the text is sent as it is). See `docs/speakable.md`.
   */
  speakable?: boolean | SpeakableTextOptions | undefined;
};

/** Options of `client.ttsStream`: `signal`, `onHeaders`, and `cache` (a `speechCache(...)` of `rxvoice/cache`). */
export type ClientTtsStreamOptions = TtsStreamOptions & {
  /** Replay a request made before from this cache (no call, `creditsRequired: 0`); a miss is stored once complete. */
  cache?: SpeechCacheHook | undefined;
};

/** The `cache` option, checked: a ValidationError at once when it is not a cache. */
function checkCache(where: string, cache: unknown): SpeechCacheHook | undefined {
  if (cache === undefined) return undefined;
  if (!isSpeechCacheHook(cache)) throw optionError(where, ['cache'], 'must be a speech cache (speechCache from rxvoice/cache)');
  return cache;
}

/**
 * Live sessions kept warm for one set of speak options (from `client.warmSpeaker`).
 */
export interface WarmSpeaker {
  /** `client.speak(options)` with this speaker's options: warm when a session is ready. */
  speak(): OperatorFunction<string, LiveSpeechEvent>;
  /** Resolves once a session is ready, or none is on its way (the service refused it). */
  ready(): Promise<void>;
  /** Sessions held now: at `session.ready`, and still connecting. */
  readonly sessions: { ready: number; connecting: number };
  /** Close every session still held (handed-out sessions end with their speak); no more are opened. */
  close(): void;
}

/** Task families, by the name `client.tasks.resume` takes, with their result types. */
export interface TaskResultByFamily {
  sound: Uint8Array;
  speech: Uint8Array;
  separation: AudioSeparationResult;
  story: StoryRun;
  projectSetup: ProjectSetupResult;
  translation: TranslationResult;
  transcription: TranscriptionResult;
  subtitles: SubtitlesResult;
  dubbing: DubbedRunInfo;
}
/** The name of a task family of the service (`textToSound`, `translation`, ...): a key of {@link TaskResultByFamily}. */
export type TaskFamilyName = keyof TaskResultByFamily;

/** Resuming and inspecting tasks created elsewhere. */
export class TasksResource {
  readonly #transport: HttpTransport;
  readonly #families: { [F in TaskFamilyName]: TaskFamilyDefinition<TaskResultByFamily[F]> };
  constructor(transport: HttpTransport, families: { [F in TaskFamilyName]: TaskFamilyDefinition<TaskResultByFamily[F]> }) {
    this.#transport = transport;
    this.#families = families;
  }

  /**
   * Poll an existing task until it ends (pending events, then the result event), e.g.
   * after a `TaskDeadlineError` or a restart: `client.tasks.resume('sound', taskId)`.
   */
  resume<F extends TaskFamilyName>(
    family: F,
    taskId: string,
    options: CallOptions = {},
  ): Observable<TaskPendingEvent | TaskResultEvent<TaskResultByFamily[F]>> {
    return lazily(() => {
      // checked before anything is sent, as every call's input is
      const families = this.#families;
      if (typeof family !== 'string' || !Object.hasOwn(families, family)) {
        throw new ValidationError([{ loc: ['family'], msg: `must be one of ${Object.keys(families).join(', ')}`, type: 'enum' }], { source: 'local', endpoint: 'tasks.resume' });
      }
      const definition = families[family] as TaskFamilyDefinition<TaskResultByFamily[F]>;
      const id = this.#transport.validate(TaskIdSchema, taskId, `GET ${definition.name} status`, ['path', 'task_id']);
      return pollTask(this.#transport, definition, id, options);
    });
  }
}

/**
 * The client. Make one with `createClient(options)`. Every method returns a cold
 * Observable: each subscription sends its own request(s); unsubscribing aborts them.
 * Every method takes `{ signal }` last.
 */
export class RxVoiceClient {
  readonly #warmPools = new Set<WarmSessionPool>();
  /** `speak`'s operators, one for equal options (speak-operators.ts). */
  readonly #speakOperators = new SpeakOperators();
  readonly #transport: HttpTransport;
  /** Base address of the service (no trailing slash). */
  readonly baseUrl: string;
  /** Address of the live speech WebSocket (`ws(s)://host/live-tts/ws`). */
  readonly wsUrl: string;

  /** Sound and music generation. */
  readonly sound: SoundResource;
  /**
   * The `/tts` task flow over HTTP (POST /tts, its status, result and bulk results),
   * deprecated by the service: prefer `ttsStream` (HTTP streaming) or `speak` (live).
   *
   * @example
   * ```ts
   * const done = await lastValueFrom(client.ttsTask.task({ text: 'Hello.', voice_id: 1, language: 'en-us' }));
   * ```
   */
  readonly ttsTask: SpeechResource;
  readonly voices: VoicesResource;
  readonly separation: SeparationResource;
  readonly stories: StoriesResource;
  /** End-to-end dubbing and dubbing project setup. */
  readonly dubbing: DubbingResource;
  readonly translation: TranslationResource;
  readonly transcription: TranscriptionResource;
  readonly subtitles: SubtitlesResource;
  /** Resume polling of existing tasks. */
  readonly tasks: TasksResource;

  constructor(options: ClientOptions = {}) {
    const { config, apiKey } = resolveConfig(options);
    this.#transport = new HttpTransport(config, apiKey);
    this.baseUrl = config.baseUrl;
    this.wsUrl = config.wsUrl;
    const t = this.#transport;
    this.sound = new SoundResource(t);
    this.ttsTask = new SpeechResource(t);
    this.voices = new VoicesResource(t);
    this.separation = new SeparationResource(t);
    this.stories = new StoriesResource(t);
    this.dubbing = new DubbingResource(t);
    this.translation = new TranslationResource(t);
    this.transcription = new TranscriptionResource(t);
    this.subtitles = new SubtitlesResource(t);
    this.tasks = new TasksResource(t, {
      sound: this.sound.family,
      speech: this.ttsTask.family,
      separation: this.separation.family,
      story: this.stories.family,
      projectSetup: this.dubbing.projectSetupFamily,
      translation: this.translation.family,
      transcription: this.transcription.family,
      subtitles: this.subtitles.family,
      dubbing: this.dubbing.family,
    });
  }

  /**
   * The `/tts` task flow: the same object as {@link RxVoiceClient.ttsTask}.
   *
   * @deprecated Use `client.ttsTask` (renamed: beside `client.speak`, live speech,
   * `client.speech` read as its twin).
   */
  get speech(): SpeechResource {
    return this.ttsTask;
  }

  /** The resolved configuration (holds no secret). */
  get config(): ResolvedConfig {
    return this.#transport.config;
  }

  /**
   * Generate a sound or music clip as a task. Emits `created`, `pending`…, and last the
   * `result` event whose `result` is the audio (WAV bytes):
   * `const { result } = await lastValueFrom(client.textToSound({ prompt: 'rain on a tin roof' }))`.
   */
  textToSound(request: TextToSoundRequest, options: CallOptions = {}): Observable<TaskEvent<Uint8Array>> {
    return this.sound.task(request, options);
  }

  /** Translate texts as a task (POST /translation); the result is `{ texts }`. */
  translate(request: TranslationRequest, options: CallOptions = {}): Observable<TaskEvent<TranslationResult>> {
    return this.translation.task(request, options);
  }

  /** Transcribe media as a task; the result is `{ transcript }`. */
  transcribe(request: TranscriptionRequest, options: CallOptions = {}): Observable<TaskEvent<TranscriptionResult>> {
    return this.transcription.task(request, options);
  }

  /** Make subtitles as a task (POST /sub); the result is `{ subtitle_format, subtitles, transcript }`. */
  subtitle(request: SubtitlesRequest, options: CallOptions = {}): Observable<TaskEvent<SubtitlesResult>> {
    return this.subtitles.task(request, options);
  }

  /** Dub a video end to end as a task; the result is the dubbed run info. */
  endToEndDubbing(request: EndToEndDubbingRequest, options: CallOptions = {}): Observable<TaskEvent<DubbedRunInfo>> {
    return this.dubbing.task(request, options);
  }

  /** Set up a dubbing project as a task; the result is the project. */
  projectSetup(request: ProjectSetupRequest, options: CallOptions = {}): Observable<TaskEvent<ProjectSetupResult>> {
    return this.dubbing.projectSetupTask(request, options);
  }

  /** Make a story as a task; the result is the story run. */
  story(request: CreateStoryRequest, options: CallOptions = {}): Observable<TaskEvent<StoryRun>> {
    return this.stories.task(request, options);
  }

  /** Separate foreground and background audio as a task. */
  audioSeparation(request: AudioSeparationRequest, options: CallOptions = {}): Observable<TaskEvent<AudioSeparationResult>> {
    return this.separation.task(request, options);
  }

  /**
   * Stream speech (POST /tts-stream). Each chunk carries `format`, `sampleRate`,
   * `creditsRequired` and `bytes`; `pcm_*` chunks hold whole samples only. `options`:
   * `signal`, `onHeaders` (the answer's headers, once, before the first chunk), and
   * `cache` (a `speechCache` of `rxvoice/cache`: a request made before is replayed with no
   * call; `onHeaders` is then not called).
   */
  ttsStream(request: TtsStreamRequest, options: ClientTtsStreamOptions = {}): Observable<TtsStreamChunk> {
    const { cache, ...callOptions } = options;
    const checked = checkCache('ttsStream', cache);
    if (checked) return checked.ttsStream(request, () => ttsStream(this.#transport, request, callOptions));
    return ttsStream(this.#transport, request, callOptions);
  }

  /**
   * The deprecated streaming translation (POST /translation/stream): the translated
   * pieces as they arrive. `X-Credits-Required` goes to `options.onCredits`; an `error`
   * event ends the stream with `StreamError`. See `translateStream` in
   * `translation-stream.ts`.
   *
   * @deprecated The service deprecates it; use `client.translate()` (same text).
   */
  translateStream(request: TranslationStreamRequest, options: TranslateStreamOptions = {}): Observable<string> {
    return translateStream(this.#transport, request, options);
  }

  /**
   * The deprecated streaming translation as events: `{ type: 'meta', creditsRequired }`,
   * then `{ type: 'text', text }` per piece.
   *
   * @deprecated The service deprecates it; use `client.translate()` (same text).
   */
  translateStreamEvents(request: TranslationStreamRequest, options: CallOptions = {}): Observable<TranslationStreamEvent> {
    return translateStreamEvents(this.#transport, request, options);
  }

  /**
   * Live speech over the WebSocket session: text in, speech events out
   * (`text$.pipe(client.speak({ voice_id: 1, word_timestamps: true }))`). Uses this
   * client's address, key (header, or `api_key` query for a browser-style WebSocket),
   * WebSocket constructor and scheduler. `output_format` defaults to `'wav'` (the
   * service's default is mp3). Bad options throw a `ValidationError` at once. See `speak`
   * in `src/live/session.ts` for events, errors, barge-in and `reconnect`. With `cache` (a
   * `speechCache` of `rxvoice/cache`), sentences said before are replayed from it and the
   * session opens only for the others (see `docs/cache.md`). With
   * `stall: { afterMs, fallback: 'tts-stream' }`, a stalled session's sentences are spoken
   * over `POST /tts-stream` with the same voice and settings.
   *
   * The operator may be used for any number of sources, each subscription its own session.
   * Calls with equal options (every value a string, number or boolean) return the same
   * operator, so sessions opened once a call or a turn share one resolution of them.
   */
  speak(options: ClientSpeakOptions): OperatorFunction<string, LiveSpeechEvent> {
    const { cache, speakable: speakableInput, ...speakOptions } = options;
    const speakable = resolveSpeakable(speakableInput, speakOptions.language);
    const checked = checkCache('speak', cache);
    const session = checked ? checked.speak(speakOptions, (o) => this.#speakLive(o)) : this.#speakLive(speakOptions);
    // speakable text first: the cache and the session see (and the ledger records) what is spoken;
    // segmentStart events get the words as written back (sourceText, word_timestamps[].source)
    return speakable ? speakWithCaptions(speakable, session) : session;
  }

  /** The live session of `speak` (warm when a pool holds a session started the same way). */
  #speakLive(options: SpeakOptions): OperatorFunction<string, LiveSpeechEvent> {
    const connection = this.#liveConnection();
    const withDefaults = (): SpeakOptions => ({ ...withTtsStreamFallback(this.#transport, options), scheduler: options.scheduler ?? this.#transport.config.scheduler });
    if (this.#warmPools.size === 0) return this.#speakOperators.get(options, () => speakLive(connection, withDefaults()));
    const liveOptions = withDefaults();
    // Bad options throw here, as speak would throw them.
    const plan = sessionPlan(connection, liveOptions);
    const pools = this.#warmPools;
    const { startFrame, WebSocket: Cold } = plan;
    // Called by the session for each socket it opens (reconnects too): a warm session
    // started with the same session.start frame when one is ready, else a real socket.
    function WarmOrCold(url: string, protocols?: string | string[], init?: { headers?: Record<string, string>; maxPayload?: number }): WebSocketLike {
      for (const pool of pools) {
        const socket = pool.startFrame === startFrame ? pool.take() : undefined;
        if (socket) return socket;
      }
      return init === undefined ? new Cold(url, protocols) : new Cold(url, protocols, init);
    }
    return speakLive(
      { ...connection, WebSocket: WarmOrCold as unknown as WebSocketConstructorLike, headersSupported: plan.headers !== undefined },
      liveOptions,
    );
  }

  /**
   * Opens live sessions before the text exists, so that the next `speak` with the same
   * options sends its first `text.chunk` at once: no TCP/TLS handshake, upgrade or
   * `session.start` round trip (three to four round trips saved on the first audio).
   *
   * Up to `sessions` (default 1) are kept at `session.ready`; `client.speak(options)`
   * (or `speaker.speak()`) with equal options (the same `session.start` frame) takes
   * one and a replacement is opened in the background. **Other options go cold** (a
   * session of their own, as without a pool). A ready session unused for
   * `idleTimeoutMs` (default 60 s, on `scheduler`) is closed and not replaced until
   * the pool is used again. A warm session behaves as a cold one in every other way:
   * barge-in (unsubscribing closes it at once), errors and reconnects. A session the
   * service refuses while waiting is dropped; the next `speak` goes cold and meets the
   * error itself. `speaker.close()` (and `client.close()`) closes every session the
   * pool holds.
   *
   * Each warm session is a session of the service (a run is created at
   * `session.start`); credits are charged per segment, so an unused session costs no
   * speech.
   *
   * ## Example
   * ```ts
   * import { createClient } from 'rxvoice';
   * import { of } from 'rxjs';
   *
   * const client = createClient();
   * const speaker = client.warmSpeaker({ voice_id: 1 });
   * await speaker.ready();
   * of('Hello there.').pipe(speaker.speak()).subscribe((event) => console.log(event.type));
   * ```
   *
   * @param options The speak options (checked at once: `ValidationError`).
   * @param pool `sessions` (1 to 64, default 1), `idleTimeoutMs` (default 60000), `scheduler`.
   * @returns The warm speaker; sessions start opening at once.
   * @throws ValidationError for bad options, before anything is sent.
   */
  warmSpeaker(options: ClientSpeakOptions, pool: WarmPoolOptions = {}): WarmSpeaker {
    const scheduler = options.scheduler ?? this.#transport.config.scheduler;
    // Throws ValidationError for bad options, before anything is sent.
    const { speakable, cache, ...sessionOptions } = options;
    resolveSpeakable(speakable, sessionOptions.language);
    checkCache('warmSpeaker', cache);
    const plan = sessionPlan(this.#liveConnection(), { ...sessionOptions, scheduler });
    const warm = new WarmSessionPool(plan, { ...pool, scheduler: pool.scheduler ?? scheduler });
    const pools = this.#warmPools;
    pools.add(warm);
    warm.fill();
    return {
      speak: () => this.speak(options),
      ready: () => warm.whenReady(),
      get sessions() {
        return warm.size;
      },
      close: () => {
        warm.close();
        pools.delete(warm);
      },
    };
  }

  /**
   * Close the keep-alive connections and the warm sessions the client owns. An HTTP call
   * after it fails at once (`ConnectionError`, not retried, nothing sent), unless the client
   * was given a `dispatcher` or `fetch`: those are the caller's to close.
   */
  close(): Promise<void> {
    for (const pool of this.#warmPools) pool.close();
    this.#warmPools.clear();
    return this.#transport.close();
  }

  #liveConnection(): LiveConnection {
    const t = this.#transport;
    return { wsUrl: this.wsUrl, apiKey: t.apiKey(), WebSocket: t.config.WebSocket, exactUrl: true };
  }

  /** `RxVoiceClient(<baseUrl>)`: never the API key. */
  toString(): string {
    return `RxVoiceClient(${this.baseUrl})`;
  }

  /** What `JSON.stringify` shows: the addresses only, never the API key. */
  toJSON(): { baseUrl: string; wsUrl: string } {
    return { baseUrl: this.baseUrl, wsUrl: this.wsUrl };
  }

  [Symbol.for('nodejs.util.inspect.custom')](depth: number, options: object): string {
    return `RxVoiceClient ${inspect({ baseUrl: this.baseUrl, wsUrl: this.wsUrl, apiKey: '***' }, { ...options, depth })}`;
  }
}
