/**
 * The text's way into a live session (live-session.ts; the source's subscriber is in
 * text-subscriber.ts): the client-side sentence boundaries (`clientBoundaries`), where a token goes through the
 * boundary gate and an undecided stop waits for the next token, at most `boundaryHoldMs`.
 * What leaves here is handed to the session's `sendText` (the ledger, then the socket).
 */
import type { SchedulerAction, SchedulerLike, Subscription } from 'rxjs';
import { createBoundaryGate, type BoundaryGate } from '../text/boundaryGate.js';
import type { SentenceSegmenter } from '../text/sentences.js';

/** What the text path asks of its session. */
export interface TextPathHost {
  /** A token from the source (through the boundary hold, when there is one). */
  pushText(text: string): void;
  /** The text source failed. */
  textFailed(error: unknown): void;
  /** The text source completed. */
  textCompleted(): void;
  /**
   * A piece of text that may go out now (recorded in the ledger, then sent or kept); with
   * the gate's sentence segmenter when it saw exactly this text from a fresh start (the
   * ledger may take it as its model of the service's segmenter instead of running its own).
   */
  sendText(text: string, segmenter?: SentenceSegmenter): void;
}

/** The hold timer's work (a module function: no closure per session). */
function holdEnded(this: SchedulerAction<BoundaryHold>, hold: BoundaryHold): void {
  hold.holdEnded();
}

/** Options of a {@link BoundaryHold}. */
export interface BoundaryHoldOptions {
  /** The session's language (a string locale), choosing the sentence rules. */
  locale: string | undefined;
  /** Longest wait of an undecided stop for the next token, ms. */
  holdMs: number;
  scheduler: SchedulerLike;
}

/**
 * Client-side boundaries of one session: what the gate releases goes to the session at
 * once; an undecided stop is held until the next token or `holdMs` (then it goes out).
 */
export class BoundaryHold {
  private readonly gate: BoundaryGate;
  private holdTimer: Subscription | undefined;

  /** The two options kept (not the options object: 48 bytes a session). */
  private readonly holdMs: number;
  private readonly scheduler: SchedulerLike;

  constructor(
    options: BoundaryHoldOptions,
    private readonly host: TextPathHost,
  ) {
    this.holdMs = options.holdMs;
    this.scheduler = options.scheduler;
    // holdWords: a sentence end goes out as one text.chunk (boundaryGate.ts)
    this.gate = createBoundaryGate(options.locale === undefined ? { holdWords: true } : { locale: options.locale, holdWords: true });
  }

  /** A token: what the gate releases is sent; a held stop (re)starts the hold timer. */
  push(text: string): void {
    for (const chunk of this.gate.feed(text)) this.host.sendText(chunk);
    this.holdTimer?.unsubscribe();
    this.holdTimer = undefined;
    if (this.gate.held() !== '') {
      this.holdTimer = this.scheduler.schedule(holdEnded, this.holdMs, this);
    }
  }

  /**
   * `holdMs` passed with a stop held: everything held is sent, as one chunk, with the gate's
   * segmenter when it saw exactly that chunk (one sentence engine where two would run). @internal
   */
  holdEnded(): void {
    this.holdTimer = undefined;
    const released = this.gate.flushWhole();
    if (released !== undefined) this.host.sendText(released.text, released.segmenter);
  }

  /** The text is over: everything held is sent. */
  end(): void {
    this.stop();
    for (const chunk of this.gate.end()) this.host.sendText(chunk);
  }

  /** The text held back (never sent): it is unspoken too. */
  held(): string {
    return this.gate.held();
  }

  /** Clear the hold timer (the session ended). */
  stop(): void {
    this.holdTimer?.unsubscribe();
    this.holdTimer = undefined;
  }
}
