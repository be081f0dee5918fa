/**
 * What one `rxvoice.speak` span records, fed event by event (see `traceSpeech`). Kept
 * apart from the operator so the operator reads as wiring.
 */
import type { SchedulerLike } from 'rxjs';
import type { Attributes, Span } from '@opentelemetry/api';
import type { LiveSpeechEvent } from '../live/events.js';
import type { OpenTelemetryApi } from './load.js';

const nonSpace = (text: string): number => text.replace(/\s+/gu, '').length;

/** The error's `error.type`: its stable `code` when it has one (rxvoice errors), else its class name. */
export function errorType(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && code !== '') return code;
  const name = (error as { name?: unknown } | null)?.name;
  return typeof name === 'string' && name !== '' ? name : '_OTHER';
}

/** Records the events of one session on its span; `end` once. */
export class SpeechSpanRecorder {
  readonly #api: OpenTelemetryApi;
  readonly #span: Span;
  readonly #scheduler: SchedulerLike;
  readonly #creditsPerSegment: number | undefined;
  readonly #startedAt: number;
  #firstAudioAt: number | undefined;
  #segment: { id: number; characters: number; startedAt: number; firstAudioAt: number | undefined; bytes: number; cached: boolean } | undefined;
  #characters = 0;
  #segments = 0;
  /** Of `#segments`, those replayed from a speech cache (nothing paid). */
  #cached = 0;
  #skipped = 0;
  #resubmitted = 0;
  #reconnects = 0;
  #audioBytes = 0;
  #ended = false;

  /** `startedAt`: when the session began, on `scheduler`'s clock (default: now). */
  constructor(api: OpenTelemetryApi, span: Span, scheduler: SchedulerLike, creditsPerSegment: number | undefined, startedAt = scheduler.now()) {
    this.#api = api;
    this.#span = span;
    this.#scheduler = scheduler;
    this.#creditsPerSegment = creditsPerSegment;
    this.#startedAt = startedAt;
  }

  /**
   * Records `event`, which came at `now` on the scheduler's clock (default: now); `time`
   * (epoch ms) dates its span event when it is recorded later than it came (default: now).
   */
  event(event: LiveSpeechEvent, now = this.#scheduler.now(), time?: number): void {
    switch (event.type) {
      case 'ready':
        // A cache's own ready (rxvoice/cache, all sentences replayed so far) names no service session.
        if (event.session_id !== 'cache') this.#span.setAttributes({ 'rxvoice.session.id': event.session_id, 'rxvoice.run.id': event.run_id });
        return;
      case 'segmentStart':
        this.#segment = { id: event.segment_id, characters: nonSpace(event.text), startedAt: now, firstAudioAt: undefined, bytes: 0, cached: event.cached === true };
        return;
      case 'audio':
        this.#firstAudioAt ??= now;
        this.#audioBytes += event.bytes.byteLength;
        if (this.#segment) {
          this.#segment.firstAudioAt ??= now;
          this.#segment.bytes += event.bytes.byteLength;
        }
        return;
      case 'segmentDone': {
        const segment = this.#segment;
        this.#segment = undefined;
        this.#segments++;
        if (!segment) return;
        this.#characters += segment.characters;
        const attributes: Attributes = {
          'rxvoice.segment.id': segment.id,
          'rxvoice.segment.characters': segment.characters,
          'rxvoice.segment.audio_bytes': segment.bytes,
        };
        if (segment.firstAudioAt !== undefined) attributes['rxvoice.segment.first_audio_ms'] = segment.firstAudioAt - segment.startedAt;
        if (segment.cached) {
          this.#cached++;
          attributes['rxvoice.segment.cached'] = true;
        }
        this.#span.addEvent('rxvoice.segment', attributes, time);
        return;
      }
      case 'segmentSkipped': {
        this.#segment = undefined;
        this.#skipped++;
        if (event.final === false) this.#resubmitted++;
        const attributes: Attributes = { 'rxvoice.segment.id': event.segment_id, 'rxvoice.segment.characters': nonSpace(event.text) };
        if (event.final !== undefined) attributes['rxvoice.segment.final'] = event.final;
        if (event.resubmissions !== undefined) attributes['rxvoice.segment.resubmissions'] = event.resubmissions;
        this.#span.addEvent('rxvoice.segment.skipped', attributes, time);
        return;
      }
      case 'reconnected':
        this.#reconnects++;
        this.#span.addEvent('rxvoice.reconnect', { 'rxvoice.reconnect.attempt': event.attempt, 'rxvoice.reconnect.resent_characters': nonSpace(event.resent) }, time);
        this.#span.setAttributes({ 'rxvoice.session.id': event.session_id, 'rxvoice.run.id': event.run_id });
        return;
      case 'segmentMismatch':
      case 'done':
        return;
    }
  }

  /** The totals, the status and the end of the span (at `endTime`, epoch ms, default now); only the first call counts. */
  end(outcome: 'complete' | 'error' | 'unsubscribed', error?: unknown, endTime?: number): void {
    if (this.#ended) return;
    this.#ended = true;
    const attributes: Attributes = {
      'rxvoice.outcome': outcome,
      'rxvoice.characters': this.#characters,
      'rxvoice.segments': this.#segments,
      'rxvoice.segments.cached': this.#cached,
      'rxvoice.segments.skipped': this.#skipped,
      'rxvoice.segments.resubmitted': this.#resubmitted,
      'rxvoice.reconnects': this.#reconnects,
      'rxvoice.audio_bytes': this.#audioBytes,
    };
    if (this.#firstAudioAt !== undefined) attributes['rxvoice.time_to_first_audio_ms'] = this.#firstAudioAt - this.#startedAt;
    if (this.#creditsPerSegment !== undefined) attributes['rxvoice.credits'] = this.#creditsPerSegment * (this.#segments - this.#cached); // a cache hit costs nothing
    this.#span.setAttributes(attributes);
    if (outcome === 'error') {
      this.#span.setAttribute('error.type', errorType(error));
      if (error instanceof Error) this.#span.recordException(error, endTime);
      this.#span.setStatus({ code: this.#api.SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
    } else if (outcome === 'complete') {
      this.#span.setStatus({ code: this.#api.SpanStatusCode.OK });
    }
    this.#span.end(endTime);
  }
}
