/**
 * The speech ledger: a pure record of what text was pushed into a live session, in
 * order, and which part of it the server has already accounted for (delivered as audio,
 * or reported as skipped). From it comes the one number that matters when a session
 * ends badly: the text not yet spoken (`unspoken()`), in order, nothing lost and
 * nothing repeated.
 *
 * The service segments the pushed text by content (sentence boundaries, idle flushes),
 * so the segment texts, concatenated, are the pushed text in order, except that the
 * server may drop or change whitespace between segments. The ledger therefore maps each
 * segment's text back onto the pushed text by walking both while ignoring whitespace;
 * it never re-segments the text itself.
 *
 * Memory stays bounded: text before the last completed segment is dropped.
 */

/** Whether the character with this code point is whitespace (no string made for ASCII). */
const isWhitespaceCode = (code: number): boolean =>
  code < 128 ? code === 32 || (code >= 9 && code <= 13) : /\s/.test(String.fromCodePoint(code));

interface Cursor {
  /** Index into `chunks`. */
  chunk: number;
  /** Offset into `chunks[chunk]`. */
  offset: number;
}

/** State of the segment in progress (started, neither done nor skipped). */
interface SegmentSpan {
  segment_id: number;
  text: string;
  end: Cursor;
}

/**
 * What was pushed into a live session and which part of it was accounted for: the source
 * of `unspoken` on errors and of the text re-sent after a reconnect. See the module comment.
 */
export class SpeechLedger {
  private chunks: string[] = [];
  /** End of the text covered by segments completed (delivered or skipped). */
  private completed: Cursor = { chunk: 0, offset: 0 };
  /** End of the text covered by the segment most recently started. */
  private started: Cursor = { chunk: 0, offset: 0 };
  private inProgress: SegmentSpan | undefined;
  private mismatches = 0;
  private pushedChars = 0;
  private deliveredSegments = 0;
  private skippedSegments = 0;

  /** Record text pushed into the session (in the order it is sent). Empty strings are ignored. */
  push(text: string): void {
    if (text.length === 0) return;
    this.chunks.push(text);
    this.pushedChars += text.length;
  }

  /** A `segment.start` arrived: map its text onto the pushed text. */
  segmentStarted(segment_id: number, text: string): void {
    const end = this.match(this.started, text);
    this.started = end;
    this.inProgress = { segment_id, text, end };
  }

  /** A `segment.done` arrived for the segment in progress: its text is delivered. */
  segmentDelivered(segment_id: number): void {
    const span = this.inProgress;
    if (!span || span.segment_id !== segment_id) return;
    this.completed = span.end;
    this.inProgress = undefined;
    this.deliveredSegments++;
    this.compact();
  }

  /**
   * A `segment.skipped` arrived: its text is accounted for (reported with the skip, not
   * part of `unspoken()` any more; `resubmitSkipped` may push it again).
   */
  segmentSkipped(segment_id: number, text: string): void {
    if (this.inProgress && this.inProgress.segment_id === segment_id) {
      this.completed = this.inProgress.end;
    } else {
      this.completed = this.match(this.completed, text);
    }
    this.started = this.completed;
    this.inProgress = undefined;
    this.skippedSegments++;
    this.compact();
  }

  /**
   * The connection dropped: the segment in progress (if any) was not delivered, and the
   * text the server had received but not completed will be sent again. Rewinds the
   * "started" position to the last completed segment.
   */
  abortInProgress(): SegmentSpan | undefined {
    const span = this.inProgress;
    this.inProgress = undefined;
    this.started = this.completed;
    return span;
  }

  /** The segment started but not yet done, if any. */
  get segmentInProgress(): { segment_id: number; text: string } | undefined {
    return this.inProgress ? { segment_id: this.inProgress.segment_id, text: this.inProgress.text } : undefined;
  }

  /**
   * The text pushed but not yet accounted for by a delivered or skipped segment, in
   * order, with leading whitespace removed ('' when everything was spoken).
   */
  unspoken(): string {
    return this.textFrom(this.completed).trimStart();
  }

  /** Counters, for tests and diagnostics. */
  stats(): { pushedChars: number; delivered: number; skipped: number; mismatches: number } {
    return {
      pushedChars: this.pushedChars,
      delivered: this.deliveredSegments,
      skipped: this.skippedSegments,
      mismatches: this.mismatches,
    };
  }

  private textFrom(cursor: Cursor): string {
    const first = this.chunks[cursor.chunk];
    if (first === undefined) return '';
    const parts = [first.slice(cursor.offset)];
    for (let i = cursor.chunk + 1; i < this.chunks.length; i++) parts.push(this.chunks[i] as string);
    return parts.join('');
  }

  /**
   * Walk `text` and the pushed text from `from`, both ignoring whitespace; returns the
   * position just after the last matched character. On a mismatch (the server changed
   * more than whitespace), falls back to counting non-whitespace characters.
   */
  private match(from: Cursor, text: string): Cursor {
    let chunk = from.chunk;
    let offset = from.offset;
    let matchedAll = true;
    // Code points as numbers, not one string per character (a hot path: every segment).
    for (let i = 0; i < text.length; ) {
      const ch = text.codePointAt(i) as number;
      i += ch > 0xffff ? 2 : 1;
      if (isWhitespaceCode(ch)) continue;
      // advance the pushed-text cursor to its next non-whitespace character
      let found = false;
      while (chunk < this.chunks.length) {
        const current = this.chunks[chunk] as string;
        if (offset >= current.length) {
          chunk++;
          offset = 0;
          continue;
        }
        const code = current.codePointAt(offset) as number;
        const width = code > 0xffff ? 2 : 1;
        if (isWhitespaceCode(code)) {
          offset += width;
          continue;
        }
        if (code !== ch) matchedAll = false;
        offset += width;
        found = true;
        break;
      }
      if (!found) {
        matchedAll = false;
        break;
      }
    }
    if (!matchedAll) this.mismatches++;
    return { chunk, offset };
  }

  /** Drop chunks wholly before the completed position. */
  private compact(): void {
    const drop = this.completed.chunk;
    if (drop === 0) return;
    this.chunks.splice(0, drop);
    this.completed = { chunk: 0, offset: this.completed.offset };
    this.started = { chunk: this.started.chunk - drop, offset: this.started.offset };
    if (this.inProgress) {
      this.inProgress = {
        ...this.inProgress,
        end: { chunk: this.inProgress.end.chunk - drop, offset: this.inProgress.end.offset },
      };
    }
  }
}
