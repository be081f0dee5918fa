/**
 * Warm live sessions: WebSockets opened, `session.start` sent and `session.ready`
 * received before the text exists, handed to the next `speak` with the same
 * configuration, so its first `text.chunk` leaves with no round trip.
 *
 * A warm session reaches the session code (session.ts) through its WebSocket
 * constructor: `take()` returns a socket that opens at once and answers the
 * `session.start` it is sent (the same frame the pool sent) with the `session.ready`
 * the service already gave; from then on every frame passes through unchanged. So a
 * warm session behaves exactly as a cold one for barge-in, errors, closes and
 * reconnects; only the connection, upgrade and start round trips are gone.
 *
 * Policy: up to `sessions` (default 1) are kept ready; taking one opens a replacement in
 * the background. A ready session unused for `idleTimeoutMs` (default 60 s) is closed
 * (1000) and not replaced until the pool is used again. A session the service rejects
 * or closes while waiting is dropped (the next `speak` goes cold and meets the error
 * itself). `close()` closes every session the pool still holds; sessions already handed
 * out belong to their `speak` and end with it.
 */
import { asyncScheduler, type SchedulerLike, type Subscription } from 'rxjs';
import * as z from 'zod/mini';
import { integerAtLeast, positiveMilliseconds, scheduler } from '../core/options.js';
import { ValidationError } from '../core/errors.js';
import { toValidationIssues } from '../core/validation.js';
import type { SessionPlan, WebSocketLike } from './options.js';

const CONNECTING = 0;
const OPEN = 1;
const CLOSING = 2;
const CLOSED = 3;

type EventType = 'open' | 'message' | 'close' | 'error';
type Listener = (event: unknown) => void;

/** Options of a warm session pool. */
export interface WarmPoolOptions {
  /** Sessions kept at `session.ready`. Default 1. */
  sessions?: number;
  /** A ready session unused this long is closed, ms. Default 60000. */
  idleTimeoutMs?: number;
  /** Scheduler of the idle timers (virtual time in tests). Default `asyncScheduler`. */
  scheduler?: SchedulerLike;
}

/** Defaults of {@link WarmPoolOptions}: one session, closed after 60 s unused. */
export const WARM_POOL_DEFAULTS = { sessions: 1, idleTimeoutMs: 60_000 } as const;

const WarmPoolOptionsSchema = z.object({
  sessions: z._default(integerAtLeast(1).check(z.maximum(64, { error: 'must be at most 64' })), WARM_POOL_DEFAULTS.sessions),
  idleTimeoutMs: z._default(positiveMilliseconds(), WARM_POOL_DEFAULTS.idleTimeoutMs),
  scheduler: z.optional(scheduler()),
});

interface WarmSession {
  socket: WebSocketLike;
  state: 'connecting' | 'ready' | 'taken' | 'closed';
  readyFrame: string | undefined;
  idleTimer: Subscription | undefined;
  /** Receives the socket's events once taken. */
  owner: WarmSocket | undefined;
}

/**
 * A pool of warm sessions for one configuration (one `session.start` frame): the
 * engine of `client.warmSpeaker` (use that; this class is for wiring `speak` by hand).
 *
 * `fill()` opens sessions up to `sessions`; `take()` hands a ready one out as a
 * WebSocket for the session code (through a `WebSocket` constructor passed to `speak`)
 * and opens a replacement; `close()` closes what it holds. Nothing here throws after
 * construction: a session that fails while waiting is dropped.
 *
 * ## Example
 * ```ts
 * import { of } from 'rxjs';
 * import { WarmSessionPool, speak, type LiveConnection, type LiveWebSocketLike, type WebSocketConstructorLike } from 'rxvoice/live';
 * import WebSocket from 'ws';
 *
 * const url = 'ws://127.0.0.1:8080/live-tts/ws';
 * const apiKey = 'my-key';
 * const pool = new WarmSessionPool({
 *   url,
 *   headers: { 'x-api-key': apiKey },
 *   maxPayload: 1024 * 1024,
 *   closeGraceMs: 1000,
 *   WebSocket: WebSocket as unknown as WebSocketConstructorLike,
 *   startFrame: JSON.stringify({ type: 'session.start', voice_id: 1, output_format: 'wav' }),
 * });
 * pool.fill();
 * await pool.whenReady();
 * function Warm(u: string, p?: string | string[], init?: { headers?: Record<string, string>; maxPayload?: number }): LiveWebSocketLike {
 *   return pool.take() ?? (new WebSocket(u, p, init) as unknown as LiveWebSocketLike);
 * }
 * const connection: LiveConnection = { wsUrl: url, apiKey, WebSocket: Warm as unknown as WebSocketConstructorLike, headersSupported: true };
 * of('Hello there.').pipe(speak(connection, { voice_id: 1 })).subscribe();
 * ```
 * (The `startFrame` must be exactly the frame `speak` sends for its options; the
 * client computes it for you.)
 */
export class WarmSessionPool {
  readonly #target: SessionPlan;
  readonly #sessions: number;
  readonly #idleTimeoutMs: number;
  readonly #scheduler: SchedulerLike;
  readonly #held = new Set<WarmSession>();
  #closed = false;
  readonly #readyWaiters = new Set<() => void>();

  /** @throws ValidationError for bad options (nothing is opened). */
  constructor(target: SessionPlan, options: WarmPoolOptions = {}) {
    const parsed = WarmPoolOptionsSchema.safeParse(options);
    if (!parsed.success) throw new ValidationError(toValidationIssues(parsed.error, options, ['options']), { source: 'local' });
    this.#target = target;
    this.#sessions = parsed.data.sessions;
    this.#idleTimeoutMs = parsed.data.idleTimeoutMs;
    this.#scheduler = parsed.data.scheduler ?? asyncScheduler;
  }

  /** The `session.start` frame this pool's sessions were started with. */
  get startFrame(): string {
    return this.#target.startFrame;
  }

  /** Sessions held: `ready` (waiting for a `speak`) and `connecting`. */
  get size(): { ready: number; connecting: number } {
    let ready = 0;
    let connecting = 0;
    for (const session of this.#held) {
      if (session.state === 'ready') ready++;
      else if (session.state === 'connecting') connecting++;
    }
    return { ready, connecting };
  }

  /** Open sessions until `sessions` are held (ready or connecting). */
  fill(): void {
    while (!this.#closed && this.#held.size < this.#sessions) this.#open();
  }

  /** Resolves once a session is ready, or the pool holds none that could become ready. */
  whenReady(): Promise<void> {
    if (this.size.ready > 0 || this.size.connecting === 0) return Promise.resolve();
    return new Promise((resolve) => this.#readyWaiters.add(resolve));
  }

  /**
   * A ready session as a WebSocket that opens at once and answers `session.start` with
   * the stored `session.ready`; undefined when none is ready (the caller goes cold).
   * Taking one opens a replacement.
   */
  take(): WebSocketLike | undefined {
    if (this.#closed) return undefined;
    for (const session of this.#held) {
      if (session.state !== 'ready') continue;
      this.#held.delete(session);
      session.state = 'taken';
      session.idleTimer?.unsubscribe();
      session.idleTimer = undefined;
      const socket = new WarmSocket(session, this.#target.startFrame);
      session.owner = socket;
      this.fill();
      return socket;
    }
    return undefined;
  }

  /** Close every session still held (1000); no more are opened. Handed-out sessions are not touched. */
  close(): void {
    this.#closed = true;
    for (const session of this.#held) this.#drop(session, true);
    this.#held.clear();
    this.#wakeWaiters();
  }

  #open(): void {
    const { url, headers, maxPayload, closeGraceMs, WebSocket, startFrame } = this.#target;
    let socket: WebSocketLike;
    try {
      const closeTimeout = closeGraceMs;
      socket = new WebSocket(url, undefined, headers === undefined ? { maxPayload, closeTimeout } : { headers, maxPayload, closeTimeout });
    } catch {
      return; // a constructor that throws: the next speak goes cold and meets it
    }
    const session: WarmSession = { socket, state: 'connecting', readyFrame: undefined, idleTimer: undefined, owner: undefined };
    this.#held.add(session);
    socket.addEventListener('open', () => {
      if (session.state === 'connecting') socket.send(startFrame);
    });
    socket.addEventListener('message', (event) => {
      if (session.owner) return session.owner.dispatch('message', event);
      if (session.state !== 'connecting') return;
      const data = (event as { data?: unknown }).data;
      const text = typeof data === 'string' ? data : undefined;
      let type: unknown;
      try {
        type = text === undefined ? undefined : (JSON.parse(text) as { type?: unknown }).type;
      } catch {
        type = undefined;
      }
      if (type === 'session.ready' && text !== undefined) {
        session.state = 'ready';
        session.readyFrame = text;
        session.idleTimer = this.#scheduler.schedule(() => this.#idle(session), this.#idleTimeoutMs);
        this.#wakeWaiters();
      } else {
        // Rejected (session.error) or anything unexpected: not a session to hand out.
        this.#drop(session, true);
      }
    });
    socket.addEventListener('close', (event) => {
      if (session.owner) return session.owner.dispatch('close', event);
      this.#drop(session, false);
    });
    socket.addEventListener('error', (event) => {
      if (session.owner) return session.owner.dispatch('error', event);
      this.#drop(session, false);
    });
  }

  #idle(session: WarmSession): void {
    session.idleTimer = undefined;
    if (session.state !== 'ready') return;
    this.#drop(session, true, 'idle');
  }

  #drop(session: WarmSession, closeSocket: boolean, reason = 'warm session closed'): void {
    if (session.state === 'taken' || session.state === 'closed') return;
    session.state = 'closed';
    session.idleTimer?.unsubscribe();
    session.idleTimer = undefined;
    this.#held.delete(session);
    if (closeSocket && session.socket.readyState !== CLOSED && session.socket.readyState !== CLOSING) {
      session.socket.close(1000, reason);
    }
    this.#wakeWaiters();
  }

  #wakeWaiters(): void {
    if (this.size.ready === 0 && this.size.connecting > 0) return;
    for (const wake of this.#readyWaiters) wake();
    this.#readyWaiters.clear();
  }
}

/**
 * The socket a warm session hands to the session code: open at once; the first frame
 * sent (the same `session.start` the pool sent) is answered with the stored
 * `session.ready`; everything else passes through.
 */
class WarmSocket implements WebSocketLike {
  readyState = CONNECTING;
  readonly #session: WarmSession;
  readonly #startFrame: string;
  readonly #listeners = new Map<EventType, Set<Listener>>();
  #started = false;

  constructor(session: WarmSession, startFrame: string) {
    this.#session = session;
    this.#startFrame = startFrame;
    queueMicrotask(() => {
      if (this.readyState !== CONNECTING) return;
      if (session.socket.readyState !== OPEN) {
        // Closed between take() and now: a cold session's drop.
        this.readyState = CLOSED;
        this.dispatch('close', { code: 1006, reason: 'warm session lost' });
        return;
      }
      this.readyState = OPEN;
      this.dispatch('open', {});
    });
  }

  get binaryType(): string {
    return this.#session.socket.binaryType;
  }
  set binaryType(value: string) {
    this.#session.socket.binaryType = value;
  }

  addEventListener(type: EventType, listener: Listener): void {
    let set = this.#listeners.get(type);
    if (!set) {
      set = new Set();
      this.#listeners.set(type, set);
    }
    set.add(listener);
  }

  send(data: string): void {
    if (!this.#started && data === this.#startFrame && this.#session.readyFrame !== undefined) {
      this.#started = true;
      const ready = this.#session.readyFrame;
      // As if the service answered at once.
      queueMicrotask(() => {
        if (this.readyState === OPEN) this.dispatch('message', { data: ready });
      });
      return;
    }
    this.#started = true;
    this.#session.socket.send(data);
  }

  close(code?: number, reason?: string): void {
    if (this.readyState === CLOSED) return;
    this.readyState = CLOSING;
    this.#session.socket.close(code, reason);
  }

  /** @internal Deliver an event of the underlying socket. */
  dispatch(type: EventType, event: unknown): void {
    if (type === 'close') this.readyState = CLOSED;
    for (const listener of [...(this.#listeners.get(type) ?? [])]) listener(event);
  }
}
