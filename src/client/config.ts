/**
 * Options of `createClient`, validated with zod, and their resolution into a frozen
 * configuration. The API key is resolved here but never stored in the configuration
 * object: it travels separately, into a private field of the transport.
 */
import { asyncScheduler, type SchedulerLike } from 'rxjs';
import type { Dispatcher } from 'undici';
import { connect as netConnect, isIP, type NetConnectOpts, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { WebSocket as WsWebSocket, type ClientOptions as WsClientOptions } from 'ws';
import { z } from 'zod';
import { RxVoiceError } from '../core/errors.js';
import { routes } from '../core/routes.js';
import type { WebSocketConstructorLike } from '../live/options.js';

/** A fetch-compatible function (undici's `fetch` or the global one). */
export type FetchLike = (input: string, init: Record<string, unknown>) => Promise<Response>;

/**
 * A WebSocket constructor for the live session: `ws`'s (takes `{ headers }` third) or a
 * browser-style one. Defined once, in `src/live/options.ts`.
 */
export type WebSocketConstructor = WebSocketConstructorLike;

/** Hook called with deprecation warnings (once per deprecated method or feature). */
export type WarnHook = (message: string, code: string) => void;

/**
 * Polling of task status: until the client has seen 3 tasks of a family, a call every
 * `initialDelayMs` (times `multiplier` each call, up to `maxDelayMs`; by default a call
 * every second, like a plain 1 s loop); then (with `adaptive`) status calls go where
 * completion is likely.
 */
export const PollingOptionsSchema = z.object({
  /** Delay before the first status call, ms (and between calls, with `multiplier` 1). Default 1000. */
  initialDelayMs: z.number().nonnegative().default(1000),
  /** Growth of the delay between two status calls (1: a fixed interval). Default 1. */
  multiplier: z.number().min(1).default(1),
  /** Cap of the delay between two status calls, ms. Default 5000. */
  maxDelayMs: z.number().nonnegative().default(5000),
  /**
   * Learned polling: each wait is shortened by up to this fraction at random (0.2 = up
   * to 20 %), so tasks created together poll apart. The schedule before anything is
   * learned (and with `adaptive: false`) is exact, like a plain loop. Default 0.2.
   */
  jitter: z.number().min(0).max(1).default(0.2),
  /** Overall deadline of the polling, ms; past it the task Observable errors with a TimeoutError. Default 600000 (10 min). */
  deadlineMs: z.number().positive().default(10 * 60_000),
  /**
   * Learn from the tasks this client has seen (per family, against request size) and
   * poll where completion is likely (see `src/client/polling.ts`); false: always back off.
   * Default true.
   */
  adaptive: z.boolean().default(true),
  /**
   * Learned polling: the expected lateness (time a result sits done but unseen) one
   * status call is worth, ms. Lower: more calls, results sooner. Default 130.
   */
  latenessPerPollMs: z.number().positive().default(130),
  /** Learned polling: shortest time between two status calls, ms. Default 100. */
  minIntervalMs: z.number().nonnegative().default(100),
  /** Learned polling: longest wait before a status call, ms. Default 60000. */
  maxLearnedDelayMs: z.number().positive().default(60_000),
});
/**
 * Polling of task status, all fields optional. Defaults: `initialDelayMs` 1000,
 * `multiplier` 1 (a call every second), `maxDelayMs` 5000, `jitter` 0.2 (learned waits
 * shortened by up to 20 %), `deadlineMs`
 * 600000 (10 min, then a TimeoutError), `adaptive` true (learned per family),
 * `latenessPerPollMs` 130, `minIntervalMs` 100, `maxLearnedDelayMs` 60000.
 */
export type PollingOptions = z.input<typeof PollingOptionsSchema>;
export type ResolvedPollingOptions = z.infer<typeof PollingOptionsSchema>;

/** Backoff between HTTP retries: `baseDelayMs * 2^attempt`, capped, with jitter. */
export const RetryOptionsSchema = z.object({
  /** Delay before the first retry, ms, doubled at each next one. Default 500. */
  baseDelayMs: z.number().nonnegative().default(500),
  /** Cap of the delay between two retries, ms. Default 8000. */
  maxDelayMs: z.number().nonnegative().default(8000),
  /** Upper bound on a `Retry-After` the client is willing to honour, ms. Default 60000. */
  maxRetryAfterMs: z.number().nonnegative().default(60_000),
});
/**
 * Backoff of HTTP retries, all fields optional: `baseDelayMs * 2^attempt` capped at
 * `maxDelayMs`, with jitter. Defaults: `baseDelayMs` 500, `maxDelayMs` 8000,
 * `maxRetryAfterMs` 60000 (the longest `Retry-After` honoured).
 */
export type RetryOptions = z.input<typeof RetryOptionsSchema>;
export type ResolvedRetryOptions = z.infer<typeof RetryOptionsSchema>;

const isFunction = (v: unknown): boolean => typeof v === 'function';

/** Options of `createClient`. */
export const ClientOptionsSchema = z.object({
  /**
   * API key; default the environment variable `CAMB_API_KEY`, then `RXVOICE_API_KEY`
   * (`CAMB_API_KEY` wins when both are set).
   */
  apiKey: z.string().min(1).optional(),
  /**
   * Base address of the service; default `CAMB_BASE_URL`, then `RXVOICE_BASE_URL`, then
   * the public service `https://client.camb.ai/apis`. The emulator and tests pass their own.
   */
  baseUrl: z.string().min(1).optional(),
  /**
   * Full address of the live speech WebSocket, used as given. Default: derived from
   * `baseUrl` (`wss://<host>/<base path>/live-tts/ws`); the service does not publish its
   * live path, so set this when the derived one answers 404.
   */
  liveUrl: z.string().min(1).optional(),
  /** Timeout of one HTTP attempt, ms (for streams: until the answer's headers). Default 60000. */
  timeoutMs: z.number().positive().default(60_000),
  /**
   * Largest byte result read into memory (audio results such as `sound.result()`), in
   * bytes; a larger answer ends the call with a `LimitExceededError` naming this option.
   * Default 256 MiB. Results streamed to a sink (`resultStream()`) are not limited.
   */
  maxResponseBytes: z.int().positive().default(256 * 1024 * 1024),
  /**
   * Longest silence between two chunks of a streamed answer (`ttsStream`,
   * `translateStream`) once its headers arrived, ms; past it the stream errors with a
   * `StreamIdleError` (a `TimeoutError`) carrying what was received. Default 30 s.
   */
  streamIdleTimeoutMs: z.number().positive().default(30_000),
  /**
   * Retries of a failed attempt: connection failures and 408/429/5xx of status and result
   * calls; a creation call only when it surely never reached the service. Default 2.
   */
  maxRetries: z.int().nonnegative().default(2),
  /** Backoff between retries (`RetryOptions`). Default `{ baseDelayMs: 500, maxDelayMs: 8000, maxRetryAfterMs: 60000 }`. */
  retry: RetryOptionsSchema.default({ baseDelayMs: 500, maxDelayMs: 8000, maxRetryAfterMs: 60_000 }),
  /** Polling of task status (`PollingOptions`). Default: a call every second until a family is learned, then learned polling. */
  polling: PollingOptionsSchema.default({
    initialDelayMs: 1000,
    multiplier: 1,
    maxDelayMs: 5000,
    jitter: 0.2,
    deadlineMs: 10 * 60_000,
    adaptive: true,
    latenessPerPollMs: 130,
    minIntervalMs: 100,
    maxLearnedDelayMs: 60_000,
  }),
  /** Scheduler of polling and retry timers (default `asyncScheduler`); tests pass a virtual one. */
  scheduler: z.custom<SchedulerLike>((v) => v !== null && typeof v === 'object' && isFunction((v as SchedulerLike).schedule)).optional(),
  /** undici dispatcher (default: a keep-alive `Agent` owned by the client). */
  dispatcher: z.custom<Dispatcher>((v) => v !== null && typeof v === 'object').optional(),
  /** fetch implementation, used as it is when given (default: the `dispatcher`'s `request`, answers as `Response`s; undici's `fetch` for uploads and where the dispatcher has no `request`). */
  fetch: z.custom<FetchLike>(isFunction).optional(),
  /** Allow sending the key over plain `http://` to a host that is not loopback. Default false. */
  allowInsecureHttp: z.boolean().default(false),
  /** WebSocket constructor for the live session (default: `ws`, connecting without printing its options under NODE_DEBUG). */
  WebSocket: z.custom<WebSocketConstructor>(isFunction).optional(),
  /** Deprecation warnings hook (default: `process.emitWarning`). */
  warn: z.custom<WarnHook>(isFunction).optional(),
  /** Bulk result calls run at once (bulk id lists are split in batches of 2 to 5). Default 3. */
  bulkConcurrency: z.int().positive().default(3),
  /** Random source in [0, 1), for jitter (tests make it deterministic). Default `Math.random`. */
  random: z.custom<() => number>(isFunction).optional(),
  /** Environment to read the fallbacks from (default `process.env`). */
  env: z.record(z.string(), z.string().optional()).optional(),
});
/** Options of `createClient`: each field, its meaning and its default are documented on the field. */
export type ClientOptions = z.input<typeof ClientOptionsSchema>;

/** Configuration after defaults and fallbacks. Holds no secret. */
export interface ResolvedConfig {
  readonly baseUrl: string;
  /** `ws(s)://host/<base path>/live-tts/ws`, derived from `baseUrl`. */
  readonly wsUrl: string;
  readonly timeoutMs: number;
  readonly maxResponseBytes: number;
  readonly streamIdleTimeoutMs: number;
  readonly maxRetries: number;
  readonly retry: ResolvedRetryOptions;
  readonly polling: ResolvedPollingOptions;
  readonly scheduler: SchedulerLike;
  readonly dispatcher: Dispatcher | undefined;
  readonly fetch: FetchLike | undefined;
  readonly allowInsecureHttp: boolean;
  readonly WebSocket: WebSocketConstructor;
  readonly warn: WarnHook;
  readonly bulkConcurrency: number;
  /** Random source in [0, 1) for the jitter of retry delays (`Math.random` unless given). */
  readonly random: () => number;
}

/**
 * `ws`'s WebSocket, opening its connection with the host, port and server name only.
 * `ws` hands its whole option object (the request headers with `x-api-key` among them)
 * to `net.connect` / `tls.connect`, which print it under `NODE_DEBUG=net` / `tls`.
 */
export class QuietWebSocket extends WsWebSocket {
  constructor(url: string | URL, protocols?: string | string[], options?: WsClientOptions) {
    const secure = new URL(url).protocol === 'wss:';
    const createConnection = ((opts: NetConnectOpts & { host?: string; port?: number | string }): Socket => {
      const host = opts.host ?? 'localhost';
      const port = Number(opts.port ?? (secure ? 443 : 80));
      return secure ? tlsConnect({ host, port, servername: isIP(host) ? '' : host }) : netConnect({ host, port });
    }) as unknown as WsClientOptions['createConnection'];
    super(url, protocols, { ...options, createConnection });
  }
}

/** True for `localhost`, 127.0.0.0/8 and `::1`. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (host === '::1' || host === '0:0:0:0:0:0:0:1') return true;
  if (/^::ffff:127\.\d+\.\d+\.\d+$/.test(host)) return true;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

const defaultWarn: WarnHook = (message, code) => {
  process.emitWarning(message, { type: 'DeprecationWarning', code });
};

/** Base address of the public service (the one of its official SDK, `@camb-ai/sdk`). */
export const DEFAULT_BASE_URL = 'https://client.camb.ai/apis';
/** Environment variables of the API key, first one set wins. */
export const API_KEY_VARIABLES = ['CAMB_API_KEY', 'RXVOICE_API_KEY'] as const;
/** Environment variables of the base address, first one set wins. */
export const BASE_URL_VARIABLES = ['CAMB_BASE_URL', 'RXVOICE_BASE_URL'] as const;

/** The first of `names` set to a non-blank value in `env`. */
export function envValue(env: Record<string, string | undefined>, names: readonly string[]): string | undefined {
  for (const name of names) {
    const value = env[name];
    if (value !== undefined && value.trim() !== '') return value.trim();
  }
  return undefined;
}

/**
 * Check a base address and derive the live session address from it. Throws
 * `RxVoiceError('config')`; a value without a scheme is shown, `apiKey` masked in it.
 */
export function parseBaseUrl(raw: string, allowInsecureHttp = false, apiKey?: string): { baseUrl: string; wsUrl: string } {
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(raw)) {
    const cut = raw.length > 100 ? `${raw.slice(0, 100)}...` : raw;
    // the value is shown to help, the key never (pasted into the wrong variable)
    const shown = apiKey ? cut.split(apiKey).join('***') : cut;
    throw new RxVoiceError('config', `The base address ${JSON.stringify(shown)} has no scheme: write it as https://${shown.replace(/^\/+/, '')}`);
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new RxVoiceError('config', 'The base address (`baseUrl` / CAMB_BASE_URL / RXVOICE_BASE_URL) is not a valid URL.');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new RxVoiceError('config', `The base address must use http or https, not ${url.protocol}`);
  }
  if (url.username || url.password) {
    throw new RxVoiceError('config', 'The base address must not carry credentials.');
  }
  if (url.protocol === 'http:' && !allowInsecureHttp && !isLoopbackHost(url.hostname)) {
    throw new RxVoiceError(
      'config',
      `Refusing to send the API key over plain http to ${url.hostname}: use https, ` +
        'or pass `allowInsecureHttp: true` (loopback hosts are always allowed).',
    );
  }
  const basePath = url.pathname.replace(/\/+$/, '');
  return {
    baseUrl: `${url.origin}${basePath}`,
    wsUrl: `${url.protocol === 'https:' ? 'wss:' : 'ws:'}//${url.host}${basePath}${routes.liveTts}`,
  };
}

function parseLiveUrl(raw: string, allowInsecureHttp = false): string {
  let url: URL | undefined;
  try {
    url = new URL(raw);
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== 'ws:' && url.protocol !== 'wss:')) {
    throw new RxVoiceError('config', 'The live address (`liveUrl`) must be a ws:// or wss:// URL.');
  }
  if (url.username || url.password) throw new RxVoiceError('config', 'The live address must not carry credentials.');
  if (url.protocol === 'ws:' && !allowInsecureHttp && !isLoopbackHost(url.hostname)) {
    throw new RxVoiceError(
      'config',
      `Refusing to send the API key over plain ws:// to ${url.hostname}: use wss://, ` +
        'or pass `allowInsecureHttp: true` (loopback hosts are always allowed).',
    );
  }
  return url.toString();
}

/**
 * Message of a call that could not reach the service: names the host (e.g.
 * `client.camb.ai`), the low-level reason, and the variables that choose the address.
 */
export function unreachableMessage(endpoint: string, baseUrl: string, reason: string): string {
  const host = new URL(baseUrl).host;
  return (
    `${endpoint}: could not reach the service at ${host} (${reason}). ` +
    'Check the network, or set the address with `baseUrl` / CAMB_BASE_URL (e.g. the emulator: npx rxvoice emulator).'
  );
}

/** Message of a 401 or 403 answer: the key was refused, say where it comes from. */
export function refusedKeyMessage(endpoint: string, status: number, serviceMessage: string): string {
  const suffix = serviceMessage ? `: ${serviceMessage}` : '';
  const what = status === 401 ? 'The API key was refused' : 'This API key is not allowed here';
  return `${endpoint} answered ${status}${suffix}. ${what}: check CAMB_API_KEY (or the \`apiKey\` option).`;
}

/**
 * Resolve client options: defaults, environment fallbacks, the http check.
 * Throws `RxVoiceError` with code `'config'` on any problem. Returns the key apart.
 */
export function resolveConfig(options: ClientOptions = {}): { config: ResolvedConfig; apiKey: string } {
  const parsed = ClientOptionsSchema.safeParse(options);
  if (!parsed.success) {
    const fields = parsed.error.issues.map((i) => `${i.path.join('.') || '(options)'}: ${i.message}`).join('; ');
    // Messages name fields only; the values (possibly the key) are never echoed.
    throw new RxVoiceError('config', `Invalid client options: ${fields}`);
  }
  const o = parsed.data;
  const env = o.env ?? process.env;
  const apiKey = o.apiKey ?? envValue(env, API_KEY_VARIABLES);
  if (!apiKey) {
    throw new RxVoiceError('config', 'rxvoice needs an API key (option `apiKey` or environment variable CAMB_API_KEY or RXVOICE_API_KEY).');
  }
  const { baseUrl, wsUrl: derivedWsUrl } = parseBaseUrl(o.baseUrl ?? envValue(env, BASE_URL_VARIABLES) ?? DEFAULT_BASE_URL, o.allowInsecureHttp, apiKey);
  if (!/^[\x21-\x7e]+$/.test(apiKey)) {
    // a header cannot carry it: every call would fail as if the network were down
    throw new RxVoiceError(
      'config',
      `The API key (${o.apiKey === undefined ? 'from the environment' : 'option `apiKey`'}) has a character an HTTP header cannot carry ` +
        '(a space, a line break, a control or non-ASCII character): check it was copied whole and alone.',
    );
  }
  const wsUrl = o.liveUrl === undefined ? derivedWsUrl : parseLiveUrl(o.liveUrl, o.allowInsecureHttp);
  const config: ResolvedConfig = Object.freeze({
    baseUrl,
    wsUrl,
    timeoutMs: o.timeoutMs,
    maxResponseBytes: o.maxResponseBytes,
    streamIdleTimeoutMs: o.streamIdleTimeoutMs,
    maxRetries: o.maxRetries,
    retry: Object.freeze({ ...o.retry }),
    polling: Object.freeze({ ...o.polling }),
    scheduler: o.scheduler ?? asyncScheduler,
    dispatcher: o.dispatcher,
    fetch: o.fetch,
    allowInsecureHttp: o.allowInsecureHttp,
    WebSocket: o.WebSocket ?? (QuietWebSocket as unknown as WebSocketConstructor),
    warn: o.warn ?? defaultWarn,
    bulkConcurrency: o.bulkConcurrency,
    random: o.random ?? Math.random,
  });
  return { config, apiKey };
}
