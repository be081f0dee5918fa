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
 * back the input exactly.
 */
import { createSentenceSegmenter, type SentenceSegmenter, type SentenceSegmenterOptions } from './sentences.js';

/** The gate: feed tokens, send what it returns. */
export interface BoundaryGate {
  /** Feed a token; returns the chunks that may be sent now, in order (never empty strings). */
  feed(text: string): string[];
  /** Release everything held (an idle flush): returns zero or one chunk. */
  flush(): string[];
  /** The input is over: releases everything held. */
  end(): string[];
  /** The text held back (fed, not yet released), e.g. to report it as unspoken. */
  held(): string;
}

/** Stops and the closers glued to them: a chunk never ends with one of these unless certain. */
const TRAILING_STOPS = /[.!?;:…。！？｡．।॥؟۔։።፧፨။‼⁇⁈⁉‽"'”’»)\]」』》]+$/u;

/** Create a boundary gate (the same rules and options as `createSentenceSegmenter`). */
export function createBoundaryGate(options: SentenceSegmenterOptions = {}): BoundaryGate {
  const segmenter: SentenceSegmenter = createSentenceSegmenter(options);
  /** Code units of the segmenter's pending text already released. */
  let sent = 0;
  let heldCount = 0;

  function release(pieces: string[]): string[] {
    const out: string[] = [];
    for (const piece of pieces) {
      // a completed sentence: what is left of it, ending at its boundary
      if (piece.length > sent) out.push(piece.slice(sent));
      sent = Math.max(0, sent - piece.length);
    }
    const pending = segmenter.pending();
    const undecided = segmenter.undecidedFrom();
    let safe = undecided >= 0 ? undecided : pending.length;
    const trailing = TRAILING_STOPS.exec(pending.slice(0, safe));
    if (trailing) safe -= trailing[0].length;
    if (safe > sent) {
      out.push(pending.slice(sent, safe));
      sent = safe;
    }
    heldCount = pending.length - sent;
    return out;
  }

  function releaseAll(pieces: string[]): string[] {
    const out = release(pieces);
    const pending = segmenter.pending();
    if (pending.length > sent) out.push(pending.slice(sent));
    sent = pending.length;
    heldCount = 0;
    return out;
  }

  return {
    feed(text) {
      return text.length === 0 ? [] : release(segmenter.feed(text));
    },
    flush() {
      return heldCount === 0 ? [] : releaseAll([]);
    },
    end() {
      const out = releaseAll([]);
      segmenter.end();
      sent = 0;
      return out;
    },
    held() {
      return heldCount === 0 ? '' : segmenter.pending().slice(sent);
    },
  };
}
