/**
 * The speech ledger: a pure record of the text sent into a live session, in order, and of
 * which part of it the service has accounted for (delivered as audio, or reported as
 * skipped). From it come the two numbers that matter when a session ends badly or drops:
 * the text not yet spoken (`unspoken()`) and the text to send again after a reconnect
 * (`resend()`), in order, nothing lost and nothing repeated.
 *
 * Which sent text a segment covers is decided by what the client sent, not by how the
 * service words the segment: the contract does not promise that `segment.start` echoes
 * the input ("Doctor ... twenty-five" may come back for "Dr. ... 25"). The ledger models
 * the service's segmentation of the text it sent (the contract's rule, the same sentence
 * core the emulator uses): a segment ends at the next sentence end of the sent text, or,
 * when the service flushed text without a boundary (`idle_timeout`, `text.done`), at the
 * end of a `text.chunk` before it. The segment's reported text is only a check: compared
 * normalized (case, width and whitespace folded) with the text the ledger assigned, a
 * difference is counted as a mismatch (the session reports it as a `segmentMismatch`
 * event); it is used only to choose between chunk ends when the service flushed early.
 *
 * No clock decides: when the client sent a chunk says nothing of when the service received
 * it (a stalled process or network can hold two chunks sent 1 ms apart longer than
 * `idle_timeout`, and the service flushes between them), so every chunk end is a place the
 * service may have flushed, and a reported text equal to the sent text up to one of them
 * settles it (seed 587146974 of the soak: under CPU load the service flushed "Item q0 am"
 * from tokens sent together; trusting the send times, the ledger gave that segment the
 * whole sentence, and a later 4402 reported nothing unspoken). Re-saying text is better
 * than losing it: when only lengths can choose, the earlier end wins a tie.
 *
 * Memory stays bounded: text before the last completed segment is dropped.
 */
import { sentenceEndingChunk } from '../text/chunkEnd.js';
import { isQuietText } from '../text/sentence-marks.js';
import { DEFAULT_MAX_BUFFER_SIZE, releaseSentenceSegmenter, takeSentenceSegmenter, type SentenceSegmenter } from '../text/sentences.js';
import { OffsetQueue, type Offset } from './offset-queue.js';


/** What a segment was matched to: the sent text it covers, and whether the service's wording agreed. */
export interface SegmentMatch {
  /** The sent text the segment covers (its leading whitespace included). */
  sent: string;
  /** Whether the reported text equals `sent`, folded (case, width, whitespace). */
  matches: boolean;
}

/** The segment started, not yet done or skipped. */
interface SegmentSpan {
  segment_id: number;
  text: string;
  end: Offset;
}

/** Options of a {@link SpeechLedger}. */
export interface SpeechLedgerOptions {
  /** Locale of the session (its `language`), choosing the sentence rules; default rules otherwise. */
  locale?: string | undefined;
}

/**
 * What was sent into a live session and which part of it was accounted for: the source
 * of `unspoken` on errors and of the text re-sent after a reconnect. See the module comment.
 */
export class SpeechLedger {
  /** The chunks sent, from the first one not wholly completed on, and where the first starts (each next one starts where the one before ends). */
  private chunks: string[] = [];
  private chunksStart: Offset;
  /** End of all the text sent. */
  private end: Offset = 0;
  /** End of the text covered by segments completed (delivered or skipped). */
  private completed: Offset = 0;
  /** End of the text covered by the segment most recently started. */
  private started: Offset = 0;
  private inProgress: SegmentSpan | undefined;
  /** Where the service's segmentation ends a segment (sentence ends of the sent text), ascending. */
  private sentenceEnds = new OffsetQueue();
  /**
   * The model of the service's segmenter, fed with the sent chunks; `modelCursor` ends its
   * last piece. Between sentences it is dropped (a waiting session keeps no segmenter, ~0.7 KB):
   * the next chunk goes to a new one, fed first the spaces the old one held (`modelRest`).
   */
  private model: SentenceSegmenter | undefined;
  private modelRest = '';
  /**
   * How much of the sent text, at its end, the model has not been given yet: chunks of
   * letters, digits and spaces (`isQuietText`) sent while the model held no undecided stop. Such a
   * chunk cannot open one, so the chunk-end rule would have found no sentence end after it;
   * and the model cuts the same pieces fed them later, together, as fed them one by one
   * (its chunking does not change its cuts). They go to the model with the next chunk that
   * is not quiet, or before the model is read (`catchUp`): a sentence said word by word
   * feeds it once or twice, not once a word, and it lives for that call, not the sentence.
   */
  private unmodelled = 0;
  private modelCursor: Offset = 0;
  /** Segments whose reported text did not match the text sent for them. */
  mismatches = 0;
  /** The session's locale (a string, not the options object: one object less a session). */
  private readonly locale: string | undefined;

  constructor(options: SpeechLedgerOptions = {}) {
    this.locale = options.locale;
    this.chunksStart = 0; // set here, not where declared: variable to V8 from the first ledger (see `SentenceEngine`)
  }

  /**
   * Record a `text.chunk` sent (or queued to be sent) into the session, in order. Empty
   * strings are ignored. `segmenter`: the boundary gate's sentence segmenter, when it saw
   * exactly `text` from a fresh start with the session's locale (`BoundaryGate.flushWhole`);
   * the ledger may take it as its model instead of running its own over the same text.
   */
  push(text: string, segmenter?: SentenceSegmenter): void {
    if (text.length === 0) return;
    // the first chunk in an array of one: a push to an empty array reserves 16 slots
    if (this.chunks.length === 0) this.chunks = [text];
    else this.chunks.push(text);
    this.end += text.length;
    // (a chunk handed with the gate's segmenter was held, so never quiet: it has the stop, closer or line break held)
    if (segmenter === undefined && isQuietText(text) && (this.unmodelled > 0 || this.model === undefined || this.model.undecidedFrom() < 0)) {
      this.unmodelled += text.length;
      return;
    }
    this.catchUp(this.end - text.length);
    if (segmenter === undefined || !this.adopt(text, segmenter)) this.feedModel(text);
  }

  /** Give the model the quiet chunks it was not given yet, as one text (they end before `to`). */
  private catchUp(to: Offset = this.end): void {
    if (this.unmodelled === 0) return;
    const text = this.slice(to - this.unmodelled, to);
    this.unmodelled = 0;
    this.addPieces((this.model ?? this.restoreModel()).feed(text));
  }

  /** A `segment.start` arrived: assign it the next segment of the sent text, and check its wording. */
  segmentStarted(segment_id: number, text: string): SegmentMatch {
    const from = this.started;
    const end = this.nextSegmentEnd(from, text);
    this.started = end;
    this.inProgress = { segment_id, text, end };
    return this.check(from, end, text);
  }

  /** A `segment.done` arrived for the segment in progress: its text is delivered. */
  segmentDelivered(segment_id: number): void {
    const span = this.inProgress;
    if (!span || span.segment_id !== segment_id) return;
    this.completed = span.end;
    this.inProgress = undefined;
    this.compact();
  }

  /**
   * A `segment.skipped` arrived: its text is accounted for (reported with the skip, not
   * part of `unspoken()` any more; `resubmitSkipped` may push it again).
   */
  segmentSkipped(segment_id: number, text: string): SegmentMatch {
    const span = this.inProgress !== undefined && this.inProgress.segment_id === segment_id ? this.inProgress : undefined;
    const from = span ? this.completed : this.started;
    const end = span ? span.end : this.nextSegmentEnd(from, text);
    const match = this.check(from, end, text);
    this.completed = this.started = end;
    this.inProgress = undefined;
    this.compact();
    return match;
  }

  /**
   * The connection dropped: the segment in progress (if any) was not delivered; the text
   * after the last completed segment will be sent again (see {@link resend}).
   */
  abortInProgress(): SegmentSpan | undefined {
    const span = this.inProgress;
    this.inProgress = undefined;
    this.started = this.completed;
    return span;
  }

  /**
   * A new session replaces a dropped one: returns the text to send again (exactly the text
   * not yet delivered or skipped, leading whitespace trimmed), and from now on models the
   * new session, which receives it as one `text.chunk` and numbers its segments anew.
   */
  resend(): string {
    this.abortInProgress();
    const rest = this.unspoken();
    this.completed = this.started = this.modelCursor = this.end;
    this.compact();
    this.sentenceEnds = new OffsetQueue();
    this.unmodelled = 0; // that text is in `rest`
    this.setModel(this.newModel());
    if (rest !== '') this.push(rest);
    return rest;
  }

  /**
   * Whether a sentence end of the sent text lies past the segment last started: the service
   * owes a segment for it at once (contract rule 1), where text without one waits for more
   * text or `idle_timeout` (rule 2).
   */
  awaitsSentence(): boolean {
    return this.sentenceEnds.last() > this.started;
  }

  /**
   * The text sent but not yet accounted for by a delivered or skipped segment, in
   * order, with leading whitespace removed ('' when everything was spoken).
   */
  unspoken(): string {
    return this.slice(this.completed, this.end).trimStart();
  }


  // --- the model of the service's segmentation --------------------------------

  /** The sent text between two offsets (both at or after the completed position). */
  private slice(from: Offset, to: Offset): string {
    let text = '';
    let start = this.chunksStart;
    for (const chunk of this.chunks) {
      if (start >= to) break;
      // a segment within one chunk (a gate's sentence) is that chunk's slice: no array to join
      if (start + chunk.length > from) text += chunk.slice(Math.max(0, from - start), to - start);
      start += chunk.length;
    }
    return text;
  }

  private newModel(): SentenceSegmenter {
    return takeSentenceSegmenter(this.locale === undefined ? {} : { locale: this.locale });
  }

  /** Feed a chunk to the model; a sentence piece with words in it ends a segment (whitespace joins the next). */
  private feedModel(chunk: string): void {
    const model = this.model ?? this.restoreModel();
    // as the service does: the sentences the chunk completes, then the one it ends with
    this.addPieces(model.feed(chunk));
    this.modelEnded(model, sentenceEndingChunk(model));
  }

  /** The pieces the model cut (whitespace alone ends no segment), in order. */
  private addPieces(pieces: readonly string[]): void {
    for (const piece of pieces) {
      this.modelCursor += piece.length;
      if (piece.trim() !== '') this.sentenceEnds.push(this.modelCursor);
    }
  }

  /** The pieces of the sentence a chunk ended with (maybe none); a model left with spaces only is dropped. */
  private modelEnded(model: SentenceSegmenter, ending: readonly string[]): void {
    this.addPieces(ending);
    // The chunk ended a sentence: `end()` reset the model, which then took back only the
    // spaces after the stop. A new segmenter fed those spaces is the same segmenter.
    if (ending.length > 0 && SPACES.test(model.pending())) {
      this.setModel(undefined, model.pending());
      releaseSentenceSegmenter(model); // the ledger held the only reference
    }
  }

  /**
   * The gate's segmenter, fed exactly `chunk` from a fresh start, stands for the model when
   * the chunk ends a sentence and no model is held (the last one ended a sentence, keeping
   * only spaces, `modelRest`): a new model would be fed those spaces, then the chunk, and cut
   * the same pieces, the first one longer by the spaces (`test/live/ledger-handover.test.ts`).
   * At the sentence end `sentenceEndingChunk` calls its `end()`, after which it is as new as
   * a model fed the spaces would be; a chunk that does not end a sentence goes to the model
   * as before (`sentenceEndingChunk` changed nothing then). Returns whether it was taken.
   */
  private adopt(chunk: string, handed: SentenceSegmenter): boolean {
    if (this.model !== undefined || chunk.length + this.modelRest.length >= DEFAULT_MAX_BUFFER_SIZE || handed.pending() !== chunk) return false;
    const ending = sentenceEndingChunk(handed);
    if (ending.length === 0) return false;
    this.modelCursor += this.modelRest.length; // the spaces held lead the first piece
    this.setModel(handed);
    this.modelEnded(handed, ending);
    return true;
  }

  private setModel(model: SentenceSegmenter | undefined, rest = ''): void {
    this.model = model;
    this.modelRest = rest;
  }

  /** A model again after it was dropped between sentences: a new one, given the spaces the old one held. */
  private restoreModel(): SentenceSegmenter {
    const model = this.newModel();
    model.feed(this.modelRest); // spaces alone cut nothing
    this.setModel(model);
    return model;
  }

  /**
   * Where the segment that starts at `from` ends, decided from the text sent:
   * 1. by the contract, at the next sentence end of the sent text (as the service's rule,
   *    modelled with the shared sentence core, finds it);
   * 2. earlier only if the service flushed text without a boundary, which happens at the end
   *    of a chunk (after which no text reached it for `idle_timeout`, or at `text.done`):
   *    the reported text chooses among the chunk ends, each giving the segment the first
   *    piece the service's segmenter cuts from the text flushed there (folded equality; with no sentence
   *    end to fall back on, the nearest length, the earlier on a tie, so that doubt
   *    re-speaks rather than loses). Any chunk end qualifies, however soon the next chunk
   *    was sent: the service's idle timer runs on when chunks arrive, not when they left;
   * 3. later only if the reported text equals, folded, the sent text up to a later sentence
   *    end or chunk end (a service that did not end a sentence where our rules do, and said
   *    so word for word; after a chunk end, its segmentation is modelled anew from there);
   * 4. where none of those matches, at the end of the sent text the reported text equals,
   *    folded, from `from` on, wherever that is (a service that cut where our rules do not,
   *    `Four...` | `yes.`, and said so word for word); the service's segmentation is then
   *    modelled anew from there. Only then is the segment's end guessed, as above.
   */
  private nextSegmentEnd(from: Offset, reported: string): Offset {
    this.catchUp();
    const sentenceEnd = this.sentenceEnds.first((end) => end > from && this.hasWords(from, end));
    // the usual case, the service's words exactly the sent ones: no folding
    if (sentenceEnd !== undefined && this.slice(from, sentenceEnd).trim() === reported.trim()) return sentenceEnd;
    const want = fold(reported);
    const covers = (end: Offset): boolean => fold(this.slice(from, end)) === want;
    if (sentenceEnd !== undefined && covers(sentenceEnd)) return sentenceEnd;
    // A flush at a chunk end `at` ends the segment where the service's segmenter cuts the
    // flushed text first (its `end()` may still cut it in several pieces, each a segment).
    const flushes = this.flushCandidates(from, sentenceEnd).map((at) => ({ at, pieces: this.flushedEnds(from, at) }));
    let flush = flushes.find((candidate) => covers(firstPieceEnd(candidate)));
    if (flush === undefined && sentenceEnd !== undefined) {
      const later = this.sentenceEnds.first((end) => end > sentenceEnd && covers(end));
      if (later !== undefined) return later;
      // the service said the text up to a later chunk end word for word: its segment ends there
      // (flushed there whole), and its segmenter starts afresh after it
      const laterChunk = this.chunkEnds().find((end) => end > sentenceEnd && covers(end));
      if (laterChunk !== undefined) {
        this.remodelFrom(laterChunk);
        return laterChunk;
      }
    }
    if (flush === undefined) {
      const prefix = this.prefixEnd(from, want);
      if (prefix !== undefined) {
        this.remodelFrom(prefix);
        return prefix;
      }
      if (sentenceEnd !== undefined) return sentenceEnd;
      if (flushes.length === 0) return from;
      flush = nearest(flushes, (candidate) => Math.abs(fold(this.slice(from, firstPieceEnd(candidate))).length - want.length));
    }
    // The service ended its segmenter at `flush.at` and starts afresh after it.
    this.remodelFrom(flush.at, flush.pieces);
    return firstPieceEnd(flush);
  }

  /**
   * The end of the shortest sent text from `from` on that folds to `want`, where a service
   * could have cut (after a stop, a closing quote or bracket, before whitespace or the end of
   * the text sent), or undefined. A report that ends mid-word is a wording, not a cut.
   */
  private prefixEnd(from: Offset, want: string): Offset | undefined {
    if (want === '') return undefined;
    const text = this.slice(from, this.end);
    for (let i = 1; i <= text.length; i++) {
      const folded = fold(text.slice(0, i));
      if (folded === want) return CUT_BEFORE.test(text.slice(i - 1, i + 1)) ? from + i : undefined;
      if (folded.length > want.length + 4) return undefined; // (+4: room for forms NFKC composes)
    }
    return undefined;
  }

  /** Where the service's segments end when it flushes the text between `from` and `at` (its segmenter's `end()`). */
  private flushedEnds(from: Offset, at: Offset): Offset[] {
    const segmenter = this.newModel();
    const ends: Offset[] = [];
    let cursor = from;
    const add = (pieces: string[]): void => {
      for (const piece of pieces) {
        cursor += piece.length;
        if (piece.trim() !== '') ends.push(cursor);
      }
    };
    let start = this.chunksStart;
    for (const chunk of this.chunks) {
      if (start + chunk.length > from && start < at) {
        add(segmenter.feed(chunk.slice(Math.max(0, from - start), at - start)));
        add(sentenceEndingChunk(segmenter));
      }
      start += chunk.length;
    }
    add(segmenter.end());
    return ends;
  }

  /** Chunk ends after `from` (with words before them) and before `before`: where the service may have flushed. */
  private flushCandidates(from: Offset, before: Offset | undefined): Offset[] {
    const candidates: Offset[] = [];
    let words = false;
    let start = this.chunksStart;
    for (const chunk of this.chunks) {
      const end = start + chunk.length;
      if (before !== undefined && end >= before) break;
      if (end > from) {
        words ||= chunk.slice(Math.max(0, from - start)).trim() !== '';
        if (words) candidates.push(end);
      }
      start = end;
    }
    return candidates;
  }

  private chunkEnds(): Offset[] {
    let end = this.chunksStart;
    return this.chunks.map((chunk) => (end += chunk.length));
  }

  /** The service flushed at `at` (a chunk end, or where it cut on its own): model its segmentation of the text after it anew. */
  private remodelFrom(at: Offset, flushed: Offset[] = []): void {
    this.setModel(this.newModel());
    this.modelCursor = at;
    this.sentenceEnds.dropAfter(at);
    for (const end of flushed) if (!this.sentenceEnds.has(end)) this.sentenceEnds.push(end);
    let start = this.chunksStart;
    for (const chunk of this.chunks) {
      const end = start + chunk.length;
      if (end > at) this.feedModel(start >= at ? chunk : chunk.slice(at - start));
      start = end;
    }
  }

  private hasWords(from: Offset, to: Offset): boolean {
    return this.slice(from, to).trim() !== '';
  }

  private check(from: Offset, to: Offset, reported: string): SegmentMatch {
    const sent = this.slice(from, to);
    // equal but for the whitespace at the ends: equal folded too, without folding
    const matches = sent.trim() === reported.trim() || fold(sent) === fold(reported);
    if (!matches) this.mismatches++;
    return { sent, matches };
  }

  /** Drop the chunks wholly before the completed position. */
  private compact(): void {
    let drop = 0;
    while (drop < this.chunks.length && this.chunksStart + (this.chunks[drop] as string).length <= this.completed) this.chunksStart += (this.chunks[drop++] as string).length;
    // a new array of the size left, also when nothing is dropped: a waiting session keeps no
    // spare capacity (an array grown by push keeps 17 slots, 152 bytes, for one chunk)
    this.chunks = this.chunks.slice(drop);
    this.sentenceEnds.dropThrough(this.completed);
  }
}

/** A stop (or a closer after one) then whitespace or nothing: where a service may end a segment. */
const CUT_BEFORE = /^[.!?…。！？；;:)\]"'”’»」』）]\s?$/u;

/** Spaces and tabs only (no line break: nothing a segmenter could cut at), or nothing. */
const SPACES = /^[ \t]*$/;

/** Text folded for comparison: compatibility forms, case and whitespace ignored. */
function fold(text: string): string {
  return text.normalize('NFKC').toLowerCase().replace(/\s+/gu, '');
}

/** The value of `values` (not empty) at the least distance; the earliest on a tie. */
function nearest<T>(values: readonly T[], distance: (value: T) => number): T {
  let best = values[0] as T;
  for (const value of values) if (distance(value) < distance(best)) best = value;
  return best;
}

/** Where the segment ends if the service flushed there: its segmenter's first piece (or the flush point). */
function firstPieceEnd(flush: { at: Offset; pieces: Offset[] }): Offset {
  return flush.pieces[0] ?? flush.at;
}
