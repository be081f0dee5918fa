/**
 * What a relay is told and what it tells: its options and limits (with their zod schema
 * and defaults), the close codes it sends, the reasons it refuses, its events and stats.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Observable, SchedulerLike } from 'rxjs';
import type { WebSocket } from 'ws';
import { z } from 'zod';
import { CloseCodes, MAX_AUDIO_FRAME_BYTES } from '../live/protocol.js';
import { isOriginText } from './origin.js';
import type { RelayStore } from './store.js';

/** Bounds on what one browser may ask of the relay. Every field optional; defaults in {@link DEFAULT_RELAY_LIMITS}. */
export interface LiveRelayLimits {
  /**
   * Sessions open at once per client (see `clientId`), counted in the `store` (so across
   * relay processes that share one); one more is closed 4429. At most `clientShare` of
   * `sessions` (at least 1), whatever is given here. Default 4.
   */
  sessionsPerClient?: number;
  /** Sessions open at once through this relay, all clients together; one more is closed 4400. Default 1000. */
  sessions?: number;
  /** The largest share of `sessions` one client may hold (see `sessionsPerClient`). Default 0.1. */
  clientShare?: number;
  /**
   * Characters of `text.chunk` text per client over any minute (a sliding window), counted
   * in the `store`; a chunk that would go over it is not forwarded and the session is closed
   * 4429. Default 5000.
   */
  charactersPerMinute?: number;
  /** Text per session, in UTF-16 code units summed over `text.chunk` frames; more is closed 4400. Default 100000. */
  textPerSession?: number;
  /** Largest WebSocket message accepted from a browser, bytes; a larger one is closed 1009. Default 65536. */
  frameBytes?: number;
  /**
   * Bytes per second one session may send (whole messages, whatever they hold); above it
   * the relay stops reading that browser until the rate is back under it. Bursts of up to
   * one second's worth (at least `frameBytes`) pass at once. Default 65536.
   */
  bytesPerSecond?: number;
  /**
   * The same, for all sessions of one client together, in this process. A client that closes
   * its sessions keeps what it spent until its bucket has refilled. Default 131072.
   */
  clientBytesPerSecond?: number;
  /**
   * Bytes from one browser not yet written to the service's socket (waiting for the
   * service session to open, for a budget check, or in the socket's buffer) above which the
   * relay stops reading that browser; it reads again below half. Default 262144.
   */
  upstreamBufferedBytes?: number;
  /**
   * Bytes sent to a browser and not yet written to its socket above which the relay stops
   * reading the service session (backpressure); it reads again below half. Default 1 MiB.
   */
  bufferedBytes?: number;
  /** How long a browser may take to send `session.start` after connecting, ms; then 4400. Default 10000. */
  startTimeoutMs?: number;
  /**
   * How long a session may pass with no text from the browser and no frame from the
   * service, ms; then close 4408 and the service session is closed. Default 60000.
   */
  idleTimeoutMs?: number;
  /** How long the relay waits for its `store`, ms; a late or failed answer refuses (close 1013). Default 2000. */
  storeTimeoutMs?: number;
}

/** The limits a relay uses when none are given. */
export const DEFAULT_RELAY_LIMITS: Readonly<Required<LiveRelayLimits>> = Object.freeze({
  sessionsPerClient: 4,
  sessions: 1000,
  clientShare: 0.1,
  charactersPerMinute: 5000,
  textPerSession: 100_000,
  frameBytes: 64 * 1024,
  bytesPerSecond: 64 * 1024,
  clientBytesPerSecond: 128 * 1024,
  upstreamBufferedBytes: 256 * 1024,
  bufferedBytes: 1024 * 1024,
  startTimeoutMs: 10_000,
  idleTimeoutMs: 60_000,
  storeTimeoutMs: 2_000,
});

/** Close codes the relay itself sends a browser, besides the service's own. */
export const RelayCloseCodes = {
  /** A bad or unexpected frame, too much text, too many sessions on this relay (with a `session.error`). */
  rejected: CloseCodes.rejected,
  /** `authorize` said no (a request with no `Origin` needs an `authorize` that says yes). */
  notAuthorized: CloseCodes.invalidKey,
  /** The page's origin is not the relay's own nor in `origins`; nothing was opened upstream. */
  originNotAllowed: 4403,
  /** No text and no audio for `limits.idleTimeoutMs`. */
  idle: CloseCodes.idleTimeout,
  /** Over a visitor budget (`sessionsPerClient`, `charactersPerMinute`); the reason starts with `budget:`. */
  overBudget: 4429,
  /** The `store` failed or did not answer within `limits.storeTimeoutMs` (WebSocket "try again later"). */
  storeUnavailable: 1013,
  /** A browser message over `limits.frameBytes`. */
  tooBig: 1009,
} as const;

/** Why the relay refused or closed a browser (see {@link LiveRelayEvent}). */
export type LiveRelayRefusal =
  | 'origin'
  | 'unauthorized'
  | 'serverSessions'
  | 'clientSessions'
  | 'characters'
  | 'store'
  | 'invalidFrame'
  | 'textPerSession'
  | 'frameBytes'
  | 'startTimeout'
  | 'idle';

/**
 * What a relay did, on `relay.events`: a session admitted or ended, a browser refused
 * (why, with its close code), a browser no longer read for a while (its bytes per second, or
 * bytes waiting toward the service). Never the key, never text.
 */
export type LiveRelayEvent =
  | { type: 'sessionOpened'; client: string; origin: string | undefined }
  | { type: 'sessionClosed'; client: string; code: number }
  | { type: 'refused'; reason: LiveRelayRefusal; code: number; message: string; client: string | undefined; origin: string | undefined }
  | { type: 'throttled'; client: string; cause: 'bytesPerSecond' | 'upstreamBuffered' };

/** Options of {@link attachLiveRelay}. */
export interface LiveRelayOptions {
  /**
   * Where browsers connect, e.g. `'/speech'`. The relay answers at `path` and at
   * `path + '/live-tts/ws'` (what `speak()` from `rxvoice/live` appends to a base address).
   */
  path: string;
  /** The service key; default the environment variable `CAMB_API_KEY`, then `RXVOICE_API_KEY`. Never sent to a browser. */
  apiKey?: string;
  /** The service base address (`https://...`); default `CAMB_BASE_URL`, then `RXVOICE_BASE_URL`, then `https://client.camb.ai/apis`. */
  baseUrl?: string;
  /**
   * The relay's origin as browsers see it (`https://example.com`). Production needs it (or
   * `origins`): without either, the relay takes its origin from the request's `Host` header,
   * which a DNS-rebinding page sets to its own name, so it serves only loopback hosts
   * (`localhost`, 127.0.0.0/8, `[::1]`) and says so in one warning line at start.
   */
  publicOrigin?: string;
  /**
   * Pages of other origins that may use the relay: a list (`'https://app.example.com'`;
   * `'null'` for sandboxed frames and `file:` pages), or a test of the `Origin` header.
   * Default: none; only pages of the relay's own origin. Given without `publicOrigin`, the
   * relay's own origin is the request's (`https` on a TLS socket, else `http`, with its `Host`)
   * only for a loopback `Host` (a DNS-rebinding page names itself in `Host`): list every other
   * origin your pages have.
   */
  origins?: ReadonlyArray<string> | ((origin: string) => boolean);
  /**
   * Who may speak, asked after the origin check with the browser's upgrade request (its
   * cookies, headers, address): true, or a non-empty string (the client's id, for limits
   * and budgets: a user id, say), allows; anything else (or a rejected promise) closes 4401
   * and opens nothing upstream. Default: pages (requests with an allowed `Origin`) yes,
   * requests with no `Origin` (servers, scripts) no.
   */
  authorize?: (request: IncomingMessage) => boolean | string | Promise<boolean | string>;
  /** Bounds per client and per session (see {@link LiveRelayLimits}). */
  limits?: LiveRelayLimits;
  /**
   * Who a client is, for limits and budgets, when `authorize` gave no id. Default: the
   * remote address (an IPv6 address by its /64). Behind a proxy, read the address the proxy
   * forwards (every visitor has the proxy's address).
   */
  clientId?: (request: IncomingMessage) => string;
  /** Where per-client counts live: {@link memoryRelayStore} (the default) or {@link redisRelayStore} for several processes. */
  store?: RelayStore;
  /** Scheduler of the start and idle timeouts, the byte rates and the store's renewals (virtual time in tests). Default `asyncScheduler`. */
  scheduler?: SchedulerLike;
  /** WebSocket class used for the service session; default `ws`'s (a subclass of it, e.g. to observe). */
  WebSocket?: new (url: string, options: { headers: Record<string, string>; maxPayload: number }) => WebSocket;
  /** Environment read for the key and address; default `process.env`. */
  env?: Record<string, string | undefined>;
  /**
   * Where the relay's one warning at start goes (without `publicOrigin` or `origins` it
   * serves only loopback hosts, and says so). Default `console.warn`.
   */
  warn?: (message: string) => void;
}

/** What a relay is doing now. */
export interface LiveRelayStats {
  /** Browser sessions open (admitted, or being admitted). */
  sessions: number;
  /** Service sessions open or opening. */
  upstreams: number;
  /** Bytes sent to browsers and not yet written to their sockets, all sessions together. */
  bufferedBytes: number;
  /** Bytes from browsers not yet written to the service's sockets, all sessions together. */
  upstreamBufferedBytes: number;
  /** Service sessions not being read because their browser is not reading. */
  pausedUpstreams: number;
  /** Browsers not being read (over their bytes per second, or too much waiting toward the service). */
  pausedBrowsers: number;
  /** Browsers refused or closed by the relay since it started, by reason. */
  refused: Record<LiveRelayRefusal, number>;
}

/** A relay attached to a server (see {@link attachLiveRelay}). */
export interface LiveRelay {
  /**
   * Handles one upgrade request, for frameworks that own the `upgrade` event. Returns
   * false, touching nothing, when the request's path is not the relay's.
   */
  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): boolean;
  /** What the relay does, as it happens (hot: events before subscribing are not replayed); completes on `close()`. */
  readonly events: Observable<LiveRelayEvent>;
  /** Counts of what the relay holds now. */
  stats(): LiveRelayStats;
  /** Closes every session (browsers 1001, services 1000) and detaches from the server. */
  close(): Promise<void>;
}

/** Every refusal reason, in the order `stats().refused` lists them. */
export const REFUSALS: readonly LiveRelayRefusal[] = [
  'origin',
  'unauthorized',
  'serverSessions',
  'clientSessions',
  'characters',
  'store',
  'invalidFrame',
  'textPerSession',
  'frameBytes',
  'startTimeout',
  'idle',
];

/** The relay's options as checked (limits filled in with their defaults). */
const positiveInt = z.int().positive();
export const OptionsSchema = z.object({
  path: z.string().startsWith('/', 'must start with /'),
  publicOrigin: z
    .string()
    .refine((origin) => origin !== 'null' && isOriginText(origin), 'must be an origin such as https://example.com (no path, no trailing /)')
    .optional(),
  origins: z
    .union([z.array(z.string().refine(isOriginText, 'each must be an origin such as https://example.com, or null')), z.function()])
    .optional(),
  authorize: z.function().optional(),
  clientId: z.function().optional(),
  warn: z.function().optional(),
  store: z.custom<RelayStore>((store) => typeof (store as RelayStore | undefined)?.take === 'function', 'must be a RelayStore').optional(),
  limits: z
    .object({
      sessionsPerClient: positiveInt.default(DEFAULT_RELAY_LIMITS.sessionsPerClient),
      sessions: positiveInt.default(DEFAULT_RELAY_LIMITS.sessions),
      clientShare: z.number().positive().max(1).default(DEFAULT_RELAY_LIMITS.clientShare),
      charactersPerMinute: positiveInt.default(DEFAULT_RELAY_LIMITS.charactersPerMinute),
      textPerSession: positiveInt.default(DEFAULT_RELAY_LIMITS.textPerSession),
      frameBytes: positiveInt.min(64).default(DEFAULT_RELAY_LIMITS.frameBytes),
      bytesPerSecond: positiveInt.default(DEFAULT_RELAY_LIMITS.bytesPerSecond),
      clientBytesPerSecond: positiveInt.default(DEFAULT_RELAY_LIMITS.clientBytesPerSecond),
      upstreamBufferedBytes: positiveInt.default(DEFAULT_RELAY_LIMITS.upstreamBufferedBytes),
      bufferedBytes: positiveInt.min(MAX_AUDIO_FRAME_BYTES).default(DEFAULT_RELAY_LIMITS.bufferedBytes),
      startTimeoutMs: z.number().positive().default(DEFAULT_RELAY_LIMITS.startTimeoutMs),
      idleTimeoutMs: z.number().positive().default(DEFAULT_RELAY_LIMITS.idleTimeoutMs),
      storeTimeoutMs: z.number().positive().default(DEFAULT_RELAY_LIMITS.storeTimeoutMs),
    })
    .default({ ...DEFAULT_RELAY_LIMITS }),
});

/** Limits with every default filled in. */
export type ResolvedRelayLimits = z.infer<typeof OptionsSchema>['limits'];

/** How long a session slot lives in the store without renewal (a crashed relay's slots free after it). */
export const SLOT_TTL_MS = 60_000;
/** The window of `limits.charactersPerMinute`, ms. */
export const MINUTE_MS = 60_000;
