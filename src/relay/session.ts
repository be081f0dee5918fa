/**
 * One browser's session through the relay, from admission to teardown: it claims a slot in
 * the store, checks every browser frame (schema, text and character budgets, byte rates),
 * opens the service session on the first `session.start`, relays both ways with
 * backpressure, scrubs the key out of everything that goes back, and frees what it holds
 * when either side leaves.
 *
 * @internal
 */
import { randomUUID } from 'node:crypto';
import type { SchedulerLike, Subscription } from 'rxjs';
import { WebSocket, type RawData } from 'ws';
import { ClientFrameSchema, CloseCodes } from '../live/protocol.js';
import { binary, browserCloseCode, byteLength, closeThenTerminate, knownKeys, rawText, sessionError } from './frames.js';
import { MINUTE_MS, RelayCloseCodes, SLOT_TTL_MS, type LiveRelayEvent, type LiveRelayRefusal, type ResolvedRelayLimits } from './options.js';
import { ByteRate, forgetRefilled, within } from './rate.js';
import type { FrameScrubber, KeyScrubber } from './scrub.js';
import type { RelayStore } from './store.js';

/** What every session of one relay shares: its limits, clock, store, scrubber, events and service. */
export interface RelayContext {
  readonly limits: ResolvedRelayLimits;
  /** Sessions at once per client (`sessionsPerClient`, within `clientShare` of `sessions`). */
  readonly clientCap: number;
  readonly scheduler: SchedulerLike;
  readonly store: RelayStore;
  /** Masks the key (in any form) in what goes to a browser. */
  readonly scrub: KeyScrubber;
  /** Reports what happened (events, and the refusal counts of `stats()`). */
  readonly report: (event: LiveRelayEvent) => void;
  /** Opens a service session with the key in its header (the only place the key goes). */
  readonly connectUpstream: () => WebSocket;
  /** The relay's sessions (a session removes itself when it ends). */
  readonly sessions: Set<RelaySession>;
  /** Byte rates of each client, shared by its sessions; kept after its last session until refilled. */
  readonly clientRates: Map<string, ByteRate>;
  /** Keeps the store's slots of admitted sessions alive (started by the first admission). */
  readonly renewSlots: () => void;
}

/** A bucket's burst: one second's worth, and at least one whole message. */
function burst(perSecond: number, limits: ResolvedRelayLimits): number {
  return Math.max(perSecond, limits.frameBytes);
}

export class RelaySession {
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
  readonly scrubber: FrameScrubber;
  /** This session's bytes per second. */
  readonly rate: ByteRate;
  /** Its client's bytes per second (shared by the client's sessions in this relay). */
  readonly clientRate: ByteRate;

  constructor(
    private readonly ctx: RelayContext,
    readonly browser: WebSocket,
    readonly client: string,
    readonly origin: string | undefined,
  ) {
    const { limits, scheduler } = ctx;
    this.scrubber = ctx.scrub.stream();
    this.rate = new ByteRate(limits.bytesPerSecond, burst(limits.bytesPerSecond, limits), scheduler.now());
    forgetRefilled(ctx.clientRates, scheduler.now());
    let clientRate = ctx.clientRates.get(client);
    if (clientRate === undefined) {
      clientRate = new ByteRate(limits.clientBytesPerSecond, burst(limits.clientBytesPerSecond, limits), scheduler.now());
      ctx.clientRates.set(client, clientRate);
    }
    clientRate.users++;
    this.clientRate = clientRate;
    browser.on('error', (error: Error & { code?: string }) => {
      // a message over maxPayload: ws closes 1009 itself
      if (error.code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH') this.refused('frameBytes', 1009, `a message over ${limits.frameBytes} bytes`);
    });
    browser.on('message', (data, isBinary) => this.fromBrowser(data, isBinary));
    browser.on('close', (code: number) => this.end(code));
    this.startTimer = scheduler.schedule(() => this.reject('startTimeout', 'no session.start in time'), limits.startTimeoutMs);
  }

  /**
   * Asks the store for one of the client's session slots; the session starts once it has
   * one. A claim the relay gave up on (no answer in `storeTimeoutMs`) must never hold a
   * slot when it lands late: it is released at once (a store on one connection runs that
   * after the claim) and again if its late answer says it took one.
   */
  claim(): void {
    const { store, limits, scheduler, clientCap } = this.ctx;
    const release = (): void => void store.release(this.client, this.id).catch(() => undefined);
    const late = (took: boolean): void => {
      if (took) release();
    };
    within(store.acquire(this.client, this.id, clientCap, SLOT_TTL_MS, scheduler.now()), limits.storeTimeoutMs, scheduler, late).then(
      (ok) => this.admit(ok),
      () => {
        release();
        this.admit('store');
      },
    );
  }

  /** The store gave this session a slot (or not). */
  private admit(ok: boolean | 'store'): void {
    if (this.phase === 'closed') {
      if (ok === true) void this.ctx.store.release(this.client, this.id).catch(() => undefined);
      return;
    }
    if (ok === 'store') return this.closeWith('store', RelayCloseCodes.storeUnavailable, 'budget store unavailable, try again later');
    if (!ok) return this.closeWith('clientSessions', RelayCloseCodes.overBudget, `budget: over ${this.ctx.clientCap} sessions at once for this client`);
    this.admitted = true;
    this.phase = 'starting';
    this.ctx.renewSlots();
    this.ctx.report({ type: 'sessionOpened', client: this.client, origin: this.origin });
    void this.pump();
  }

  fromBrowser(data: RawData, isBinary: boolean): void {
    if (this.phase === 'closed') return;
    const size = byteLength(data);
    const now = this.ctx.scheduler.now();
    const wait = Math.max(this.rate.take(size, now), this.clientRate.take(size, now));
    if (wait > 0 && this.rateTimer === undefined) {
      this.hold('bytesPerSecond');
      this.rateTimer = this.ctx.scheduler.schedule(() => {
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
    this.ctx.report({ type: 'throttled', client: this.client, cause });
  }

  release(cause: 'bytesPerSecond' | 'upstreamBuffered'): void {
    if (!this.holds.delete(cause)) return;
    if (this.holds.size === 0 && this.phase !== 'closed') this.browser.resume();
  }

  checkPressure(): void {
    if (this.towardService > this.ctx.limits.upstreamBufferedBytes) this.hold('upstreamBuffered');
    else if (this.towardService <= this.ctx.limits.upstreamBufferedBytes / 2) this.release('upstreamBuffered');
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
      if (this.text > this.ctx.limits.textPerSession) return this.reject('textPerSession', `text over ${this.ctx.limits.textPerSession} characters in one session`);
      let allowed: boolean;
      try {
        allowed = await within(this.ctx.store.take(`characters:${this.client}`, length, this.ctx.limits.charactersPerMinute, MINUTE_MS, this.ctx.scheduler.now()), this.ctx.limits.storeTimeoutMs, this.ctx.scheduler);
      } catch {
        this.closeWith('store', RelayCloseCodes.storeUnavailable, 'budget store unavailable, try again later');
        return undefined;
      }
      if (!allowed) {
        this.closeWith('characters', RelayCloseCodes.overBudget, `budget: over ${this.ctx.limits.charactersPerMinute} characters per minute for this client`);
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
    const upstream = this.ctx.connectUpstream();
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
      this.closeBrowser(browserCloseCode(code), code === 1006 || code === 1005 ? 'service connection lost' : this.ctx.scrub.reason(reason.toString('utf8')));
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
      if (this.paused && this.unflushed <= this.ctx.limits.bufferedBytes / 2) {
        this.paused = false;
        this.upstream?.resume();
      }
    });
    if (!this.paused && this.unflushed > this.ctx.limits.bufferedBytes) {
      this.paused = true;
      this.upstream?.pause();
    }
  }

  /** Something happened: the idle clock starts again. */
  touch(): void {
    this.idleTimer?.unsubscribe();
    if (this.closed()) return; // a store answer that came after the close
    this.idleTimer = this.ctx.scheduler.schedule(
      () => this.closeWith('idle', RelayCloseCodes.idle, `idle: no text and no audio for ${this.ctx.limits.idleTimeoutMs / 1000} s`),
      this.ctx.limits.idleTimeoutMs,
    );
  }

  /** A `session.error`, then 4400; the service session (if any) is closed. */
  reject(reason: LiveRelayRefusal, message: string): undefined {
    if (this.phase === 'closed') return undefined;
    if (this.browser.readyState === WebSocket.OPEN) this.browser.send(sessionError(message));
    this.closeWith(reason, CloseCodes.rejected, message);
    return undefined;
  }

  closeWith(reason: LiveRelayRefusal, code: number, message: string): void {
    if (this.phase === 'closed') return;
    this.refused(reason, code, message);
    this.closeBrowser(code, message);
  }

  /** Closes the browser (cut off if it does not answer), then ends the session. */
  closeBrowser(code: number, reason: string): void {
    closeThenTerminate(this.browser, code, reason, this.ctx.scheduler);
    this.end(code);
  }

  /** Counts and reports a refusal of this session. */
  private refused(reason: LiveRelayRefusal, code: number, message: string): void {
    this.ctx.report({ type: 'refused', reason, code, message, client: this.client, origin: this.origin });
  }

  /** Frees the slot and closes the service session at once; `code`: how the browser's socket closes. */
  end(code: number): void {
    if (this.phase === 'closed') return;
    this.phase = 'closed';
    if (this.admitted) this.ctx.report({ type: 'sessionClosed', client: this.client, code });
    for (const timer of [this.startTimer, this.idleTimer, this.rateTimer]) timer?.unsubscribe();
    this.inbox = [];
    this.pending = [];
    this.ctx.sessions.delete(this);
    if (this.admitted) void this.ctx.store.release(this.client, this.id).catch(() => undefined);
    this.clientRate.users--;
    forgetRefilled(this.ctx.clientRates, this.ctx.scheduler.now());
    const upstream = this.upstream;
    if (upstream !== undefined) {
      if (this.paused) upstream.resume();
      if (upstream.readyState === WebSocket.OPEN) upstream.close(CloseCodes.normal, 'browser left');
      else if (upstream.readyState === WebSocket.CONNECTING) upstream.terminate();
    }
  }
}
