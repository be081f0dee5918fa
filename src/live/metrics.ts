/**
 * Timing metrics of a live session as data: what `speak`'s `metrics` option receives.
 *
 * Per segment, when it is delivered (or skipped): the moment the text that completed it
 * was pushed, the time from that text to the segment's first audio byte, and to its
 * last (`segment.done`). Once, when the session ends (completes, errors or is
 * unsubscribed): connect time, time to `session.ready`, first text and first audio, and
 * totals. All times are ms on the session's scheduler, from the subscription.
 *
 * Which pushed text completed a segment is found by counting characters other than
 * whitespace: the segments' texts, in order, cover the pushed text in order. After a
 * reconnect (the unspoken text is sent again) the count restarts from the text sent
 * again.
 */
import type { Observer, SchedulerLike } from 'rxjs';
import type { LiveSpeechEvent } from './events.js';

/** One segment, reported when it is delivered (`segment.done`) or skipped. */
export interface SegmentMetrics {
  type: 'segment';
  segment_id: number;
  /** When the text that completed this segment was pushed, ms from the subscription. */
  textAtMs: number;
  /** From that text to the segment's first audio byte, ms (undefined when skipped or silent). */
  firstAudioMs: number | undefined;
  /** From that text to the segment's end (`segment.done`, or the skip), ms: synthesis and delivery. */
  synthesisMs: number;
  /** Audio bytes of the segment. */
  audioBytes: number;
  /** The service skipped it (synthesis failed after its retries). */
  skipped: boolean;
}

/** The whole session, reported once when it ends. */
export interface SessionMetrics {
  type: 'session';
  /** Subscription to the WebSocket open, ms (about 0 for a warm session); undefined if it never opened. */
  connectMs: number | undefined;
  /** Subscription to `session.ready`, ms (connect, upgrade and the start round trip). */
  readyMs: number | undefined;
  /** Subscription to the first text pushed, ms. */
  firstTextMs: number | undefined;
  /** Subscription to the first audio byte, ms. */
  firstAudioMs: number | undefined;
  /** First text pushed to the first audio byte, ms: the delay a listener feels once the text exists. */
  textToFirstAudioMs: number | undefined;
  /** Segments delivered. */
  segments: number;
  /** Segments skipped. */
  skipped: number;
  /** Audio bytes received. */
  audioBytes: number;
  /** Reconnects made. */
  reconnects: number;
  /** Subscription to the end (complete, error or unsubscribe), ms. */
  totalMs: number;
  /** How the session ended. */
  outcome: 'complete' | 'error' | 'unsubscribed';
}

/** What the `metrics` option of `speak` receives. */
export type SpeechMetrics = SegmentMetrics | SessionMetrics;

/** The `metrics` option: an observer (`next` per report, `complete` after the session report) or a function. */
export type SpeechMetricsObserver = Partial<Observer<SpeechMetrics>> | ((metrics: SpeechMetrics) => void);

const nonSpace = (text: string): number => text.replace(/\s+/gu, '').length;

/** Records one session's timings; the session calls it at each step. */
export class SpeechMetricsRecorder {
  readonly #scheduler: SchedulerLike;
  readonly #observer: Partial<Observer<SpeechMetrics>>;
  readonly #startedAt: number;
  #openedAt: number | undefined;
  #readyAt: number | undefined;
  #firstTextAt: number | undefined;
  #firstAudioAt: number | undefined;
  /** Pushed text: cumulative non-whitespace characters after each push, and when. */
  readonly #pushes: { upTo: number; at: number }[] = [];
  #pushed = 0;
  /** Non-whitespace characters covered by the segments so far. */
  #covered = 0;
  #segment: { id: number; textAt: number; firstAudioAt: number | undefined; bytes: number } | undefined;
  #segments = 0;
  #skipped = 0;
  #audioBytes = 0;
  #reconnects = 0;
  #ended = false;

  constructor(observer: SpeechMetricsObserver, scheduler: SchedulerLike) {
    this.#observer = typeof observer === 'function' ? { next: observer } : observer;
    this.#scheduler = scheduler;
    this.#startedAt = scheduler.now();
  }

  #now(): number {
    return this.#scheduler.now() - this.#startedAt;
  }

  /** What the session's events say: it is ready, reconnected, a segment's start, audio and end, a skipped one. */
  event(event: LiveSpeechEvent): void {
    switch (event.type) {
      case 'ready':
        return this.ready();
      case 'reconnected':
        return this.reconnected(event.resent);
      case 'segmentStart':
        return this.segmentStarted(event.segment_id, event.text);
      case 'audio':
        return this.audio(event.bytes.byteLength);
      case 'segmentDone':
        return this.segmentDone();
      case 'segmentSkipped':
        return this.segmentSkipped(event.segment_id, event.text);
    }
  }

  opened(): void {
    this.#openedAt ??= this.#now();
  }

  ready(): void {
    this.#readyAt ??= this.#now();
  }

  /** A reconnect: the text not yet spoken is sent again; segments cover it from here. */
  reconnected(resent: string): void {
    this.#reconnects++;
    this.#covered = this.#pushed - nonSpace(resent);
  }

  textPushed(text: string): void {
    const at = this.#now();
    this.#firstTextAt ??= at;
    this.#pushed += nonSpace(text);
    this.#pushes.push({ upTo: this.#pushed, at });
  }

  segmentStarted(id: number, text: string): void {
    this.#segment = { id, textAt: this.#textCompleting(text), firstAudioAt: undefined, bytes: 0 };
  }

  audio(bytes: number): void {
    const at = this.#now();
    this.#firstAudioAt ??= at;
    this.#audioBytes += bytes;
    if (this.#segment) {
      this.#segment.firstAudioAt ??= at;
      this.#segment.bytes += bytes;
    }
  }

  segmentDone(): void {
    const segment = this.#segment;
    this.#segment = undefined;
    if (!segment) return;
    this.#segments++;
    this.#report(segment.id, segment.textAt, segment.firstAudioAt, segment.bytes, false);
  }

  segmentSkipped(id: number, text: string): void {
    this.#segment = undefined;
    this.#skipped++;
    this.#report(id, this.#textCompleting(text), undefined, 0, true);
  }

  /** The session ended: the session report, then `complete`. Once. */
  end(outcome: SessionMetrics['outcome']): void {
    if (this.#ended) return;
    this.#ended = true;
    const since = (at: number | undefined, from: number | undefined): number | undefined =>
      at === undefined || from === undefined ? undefined : at - from;
    this.#observer.next?.({
      type: 'session',
      connectMs: this.#openedAt,
      readyMs: this.#readyAt,
      firstTextMs: this.#firstTextAt,
      firstAudioMs: this.#firstAudioAt,
      textToFirstAudioMs: since(this.#firstAudioAt, this.#firstTextAt),
      segments: this.#segments,
      skipped: this.#skipped,
      audioBytes: this.#audioBytes,
      reconnects: this.#reconnects,
      totalMs: this.#now(),
      outcome,
    });
    this.#observer.complete?.();
  }

  /** When the pushed text that this segment's text ends in was pushed. */
  #textCompleting(text: string): number {
    this.#covered += nonSpace(text);
    const push = this.#pushes.find((p) => p.upTo >= this.#covered) ?? this.#pushes.at(-1);
    // Earlier pushes are no longer needed.
    while (this.#pushes.length > 1 && (this.#pushes[0] as { upTo: number }).upTo < this.#covered) this.#pushes.shift();
    return push?.at ?? this.#now();
  }

  #report(id: number, textAt: number, firstAudioAt: number | undefined, bytes: number, skipped: boolean): void {
    if (this.#ended) return;
    this.#observer.next?.({
      type: 'segment',
      segment_id: id,
      textAtMs: textAt,
      firstAudioMs: firstAudioAt === undefined ? undefined : firstAudioAt - textAt,
      synthesisMs: this.#now() - textAt,
      audioBytes: bytes,
      skipped,
    });
  }
}
