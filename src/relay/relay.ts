/**
 * The live relay: browser WebSocket in, service WebSocket out, frame for frame, with the
 * server's key added upstream and kept out of everything that goes back.
 */
import type { IncomingMessage, Server as HttpServer } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import type { Duplex } from 'node:stream';
import { asyncScheduler, type SchedulerLike, type Subscription } from 'rxjs';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
import { z } from 'zod';
import { resolveConfig } from '../client/config.js';
import { RxVoiceError, redact } from '../core/errors.js';
import { routes } from '../core/routes.js';
import { ClientFrameSchema, CloseCodes, MAX_AUDIO_FRAME_BYTES } from '../live/protocol.js';

/** Bounds on what one browser may ask of the relay. Every field optional; defaults in {@link DEFAULT_RELAY_LIMITS}. */
export interface LiveRelayLimits {
  /** Sessions open at once per client (see `clientId`); one more is closed 4400. Default 4. */
  sessionsPerClient?: number;
  /** Sessions open at once through this relay, all clients together; one more is closed 4400. Default 1000. */
  sessions?: number;
  /** Text per session, in UTF-16 code units summed over `text.chunk` frames; more is closed 4400. Default 100000. */
  textPerSession?: number;
  /** Largest WebSocket message accepted from a browser, bytes; a larger one is closed 1009. Default 65536. */
  frameBytes?: number;
  /**
   * Bytes sent to a browser and not yet written to its socket above which the relay stops
   * reading the service session (backpressure); it reads again below half. Default 1 MiB.
   */
  bufferedBytes?: number;
  /** How long a browser may take to send `session.start` after connecting, ms; then 4400. Default 10000. */
  startTimeoutMs?: number;
}

/** The limits a relay uses when none are given. */
export const DEFAULT_RELAY_LIMITS: Readonly<Required<LiveRelayLimits>> = Object.freeze({
  sessionsPerClient: 4,
  sessions: 1000,
  textPerSession: 100_000,
  frameBytes: 64 * 1024,
  bufferedBytes: 1024 * 1024,
  startTimeoutMs: 10_000,
});

/** Options of {@link attachLiveRelay}. */
export interface LiveRelayOptions {
  /**
   * Where browsers connect, e.g. `'/speech'`. The relay answers at `path` and at
   * `path + '/live-tts/ws'` (what `speak()` from `rxvoice/live` appends to a base address).
   */
  path: string;
  /** The service key; default the environment variable `RXVOICE_API_KEY`. Never sent to a browser. */
  apiKey?: string;
  /** The service base address (`https://...`); default the environment variable `RXVOICE_BASE_URL`. */
  baseUrl?: string;
  /**
   * Who may speak: called with the browser's upgrade request (its cookies, headers,
   * address). False (or a rejected promise) closes the browser socket with 4401 and no
   * service session is opened. Default: everyone.
   */
  authorize?: (request: IncomingMessage) => boolean | Promise<boolean>;
  /** Bounds per client and per session (see {@link LiveRelayLimits}). */
  limits?: LiveRelayLimits;
  /** Who a client is, for `limits.sessionsPerClient`. Default: the remote address. */
  clientId?: (request: IncomingMessage) => string;
  /** Scheduler of the start timeout (virtual time in tests). Default `asyncScheduler`. */
  scheduler?: SchedulerLike;
  /** WebSocket class used for the service session; default `ws`'s (a subclass of it, e.g. to observe). */
  WebSocket?: new (url: string, options: { headers: Record<string, string>; maxPayload: number }) => WebSocket;
  /** Environment read for the key and address; default `process.env`. */
  env?: Record<string, string | undefined>;
}

/** What a relay is doing now. */
export interface LiveRelayStats {
  /** Browser sessions open. */
  sessions: number;
  /** Service sessions open or opening. */
  upstreams: number;
  /** Bytes sent to browsers and not yet written to their sockets, all sessions together. */
  bufferedBytes: number;
  /** Service sessions not being read because their browser is not reading. */
  pausedUpstreams: number;
}

/** A relay attached to a server (see {@link attachLiveRelay}). */
export interface LiveRelay {
  /**
   * Handles one upgrade request, for frameworks that own the `upgrade` event. Returns
   * false, touching nothing, when the request's path is not the relay's.
   */
  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): boolean;
  /** Counts of what the relay holds now. */
  stats(): LiveRelayStats;
  /** Closes every session (browsers 1001, services 1000) and detaches from the server. */
  close(): Promise<void>;
}

const positiveInt = z.int().positive();
const OptionsSchema = z.object({
  path: z.string().startsWith('/', 'must start with /'),
  authorize: z.function().optional(),
  clientId: z.function().optional(),
  limits: z
    .object({
      sessionsPerClient: positiveInt.default(DEFAULT_RELAY_LIMITS.sessionsPerClient),
      sessions: positiveInt.default(DEFAULT_RELAY_LIMITS.sessions),
      textPerSession: positiveInt.default(DEFAULT_RELAY_LIMITS.textPerSession),
      frameBytes: positiveInt.default(DEFAULT_RELAY_LIMITS.frameBytes),
      bufferedBytes: positiveInt.min(MAX_AUDIO_FRAME_BYTES).default(DEFAULT_RELAY_LIMITS.bufferedBytes),
      startTimeoutMs: z.number().positive().default(DEFAULT_RELAY_LIMITS.startTimeoutMs),
    })
    .default({ ...DEFAULT_RELAY_LIMITS }),
});

/** Close codes `ws` may send that a service close maps to as is. */
function browserCloseCode(code: number): number {
  if (code === 1000 || (code >= 1001 && code <= 1003) || (code >= 1007 && code <= 1014) || (code >= 3000 && code <= 4999)) return code;
  return 1011; // 1005, 1006, 1015: the service connection was lost without a close frame
}

/**
 * Serves the live speech protocol to browsers on `server` and relays each session to the
 * service with the server's key.
 *
 * <span class="informal">The page runs `speak()` from `rxvoice/live` against the relay as
 * if it were the service, with no key; the relay adds the key and keeps it there.</span>
 *
 * A browser connects to `path` (or `path + '/live-tts/ws'`); `authorize(request)` decides
 * first (false: close 4401, nothing opened upstream). Its first frame must be a valid
 * `session.start`: only then is the service session opened (header `x-api-key`), and
 * every frame passes through unchanged in both directions. The relay checks browser
 * frames before forwarding them: garbage, a second `session.start`, binary frames, text
 * over `limits.textPerSession` or sessions over `limits.sessionsPerClient` / `limits.sessions`
 * get a `session.error` and close 4400; a message over `limits.frameBytes` closes 1009;
 * none of these reaches the service. The service's close code and `session.error` pass
 * through (a lost service connection becomes 1011); the key is scrubbed from every frame
 * and close reason sent to a browser, and never put in a header. A browser that goes
 * away closes its service session at once (1000). A browser that stops reading makes the
 * relay stop reading its service session once `limits.bufferedBytes` wait (so memory stays
 * bounded), and read again when it drains; other sessions are unaffected.
 *
 * Upgrades for other paths are left to other listeners (answered 404 when the relay is the
 * server's only `upgrade` listener).
 *
 * ## Example
 * ```ts
 * import { createServer, type IncomingMessage } from 'node:http';
 * import { attachLiveRelay } from 'rxvoice/relay';
 *
 * const loggedIn = (request: IncomingMessage): boolean => (request.headers.cookie ?? '').includes('session=');
 * const server = createServer();
 * const relay = attachLiveRelay(server, {
 *   path: '/speech',
 *   apiKey: process.env['RXVOICE_API_KEY'],
 *   baseUrl: 'https://api.example.com',
 *   authorize: loggedIn,
 *   limits: { sessionsPerClient: 2, textPerSession: 20_000 },
 * });
 * server.listen(8080);
 * // later: await relay.close();
 * ```
 *
 * @param server The Node `http` or `https` server whose `upgrade` events the relay serves.
 * @param options Path, key and address of the service, `authorize`, `limits`.
 * @returns The relay: `handleUpgrade` for frameworks, `stats()`, `close()`.
 * @throws RxVoiceError (`code: 'config'`) at once when an option is invalid or the key or
 * address is missing (the message never holds the key).
 */
export function attachLiveRelay(server: HttpServer | HttpsServer | undefined, options: LiveRelayOptions): LiveRelay {
  const parsed = OptionsSchema.safeParse(options);
  if (!parsed.success) {
    const fields = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(options)'}: ${issue.message}`).join('; ');
    throw new RxVoiceError('config', `Invalid relay options: ${fields}`);
  }
  const { config, apiKey } = resolveConfig({
    apiKey: options.apiKey,
    baseUrl: options.baseUrl,
    ...(options.env === undefined ? {} : { env: options.env }),
  });
  const limits = parsed.data.limits;
  const scheduler = options.scheduler ?? asyncScheduler;
  const Upstream = options.WebSocket ?? WebSocket;
  const authorize = options.authorize ?? (() => true);
  const clientId = options.clientId ?? ((request: IncomingMessage) => request.socket.remoteAddress ?? '');
  const base = options.path.replace(/\/+$/, '');
  const paths = new Set([options.path, base + routes.liveTts]);
  const scrub = (text: string): string => redact(text, [apiKey, encodeURIComponent(apiKey)]);

  const wss = new WebSocketServer({ noServer: true, maxPayload: limits.frameBytes, clientTracking: false });
  const sessions = new Set<RelaySession>();
  const perClient = new Map<string, number>();
  let closing = false;

  class RelaySession {
    phase: 'starting' | 'relaying' | 'closed' = 'starting';
    upstream: WebSocket | undefined;
    /** Frames from the browser waiting for the service session to open. */
    pending: string[] = [];
    text = 0;
    unflushed = 0;
    paused = false;
    startTimer: Subscription | undefined;

    constructor(
      readonly browser: WebSocket,
      readonly client: string,
    ) {
      browser.on('error', () => undefined); // 1009 and protocol errors close the socket; the close handler cleans up
      browser.on('message', (data, isBinary) => this.fromBrowser(data, isBinary));
      browser.on('close', () => this.end());
      this.startTimer = scheduler.schedule(() => this.reject('no session.start in time'), limits.startTimeoutMs);
    }

    fromBrowser(data: RawData, isBinary: boolean): void {
      if (this.phase === 'closed') return;
      if (isBinary) return this.reject('binary frames are not part of the live protocol');
      const raw = rawText(data);
      let json: unknown;
      try {
        json = JSON.parse(raw);
      } catch {
        return this.reject('a frame is not JSON');
      }
      const frame = ClientFrameSchema.safeParse(json);
      if (!frame.success) {
        const where = frame.error.issues.map((issue) => issue.path.join('.') || 'frame').join(', ');
        return this.reject(`invalid frame (${where})`);
      }
      const type = frame.data.type;
      if (this.phase === 'starting') {
        if (type !== 'session.start') return this.reject('the first frame must be session.start');
        this.startTimer?.unsubscribe();
        this.phase = 'relaying';
        this.openUpstream();
      } else if (type === 'session.start') {
        return this.reject('the session was already started');
      } else if (frame.data.type === 'text.chunk') {
        this.text += frame.data.text.length;
        if (this.text > limits.textPerSession) return this.reject(`text over ${limits.textPerSession} characters in one session`);
      }
      if (this.upstream?.readyState === WebSocket.OPEN) this.upstream.send(raw);
      else this.pending.push(raw);
    }

    openUpstream(): void {
      const upstream = new Upstream(config.wsUrl, { headers: { 'x-api-key': apiKey }, maxPayload: 1024 * 1024 });
      this.upstream = upstream;
      upstream.on('error', () => undefined); // followed by 'close' (1006)
      upstream.on('open', () => {
        for (const frame of this.pending) upstream.send(frame);
        this.pending = [];
      });
      upstream.on('message', (data, isBinary) => this.toBrowser(data, isBinary));
      upstream.on('close', (code, reason) => {
        this.upstream = undefined;
        this.closeBrowser(browserCloseCode(code), code === 1006 || code === 1005 ? 'service connection lost' : scrub(reason.toString('utf8')));
      });
    }

    toBrowser(data: RawData, isBinary: boolean): void {
      if (this.browser.readyState !== WebSocket.OPEN) return;
      const payload = isBinary ? binary(data) : scrub(rawText(data));
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

    /** A `session.error`, then 4400; the service session (if any) is closed. */
    reject(message: string): void {
      if (this.phase === 'closed') return;
      if (this.browser.readyState === WebSocket.OPEN) this.browser.send(JSON.stringify({ type: 'session.error', error: message }));
      this.closeBrowser(CloseCodes.rejected, message);
      this.end();
    }

    closeBrowser(code: number, reason: string): void {
      if (this.browser.readyState === WebSocket.OPEN || this.browser.readyState === WebSocket.CONNECTING) {
        // close reasons are at most 123 bytes
        this.browser.close(code, truncateUtf8(reason, 123));
      }
      this.end();
    }

    /** Frees the slot and closes the service session at once. */
    end(): void {
      if (this.phase === 'closed') return;
      this.phase = 'closed';
      this.startTimer?.unsubscribe();
      this.pending = [];
      sessions.delete(this);
      const left = (perClient.get(this.client) ?? 1) - 1;
      if (left > 0) perClient.set(this.client, left);
      else perClient.delete(this.client);
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
    browser.close(code, message);
    const timer = setTimeout(() => browser.terminate(), 2_000);
    timer.unref();
    browser.once('close', () => clearTimeout(timer));
  }

  function accept(request: IncomingMessage, socket: Duplex, head: Buffer, allowed: boolean): void {
    if (closing || socket.destroyed) {
      socket.destroy();
      return;
    }
    wss.handleUpgrade(request, socket, head, (browser) => {
      if (!allowed) return refuse(browser, CloseCodes.invalidKey, 'not authorized');
      const client = clientId(request);
      const count = perClient.get(client) ?? 0;
      if (count >= limits.sessionsPerClient) return refuse(browser, CloseCodes.rejected, `over ${limits.sessionsPerClient} sessions for this client`);
      if (sessions.size >= limits.sessions) return refuse(browser, CloseCodes.rejected, 'too many sessions on this server');
      perClient.set(client, count + 1);
      sessions.add(new RelaySession(browser, client));
    });
  }

  function handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): boolean {
    const pathname = new URL(request.url ?? '/', 'http://relay.invalid').pathname;
    if (!paths.has(pathname)) return false;
    socket.on('error', () => undefined); // a peer resetting the connection must not crash the server
    let verdict: boolean | Promise<boolean>;
    try {
      verdict = authorize(request);
    } catch {
      verdict = false;
    }
    if (typeof verdict === 'boolean') accept(request, socket, head, verdict);
    else verdict.then((allowed) => accept(request, socket, head, allowed === true), () => accept(request, socket, head, false));
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
    stats: () => {
      let upstreams = 0;
      let bufferedBytes = 0;
      let pausedUpstreams = 0;
      for (const session of sessions) {
        if (session.upstream !== undefined) upstreams++;
        bufferedBytes += session.unflushed;
        if (session.paused) pausedUpstreams++;
      }
      return { sessions: sessions.size, upstreams, bufferedBytes, pausedUpstreams };
    },
    close: async () => {
      closing = true;
      server?.off('upgrade', onUpgrade);
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
    },
  };
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
