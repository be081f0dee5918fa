/**
 * `twilioMediaStream`: a phone call over a Twilio Media Streams WebSocket (bidirectional,
 * `<Connect><Stream>`): the caller's audio and keys in, speech out, what was heard back.
 */
import { asyncScheduler, Observable, Subject, type SchedulerLike, type Subscription } from 'rxjs';
import * as z from 'zod/mini';
import { func, positiveMilliseconds, scheduler as schedulerSchema } from '../core/options.js';
import { checkOptions, optionError } from '../core/validation.js';
import type { HeardInput, HeardReport } from '../live/heard.js';
import { CallPlayback, type CallPlaybackEvent } from './call-playback.js';
import { TelephonyError } from './errors.js';
import { decodeMulaw } from './g711.js';
import { clearMessage, fromBase64, markMessage, mediaMessage, parseTwilioMessage, type TwilioStreamStart } from './twilio-messages.js';

/** What the adapter needs of a WebSocket: `ws`'s `WebSocket` and the WHATWG one both fit. */
export interface CallSocketLike {
  /** 1 while open. */
  readonly readyState: number;
  /** Sends one JSON text message. */
  send(data: string): void;
  /** Closes the socket (1000 when `code` is not given). */
  close(code?: number, reason?: string): void;
  /** Listens to `message` (the text in `data`), `close` and `error`. */
  addEventListener(type: 'message' | 'close' | 'error', listener: (event: unknown) => void): void;
  /** Stops listening (the adapter removes its listeners when the call ends). */
  removeEventListener(type: 'message' | 'close' | 'error', listener: (event: unknown) => void): void;
}

/** Options of {@link twilioMediaStream}. */
export interface TwilioMediaStreamOptions {
  /** Paces the media frames (20 ms each) and times the waits; virtual time in tests. Default `asyncScheduler`. */
  scheduler?: SchedulerLike;
  /** Called with the {@link HeardReport} of every `say()` when it ends, is interrupted or unsubscribed, or the call ends. */
  onHeard?: (report: HeardReport) => void;
  /** How long to wait for the `start` message, ms; then `TelephonyError` `'no_start'` and the socket is closed. Default 10000. */
  startTimeoutMs?: number;
  /** After the last frame, how long to wait for the call to echo the marks before ending anyway, ms. Default 5000. */
  markTimeoutMs?: number;
}

/** How a call ended. */
export interface TwilioCallEnd {
  /** `'stop'`: Twilio's stop message; `'closed'`: the socket closed first; `'no_start'`: no start message in time. */
  reason: 'stop' | 'closed' | 'no_start';
}

/** A call on a Media Streams socket (from {@link twilioMediaStream}). */
export interface TwilioCall {
  /** The call's `start` message (stream id, media format, custom parameters); rejects when the call ends first. */
  readonly started: Promise<TwilioStreamStart>;
  /** Resolves once, when the call ends. */
  readonly ended: Promise<TwilioCallEnd>;
  /** The stream id, from the moment the `start` message came (undefined before). */
  readonly streamSid: string | undefined;
  /** The caller's audio, decoded to 16-bit PCM at 8 kHz, one array per `media` message; completes when the call ends. */
  readonly audio$: Observable<Int16Array>;
  /** The keys the caller presses (`'0'`-`'9'`, `'*'`, `'#'`); completes when the call ends. */
  readonly dtmf$: Observable<string>;
  /**
   * Plays speech into the call (the events of a live session asked for `output_format: 'wav'`,
   * ideally `sample_rate: 8000`, or spoken segments; it may be called before `start`, the
   * frames then wait for it): 20 ms frames at real time, a mark after
   * each sentence; emits `segmentSent`, `segmentPlayed`, then `heard` last. Speech that
   * fails (credits gone, the service lost) plays what arrived to its end, then `say()` errors
   * with its error after the report (`reason: 'error'`). Unsubscribing interrupts (sends
   * `clear`). One at a time: a second `say()` while one plays errors with `TelephonyError` `'busy'`.
   */
  say(speech: Observable<HeardInput>): Observable<CallPlaybackEvent>;
  /** Barge-in: sends `clear` and ends the playing `say()` with its heard report. Nothing playing: nothing happens. */
  interrupt(): void;
  /** Closes the socket (normal close); a playing `say()` ends with `'closed'`. */
  close(): void;
}

const OptionsSchema = z.object({
  scheduler: z.optional(schedulerSchema()),
  onHeard: z.optional(func<(report: HeardReport) => void>()),
  startTimeoutMs: z.optional(positiveMilliseconds()),
  markTimeoutMs: z.optional(positiveMilliseconds()),
});

const OPEN = 1;

/**
 * Answers a phone call over a Twilio Media Streams WebSocket.
 *
 * <span class="informal">Twilio's `<Connect><Stream url="wss://...">` opens a WebSocket to
 * your server; hand it here. Speech from a live session plays into the call at real time;
 * the caller's audio and key presses come out as Observables; on barge-in the audio Twilio
 * holds is dropped (`clear`) and you learn what the caller heard.</span>
 *
 * Reads `connected` and `start` (the stream id; the call must be `audio/x-mulaw` at 8 kHz,
 * else `say()` errors with `'media_format'`), `media` (decoded into `audio$`), `dtmf`
 * (`dtmf$`), `mark` (echoes of the marks sent after each sentence: that sentence has played)
 * and `stop` (the call ends: `say()` reports and completes, `audio$` and `dtmf$` complete).
 * Messages that are not JSON or not these are ignored.
 *
 * What was heard: the frames go out at real time, so the seconds sent are the seconds
 * played (to a frame, 20 ms, plus the network's one-way delay), and the echoed marks confirm
 * whole sentences; {@link HeardReport} cuts the text there at a word boundary. It is given
 * to `onHeard` and emitted last by `say()` when the speech has played (`complete: true`), on
 * `interrupt()` or unsubscribe, on `stop`, and when the socket closes (then `say()` errors with
 * `TelephonyError` `'closed'`, after the report). Nothing is left running after any of them:
 * the speech is unsubscribed (its live session closed) and every timer cleared.
 *
 * ## Example
 * ```ts
 * import { WebSocketServer } from 'ws';
 * import { of } from 'rxjs';
 * import { speak } from 'rxvoice/live';
 * import { twilioMediaStream } from 'rxvoice/telephony';
 *
 * const server = new WebSocketServer({ port: 8080, path: '/media' });
 * server.on('connection', (socket) => {
 *   const call = twilioMediaStream(socket, { onHeard: (report) => console.log(report.heard) });
 *   call.dtmf$.subscribe(() => call.interrupt()); // a key press is a barge-in
 *   void call.started.then(() =>
 *     call
 *       .say(of('Hello! How can I help you today?').pipe(
 *         speak({ wsUrl: 'wss://example.com', apiKey: 'key' }, { voice_id: 1, output_format: 'wav', sample_rate: 8000 }),
 *       ))
 *       .subscribe(),
 *   );
 * });
 * ```
 *
 * @param socket The Media Streams WebSocket (`ws` or WHATWG), open.
 * @param options `scheduler`, `onHeard`, `startTimeoutMs`, `markTimeoutMs`.
 * @return The {@link TwilioCall}.
 * @throws {ValidationError} At once, for bad options or a socket without `send`/`addEventListener`.
 */
export function twilioMediaStream(socket: CallSocketLike, options: TwilioMediaStreamOptions = {}): TwilioCall {
  const checked = checkOptions(OptionsSchema, options, 'twilioMediaStream');
  if (socket === null || typeof socket !== 'object' || typeof socket.send !== 'function' || typeof socket.addEventListener !== 'function') {
    throw optionError('twilioMediaStream', ['socket'], 'must be a WebSocket (send, addEventListener)');
  }
  return new MediaStreamCall(socket, {
    scheduler: checked.scheduler ?? asyncScheduler,
    onHeard: checked.onHeard,
    startTimeoutMs: checked.startTimeoutMs ?? 10_000,
    markTimeoutMs: checked.markTimeoutMs ?? 5000,
  });
}

interface Settings {
  scheduler: SchedulerLike;
  onHeard: ((report: HeardReport) => void) | undefined;
  startTimeoutMs: number;
  markTimeoutMs: number;
}

class MediaStreamCall implements TwilioCall {
  readonly started: Promise<TwilioStreamStart>;
  readonly ended: Promise<TwilioCallEnd>;
  private readonly audio = new Subject<Int16Array>();
  private readonly dtmf = new Subject<string>();
  readonly audio$ = this.audio.asObservable();
  readonly dtmf$ = this.dtmf.asObservable();
  private resolveStart!: (start: TwilioStreamStart) => void;
  private rejectStart!: (error: unknown) => void;
  private resolveEnd!: (end: TwilioCallEnd) => void;
  private start: TwilioStreamStart | undefined;
  private playing: CallPlayback | undefined;
  private startTimer: Subscription | undefined;
  private over = false;
  private readonly onMessage = (event: unknown) => this.receive((event as { data?: unknown } | null)?.data);
  private readonly onClose = () => this.end('closed');

  constructor(
    private readonly socket: CallSocketLike,
    private readonly settings: Settings,
  ) {
    this.started = new Promise((resolve, reject) => {
      this.resolveStart = resolve;
      this.rejectStart = reject;
    });
    this.started.catch(() => undefined);
    this.ended = new Promise((resolve) => (this.resolveEnd = resolve));
    socket.addEventListener('message', this.onMessage);
    socket.addEventListener('close', this.onClose);
    socket.addEventListener('error', this.onClose);
    this.startTimer = settings.scheduler.schedule(() => this.end('no_start'), settings.startTimeoutMs);
    if (socket.readyState > OPEN) this.end('closed');
  }

  say(speech: Observable<HeardInput>): Observable<CallPlaybackEvent> {
    return new Observable<CallPlaybackEvent>((subscriber) => {
      if (this.over) {
        subscriber.error(new TelephonyError('closed', 'The call has ended: nothing can be said into it.'));
        return undefined;
      }
      if (this.playing !== undefined) {
        subscriber.error(new TelephonyError('busy', 'The call is already saying something: interrupt it or wait for its end.'));
        return undefined;
      }
      const formatError = this.start && this.mediaFormatError(this.start);
      if (formatError) {
        subscriber.error(formatError);
        return undefined;
      }
      const playback: CallPlayback = new CallPlayback(
        {
          send: (message) => this.send(message),
          media: (bytes) => mediaMessage(this.start?.streamSid ?? '', bytes),
          mark: (name) => markMessage(this.start?.streamSid ?? '', name),
          clear: () => clearMessage(this.start?.streamSid ?? ''),
          scheduler: this.settings.scheduler,
          markTimeoutMs: this.settings.markTimeoutMs,
          onHeard: this.settings.onHeard,
          released: () => {
            if (this.playing === playback) this.playing = undefined;
          },
        },
        subscriber,
      );
      this.playing = playback;
      playback.begin(speech);
      if (this.start !== undefined && this.playing === playback) playback.streamStarted();
      return () => playback.teardown();
    });
  }

  get streamSid(): string | undefined {
    return this.start?.streamSid;
  }

  interrupt(): void {
    this.playing?.interrupt();
  }

  close(): void {
    if (this.socket.readyState <= OPEN) this.socket.close(1000, 'call ended');
    this.end('closed');
  }

  private send(message: string): boolean {
    if (this.over || this.socket.readyState !== OPEN) return false;
    this.socket.send(message);
    return true;
  }

  private receive(data: unknown): void {
    const message = parseTwilioMessage(data);
    if (message === undefined || this.over) return;
    switch (message.event) {
      case 'start': {
        const { start, streamSid } = message;
        this.start = {
          streamSid,
          callSid: start.callSid,
          accountSid: start.accountSid,
          customParameters: start.customParameters ?? {},
          mediaFormat: start.mediaFormat,
        };
        this.startTimer?.unsubscribe();
        this.resolveStart(this.start);
        const formatError = this.mediaFormatError(this.start);
        if (formatError) this.playing?.callEnded('closed', formatError);
        else this.playing?.streamStarted();
        return;
      }
      case 'media': {
        const bytes = fromBase64(message.media.payload);
        if (bytes !== undefined) this.audio.next(decodeMulaw(bytes)); // a payload that is no base64 is ignored, as any malformed message
        return;
      }
      case 'dtmf':
        this.dtmf.next(message.dtmf.digit);
        return;
      case 'mark':
        this.playing?.onMark(message.mark.name);
        return;
      case 'stop':
        this.end('stop');
        return;
      default:
        return;
    }
  }

  private mediaFormatError(start: TwilioStreamStart): TelephonyError | undefined {
    const { encoding, sampleRate, channels } = start.mediaFormat;
    if (encoding === 'audio/x-mulaw' && sampleRate === 8000 && channels === 1) return undefined;
    return new TelephonyError('media_format', `The call's media is ${encoding} at ${sampleRate} Hz, ${channels} channel(s): rxvoice plays audio/x-mulaw at 8000 Hz, mono.`);
  }

  /** The call is over: the playing speech reports, the streams complete, the listeners go. */
  private end(reason: TwilioCallEnd['reason']): void {
    if (this.over) return;
    this.playing?.callEnded(reason === 'stop' ? 'stopped' : 'closed');
    this.over = true;
    this.startTimer?.unsubscribe();
    this.socket.removeEventListener('message', this.onMessage);
    this.socket.removeEventListener('close', this.onClose);
    this.socket.removeEventListener('error', this.onClose);
    if (reason === 'no_start' && this.socket.readyState <= OPEN) this.socket.close(1000, 'no start message');
    this.rejectStart(new TelephonyError(reason === 'no_start' ? 'no_start' : 'closed', reason === 'no_start' ? 'No start message came from the call in time.' : 'The call ended before its start message.'));
    this.audio.complete();
    this.dtmf.complete();
    this.resolveEnd({ reason });
  }
}
