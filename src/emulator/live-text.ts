/**
 * The text a live session of the emulator receives, cut into segments (live.ts): a
 * sentence segmenter in the session's language; a complete sentence leaves at once, also
 * one that ends the chunk (contract rule 1, {@link sentenceEndingChunk}); trailing text
 * without a boundary leaves after `idle_timeout` seconds with no new text.
 */
import { createSentenceSegmenter, type SentenceSegmenter } from '../text/sentences.js';
import { sentenceEndingChunk } from '../text/chunkEnd.js';
import type { SessionTimers } from './live-timers.js';

/** What the text reader hands its session. */
export interface LiveTextSink {
  /** A piece of text to become a segment (a whitespace-only piece leads the next one). */
  piece(text: string): void;
  /** `idle_timeout` passed with trailing text waiting: the session decides whether to {@link LiveText.flush}. */
  idle(): void;
}

/** A session's received text, from chunks to the pieces that become segments. */
export class LiveText {
  private segmenter: SentenceSegmenter;
  private idleTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly locale: string,
    private readonly idleTimeoutMs: number,
    private readonly timers: SessionTimers,
    private readonly sink: LiveTextSink,
  ) {
    this.segmenter = createSentenceSegmenter({ locale });
  }

  /** Characters received and not yet cut into a piece. */
  get pendingChars(): number {
    return this.segmenter.pending().length;
  }

  /** An `idle_timeout` timer is running. */
  get idleFlushArmed(): boolean {
    return this.idleTimer !== undefined;
  }

  /** A `text.chunk`'s text: its complete sentences leave; the rest waits for more or `idle_timeout`. */
  push(text: string): void {
    if (text.length === 0) return;
    for (const sentence of this.segmenter.feed(text)) this.sink.piece(sentence);
    for (const sentence of sentenceEndingChunk(this.segmenter)) this.sink.piece(sentence);
    this.stopIdleTimer();
    if (this.segmenter.pending().trim().length > 0) {
      this.idleTimer = this.timers.set(() => {
        this.idleTimer = undefined;
        this.sink.idle();
      }, this.idleTimeoutMs);
    }
  }

  /** Buffered text without a boundary leaves as pieces (whitespace-only text stays). */
  flush(): void {
    if (this.segmenter.pending().trim().length === 0) return;
    const rest = this.segmenter.end();
    this.segmenter = createSentenceSegmenter({ locale: this.locale });
    for (const piece of rest) this.sink.piece(piece);
  }

  /** No `idle_timeout` flush from now on (until the next chunk). */
  stopIdleTimer(): void {
    this.timers.clear(this.idleTimer);
    this.idleTimer = undefined;
  }
}
