/**
 * The second way to speak when a live session stalls (`stall: { fallback: 'tts-stream' }`):
 * the text the session had not begun, and the text that comes after, cut into sentences and
 * spoken one call per sentence, in order, through a function the caller gives (the client's
 * `speak` wires `POST /tts-stream`; the live layer does not import the client). Emits the same
 * events as a live segment (`segmentStart`, `audio`..., `segmentDone`), each sentence preceded
 * by a `segmentFallback` event saying why.
 */
import type { Observable, Subscription } from 'rxjs';
import type { LiveSessionError, LiveSessionErrorCode } from '../core/errors.js';
import type { SentenceSegmenter } from '../text/sentences.js';
import type { LiveSpeechEvent } from './events.js';
import type { SpeechLedger } from './ledger.js';

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

/**
 * Speaks text sentence by sentence with a {@link FallbackSpeech} (see the file's summary): one
 * call at a time, in order (a plain queue, no operator: this file is in the browser's `speak`).
 */
export class StallFallback {
  private readonly segmenter: SentenceSegmenter;
  /** Sentences queued or speaking, in order (the first is speaking while `call` runs). */
  private readonly queue: string[] = [];
  /** A sentence too short for one call, waiting to be joined to the next. */
  private short = '';
  private nextId: number;
  private call: Subscription | undefined;
  private ended = false;
  private stopped = false;

  constructor(
    private readonly speech: FallbackSpeech,
    firstSegmentId: number,
    private readonly afterMs: number,
    /** Cuts the text into sentences: the session's language's (given, so that this file, loaded apart in a page, shares the page's engine). */
    segmenter: SentenceSegmenter,
    private readonly hooks: FallbackHooks,
  ) {
    this.nextId = firstSegmentId;
    this.segmenter = segmenter;
  }

  /** More text to speak (any split; cut into sentences here). */
  push(text: string): void {
    for (const sentence of this.segmenter.feed(text)) this.queueSentence(sentence);
    this.next();
  }

  /** The text is over: the rest is spoken, then `done`. */
  end(): void {
    for (const sentence of this.segmenter.end()) this.queueSentence(sentence);
    const rest = this.short;
    this.short = '';
    if (rest.trim() !== '') this.queueSentence(rest, true);
    this.ended = true;
    this.next();
  }

  /** The text not yet spoken, in order. */
  unspoken(): string {
    return (this.queue.join('') + this.short + this.segmenter.pending()).replace(/^\s+/, '');
  }

  /** Stops at once (unsubscribe or the session's end): the call in flight is aborted. */
  stop(): void {
    this.stopped = true;
    this.call?.unsubscribe();
  }

  private queueSentence(sentence: string, last = false): void {
    const text = this.short + sentence;
    if (text.trim() === '' || (!last && text.trim().length < MIN_CHARS)) {
      this.short = text;
      return;
    }
    this.short = '';
    this.queue.push(...pieces(text));
  }

  /** Starts the next call when none runs: `segmentFallback`, `segmentStart`, its audio, `segmentDone`. */
  private next(): void {
    if (this.stopped || this.call !== undefined) return;
    const text = this.queue[0];
    if (text === undefined) {
      if (this.ended) {
        this.stopped = true;
        this.hooks.done();
      }
      return;
    }
    const segment_id = this.nextId++;
    const { emit } = this.hooks;
    emit({ type: 'segmentFallback', segment_id, text, reason: 'stall', afterMs: this.afterMs });
    emit({ type: 'segmentStart', segment_id, text });
    if (this.stopped) return; // unsubscribed at one of those events: no call is made (nor paid)
    let finished = false;
    // trimmed, and padded with spaces to 3 characters (a last sentence like 'Ok'): what /tts-stream accepts
    const call = this.speech(text.trim().padEnd(MIN_CHARS, ' ')).subscribe({
      next: (bytes) => emit({ type: 'audio', segment_id, bytes }),
      error: (error: unknown) => {
        finished = true;
        this.stopped = true;
        this.hooks.failed(error, this.unspoken());
      },
      complete: () => {
        finished = true;
        this.call = undefined;
        this.queue.shift();
        emit({ type: 'segmentDone', segment_id });
        this.next();
      },
    });
    // a call that ended synchronously has already moved on
    if (!finished) this.call = call;
  }
}

/**
 * A sentence (at least {@link MIN_CHARS} characters once trimmed) in pieces the service
 * accepts, together exactly `text`: each at most {@link MAX_CHARS} once trimmed, cut before a
 * word where one starts in reach (else inside one), and none left under {@link MIN_CHARS}.
 */
function pieces(text: string): string[] {
  const out: string[] = [];
  const end = text.trimEnd().length;
  const wordStart = (i: number): boolean => /\s/.test(text[i - 1]!) && !/\s/.test(text[i]!);
  let at = 0;
  for (;;) {
    const from = end - text.slice(at, end).trimStart().length; // the piece's first character
    if (end - from <= MAX_CHARS) break;
    // the piece ends by MAX_CHARS, and the rest keeps at least MIN_CHARS from a character on
    const limit = Math.min(from + MAX_CHARS, end - MIN_CHARS);
    let cut = limit;
    while (cut > from + MIN_CHARS && !wordStart(cut)) cut--;
    if (cut === from + MIN_CHARS) {
      // no word starts in reach (after MIN_CHARS of this piece): cut inside one
      cut = limit;
      while (cut > from + MIN_CHARS && /\s/.test(text[cut]!)) cut--;
    }
    out.push(text.slice(at, cut));
    at = cut;
  }
  out.push(text.slice(at));
  return out;
}

/** What {@link takeOverStalled} reads and calls of the stalled session (live-session.ts). */
export interface StalledSession {
  readonly ledger: SpeechLedger;
  readonly textComplete: boolean;
  /** The largest segment id given so far: the fallback's sentences come after it. */
  readonly maxConsumerId: number;
  /** Set before the fallback is given any text: what it emits may stop the session, which stops it. */
  fallback: StallFallback | undefined;
  emit(event: LiveSpeechEvent): void;
  finish(error?: LiveSessionError): void;
  /** An error of the session, carrying the text not spoken (the fallback's, once it is set). */
  error(code: LiveSessionErrorCode, message: string, options: { cause: unknown }): LiveSessionError;
  /** `message` without the API key. */
  scrub(message: string): string;
}

/**
 * The stalled session's switch to its fallback: the text it sent and that was not begun
 * (no segment is in progress), then what comes, is spoken through `speech`. Here, not in the
 * session, so that a page whose sessions never fall back does not load it (`features.ts`).
 */
export function takeOverStalled(session: StalledSession, speech: FallbackSpeech, afterMs: number, segmenter: SentenceSegmenter): void {
  const fallback = new StallFallback(speech, session.maxConsumerId + 1, afterMs, segmenter, {
    emit: (event) => session.emit(event),
    done: () => {
      session.emit({ type: 'done' });
      session.finish();
    },
    // the text unspoken is the fallback's (what `failed` is given) and what the boundaries hold
    failed: (cause) =>
      session.finish(session.error('connection', `The live session stalled and its fallback failed: ${cause instanceof Error ? session.scrub(cause.message) : 'unknown error'}`, { cause })),
  });
  session.fallback = fallback;
  const unspoken = session.ledger.unspoken();
  session.ledger.abortInProgress();
  if (unspoken !== '') fallback.push(unspoken);
  if (session.textComplete) fallback.end();
}
