/**
 * `traceSpeech()`: one OpenTelemetry span per live speech session, fed from the session's
 * events (the operator passes every event through unchanged).
 */
import { asyncScheduler, Observable, type MonoTypeOperatorFunction, type SchedulerLike } from 'rxjs';
import type { Attributes, Span, TracerProvider } from '@opentelemetry/api';
import type { OtelAttributes, TracerProviderLike } from './types.js';
import * as z from 'zod/mini';
import { checkOptions } from '../core/validation.js';
import type { LiveSpeechEvent } from '../live/events.js';
import { loadApi, loadedApi, TRACER_NAME, TRACER_VERSION, type OpenTelemetryApi } from './load.js';
import { SpeechSpanRecorder } from './speechSpan.js';

/** Options of {@link traceSpeech}. */
export interface TraceSpeechOptions {
  /** Where spans go. Default: the global tracer provider (`trace.getTracerProvider()`). */
  tracerProvider?: TracerProviderLike;
  /** Extra attributes of the session span (`{ 'rxvoice.voice_id': 1 }`, ...). */
  attributes?: OtelAttributes;
  /** The service's host, recorded as `server.address` (and `server.port`): a URL or a host name. */
  serverAddress?: string;
  /**
   * Credits one live segment costs, if you know your plan's price: the span then records
   * `rxvoice.credits` (delivered segments times it, segments replayed from a speech cache
   * not counted). The live protocol itself reports no price (the contract leaves prices
   * open). Default: not recorded.
   */
  creditsPerSegment?: number;
  /** Clock of the timings (time to first audio), default `asyncScheduler`; virtual time in tests. */
  scheduler?: SchedulerLike;
}

const OptionsSchema = z.object({
  tracerProvider: z.optional(z.custom<TracerProviderLike>((v) => v !== null && typeof v === 'object' && typeof (v as TracerProviderLike).getTracer === 'function', { error: 'must be a TracerProvider' })),
  attributes: z.optional(z.record(z.string(), z.unknown())),
  serverAddress: z.optional(z.string()),
  creditsPerSegment: z.optional(z.number().check(z.nonnegative())),
  scheduler: z.optional(z.custom<SchedulerLike>((v) => v !== null && typeof v === 'object' && typeof (v as SchedulerLike).now === 'function')),
});

/**
 * Records one span per live speech session, named `rxvoice.speak`, and passes every event
 * through unchanged.
 *
 * <span class="informal">Put it right after `client.speak(...)` (or `speak` of
 * `rxvoice/live`): your APM then shows each session with its segments.</span>
 *
 * The span starts at subscription and ends when the session completes (status OK), errors
 * (status ERROR, the exception recorded, `error.type` its code) or is unsubscribed
 * (`rxvoice.outcome: 'unsubscribed'`). Each segment adds an event `rxvoice.segment`
 * (`rxvoice.segment.id`, `.characters`, `.audio_bytes`, `.first_audio_ms`, `.cached` for a
 * replay from a speech cache), each skip an
 * event `rxvoice.segment.skipped` (`.characters`, `.final`, `.resubmissions`), each reconnect
 * an event `rxvoice.reconnect`. At the end the span holds the totals:
 * `rxvoice.session.id`, `rxvoice.run.id`, `rxvoice.characters`, `rxvoice.segments`,
 * `rxvoice.segments.cached`, `rxvoice.segments.skipped`, `rxvoice.segments.resubmitted`,
 * `rxvoice.reconnects`, `rxvoice.audio_bytes`, `rxvoice.time_to_first_audio_ms` and
 * `rxvoice.credits` (with `creditsPerSegment`).
 *
 * No cost when OpenTelemetry is absent: `@opentelemetry/api` is loaded on the first
 * subscription (that session starts at once all the same, and its span, dated from the
 * subscription, takes the events that came before the import ended); when it cannot be
 * loaded, or no tracer provider records (the API's no-op default), events pass through with
 * no per-event work.
 *
 * ```
 * events: --r--s--a--a--d--D--|
 * output: --r--s--a--a--d--D--|   (one span from subscribe to |)
 * ```
 *
 * ## Example
 * ```ts
 * import { createClient } from 'rxvoice';
 * import { traceSpeech } from 'rxvoice/otel';
 * import { of } from 'rxjs';
 *
 * const client = createClient();
 * of('Hello there.').pipe(client.speak({ voice_id: 1 }), traceSpeech()).subscribe();
 * ```
 *
 * @param options `tracerProvider`, `attributes`, `serverAddress`, `creditsPerSegment`, `scheduler`.
 * @return An operator that records the span and passes the events through.
 * @throws ValidationError for bad options, at once.
 */
export function traceSpeech(options: TraceSpeechOptions = {}): MonoTypeOperatorFunction<LiveSpeechEvent> {
  checkOptions(OptionsSchema, options, 'traceSpeech');
  const scheduler = options.scheduler ?? asyncScheduler;
  /** The session's span and its recorder, or none when no tracer provider records (or OpenTelemetry is absent). */
  const startRecorder = (api: OpenTelemetryApi | null, startedAt: number, startTime: number | undefined): SpeechSpanRecorder | undefined => {
    if (api === null) return undefined;
    const provider = (options.tracerProvider as TracerProvider | undefined) ?? api.trace.getTracerProvider();
    const span: Span = provider.getTracer(TRACER_NAME, TRACER_VERSION).startSpan('rxvoice.speak', {
      kind: api.SpanKind.CLIENT,
      attributes: { ...serverAttributes(options.serverAddress), ...(options.attributes ?? {}) } as Attributes,
      ...(startTime === undefined ? {} : { startTime }),
    });
    if (span.isRecording()) return new SpeechSpanRecorder(api, span, scheduler, options.creditsPerSegment, startedAt);
    span.end();
    return undefined;
  };
  return (source) =>
    new Observable<LiveSpeechEvent>((subscriber) => {
      let recorder: SpeechSpanRecorder | undefined;
      let closed = false;
      // Before `@opentelemetry/api` is loaded (the first subscription of a process), the session
      // starts at once all the same, so that a hot text source loses nothing; its events pass
      // through and are kept with their times, and the span, started as of the subscription,
      // takes them when the module is there.
      let early: Array<{ event: LiveSpeechEvent; at: number; time: number }> | undefined;
      let earlyEnd: { outcome: 'complete' | 'error' | 'unsubscribed'; error: unknown; endTime: number } | undefined;
      const end = (outcome: 'complete' | 'error' | 'unsubscribed', error?: unknown): void => {
        closed = true;
        if (early !== undefined) earlyEnd ??= { outcome, error, endTime: Date.now() };
        else recorder?.end(outcome, error);
      };
      const api = loadedApi();
      if (api !== undefined) recorder = startRecorder(api, scheduler.now(), undefined);
      else {
        early = [];
        const startedAt = scheduler.now();
        const startTime = Date.now();
        void loadApi().then((loaded) => {
          const events = early ?? [];
          early = undefined;
          recorder = startRecorder(loaded, startedAt, startTime);
          for (const { event, at, time } of events) recorder?.event(event, at, time);
          if (earlyEnd !== undefined) recorder?.end(earlyEnd.outcome, earlyEnd.error, earlyEnd.endTime);
        });
      }
      const subscription = source.subscribe({
        next: (event) => {
          if (early !== undefined) early.push({ event, at: scheduler.now(), time: Date.now() });
          else recorder?.event(event);
          subscriber.next(event);
        },
        error: (error: unknown) => {
          end('error', error);
          subscriber.error(error);
        },
        complete: () => {
          end('complete');
          subscriber.complete();
        },
      });
      return () => {
        subscription.unsubscribe();
        if (!closed) end('unsubscribed');
      };
    });
}

/** `server.address` and `server.port` from a URL or a `host:port`, or `server.address` from a host name. */
function serverAttributes(address: string | undefined): OtelAttributes {
  if (address === undefined) return {};
  // `localhost:8080` parses as a URL of scheme `localhost:` with no host: read it as host and port
  // (under a scheme with no default port, so that `:80` or `:443` is kept).
  const url = parsedUrl(address) ?? parsedUrl(`tcp://${address}`);
  if (url === undefined) return { 'server.address': address };
  const port = url.port === '' ? DEFAULT_PORTS[url.protocol] : Number(url.port);
  return port === undefined ? { 'server.address': url.hostname } : { 'server.address': url.hostname, 'server.port': port };
}

/** The port of a URL that names none, by its scheme (as `tracedFetch` records it). */
const DEFAULT_PORTS: Readonly<Record<string, number>> = { 'http:': 80, 'https:': 443, 'ws:': 80, 'wss:': 443 };

/** The URL in `text` when it names a host, else undefined. */
function parsedUrl(text: string): URL | undefined {
  try {
    const url = new URL(text);
    return url.hostname === '' ? undefined : url;
  } catch {
    return undefined;
  }
}
