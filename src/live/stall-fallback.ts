/**
 * The second way to speak when a live session stalls (`stall: { fallback: 'tts-stream' }`):
 * the text the session had not begun, and the text that comes after, cut into sentences and
 * spoken one call per sentence, in order, through a function the caller gives (the client's
 * `speak` wires `POST /tts-stream`; the live layer does not import the client). Emits the same
 * events as a live segment (`segmentStart`, `audio`..., `segmentDone`), each sentence preceded
 * by a `segmentFallback` event saying why.
 */
import { concatMap, defer, map, Observable, Subject, type Subscription } from 'rxjs';
import { createSentenceSegmenter, type SentenceSegmenter } from '../text/sentences.js';
import type { LiveSpeechEvent } from './events.js';

/** Speaks one sentence another way: its audio bytes, in the session's output format. */
export type FallbackSpeech = (text: string) => Observable<Uint8Array>;

/** What the service accepts in one `/tts-stream` call. */
const MIN_CHARS = 3;
const MAX_CHARS = 3000;

/** Callbacks of a {@link StallFallback} into its session. */
export interface FallbackHooks {
  emit(event: LiveSpeechEvent): void;
  /** Every sentence was spoken and the text is over. */
  done(): void;
  /** A fallback call failed: `unspoken` is the text not spoken, in order. */
  failed(error: unknown, unspoken: string): void;
}

/** Speaks text sentence by sentence with a {@link FallbackSpeech} (see the file's summary). */
export class StallFallback {
  private readonly segmenter: SentenceSegmenter;
  private readonly sentences = new Subject<string>();
  private readonly subscription: Subscription;
  /** Sentences queued or speaking, in order (the first is speaking). */
  private readonly queue: string[] = [];
  /** A sentence too short for one call, waiting to be joined to the next. */
  private short = '';
  private nextId: number;

  constructor(
    speech: FallbackSpeech,
    firstSegmentId: number,
    private readonly afterMs: number,
    locale: string | undefined,
    private readonly hooks: FallbackHooks,
  ) {
    this.nextId = firstSegmentId;
    this.segmenter = createSentenceSegmenter(locale === undefined ? {} : { locale });
    this.subscription = this.sentences
      .pipe(concatMap((text) => this.speakOne(speech, text)))
      .subscribe({ error: (error: unknown) => this.hooks.failed(error, this.unspoken()), complete: () => this.hooks.done() });
  }

  /** More text to speak (any split; cut into sentences here). */
  push(text: string): void {
    for (const sentence of this.segmenter.feed(text)) this.queueSentence(sentence);
  }

  /** The text is over: the rest is spoken, then `done`. */
  end(): void {
    for (const sentence of this.segmenter.end()) this.queueSentence(sentence);
    if (this.short !== '') this.queueSentence(this.short.padEnd(MIN_CHARS, ' '), true);
    this.sentences.complete();
  }

  /** The text not yet spoken, in order. */
  unspoken(): string {
    return (this.queue.join('') + this.short + this.segmenter.pending()).replace(/^\s+/, '');
  }

  /** Stops at once (unsubscribe or the session's end): the call in flight is aborted. */
  stop(): void {
    this.subscription.unsubscribe();
  }

  private queueSentence(sentence: string, last = false): void {
    const text = this.short + sentence;
    if (text.trim() === '') {
      this.short = text;
      return;
    }
    if (!last && text.trim().length < MIN_CHARS) {
      this.short = text;
      return;
    }
    this.short = '';
    for (let at = 0; at < text.length; at += MAX_CHARS) {
      const piece = text.slice(at, at + MAX_CHARS);
      this.queue.push(piece);
      this.sentences.next(piece);
    }
  }

  /** One sentence: `segmentFallback`, `segmentStart`, its audio, `segmentDone`. */
  private speakOne(speech: FallbackSpeech, text: string): Observable<never> {
    return defer(() => {
      const segment_id = this.nextId++;
      this.hooks.emit({ type: 'segmentFallback', segment_id, text, reason: 'stall', afterMs: this.afterMs });
      this.hooks.emit({ type: 'segmentStart', segment_id, text });
      return new Observable<never>((subscriber) =>
        speech(text.trim())
          .pipe(map((bytes) => this.hooks.emit({ type: 'audio', segment_id, bytes })))
          .subscribe({
            error: (error: unknown) => subscriber.error(error),
            complete: () => {
              this.queue.shift();
              this.hooks.emit({ type: 'segmentDone', segment_id });
              subscriber.complete();
            },
          }),
      );
    });
  }
}
