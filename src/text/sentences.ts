/**
 * Sentence boundaries: a pure incremental core shared by the client operator
 * (`segmentSentences`) and the emulator's live session.
 *
 * `feed(text)` returns the sentences whose end is now certain; `end()` returns the
 * remainder. Joining every returned piece gives back the input exactly.
 *
 * NOTE: interim implementation; being replaced by the full rule set.
 */
export interface SentenceSegmenterOptions {
  /** Locale tag (e.g. `en-us`, `de-de`) choosing abbreviation sets. */
  locale?: string;
}

export interface SentenceSegmenter {
  /** Feed more text; returns sentences now complete, in order. */
  feed(text: string): string[];
  /** The input is over: returns the remainder (zero or one piece). */
  end(): string[];
  /** Text buffered, not yet returned. */
  pending(): string;
}

export function createSentenceSegmenter(_options: SentenceSegmenterOptions = {}): SentenceSegmenter {
  let buffer = '';
  return {
    feed(text) {
      buffer += text;
      const out: string[] = [];
      const re = /[.!?。！？]+["')\]]*\s+/g;
      let last = 0;
      let m: RegExpExecArray | null;
      while ((m = re.exec(buffer)) !== null) {
        out.push(buffer.slice(last, m.index + m[0].length));
        last = m.index + m[0].length;
      }
      buffer = buffer.slice(last);
      return out;
    },
    end() {
      const rest = buffer;
      buffer = '';
      return rest.length > 0 ? [rest] : [];
    },
    pending() {
      return buffer;
    },
  };
}
