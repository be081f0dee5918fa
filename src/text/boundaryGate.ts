/**
 * Client-side sentence boundaries for a live session: a pure core that, fed tokens, says
 * which text may be sent now.
 *
 * A service that segments by content must guess whether a stop at the end of a
 * `text.chunk` ends a sentence (`"The U.S."` then `" Government"`). The gate never lets a
 * chunk end just after a stop unless the stop ends a sentence: text is released up to the
 * last point that is certain, and a stop whose sentence end depends on what follows waits
 * for the next token, an idle flush or the end of input. Text without stops is released at
 * once, so plain words never wait.
 *
 * Each completed sentence's last part is released as its own chunk, ending exactly at the
 * boundary; the text after it follows in the next chunk. Joining everything released gives
 * back the input exactly. Work per token is bounded by the token and the held text (a stop
 * and the few characters after it), whatever the length of the sentence.
 *
 * With `holdWords` (the live session's choice), the words of a sentence released since its
 * last chunk wait with its held stop, so that a sentence end goes out as one chunk
 * (`" Smith."`, not `" Smith"` then `"."`): a service cannot speak those words before the
 * stop anyway (it waits for a boundary, or `idle_timeout` of silence, which the held stop's
 * release restarts), and every sentence end costs one frame less. Words without a stop
 * after them are still released at once.
 */
import { isQuietText } from './sentence-marks.js';
import { DEFAULT_MAX_BUFFER_SIZE, releaseSentenceSegmenter, takeSentenceSegmenter, type SentenceSegmenter, type SentenceSegmenterOptions } from './sentences.js';

/** The gate: feed tokens, send what it returns. */
export interface BoundaryGate {
  /** Feed a token; returns the chunks that may be sent now, in order (never empty strings). */
  feed(text: string): string[];
  /**
   * Release everything held (an idle flush): the chunk released, if any, with the gate's
   * sentence segmenter when that segmenter saw exactly this chunk from a fresh start (nothing
   * of its text released before, no piece cut), for a caller that models the text's
   * segmentation too (the live session's ledger). The caller owns the segmenter from then on.
   */
  flushWhole(): GateFlush | undefined;
  /** The input is over: releases everything held. */
  end(): string[];
  /** The text held back (fed, not yet released), e.g. to report it as unspoken. */
  held(): string;
}

/** What {@link BoundaryGate.flushWhole} released: the chunk, and the segmenter that saw exactly it (or none). */
export interface GateFlush {
  readonly text: string;
  readonly segmenter: SentenceSegmenter | undefined;
}

/** Options of {@link createBoundaryGate}: the sentence rules', and `holdWords`. */
export interface BoundaryGateOptions extends SentenceSegmenterOptions {
  /** The words before a held stop (since the last chunk) wait with it: one chunk per sentence end. Default false. */
  holdWords?: boolean | undefined;
}

/** Stops and the closers glued to them: a chunk never ends with one of these unless certain. */
const TRAILING_STOPS = /[.!?;:…。！？｡．।॥؟۔։።፧፨။‼⁇⁈⁉‽"'”’»)\]」』》]+$/u;

/**
 * Create a boundary gate (the same rules and options as `createSentenceSegmenter`).
 *
 * @example
 * ```ts
 * const gate = createBoundaryGate({ locale: 'en-us' });
 * gate.feed('See Dr.'); // ['See Dr'] (the stop waits: "Dr." may not end the sentence)
 * gate.feed(' Smith.'); // ['. Smith'] (the sentence's stop waits for what follows)
 * gate.feed(' He'); // ['.', ' He'] (the sentence ends exactly at its boundary)
 * gate.end(); // [] (whatever was still held)
 * ```
 *
 * @internal the live session's gate, not part of the package's API
 */
export function createBoundaryGate(options: BoundaryGateOptions = {}): BoundaryGate {
  return new Gate(options.locale, options.maxBufferSize, options.holdWords ?? false);
}

/**
 * The gate's state is a few fields and its code prototype methods (shared by every live
 * session, where a closure per method used to be built for each).
 *
 * An idle flush that releases held text starts the gate afresh: its segmenter is dropped
 * (a session waiting after a flush keeps none, ~0.65 KB) and a new one takes the next
 * token. A chunk end after a flush was decided by time, not by the rules, either way.
 */
class Gate implements BoundaryGate {
  /** Text fed but not released (a prefix of it is released at a time). */
  private unsent = '';
  /** Length of the segmenter's pending text, and how much of it was released already. */
  private pendingLen = 0;
  private sent = 0;
  /** Code units fed to the current segmenter (it saw exactly `unsent` while this equals its length). */
  private fed = 0;

  /** The sentence segmenter of the text since the last flush; none until a token comes. */
  private segmenter: SentenceSegmenter | undefined;
  /** Quiet tokens released and not given to the segmenter yet (see `feed`). */
  private unfed = '';

  /** The rules' options as two fields, not an object: a gate a session, so one object less a session (56 B). */
  constructor(
    private readonly locale: string | undefined,
    private readonly maxBufferSize: number | undefined,
    private readonly holdWords: boolean,
  ) {}

  feed(text: string): string[] {
    if (text.length === 0) return [];
    this.pendingLen += text.length;
    this.fed += text.length;
    if (this.quiet(text)) {
      // fed, it would cut nothing and go out whole: it goes out now, and to the segmenter
      // with the next token that is not quiet (a sentence said word by word takes a
      // segmenter at its first stop, not at its first word)
      this.unfed += text;
      this.sent += text.length;
      return [text];
    }
    this.unsent += text;
    this.segmenter ??= takeSentenceSegmenter({ locale: this.locale, maxBufferSize: this.maxBufferSize });
    const unfed = this.unfed;
    this.unfed = '';
    return this.release(this.segmenter, this.segmenter.feed(unfed === '' ? text : unfed + text));
  }

  /**
   * Whether `text` goes out at once without the segmenter: quiet text (`isQuietText`: no
   * stop, quote, bracket, tag, marker or line break) with nothing held (so no undecided stop
   * in the segmenter either: the gate holds from one on), short of the segmenter's buffer
   * size (no forced cut). `text` was counted in `pendingLen` already.
   */
  private quiet(text: string): boolean {
    return this.unsent === '' && this.pendingLen < (this.maxBufferSize ?? DEFAULT_MAX_BUFFER_SIZE) && isQuietText(text);
  }

  flushWhole(): GateFlush | undefined {
    if (this.unsent === '') return undefined; // nothing held: the sentence goes on, the segmenter with it
    // nothing released since the segmenter began: it saw exactly the text released now
    const segmenter = this.fed === this.unsent.length ? this.segmenter : undefined;
    if (segmenter === undefined && this.segmenter !== undefined) releaseSentenceSegmenter(this.segmenter);
    const text = this.unsent;
    this.unsent = '';
    this.segmenter = undefined;
    this.pendingLen = 0;
    this.sent = 0;
    this.fed = 0;
    return { text, segmenter };
  }

  end(): string[] {
    this.segmenter?.end(); // as good as new again: it has seen nothing
    this.unfed = ''; // what end() would have cut of it went out already
    this.pendingLen = 0;
    const out = this.releaseAll();
    this.sent = 0;
    this.fed = 0;
    return out;
  }

  held(): string {
    return this.unsent;
  }

  /** `out` with the first `n` code units of the unsent text added (a new array of one for none: a push to `[]` reserves 17 slots a token). */
  private take(n: number, out: string[] | undefined): string[] | undefined {
    if (n <= 0) return out;
    const chunk = this.unsent.slice(0, n);
    this.unsent = this.unsent.slice(n);
    if (out === undefined) return [chunk];
    out.push(chunk);
    return out;
  }

  private release(segmenter: SentenceSegmenter, pieces: string[]): string[] {
    let out: string[] | undefined;
    for (const piece of pieces) {
      // a completed sentence: what is left of it, ending at its boundary
      out = this.take(piece.length - this.sent, out);
      this.sent = Math.max(0, this.sent - piece.length);
      this.pendingLen -= piece.length;
    }
    const undecided = segmenter.undecidedFrom();
    let safe = (undecided >= 0 ? undecided : this.pendingLen) - this.sent;
    if (safe > 0) {
      const before = this.unsent.slice(Math.max(0, safe - 16), safe);
      const trailing = TRAILING_STOPS.exec(before);
      if (trailing) safe -= trailing[0].length;
    }
    // with holdWords, words followed by held text (a stop, undecided) wait with it
    if (safe > 0 && !(this.holdWords && safe < this.unsent.length)) {
      out = this.take(safe, out);
      this.sent += safe;
    }
    return out ?? [];
  }

  private releaseAll(): string[] {
    this.sent += this.unsent.length;
    return this.take(this.unsent.length, undefined) ?? [];
  }
}
