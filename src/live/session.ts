/**
 * The live speech session as an RxJS operator: text in, `LiveSpeechEvent`s out.
 *
 * `speak` resolves (and checks) its options at once (`options.ts`); each subscription is
 * one `LiveSession` (`live-session.ts`), where the socket, the frames, the timeouts and the
 * endings are.
 */
import { Observable, type OperatorFunction, type Unsubscribable } from 'rxjs';
import { LiveSessionError, type ValidationError } from '../core/errors.js';
import type { LiveSpeechEvent } from './events.js';
import { LiveSession } from './live-session.js';
import { resolveSpeak, type LiveConnection, type SpeakOptions } from './options.js';
import { sessionCodeLoad } from './features.js';
import { startWhenLoaded } from './load-then-start.js';

// The options moved to options.ts: their names stay importable from here.
export {
  DEFAULT_CLOSE_GRACE_MS,
  DEFAULT_LIVE_MAX_PAYLOAD,
  DEFAULT_LIVE_OUTPUT_FORMAT,
  DEFAULT_RESPONSE_TIMEOUT_MS,
  PROGRESS_AUDIO_SECONDS,
  sessionPlan,
  type LiveConnection,
  type ReconnectOptions,
  type SessionPlan,
  type SpeakOptions,
  type WebSocketConstructorLike,
  type WebSocketLike,
} from './options.js';

// ---------------------------------------------------------------------------
// The operator
// ---------------------------------------------------------------------------

/**
 * Speaks a stream of text over one live session and emits what the service sends back.
 *
 * <span class="informal">Text in (tokens, sentences, anything), ordered speech events out:
 * `ready`, then per segment `segmentStart`, `audio`..., `segmentDone` (or `segmentSkipped`),
 * and `done`.</span>
 *
 * Bad options throw a {@link ValidationError} at once, when `speak` is called (nothing
 * is sent, no connection made). Subscribing opens the WebSocket, sends `session.start` and subscribes to the
 * text source at once (so that an LLM starts producing while the socket connects). Text
 * that arrives before `session.ready` is buffered and sent, in order, right after it.
 * Text goes out in `text.chunk`s as it comes, except that a chunk never ends just after a
 * stop that is not certain to end a sentence (`clientBoundaries`, on by default: `"See Dr."`
 * waits for the next token, at most `boundaryHoldMs`, with the words of its sentence not yet
 * sent, so that a sentence end goes out as one chunk); with `clientBoundaries: false` each
 * non-empty string becomes one `text.chunk` (empty strings are skipped). When the text source completes,
 * `text.done` is sent; the output completes after `session.done` and a clean close.
 *
 * ```
 * text:   --a--b------c--|
 * speak:  r-----s-aa-d-----s-a-d-(D|)
 * ```
 * (r = ready, s = segmentStart, a = audio, d = segmentDone, D = done)
 *
 * Errors: every error of a session is a {@link LiveSessionError} carrying `unspoken`
 * (the text pushed but not yet delivered as audio, in order, leading whitespace
 * trimmed; text of skipped segments is not in it, it was reported on its
 * `segmentSkipped` event) and `closeCode` when a close caused it; its `code` says what
 * happened:
 * - close 4401: `'authentication'`; 4400: `'session_rejected'` (a `SessionRejectedError`,
 *   message of the `session.error`); 4402: `'credits_exhausted'` (a `CreditsExhaustedError`);
 * - a `session.error` then a close with another code (1011, ...): `'session_error'`, the
 *   service's message in the error's; retryable only for 1001, 1012, 1013, 4408 and 4429
 *   (going away, restarting, try again later, idle, too many sessions);
 * - any other unclean close (1006, ...), or a clean close before `session.done` with
 *   text still unspoken: `'connection'`, with `closeCode` and `reason` (retryable). A
 *   connection lost after the text source completed and every text was delivered
 *   completes normally instead (nothing is missing; no `done` event then);
 * - a frame that breaks the protocol (bad JSON, unknown frame, audio outside a segment,
 *   an audio frame over 64 KiB, segment ids out of order (a session's segments are
 *   numbered 0, 1, 2, ...; any other id means a segment is missing), a message over `maxPayload`,
 *   a WebSocket-level violation, `session.done` while text is still unspoken or before `text.done`):
 *   `'protocol'`, and the socket is closed (1002) and cut off;
 * - no `session.ready` within `readyTimeoutMs`, or, while text waits to be spoken, no
 *   progress for `responseTimeoutMs` (15 s by default; a JSON frame or 0.25 s of audio is
 *   progress, a trickle of tiny frames is not): `'timeout'` (retryable, so
 *   `reconnect` treats it as a drop); once the source completed and every text was
 *   delivered, no `session.done` or close for `responseTimeoutMs` completes normally
 *   (the socket closed: nothing is missing);
 * - the text source errors: the socket is closed and the output errors with
 *   `'text_source'`, the source's own error (unchanged) as `cause`;
 * - in a browser bundle, code the session loads when it starts (a language's sentence
 *   rules, the `metrics`, the `stall` fallback, the `reconnect`; the text waits meanwhile) fails to load:
 *   `'connection'` (retryable: a later subscription loads it again), before any socket.
 *
 * Unsubscribing (e.g. `takeUntil(userStartedTalking$)` for barge-in) closes the socket
 * at once with 1000, unsubscribes the text source and clears every timer; nothing more
 * is emitted. A server that does not answer the close frame is cut off after
 * `closeGraceMs` (1 s by default; `ws` only, a browser closes on its own terms).
 *
 * Reconnect (option `reconnect`, off by default): after an abnormal close (code
 * `'connection'` or a ready timeout, never 4400/4401/4402), a new session is opened
 * after an exponential backoff with jitter (`baseDelayMs` doubling up to `maxDelayMs`,
 * each delay drawn from its upper half, through `scheduler`); once it is ready a
 * `reconnected` event is emitted (no second `ready`),
 * and exactly the text not yet delivered is sent again, in order, as one `text.chunk`
 * (which text a segment covered is decided from the text sent, by the contract's
 * segmentation rule, never from the service's wording of it: a `segmentMismatch` event
 * reports a segment whose reported text differs)
 * (then `text.done` again if it had been sent); new text then flows as before. Text
 * pushed during the outage is kept and sent with it. `maxAttempts` counts attempts in a
 * row: a delivered segment resets the count. Segments already delivered are not spoken
 * twice. The segment that was receiving audio when the connection dropped is abandoned: its partial audio
 * was emitted but no `segmentDone` follows; its text is spoken again as a later segment.
 * `concatSegments()` drops such partial segments. The server numbers the segments of a
 * new session from 0 again; rxvoice shifts them so that the `segment_id`s the consumer
 * sees keep increasing across reconnects (they may jump over an abandoned id).
 *
 * The API key goes in the `x-api-key` header, or, for a browser-style WebSocket
 * constructor (no headers), in the `api_key` query parameter.
 *
 * ## Example
 * ```ts
 * tokens$.pipe(
 *   speak({ wsUrl, apiKey }, { voice_id: 1, language: 'en-us', word_timestamps: true }),
 *   takeUntil(userStartedTalking$),
 *   concatSegments(),
 * ).subscribe((segment) => play(segment.audio));
 * ```
 *
 * @param connection Where to connect: `wsUrl`, `apiKey` (left out through `rxvoice/relay`), optional WebSocket constructor.
 * @param options The `session.start` configuration (`voice_id` required; `output_format`
 * defaults to `'wav'` here, the service's default is mp3) and client options
 * (`reconnect`, `scheduler`, `readyTimeoutMs`, `maxPayload`, `responseTimeoutMs`, `closeGraceMs`).
 * @return A function that returns an Observable of {@link LiveSpeechEvent}s for a text
 * source.
 * @throws {ValidationError} At once, for bad options or a `wsUrl` that is not a ws(s) address.
 */
export function speak(connection: LiveConnection, options: SpeakOptions): OperatorFunction<string, LiveSpeechEvent> {
  const resolved = resolveSpeak(connection, options);
  const run: OperatorFunction<string, LiveSpeechEvent> = (text$) =>
    new Observable<LiveSpeechEvent>((subscriber) => {
      const session = new LiveSession(resolved, subscriber, connection.apiKey ?? '');
      session.start(text$);
      return new Teardown(session);
    });

  // In a browser page, the code the session needs and the page has not loaded yet (a
  // language's sentence rules, the metrics, the stall fallback, the reconnect) is loaded first, the text
  // waiting (features.ts).
  return (text$) => startWhenLoaded(sessionCodeLoad(resolved), text$, run, codeLoadError);
}

/** Code the session needed did not load (a page offline): retryable, nothing sent, the text held is unspoken. */
function codeLoadError(cause: unknown, held: string): LiveSessionError {
  return new LiveSessionError('connection', `Could not load the live session's code: ${cause instanceof Error ? cause.message : String(cause)}`, { cause, unspoken: held.replace(/^\s+/, '') });
}

/**
 * The subscription's teardown: stops the session (an object with one private field, where a
 * closure and its context were). The session is in a private field: `util.inspect` of the
 * subscription must not reach the session's socket (its headers hold the key).
 */
class Teardown implements Unsubscribable {
  readonly #session: LiveSession;

  constructor(session: LiveSession) {
    this.#session = session;
  }

  unsubscribe(): void {
    this.#session.stop();
  }
}
