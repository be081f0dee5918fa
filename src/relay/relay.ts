/**
 * The live relay: browser WebSocket in, service WebSocket out, frame for frame, with the
 * server's key added upstream and kept out of everything that goes back.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server as HttpServer } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import type { Duplex } from 'node:stream';
import { asyncScheduler, Observable, Subject, type SchedulerLike, type Subscription } from 'rxjs';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
import { z } from 'zod';
import { resolveConfig } from '../client/config.js';
import { routes } from '../core/routes.js';
import { checkOptions } from '../core/validation.js';
import { ClientFrameSchema, CloseCodes, MAX_AUDIO_FRAME_BYTES } from '../live/protocol.js';
import { addressClient, isOriginText, originPolicy } from './origin.js';
import { keyScrubber } from './scrub.js';
import { memoryRelayStore, type RelayStore } from './store.js';

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
  /** The same, for all sessions of one client together, in this process. Default 131072. */
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
   * The relay's origin as browsers see it (`https://example.com`), when a proxy in front
   * changes the scheme, host or port. Default: the request's own (`https` on a TLS socket,
   * else `http`, with its `Host` header).
   */
  publicOrigin?: string;
  /**
   * Pages of other origins that may use the relay: a list (`'https://app.example.com'`;
   * `'null'` for sandboxed frames and `file:` pages), or a test of the `Origin` header.
   * Default: none; only pages of the relay's own origin.
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

const positiveInt = z.int().positive();
const OptionsSchema = z.object({
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

/** How long a session slot lives in the store without renewal (a crashed relay's slots free after it). */
const SLOT_TTL_MS = 60_000;
const MINUTE_MS = 60_000;

/** Close codes `ws` may send that a service close maps to as is. */
function browserCloseCode(code: number): number {
  if (code === 1000 || (code >= 1001 && code <= 1003) || (code >= 1007 && code <= 1014) || (code >= 3000 && code <= 4999)) return code;
  return 1011; // 1005, 1006, 1015: the service connection was lost without a close frame
}

/** A token bucket of bytes per second: `take` answers how long to wait, ms (0: go on). */
class ByteRate {
  private tokens: number;
  private last: number;
  users = 0;
  constructor(
    private readonly perSecond: number,
    private readonly burst: number,
    now: number,
  ) {
    this.tokens = burst;
    this.last = now;
  }
  take(bytes: number, now: number): number {
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) * this.perSecond) / 1000);
    this.last = now;
    this.tokens -= bytes;
    return this.tokens >= 0 ? 0 : Math.ceil((-this.tokens * 1000) / this.perSecond);
  }
}

/** `promise`, or a rejection after `ms` on `scheduler`. */
function within<T>(promise: Promise<T>, ms: number, scheduler: SchedulerLike): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = scheduler.schedule(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    promise.then(
      (value) => {
        timer.unsubscribe();
        resolve(value);
      },
      (error: unknown) => {
        timer.unsubscribe();
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}

/** Keeps only the keys the frame's schema knows (the parsed frame has exactly those), in the order given. */
function knownKeys(input: Record<string, unknown>, parsed: object): string {
  const kept: Record<string, unknown> = {};
  for (const key of Object.keys(input)) if (Object.hasOwn(parsed, key)) kept[key] = input[key];
  return JSON.stringify(kept);
}

const REFUSALS: readonly LiveRelayRefusal[] = [
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

/**
 * Serves the live speech protocol to browsers on `server` and relays each session to the
 * service with the server's key, to pages of its own origin only, within a budget per
 * visitor.
 *
 * <span class="informal">The page runs `speak()` from `rxvoice/live` against the relay as
 * if it were the service, with no key; the relay adds the key and keeps it there.</span>
 *
 * A browser connects to `path` (or `path + '/live-tts/ws'`). In this order, and before
 * anything is opened upstream:
 * 1. Origin: a page whose `Origin` (scheme, host, port) is not the relay's own
 *    (`publicOrigin`, else the request's) nor allowed by `origins` is closed 4403; `authorize`
 *    is not asked.
 * 2. `authorize(request)`: true or a client id allows, anything else closes 4401. The
 *    default allows pages that passed step 1 and refuses requests with no `Origin`.
 * 3. Admission: over `limits.sessions` on this relay: `session.error`, 4400; over the
 *    client's sessions at once (counted in `store`): 4429 `budget: ...`.
 *
 * Its first frame must be a valid `session.start`: only then is the service session
 * opened (header `x-api-key`). Every browser frame is checked against the live protocol's
 * schema and forwarded with the keys it knows only (unknown keys are dropped; an empty
 * `text.chunk` is not forwarded). Garbage, a second `session.start`, binary frames, text over
 * `limits.textPerSession` get a `session.error` and 4400; text over the client's
 * `limits.charactersPerMinute` closes 4429; a message over `limits.frameBytes` closes 1009;
 * none of these reaches the service. A browser over `limits.bytesPerSecond` (or its client
 * over `clientBytesPerSecond`), or with more than `limits.upstreamBufferedBytes` waiting
 * toward the service, is not read until that passes (TCP backpressure). No text and no
 * audio for `limits.idleTimeoutMs` closes 4408.
 *
 * The service's close code and `session.error` pass through (a lost service connection
 * becomes 1011); the key is masked in every frame (text and binary) and close reason sent
 * to a browser in any form a service could echo it (escaped, URL-encoded, other case,
 * base64, hex, split over frames), and never put in a header. A browser that goes away
 * closes its service session at once (1000). A browser that stops reading makes the relay
 * stop reading its service session once `limits.bufferedBytes` wait, and read again when it
 * drains; other sessions are unaffected. `relay.events` reports admissions, closes,
 * refusals (with their reason) and throttling; `stats()` counts them.
 *
 * Upgrades for other paths are left to other listeners (answered 404 when the relay is the
 * server's only `upgrade` listener).
 *
 * ## Example
 * ```ts
 * import { createServer, type IncomingMessage } from 'node:http';
 * import { attachLiveRelay } from 'rxvoice/relay';
 *
 * // a user id from your own session cookie (here: its value), or false
 * const userOf = (request: IncomingMessage): string | false => /(?:^|; )session=([^;]+)/.exec(request.headers.cookie ?? '')?.[1] ?? false;
 * const server = createServer();
 * const relay = attachLiveRelay(server, {
 *   path: '/speech',
 *   apiKey: process.env['CAMB_API_KEY'],
 *   baseUrl: 'https://api.example.com',
 *   publicOrigin: 'https://chat.example.com',
 *   authorize: userOf,
 *   limits: { sessionsPerClient: 2, charactersPerMinute: 3000 },
 * });
 * relay.events.subscribe((event) => {
 *   if (event.type === 'refused') console.warn(`relay refused ${event.client ?? event.origin ?? '?'}: ${event.reason}`);
 * });
 * server.listen(8080);
 * // later: await relay.close();
 * ```
 *
 * @param server The Node `http` or `https` server whose `upgrade` events the relay serves.
 * @param options Path, key and address of the service, origins, `authorize`, `limits`, `store`.
 * @returns The relay: `handleUpgrade` for frameworks, `events`, `stats()`, `close()`.
 * @throws ValidationError at once when an option is invalid; RxVoiceError (`code:
 * 'config'`) when the key or address is missing (the message never holds the key).
 */
export function attachLiveRelay(server: HttpServer | HttpsServer | undefined, options: LiveRelayOptions): LiveRelay {
  const parsed = checkOptions(OptionsSchema, options, 'attachLiveRelay');
  const { config, apiKey } = resolveConfig({
    apiKey: options.apiKey,
    baseUrl: options.baseUrl,
    ...(options.env === undefined ? {} : { env: options.env }),
  });
  const limits = parsed.limits;
  const clientCap = Math.min(limits.sessionsPerClient, Math.max(1, Math.floor(limits.sessions * limits.clientShare)));
  const scheduler = options.scheduler ?? asyncScheduler;
  const store = options.store ?? memoryRelayStore();
  const Upstream = options.WebSocket ?? WebSocket;
  const checkOrigin = originPolicy(options.publicOrigin, options.origins);
  const authorize = options.authorize ?? ((request: IncomingMessage) => request.headers.origin !== undefined);
  const clientOf = (request: IncomingMessage, id: string | undefined): string =>
    id ?? options.clientId?.(request) ?? addressClient(request.socket.remoteAddress);
  const base = options.path.replace(/\/+$/, '');
  const paths = new Set([options.path, base + routes.liveTts]);
  const scrub = keyScrubber(apiKey);
  const burst = (perSecond: number): number => Math.max(perSecond, limits.frameBytes);

  const wss = new WebSocketServer({ noServer: true, maxPayload: limits.frameBytes, clientTracking: false });
  const sessions = new Set<RelaySession>();
  const clientRates = new Map<string, ByteRate>();
  const events = new Subject<LiveRelayEvent>();
  const refusedCounts = Object.fromEntries(REFUSALS.map((reason) => [reason, 0])) as Record<LiveRelayRefusal, number>;
  let renewal: Subscription | undefined;
  let closing = false;

  function refused(reason: LiveRelayRefusal, code: number, message: string, client: string | undefined, origin: string | undefined): void {
    refusedCounts[reason]++;
    events.next({ type: 'refused', reason, code, message, client, origin });
  }

  /** Renews the store's slots of admitted sessions while there are any. */
  function renewSlots(): void {
    if (renewal !== undefined) return;
    renewal = scheduler.schedule(function (this: { schedule(state?: undefined, delay?: number): void }) {
      const live = [...sessions].filter((s) => s.admitted && s.phase !== 'closed').map((s) => ({ client: s.client, session: s.id }));
      if (live.length === 0) {
        renewal = undefined;
        return;
      }
      within(store.renew(live, SLOT_TTL_MS, scheduler.now()), limits.storeTimeoutMs, scheduler).catch(() => undefined);
      this.schedule(undefined, SLOT_TTL_MS / 3);
    }, SLOT_TTL_MS / 3);
  }

  class RelaySession {
    readonly id = randomUUID();
    phase: 'admitting' | 'starting' | 'relaying' | 'closed' = 'admitting';
    admitted = false;
    upstream: WebSocket | undefined;
    /** Browser messages not yet handled, in order. */
    inbox: Array<{ data: RawData; isBinary: boolean; size: number }> = [];
    /** Frames checked and waiting for the service session to open. */
    pending: Array<{ frame: string; size: number }> = [];
    /** Bytes of `inbox` and `pending`, and sent to the service but not yet written to its socket. */
    towardService = 0;
    pumping = false;
    text = 0;
    unflushed = 0;
    paused = false;
    /** Why the browser is not being read. */
    holds = new Set<'bytesPerSecond' | 'upstreamBuffered'>();
    rateTimer: Subscription | undefined;
    startTimer: Subscription | undefined;
    idleTimer: Subscription | undefined;
    /** What goes to the browser, scrubbed frame after frame (a key split over frames is caught too). */
    readonly scrubber = scrub.stream();
    readonly rate = new ByteRate(limits.bytesPerSecond, burst(limits.bytesPerSecond), scheduler.now());
    readonly clientRate: ByteRate;

    constructor(
      readonly browser: WebSocket,
      readonly client: string,
      readonly origin: string | undefined,
    ) {
      let clientRate = clientRates.get(client);
      if (clientRate === undefined) {
        clientRate = new ByteRate(limits.clientBytesPerSecond, burst(limits.clientBytesPerSecond), scheduler.now());
        clientRates.set(client, clientRate);
      }
      clientRate.users++;
      this.clientRate = clientRate;
      browser.on('error', (error: Error & { code?: string }) => {
        // a message over maxPayload: ws closes 1009 itself
        if (error.code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH') refused('frameBytes', 1009, `a message over ${limits.frameBytes} bytes`, client, origin);
      });
      browser.on('message', (data, isBinary) => this.fromBrowser(data, isBinary));
      browser.on('close', (code: number) => this.end(code));
      this.startTimer = scheduler.schedule(() => this.reject('startTimeout', 'no session.start in time'), limits.startTimeoutMs);
    }

    /** The store gave this session a slot (or not). */
    admit(ok: boolean | 'store'): void {
      if (this.phase === 'closed') {
        if (ok === true) void store.release(this.client, this.id).catch(() => undefined);
        return;
      }
      if (ok === 'store') return this.closeWith('store', RelayCloseCodes.storeUnavailable, 'budget store unavailable, try again later');
      if (!ok) return this.closeWith('clientSessions', RelayCloseCodes.overBudget, `budget: over ${clientCap} sessions at once for this client`);
      this.admitted = true;
      this.phase = 'starting';
      renewSlots();
      events.next({ type: 'sessionOpened', client: this.client, origin: this.origin });
      void this.pump();
    }

    fromBrowser(data: RawData, isBinary: boolean): void {
      if (this.phase === 'closed') return;
      const size = byteLength(data);
      const now = scheduler.now();
      const wait = Math.max(this.rate.take(size, now), this.clientRate.take(size, now));
      if (wait > 0 && this.rateTimer === undefined) {
        this.hold('bytesPerSecond');
        this.rateTimer = scheduler.schedule(() => {
          this.rateTimer = undefined;
          this.release('bytesPerSecond');
        }, wait);
      }
      this.inbox.push({ data, isBinary, size });
      this.towardService += size;
      this.checkPressure();
      void this.pump();
    }

    hold(cause: 'bytesPerSecond' | 'upstreamBuffered'): void {
      if (this.holds.has(cause)) return;
      if (this.holds.size === 0) this.browser.pause();
      this.holds.add(cause);
      events.next({ type: 'throttled', client: this.client, cause });
    }

    release(cause: 'bytesPerSecond' | 'upstreamBuffered'): void {
      if (!this.holds.delete(cause)) return;
      if (this.holds.size === 0 && this.phase !== 'closed') this.browser.resume();
    }

    checkPressure(): void {
      if (this.towardService > limits.upstreamBufferedBytes) this.hold('upstreamBuffered');
      else if (this.towardService <= limits.upstreamBufferedBytes / 2) this.release('upstreamBuffered');
    }

    closed(): boolean {
      return this.phase === 'closed';
    }

    /** Handles the inbox in order, one message at a time (a budget check may wait for the store). */
    async pump(): Promise<void> {
      if (this.pumping || this.phase === 'admitting') return;
      this.pumping = true;
      try {
        while (!this.closed() && this.inbox.length > 0) {
          const message = this.inbox.shift()!;
          const forward = await this.check(message.data, message.isBinary);
          this.towardService -= message.size;
          if (forward !== undefined && !this.closed()) this.send(forward);
          this.checkPressure();
        }
      } finally {
        this.pumping = false;
      }
    }

    /** The frame to forward for one browser message, or undefined (refused, or nothing to send). */
    async check(data: RawData, isBinary: boolean): Promise<string | undefined> {
      if (isBinary) return this.reject('invalidFrame', 'binary frames are not part of the live protocol');
      let json: unknown;
      try {
        json = JSON.parse(rawText(data));
      } catch {
        return this.reject('invalidFrame', 'a frame is not JSON');
      }
      const frame = ClientFrameSchema.safeParse(json);
      if (!frame.success) {
        const where = frame.error.issues.map((issue) => issue.path.join('.') || 'frame').join(', ');
        return this.reject('invalidFrame', `invalid frame (${where})`);
      }
      const forward = knownKeys(json as Record<string, unknown>, frame.data);
      const type = frame.data.type;
      if (this.phase === 'starting') {
        if (type !== 'session.start') return this.reject('invalidFrame', 'the first frame must be session.start');
        this.startTimer?.unsubscribe();
        this.phase = 'relaying';
        this.touch();
        this.openUpstream();
        return forward;
      }
      if (type === 'session.start') return this.reject('invalidFrame', 'the session was already started');
      if (frame.data.type === 'text.chunk') {
        const length = frame.data.text.length;
        if (length === 0) return undefined; // nothing to say: not forwarded, and not activity
        this.text += length;
        if (this.text > limits.textPerSession) return this.reject('textPerSession', `text over ${limits.textPerSession} characters in one session`);
        let allowed: boolean;
        try {
          allowed = await within(store.take(`characters:${this.client}`, length, limits.charactersPerMinute, MINUTE_MS, scheduler.now()), limits.storeTimeoutMs, scheduler);
        } catch {
          this.closeWith('store', RelayCloseCodes.storeUnavailable, 'budget store unavailable, try again later');
          return undefined;
        }
        if (!allowed) {
          this.closeWith('characters', RelayCloseCodes.overBudget, `budget: over ${limits.charactersPerMinute} characters per minute for this client`);
          return undefined;
        }
      }
      this.touch();
      return forward;
    }

    send(frame: string): void {
      const upstream = this.upstream;
      const size = Buffer.byteLength(frame);
      this.towardService += size;
      if (upstream?.readyState !== WebSocket.OPEN) {
        this.pending.push({ frame, size });
        return;
      }
      upstream.send(frame, () => {
        this.towardService -= size;
        this.checkPressure();
      });
    }

    openUpstream(): void {
      const upstream = new Upstream(config.wsUrl, { headers: { 'x-api-key': apiKey }, maxPayload: 1024 * 1024 });
      this.upstream = upstream;
      upstream.on('error', () => undefined); // followed by 'close' (1006)
      upstream.on('open', () => {
        const pending = this.pending;
        this.pending = [];
        for (const { frame, size } of pending) {
          this.towardService -= size;
          this.send(frame);
        }
      });
      upstream.on('message', (data, isBinary) => this.toBrowser(data, isBinary));
      upstream.on('close', (code, reason) => {
        this.upstream = undefined;
        this.closeBrowser(browserCloseCode(code), code === 1006 || code === 1005 ? 'service connection lost' : scrub.reason(reason.toString('utf8')));
      });
    }

    toBrowser(data: RawData, isBinary: boolean): void {
      if (this.browser.readyState !== WebSocket.OPEN) return;
      this.touch();
      const payload = isBinary ? this.scrubber.binary(binary(data)) : this.scrubber.text(rawText(data));
      const size = typeof payload === 'string' ? Buffer.byteLength(payload) : payload.byteLength;
      this.unflushed += size;
      this.browser.send(payload, { binary: isBinary }, () => {
        this.unflushed -= size;
        if (this.paused && this.unflushed <= limits.bufferedBytes / 2) {
          this.paused = false;
          this.upstream?.resume();
        }
      });
      if (!this.paused && this.unflushed > limits.bufferedBytes) {
        this.paused = true;
        this.upstream?.pause();
      }
    }

    /** Something happened: the idle clock starts again. */
    touch(): void {
      this.idleTimer?.unsubscribe();
      if (this.closed()) return; // a store answer that came after the close
      this.idleTimer = scheduler.schedule(
        () => this.closeWith('idle', RelayCloseCodes.idle, `idle: no text and no audio for ${limits.idleTimeoutMs / 1000} s`),
        limits.idleTimeoutMs,
      );
    }

    /** A `session.error`, then 4400; the service session (if any) is closed. */
    reject(reason: LiveRelayRefusal, message: string): undefined {
      if (this.phase === 'closed') return undefined;
      if (this.browser.readyState === WebSocket.OPEN) this.browser.send(JSON.stringify({ type: 'session.error', error: message }));
      this.closeWith(reason, CloseCodes.rejected, message);
      return undefined;
    }

    closeWith(reason: LiveRelayRefusal, code: number, message: string): void {
      if (this.phase === 'closed') return;
      refused(reason, code, message, this.client, this.origin);
      this.closeBrowser(code, message);
    }

    closeBrowser(code: number, reason: string): void {
      if (this.browser.readyState === WebSocket.OPEN || this.browser.readyState === WebSocket.CONNECTING) {
        // close reasons are at most 123 bytes
        this.browser.close(code, truncateUtf8(reason, 123));
      }
      this.end(code);
    }

    /** Frees the slot and closes the service session at once; `code`: how the browser's socket closes. */
    end(code: number): void {
      if (this.phase === 'closed') return;
      this.phase = 'closed';
      if (this.admitted) events.next({ type: 'sessionClosed', client: this.client, code });
      for (const timer of [this.startTimer, this.idleTimer, this.rateTimer]) timer?.unsubscribe();
      this.inbox = [];
      this.pending = [];
      sessions.delete(this);
      if (this.admitted) void store.release(this.client, this.id).catch(() => undefined);
      if (--this.clientRate.users === 0) clientRates.delete(this.client);
      const upstream = this.upstream;
      if (upstream !== undefined) {
        if (this.paused) upstream.resume();
        if (upstream.readyState === WebSocket.OPEN) upstream.close(CloseCodes.normal, 'browser left');
        else if (upstream.readyState === WebSocket.CONNECTING) upstream.terminate();
      }
      // a browser that never answers the close frame is cut off
      if (this.browser.readyState !== WebSocket.CLOSED) {
        const timer = setTimeout(() => this.browser.terminate(), 2_000);
        timer.unref();
        this.browser.once('close', () => clearTimeout(timer));
      }
    }
  }

  function refuse(browser: WebSocket, code: number, message: string): void {
    browser.on('error', () => undefined);
    if (code === CloseCodes.rejected) browser.send(JSON.stringify({ type: 'session.error', error: message }));
    browser.close(code, truncateUtf8(message, 123));
    const timer = setTimeout(() => browser.terminate(), 2_000);
    timer.unref();
    browser.once('close', () => clearTimeout(timer));
  }

  /** Completes the WebSocket handshake (so the page can read a close code and reason), then `then`. */
  function upgrade(request: IncomingMessage, socket: Duplex, head: Buffer, then: (browser: WebSocket) => void): void {
    if (closing || socket.destroyed) {
      socket.destroy();
      return;
    }
    wss.handleUpgrade(request, socket, head, then);
  }

  /** After `authorize`: refuses (4401), or upgrades and asks the store for a slot. */
  function afterAuthorize(request: IncomingMessage, socket: Duplex, head: Buffer, verdict: unknown): void {
    const origin = request.headers.origin;
    const allowed = verdict === true || (typeof verdict === 'string' && verdict !== '');
    if (!allowed) {
      const message = origin === undefined ? 'not authorized (no Origin: only an authorize that says yes serves a server or script)' : 'not authorized';
      refused('unauthorized', CloseCodes.invalidKey, message, undefined, origin);
      return upgrade(request, socket, head, (browser) => refuse(browser, CloseCodes.invalidKey, message));
    }
    let client: string;
    try {
      client = clientOf(request, typeof verdict === 'string' ? verdict : undefined);
    } catch {
      refused('unauthorized', CloseCodes.invalidKey, 'not authorized (clientId failed)', undefined, origin);
      return upgrade(request, socket, head, (browser) => refuse(browser, CloseCodes.invalidKey, 'not authorized'));
    }
    upgrade(request, socket, head, (browser) => {
      if (sessions.size >= limits.sessions) {
        refused('serverSessions', CloseCodes.rejected, 'too many sessions on this server', client, origin);
        return refuse(browser, CloseCodes.rejected, 'too many sessions on this server');
      }
      const session = new RelaySession(browser, client, origin);
      sessions.add(session);
      within(store.acquire(client, session.id, clientCap, SLOT_TTL_MS, scheduler.now()), limits.storeTimeoutMs, scheduler).then(
        (ok) => session.admit(ok),
        () => session.admit('store'),
      );
    });
  }

  function handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): boolean {
    const pathname = new URL(request.url ?? '/', 'http://relay.invalid').pathname;
    if (!paths.has(pathname)) return false;
    socket.on('error', () => undefined); // a peer resetting the connection must not crash the server
    const origin = request.headers.origin;
    if (checkOrigin(request) === 'refused') {
      const message = truncateUtf8(`origin not allowed: ${origin}`, 123);
      refused('origin', RelayCloseCodes.originNotAllowed, message, undefined, origin);
      upgrade(request, socket, head, (browser) => refuse(browser, RelayCloseCodes.originNotAllowed, message));
      return true;
    }
    let verdict: unknown;
    try {
      verdict = authorize(request);
    } catch {
      verdict = false;
    }
    if (typeof (verdict as PromiseLike<unknown> | undefined)?.then === 'function') {
      Promise.resolve(verdict).then((v: unknown) => afterAuthorize(request, socket, head, v), () => afterAuthorize(request, socket, head, false));
    } else afterAuthorize(request, socket, head, verdict);
    return true;
  }

  const onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer): void => {
    if (handleUpgrade(request, socket, head)) return;
    if (server !== undefined && server.listenerCount('upgrade') === 1) {
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
    }
  };
  server?.on('upgrade', onUpgrade);

  return {
    handleUpgrade,
    events: events.asObservable(),
    stats: () => {
      let upstreams = 0;
      let bufferedBytes = 0;
      let upstreamBufferedBytes = 0;
      let pausedUpstreams = 0;
      let pausedBrowsers = 0;
      for (const session of sessions) {
        if (session.upstream !== undefined) upstreams++;
        bufferedBytes += session.unflushed;
        upstreamBufferedBytes += session.towardService;
        if (session.paused) pausedUpstreams++;
        if (session.holds.size > 0) pausedBrowsers++;
      }
      return { sessions: sessions.size, upstreams, bufferedBytes, upstreamBufferedBytes, pausedUpstreams, pausedBrowsers, refused: { ...refusedCounts } };
    },
    close: async () => {
      closing = true;
      server?.off('upgrade', onUpgrade);
      renewal?.unsubscribe();
      const closed = [...sessions].map(
        (session) =>
          new Promise<void>((resolve) => {
            if (session.browser.readyState === WebSocket.CLOSED) return resolve();
            session.browser.once('close', () => resolve());
            session.closeBrowser(1001, 'server closing');
          }),
      );
      await Promise.all(closed);
      wss.close();
      events.complete();
    },
  };
}

function byteLength(data: RawData): number {
  if (Array.isArray(data)) return data.reduce((sum, part) => sum + part.byteLength, 0);
  return data.byteLength;
}

function rawText(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return (Buffer.isBuffer(data) ? data : Buffer.from(data)).toString('utf8');
}

function binary(data: RawData): Buffer {
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.isBuffer(data) ? data : Buffer.from(data);
}

function truncateUtf8(text: string, maxBytes: number): string {
  let out = text;
  while (Buffer.byteLength(out) > maxBytes) out = out.slice(0, -1);
  return out;
}
