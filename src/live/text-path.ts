/**
 * The text's way into a live session (live-session.ts; the source's subscriber is in
 * text-subscriber.ts): the client-side sentence boundaries (`clientBoundaries`), where a token goes through the
 * boundary gate and an undecided stop waits for the next token, at most `boundaryHoldMs`.
 * What leaves here is handed to the session's `sendText` (the ledger, then the socket).
 */
import type { SchedulerLike } from 'rxjs';
import { createBoundaryGate, type BoundaryGate } from '../text/boundaryGate.js';
import type { SentenceSegmenter } from '../text/sentences.js';
import { timerRound, type RoundEntry, type TimerRound } from './timer-round.js';

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
 * once; an undecided stop is held until the next token or `holdMs` (then it goes out). The
 * holds of every session on one scheduler are ended by one round (timer-round.ts): a hold
 * due within `holdMs / 16` of another's end goes with it, never later than `holdMs`.
 */
export class BoundaryHold implements RoundEntry {
  private readonly gate: BoundaryGate;
  private readonly round: TimerRound;
  /** Scheduler time the held stop is due to go out (NaN when none is held). @internal */
  dueAt = NaN;

  constructor(
    options: BoundaryHoldOptions,
    private readonly host: TextPathHost,
  ) {
    this.round = timerRound(options.scheduler, options.holdMs, options.holdMs / 16);
    // holdWords: a sentence end goes out as one text.chunk (boundaryGate.ts)
    this.gate = createBoundaryGate(options.locale === undefined ? { holdWords: true } : { locale: options.locale, holdWords: true });
  }

  /** A token: what the gate releases is sent; a held stop (re)starts the hold. */
  push(text: string): void {
    for (const chunk of this.gate.feed(text)) this.host.sendText(chunk);
    if (this.gate.held() !== '') this.round.add(this);
    else this.stop();
  }

  /**
   * `holdMs` passed with a stop held (or up to a sixteenth less, as another session's hold
   * ended): everything held is sent, as one chunk, with the gate's segmenter when it saw
   * exactly that chunk (one sentence engine where two would run). @internal
   */
  fire(): void {
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

  /** End the hold without sending (nothing is held, or the session ended). */
  stop(): void {
    if (!Number.isNaN(this.dueAt)) this.round.cancel(this);
  }
}
