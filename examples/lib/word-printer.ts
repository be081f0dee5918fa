/**
 * Prints a streamed answer token by token, with notes (`[segment 0 spoken]`) between its
 * words: a note that comes while a word is still arriving waits for the next space or
 * line break, so no note lands inside a word.
 */

export interface WordPrinter {
  /** Print a token of the answer; pending notes go out at its last space or line break. */
  text(token: string): void;
  /** A note, printed at once if the answer so far ends between words, else at the next word boundary. */
  note(note: string): void;
  /** The answer is complete (or paused): a space if it ends inside a word, then the notes still waiting; later notes print at once. */
  end(): void;
}

/** A {@link WordPrinter} writing to `write` (e.g. `process.stdout.write`). */
export function wordPrinter(write: (text: string) => void): WordPrinter {
  let pending: string[] = [];
  /** The answer printed so far ends with whitespace (or nothing was printed yet). */
  let atBoundary = true;
  const flush = (): void => {
    for (const note of pending) write(`${note} `);
    pending = [];
  };
  return {
    text(token) {
      if (token === '') return;
      const cut = Math.max(token.lastIndexOf(' '), token.lastIndexOf('\n'), token.lastIndexOf('\t'));
      if (pending.length > 0 && (cut >= 0 || atBoundary)) {
        // up to and including the last boundary, the notes, then the start of the next word
        write(token.slice(0, cut + 1));
        flush();
        write(token.slice(cut + 1));
      } else {
        write(token);
      }
      atBoundary = /\s$/.test(token);
    },
    note(note) {
      pending.push(note);
      if (atBoundary) flush();
    },
    end() {
      if (!atBoundary) write(' ');
      atBoundary = true;
      flush();
    },
  };
}
