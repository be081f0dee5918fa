/**
 * The live relay: browser WebSocket in, service WebSocket out, frame for frame, with the
 * server's key added upstream and kept out of everything that goes back. This file wires a
 * connection's life in order (upgrade, origin, authorize, admission, session); the session
 * itself is `session.ts`, the options `options.ts`.
 */
import type { IncomingMessage, Server as HttpServer } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import type { Duplex } from 'node:stream';
import { asyncScheduler, Subject, type SchedulerLike } from 'rxjs';
import { WebSocket, WebSocketServer } from 'ws';
import { resolveConfig } from '../client/config.js';
import { routes } from '../core/routes.js';
import { checkOptions } from '../core/validation.js';
import { CloseCodes } from '../live/protocol.js';
import { closeThenTerminate, sessionError, truncateUtf8, CLOSE_REASON_BYTES } from './frames.js';
import {
  OptionsSchema,
  REFUSALS,
  RelayCloseCodes,
  type LiveRelay,
  type LiveRelayEvent,
  type LiveRelayOptions,
  type LiveRelayRefusal,
  type LiveRelayStats,
} from './options.js';
import { addressClient, originPolicy } from './origin.js';
import type { ByteRate } from './rate.js';
import { slotRenewal } from './renewal.js';
import { keyScrubber } from './scrub.js';
import { RelaySession, type RelayContext } from './session.js';
import { memoryRelayStore } from './store.js';

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
 * 1. Host and origin: with neither `publicOrigin` nor `origins`, a request whose `Host` is
 *    not a loopback name (`localhost`, 127.0.0.0/8, `[::1]`) is closed 4403 (a DNS-rebinding
 *    page names the attacker's host in both `Origin` and `Host`); one warning line at start
 *    says so. A page whose `Origin` (scheme, host, port) is not the relay's own
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
  const { ctx, events, refusedCounts, renewal } = relayContext(options);
  const { limits, scheduler, sessions } = ctx;
  const checkOrigin = originPolicy(options.publicOrigin, options.origins);
  const authorize = options.authorize ?? ((request: IncomingMessage) => request.headers.origin !== undefined);
  const clientOf = (request: IncomingMessage, id: string | undefined): string =>
    id ?? options.clientId?.(request) ?? addressClient(request.socket.remoteAddress);
  const paths = new Set([options.path, options.path.replace(/\/+$/, '') + routes.liveTts]);
  const wss = new WebSocketServer({ noServer: true, maxPayload: limits.frameBytes, clientTracking: false });
  let closing = false;
  if (options.publicOrigin === undefined && options.origins === undefined) (options.warn ?? console.warn)(LOOPBACK_ONLY(options.path));

  /**
   * 1. An upgrade on the relay's path: a `Host` the relay does not serve (without `publicOrigin`
   * or `origins`, only loopback names) or a page of another origin is closed 4403; else `authorize`
   * is asked (a throw or a rejection is a no).
   */
  function handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): boolean {
    const pathname = new URL(request.url ?? '/', 'http://relay.invalid').pathname;
    if (!paths.has(pathname)) return false;
    socket.on('error', () => undefined); // a peer resetting the connection must not crash the server
    const verdict = checkOrigin(request);
    if (verdict === 'host') {
      const message = `host not allowed: ${request.headers.host ?? '(none)'} (without publicOrigin or origins only localhost is served)`;
      refuseUpgrade(request, socket, head, 'origin', RelayCloseCodes.originNotAllowed, message);
      return true;
    }
    if (verdict === 'refused') {
      refuseUpgrade(request, socket, head, 'origin', RelayCloseCodes.originNotAllowed, `origin not allowed: ${request.headers.origin}`);
      return true;
    }
    askAuthorize(authorize, request, (verdict) => afterAuthorize(request, socket, head, verdict));
    return true;
  }

  /** 2. `authorize` answered: refuse (4401), or upgrade and admit the client it names. */
  function afterAuthorize(request: IncomingMessage, socket: Duplex, head: Buffer, verdict: unknown): void {
    const allowed = verdict === true || (typeof verdict === 'string' && verdict !== '');
    if (!allowed) {
      const noOrigin = request.headers.origin === undefined;
      const message = noOrigin ? 'not authorized (no Origin: only an authorize that says yes serves a server or script)' : 'not authorized';
      return refuseUpgrade(request, socket, head, 'unauthorized', CloseCodes.invalidKey, message);
    }
    let client: string;
    try {
      client = clientOf(request, typeof verdict === 'string' ? verdict : undefined);
    } catch {
      return refuseUpgrade(request, socket, head, 'unauthorized', CloseCodes.invalidKey, 'not authorized', 'not authorized (clientId failed)');
    }
    upgrade(request, socket, head, (browser) => admit(browser, client, request.headers.origin));
  }

  /** 3. Admission: within the relay's sessions, then a slot of the client's in the store; the session takes it from there. */
  function admit(browser: WebSocket, client: string, origin: string | undefined): void {
    if (sessions.size >= limits.sessions) {
      ctx.report({ type: 'refused', reason: 'serverSessions', code: CloseCodes.rejected, message: 'too many sessions on this server', client, origin });
      return refuse(browser, CloseCodes.rejected, 'too many sessions on this server', scheduler);
    }
    const session = new RelaySession(ctx, browser, client, origin);
    sessions.add(session);
    session.claim();
  }

  /** Reports a refusal before any session exists, then completes the handshake to tell the browser why. */
  function refuseUpgrade(
    request: IncomingMessage,
    socket: Duplex,
    head: Buffer,
    reason: LiveRelayRefusal,
    code: number,
    message: string,
    reported = message,
  ): void {
    const origin = request.headers.origin;
    ctx.report({ type: 'refused', reason, code, message: truncateUtf8(reported, CLOSE_REASON_BYTES), client: undefined, origin });
    upgrade(request, socket, head, (browser) => refuse(browser, code, message, scheduler));
  }

  /** Completes the WebSocket handshake (so the page can read a close code and reason), then `then`. */
  function upgrade(request: IncomingMessage, socket: Duplex, head: Buffer, then: (browser: WebSocket) => void): void {
    if (closing || socket.destroyed) {
      socket.destroy();
      return;
    }
    wss.handleUpgrade(request, socket, head, then);
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
    stats: () => relayStats(sessions, refusedCounts),
    close: async () => {
      closing = true;
      server?.off('upgrade', onUpgrade);
      renewal.stop();
      await Promise.all([...sessions].map(closeSession));
      wss.close();
      events.complete();
    },
  };
}

/** The one warning line of a relay with neither `publicOrigin` nor `origins`. */
const LOOPBACK_ONLY = (path: string): string =>
  `rxvoice relay at ${path}: no publicOrigin or origins, so only loopback hosts (localhost, 127.0.0.0/8, [::1]) are served; set publicOrigin (or origins) in production`;

/**
 * What a relay's sessions share, from its checked options: limits, clock, store, the key
 * (in the upstream factory and the scrubber only), and how events are reported and counted.
 */
function relayContext(options: LiveRelayOptions): {
  ctx: RelayContext;
  events: Subject<LiveRelayEvent>;
  refusedCounts: Record<LiveRelayRefusal, number>;
  renewal: ReturnType<typeof slotRenewal>;
} {
  const { limits } = checkOptions(OptionsSchema, options, 'attachLiveRelay');
  const { config, apiKey } = resolveConfig({
    apiKey: options.apiKey,
    baseUrl: options.baseUrl,
    ...(options.env === undefined ? {} : { env: options.env }),
  });
  const scheduler = options.scheduler ?? asyncScheduler;
  const store = options.store ?? memoryRelayStore();
  const Upstream = options.WebSocket ?? WebSocket;
  const events = new Subject<LiveRelayEvent>();
  const refusedCounts = Object.fromEntries(REFUSALS.map((reason) => [reason, 0])) as Record<LiveRelayRefusal, number>;
  const sessions = new Set<RelaySession>();
  const renewal = slotRenewal(sessions, store, scheduler, limits.storeTimeoutMs);
  const ctx: RelayContext = {
    limits,
    clientCap: Math.min(limits.sessionsPerClient, Math.max(1, Math.floor(limits.sessions * limits.clientShare))),
    scheduler,
    store,
    scrub: keyScrubber(apiKey),
    report: (event) => {
      if (event.type === 'refused') refusedCounts[event.reason]++;
      events.next(event);
    },
    connectUpstream: () => new Upstream(config.wsUrl, { headers: { 'x-api-key': apiKey }, maxPayload: 1024 * 1024 }),
    sessions,
    clientRates: new Map<string, ByteRate>(),
    renewSlots: () => renewal.start(),
  };
  return { ctx, events, refusedCounts, renewal };
}

/** Asks `authorize` (a throw or a rejection is a no) and hands its answer to `then`. */
function askAuthorize(authorize: NonNullable<LiveRelayOptions['authorize']>, request: IncomingMessage, then: (verdict: unknown) => void): void {
  let verdict: unknown;
  try {
    verdict = authorize(request);
  } catch {
    verdict = false;
  }
  if (typeof (verdict as PromiseLike<unknown> | undefined)?.then === 'function') {
    Promise.resolve(verdict).then(then, () => then(false));
  } else then(verdict);
}

/** Closes a browser the relay will not serve (a `session.error` first when the code is 4400). */
function refuse(browser: WebSocket, code: number, message: string, scheduler: SchedulerLike): void {
  browser.on('error', () => undefined);
  if (code === CloseCodes.rejected) browser.send(sessionError(message));
  closeThenTerminate(browser, code, message, scheduler);
}

/** Closes a session's browser (1001) and resolves once its socket is closed. */
function closeSession(session: RelaySession): Promise<void> {
  return new Promise<void>((resolve) => {
    if (session.browser.readyState === WebSocket.CLOSED) return resolve();
    session.browser.once('close', () => resolve());
    session.closeBrowser(1001, 'server closing');
  });
}

/** What the relay holds now, summed over its sessions. */
function relayStats(sessions: ReadonlySet<RelaySession>, refused: Record<LiveRelayRefusal, number>): LiveRelayStats {
  const stats = { sessions: sessions.size, upstreams: 0, bufferedBytes: 0, upstreamBufferedBytes: 0, pausedUpstreams: 0, pausedBrowsers: 0, refused: { ...refused } };
  for (const session of sessions) {
    if (session.upstream !== undefined) stats.upstreams++;
    stats.bufferedBytes += session.unflushed;
    stats.upstreamBufferedBytes += session.towardService;
    if (session.paused) stats.pausedUpstreams++;
    if (session.holds.size > 0) stats.pausedBrowsers++;
  }
  return stats;
}
