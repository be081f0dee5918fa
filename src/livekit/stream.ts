/**
 * `TTS.stream()`: text pushed as it comes (an LLM's tokens) spoken over rxvoice's live
 * session, as LiveKit's `SynthesizeStream`.
 *
 * - Each LiveKit segment (the text between two `flush()`es, or up to `endInput()`) is one
 *   live session: its text goes through rxvoice's client-side sentence boundaries, and the
 *   flush (or end of input) sends `text.done`, so the service speaks its last words at once.
 *   Segments are spoken one after the other; the text of the next waits in memory.
 * - Audio is handed to LiveKit one sentence (service segment) at a time, when the sentence
 *   is complete (`concatSegments`): a connection dropped in the middle of a sentence never
 *   makes its first words heard twice, since the reconnect (rxvoice's `reconnect`) resends
 *   exactly the unspoken text and the sentence comes again whole.
 * - A segment with nothing to hear (only whitespace, or only thoughts once made speakable)
 *   gives no audio and the stream goes on, as `synthesize()` of such a text does.
 * - A sentence the service skips is resubmitted (`resubmitSkipped`, 2 attempts); one that
 *   still fails is reported on the TTS's `error` event (recoverable) with its text.
 * - Word timestamps become `timedTranscripts` (LiveKit's aligned transcript) on the first
 *   frame of each sentence, on the stream's timeline.
 * - LiveKit's `metrics_collected` gets one `TTSMetrics` per live session, from rxvoice's
 *   session metrics.
 * - `close()` (LiveKit's interruption) unsubscribes: the socket is closed at once and no
 *   frame is handed out after it.
 */
import { USERDATA_TTS_STARTED_TIME, shortuuid, tts } from '@livekit/agents';
import { EMPTY, Observable, ReplaySubject, Subject, catchError, concatMap, defer, finalize, tap, throwError, type MonoTypeOperatorFunction, type Subscription } from 'rxjs';
import type { SessionMetrics } from '../live/metrics.js';
import { isNothingToSpeak } from '../live/nothing-to-speak.js';
import { HeardTracker, type HeardReport } from '../live/heard.js';
import { concatSegments } from '../operators/concatSegments.js';
import { resubmitSkipped } from '../operators/resubmitSkipped.js';
import { toLiveKitError } from './errors.js';
import { segmentAudio } from './frames.js';
import type { APIConnectOptions, LiveKitAgents, SynthesizedAudio } from './peer.js';
import type { StreamSettings } from './settings.js';

/** Holds each value until the next one (or the end), and marks the last one with `mark`. */
function markLast<T>(mark: (value: T) => T): MonoTypeOperatorFunction<T> {
  return (source) =>
    new Observable<T>((subscriber) => {
      let held: { value: T } | undefined;
      return source.subscribe({
        next: (value) => {
          if (held) subscriber.next(held.value);
          held = { value };
        },
        error: (error: unknown) => {
          if (held) subscriber.next(held.value);
          subscriber.error(error);
        },
        complete: () => {
          if (held) subscriber.next(mark(held.value));
          subscriber.complete();
        },
      });
    });
}

const Base: LiveKitAgents['tts']['SynthesizeStream'] = tts.SynthesizeStream;
type Owner = InstanceType<LiveKitAgents['tts']['TTS']>;

/** Streaming synthesis over the live session, as LiveKit's `SynthesizeStream` (see `TTS.stream`). */
export class SynthesizeStream extends Base {
  label = 'rxvoice.SynthesizeStream';
  readonly #owner: Owner;
  readonly #settings: StreamSettings;
  /** Seconds of audio handed out so far (where the next sentence's words start). */
  #offset = 0;
  /** Whether the text spoken so far ends in whitespace (else a space goes before the next sentence's words). */
  #endsInSpace = true;
  /** The sentences handed out, on the stream's audio timeline, for `heard()`. */
  readonly #heard = new HeardTracker();

  constructor(owner: Owner, settings: StreamSettings, connOptions?: APIConnectOptions) {
    super(owner, connOptions);
    this.#owner = owner;
    this.#settings = settings;
  }

  protected async run(): Promise<void> {
    const segments = new Subject<ReplaySubject<string>>();
    let failure: { error: unknown } | undefined;
    let subscription: Subscription | undefined;
    const spoken = new Promise<void>((resolve) => {
      subscription = segments.pipe(concatMap((text$) => this.#speakSegment(text$))).subscribe({
        next: (audio) => this.queue.put(audio),
        error: (error: unknown) => {
          failure = { error };
          // stop reading the input: nothing more can be spoken
          if (!this.input.closed) this.input.close();
          resolve();
        },
        complete: resolve,
      });
      const stop = (): void => {
        subscription?.unsubscribe();
        resolve();
      };
      if (this.abortSignal.aborted) stop();
      else this.abortSignal.addEventListener('abort', stop, { once: true });
    });
    let current: ReplaySubject<string> | undefined;
    for await (const item of this.input) {
      if (this.abortSignal.aborted || failure) break;
      if (item === SynthesizeStream.FLUSH_SENTINEL) {
        current?.complete();
        current = undefined;
        continue;
      }
      if (!current) {
        current = new ReplaySubject<string>();
        segments.next(current);
      }
      current.next(item);
    }
    current?.complete();
    segments.complete();
    await spoken;
    if (this.abortSignal.aborted) return;
    if (failure) throw toLiveKitError(failure.error);
    this.queue.put(SynthesizeStream.END_OF_STREAM);
  }

  /**
   * LiveKit's metrics task, reduced to passing audio on: the metrics come from rxvoice's
   * (one report per live session, see `#speakSegment`). Nothing is passed on after `close()`.
   */
  protected override async monitorMetrics(): Promise<void> {
    for await (const audio of this.queue) {
      if (this.abortSignal.aborted) break;
      this.output.put(audio);
    }
  }

  /**
   * The next packet; none once the stream is closed. (LiveKit's own `next()` still hands out
   * the packets queued before `close()`: here the interruption is at once.)
   */
  override async next(): Promise<IteratorResult<SynthesizedAudio | typeof SynthesizeStream.END_OF_STREAM>> {
    if (this.abortSignal.aborted) return { done: true, value: undefined };
    const result = await super.next();
    return this.abortSignal.aborted ? { done: true, value: undefined } : result;
  }

  /** One LiveKit segment: its text through one live session, out as audio packets. */
  #speakSegment(text$: ReplaySubject<string>): Observable<SynthesizedAudio> {
    return defer(() => {
      const { client, speak, sampleRate, frameSamples, locale } = this.#settings;
      const segmentId = shortuuid('SEG_');
      let requestId = segmentId;
      let report: SessionMetrics | undefined;
      let characters = 0;
      let audioSeconds = 0;
      let startedAt: number | undefined;
      const session = client.speak({
        ...speak,
        metrics: (metrics) => {
          if (metrics.type === 'session') report = metrics;
        },
      });
      return text$.pipe(
        tap((text) => {
          characters += text.length;
          startedAt ??= performance.now() / 1000;
        }),
        resubmitSkipped(session, locale === undefined ? {} : { locale }),
        // a segment with nothing to hear (whitespace, only thoughts) is no audio, not a failure
        catchError((error: unknown) => (isNothingToSpeak(error) ? EMPTY : throwError(() => error))),
        tap((event) => {
          if (event.type === 'ready') {
            requestId = event.session_id;
            this.noteProviderRequestId(event.session_id);
          } else if (event.type === 'segmentSkipped' && event.final === true) {
            this.#reportSkipped(event.text);
          }
        }),
        concatSegments(),
        concatMap((segment) => {
          // a space between sentences the service trimmed, none where one is there already (either side)
          const separator = this.#endsInSpace || /^\s/u.test(segment.text) ? '' : ' ';
          const audio = segmentAudio(segment, sampleRate, frameSamples, this.#offset, separator);
          this.#offset += audio.seconds;
          audioSeconds += audio.seconds;
          this.#heard.push(segment);
          this.#heard.setDuration(segment.segment_id, audio.seconds);
          if (segment.text !== '') this.#endsInSpace = /\s$/u.test(segment.text);
          return audio.frames.map((frame, i): SynthesizedAudio => {
            if (startedAt !== undefined) frame.userdata[USERDATA_TTS_STARTED_TIME] = startedAt;
            return i === 0
              ? { requestId, segmentId, frame, final: false, deltaText: segment.text, timedTranscripts: audio.words }
              : { requestId, segmentId, frame, final: false };
          });
        }),
        markLast((audio) => ({ ...audio, final: true })),
        finalize(() => {
          if (characters === 0) return;
          this.#owner.emit('metrics_collected', {
            type: 'tts_metrics',
            timestamp: Date.now(),
            requestId,
            label: this.#owner.label,
            ttfbMs: report?.textToFirstAudioMs ?? -1,
            durationMs: report ? Math.round(report.totalMs - (report.firstTextMs ?? 0)) : -1,
            audioDurationMs: Math.round(audioSeconds * 1000),
            charactersCount: characters,
            cancelled: report?.outcome === 'unsubscribed',
            streamed: true,
            metadata: { modelProvider: this.#settings.provider, modelName: this.#settings.model },
          });
        }),
      );
    });
  }

  /**
   * What the listener heard of this stream after `playbackPosition` seconds of its audio
   * played: LiveKit tells a TTS plugin nothing of playout, but its audio output does
   * (`playbackFinished` with `playbackPosition` and `interrupted`); hand that position here,
   * or to `TTS.heard` (the latest stream of the TTS).
   */
  heard(playbackPosition: number): HeardReport {
    return this.#heard.report(playbackPosition);
  }

  /** A sentence the service could not synthesize, even resubmitted: a recoverable error with its text. */
  #reportSkipped(text: string): void {
    if (this.#owner.listenerCount('error') === 0) return;
    const error = new Error(`The service skipped a sentence after its retries and resubmissions: ${JSON.stringify(text)}`);
    this.#owner.emit('error', { type: 'tts_error', timestamp: Date.now(), label: this.#owner.label, error, recoverable: true });
  }
}
