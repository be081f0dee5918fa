/**
 * The deprecated streaming translation (POST /translation/stream) as Observables.
 *
 * The answer is `text/event-stream`: each event's `data` is the next piece of the
 * translated text; a failure ends the stream with an event `error` whose data is the
 * service's message. The bytes go through the SSE parser (`createSseParser`), so chunks may split lines and
 * characters anywhere.
 *
 * Two shapes:
 * - `translateStream(...)`: `Observable<string>`, the pieces; the `X-Credits-Required`
 *   header reaches the `onCredits` option.
 * - `translateStreamEvents(...)`: `Observable<TranslationStreamEvent>`, one
 *   `{ type: 'meta', creditsRequired }` first, then `{ type: 'text', text }` per piece.
 */
import { Observable, filter, map, tap } from 'rxjs';
import { createSseParser } from '../text/sse.js';
import { ProtocolError, RxVoiceError } from '../core/errors.js';
import type { CallOptions, HttpTransport } from './request.js';
import { routes } from '../core/routes.js';
import { optionError } from '../core/validation.js';
import { TranslationStreamRequestSchema, type TranslationStreamRequest } from '../core/schemas.js';
import { headerNumber, lazily, streamedBody, warnNumericLanguage } from './shared.js';

/**
 * A stream ended by the service with an `error` event (code `stream`). Carries the
 * service's message and the text received before the failure.
 */
export class StreamError extends RxVoiceError {
  override name = 'StreamError';
  /** The service's message (the data of the `error` event). */
  readonly serviceMessage: string;
  /** Text received before the failure (the pieces joined). */
  readonly received: string;
  readonly endpoint: string;
  constructor(endpoint: string, serviceMessage: string, received: string) {
    super('stream', `${endpoint}: the stream failed: ${serviceMessage}`);
    this.serviceMessage = serviceMessage;
    this.received = received;
    this.endpoint = endpoint;
  }
}

/** What `translateStreamEvents` emits. */
export type TranslationStreamEvent =
  | { type: 'meta'; creditsRequired: number | undefined }
  | { type: 'text'; text: string };

/** Options of the translation stream. */
export interface TranslateStreamOptions extends CallOptions {
  /** Called once with `X-Credits-Required` (undefined when the header is missing), before the first piece. */
  onCredits?: (creditsRequired: number | undefined) => void;
}

const ENDPOINT = `POST ${routes.translationStream}`;

/**
 * The deprecated streaming translation as events: `{ type: 'meta', creditsRequired }`
 * once the answer's headers arrive, then `{ type: 'text', text }` per translated piece.
 *
 * The request is validated with `TranslationStreamRequestSchema` first: invalid input
 * errors with `ValidationError` (`source: 'local'`) and nothing is sent. HTTP failures
 * map to the error tree (401 `AuthenticationError`, 422 `ValidationError` with the
 * service's detail, 429 `RateLimitError`, other statuses `ApiError`, network
 * `ConnectionError`); an answer that is not `text/event-stream` errors with
 * `ProtocolError`; an `error` event ends the stream with {@link StreamError}. Only the
 * attempt before the answer is retried (by the transport's rules for creation calls).
 * Unsubscribing aborts the request.
 *
 * @deprecated The service deprecates POST /translation/stream; use `client.translate()`
 * (POST /translation, polled), which gives the same text.
 */
export function translateStreamEvents(
  transport: HttpTransport,
  request: TranslationStreamRequest,
  options: CallOptions = {},
): Observable<TranslationStreamEvent> {
  return lazily(() => {
    const body = transport.validate(TranslationStreamRequestSchema, request, ENDPOINT);
    transport.warnOnce(
      'translateStream',
      'rxvoice: translateStream() (POST /translation/stream) is deprecated by the service; use client.translate() (POST /translation), which gives the same text.',
    );
    warnNumericLanguage(transport, body as Record<string, unknown>);
    return transport.exchange(
      {
        method: 'POST',
        path: routes.translationStream,
        json: body,
        kind: 'creation',
        endpoint: ENDPOINT,
        stream: true,
        accept: 'text/event-stream',
        signal: options.signal,
      },
      (response) =>
        new Observable<TranslationStreamEvent>((subscriber) => {
          const contentType = response.headers.get('content-type');
          if (contentType !== null && !/^\s*text\/event-stream\b/i.test(contentType)) {
            subscriber.error(
              new ProtocolError(`${ENDPOINT} answered ${contentType.slice(0, 100)} instead of text/event-stream`),
            );
            return undefined;
          }
          subscriber.next({ type: 'meta', creditsRequired: headerNumber(response, 'x-credits-required') });
          const received: string[] = [];
          const parser = createSseParser({
            onEvent(event) {
              if (event.event === 'error') {
                subscriber.error(new StreamError(ENDPOINT, transport.redact(event.data), received.join('')));
              } else if (event.event === 'message') {
                received.push(event.data);
                subscriber.next({ type: 'text', text: event.data });
              }
              // Events of other types are not part of the contract: ignored.
            },
          });
          // `feed`/`end` throw SseError on a line or event over the parser's limits: `tap`
          // turns that into an error of the stream.
          return streamedBody(transport, response, ENDPOINT, () => received.join(''))
            .pipe(tap({ next: (chunk) => parser.feed(chunk), complete: () => parser.end() }))
            .subscribe({ error: (error: unknown) => subscriber.error(error), complete: () => subscriber.complete() });
        }),
    );
  });
}

/**
 * The deprecated streaming translation: the translated text, piece by piece, as it
 * arrives (POST /translation/stream).
 *
 * <span class="informal">Pieces come as the service translates, so speech can start
 * before the translation ends (see `translateThenSpeak`).</span>
 *
 * ```text
 * answer:          -[headers]-'Hé'-'llö '-'wörld'-|
 * translateStream: -----------'Hé'-'llö '-'wörld'-|
 * ```
 *
 * Joined, the pieces are the same text `client.translate()` (the polled task) gives for
 * the same request (`texts: [text]`). The `X-Credits-Required` header goes to
 * `onCredits`; for it as a value use {@link translateStreamEvents}. Errors are those of
 * {@link translateStreamEvents}: local validation (nothing sent), mapped HTTP errors, and
 * {@link StreamError} (with the service's message and the text received so far) when
 * the service ends the stream with an `error` event. Unsubscribing aborts the request.
 * The first subscription warns once that the endpoint is deprecated.
 *
 * ## Example
 * ```ts
 * client
 *   .translateStream({ text: 'Hello world', source_language: 'en-us', target_language: 'de-de' })
 *   .subscribe((piece) => process.stdout.write(piece));
 * ```
 *
 * @deprecated The service deprecates POST /translation/stream; use `client.translate()`
 * (POST /translation, polled), which gives the same text.
 * @param transport The client's HTTP transport.
 * @param request The translation: `text`, `source_language`, `target_language`, ...
 * @param options `signal` and `onCredits`.
 * @return An Observable of the translated pieces.
 * @throws {ValidationError} At once, when `onCredits` is given and is not a function.
 */
export function translateStream(
  transport: HttpTransport,
  request: TranslationStreamRequest,
  options: TranslateStreamOptions = {},
): Observable<string> {
  const { onCredits, ...callOptions } = options;
  // before anything is sent: a bad hook would fail only once the paid stream had started
  if (onCredits !== undefined && typeof onCredits !== 'function') throw optionError(`POST ${routes.translationStream}`, ['onCredits'], 'must be a function', 'callable_type');
  return translateStreamEvents(transport, request, callOptions).pipe(
    tap((event) => {
      if (event.type === 'meta') onCredits?.(event.creditsRequired);
    }),
    filter((event): event is { type: 'text'; text: string } => event.type === 'text'),
    map((event) => event.text),
  );
}
