/**
 * The segments of one live session of the emulator (live.ts), in order, with the two
 * cursors that walk them: the next segment to synthesize (charged just before) and the
 * next whose frames go out. Synthesis runs ahead of sending by at most the concurrency
 * window; when credits run out at a segment, nothing from it on starts, and sending stops
 * there. No I/O and no timers: the session drives it.
 */
import type { LiveSegment } from './live-synthesis.js';

/** A live session's segments, from received text to frames sent. */
export class SegmentQueue {
  private readonly segments: LiveSegment[] = [];
  /** Index of the next segment to synthesize. */
  private nextToStart = 0;
  /** Index of the next segment whose frames go out. */
  private nextToSend = 0;
  /** Segments being synthesized. */
  private inFlight = 0;
  /** Segment id at which credits ran out. */
  private creditsFailedAt: number | undefined;
  /** Whitespace-only text waiting to lead the next segment. */
  private whitespace = '';
  /** Characters of segments not yet sent. */
  private unsent = 0;

  /**
   * A piece of text becomes a segment; a whitespace-only piece waits to lead the next
   * one. Returns whether a segment was added.
   */
  add(piece: string): boolean {
    if (piece.trim().length === 0) {
      this.whitespace += piece;
      return false;
    }
    const text = this.whitespace + piece;
    this.whitespace = '';
    this.segments.push({ id: this.segments.length, text, state: 'waiting' });
    this.unsent += text.length;
    return true;
  }

  /** Segments created so far. */
  get size(): number {
    return this.segments.length;
  }

  /** Segments sent so far (delivered or skipped). */
  get sent(): number {
    return this.nextToSend;
  }

  /** Characters of segments not yet sent. */
  get unsentChars(): number {
    return this.unsent;
  }

  /** Whether credits ran out (from then on nothing starts). */
  get creditsFailed(): boolean {
    return this.creditsFailedAt !== undefined;
  }

  /**
   * The next segment to synthesize, when one waits and the window allows it: fewer than
   * `window` in flight, and fewer than `window` started but not yet sent.
   */
  nextToSynthesize(window: number): LiveSegment | undefined {
    if (this.creditsFailedAt !== undefined) return undefined;
    if (this.inFlight >= window || this.nextToStart - this.nextToSend >= window) return undefined;
    return this.segments[this.nextToStart];
  }

  /** The segment {@link nextToSynthesize} gave was charged: its synthesis starts. */
  started(segment: LiveSegment): void {
    this.nextToStart++;
    this.inFlight++;
    segment.state = 'synthesizing';
  }

  /** A synthesis ended (ready or skipped). */
  finished(): void {
    this.inFlight--;
  }

  /** Credits ran out at `segment`: it and every segment after it are never synthesized. */
  creditsRanOut(segment: LiveSegment): void {
    this.creditsFailedAt = segment.id;
  }

  /** The segment that goes out next, once it is ready or skipped. */
  nextToDeliver(): LiveSegment | undefined {
    const segment = this.segments[this.nextToSend];
    if (!segment || (segment.state !== 'ready' && segment.state !== 'skipped')) return undefined;
    return segment;
  }

  /** Sending reached the segment where credits ran out: the session ends with 4402. */
  sendingReachedCreditsFailure(): number | undefined {
    return this.creditsFailedAt !== undefined && this.nextToSend >= this.creditsFailedAt
      ? this.creditsFailedAt
      : undefined;
  }

  /** The segment {@link nextToDeliver} gave went out: its audio is released. */
  delivered(segment: LiveSegment): void {
    segment.audio = undefined;
    segment.words = undefined;
    this.nextToSend++;
    this.unsent -= segment.text.length;
  }

  /** Every segment created so far went out. */
  allSent(): boolean {
    return this.nextToSend >= this.segments.length;
  }

  /** Release every segment's audio (the session is torn down). */
  releaseAudio(): void {
    for (const segment of this.segments) {
      segment.audio = undefined;
      segment.words = undefined;
    }
  }
}
