/**
 * From spoken words back to the words as written: the speakable pieces (`speakable.ts`) of a
 * stream, joined, with each spoken character's piece; a run of spoken text (a segment, a word)
 * gives the original text it came from. A lexicon rewrite (`sequel`) gives its word (`SQL`), a
 * spoken form (`three dollars and fifty cents`) its `$3.50`, a URL's host the whole URL; text
 * that was dropped (emphasis markers, tags, thoughts) is in no piece and gives nothing.
 */
import type { SpeakablePiece } from './speakable-pieces.js';

/** One spoken piece, placed in the spoken stream: spoken [at, at + text.length) renders source [start, end). */
interface Placed {
  at: number;
  text: string;
  start: number;
  end: number;
  /** The spoken text is the source itself (offsets map one to one). */
  verbatim: boolean;
}

const isSpace = (c: string): boolean => /\s/.test(c);

/** How many code units of punctuation or space `a` and `b` share at their start (`dir` 1) or end (-1). */
function sharedEnd(a: string, b: string, dir: 1 | -1): number {
  let n = 0;
  while (n < a.length && n < b.length) {
    const c = dir === 1 ? a.charAt(n) : a.charAt(a.length - 1 - n);
    if (c !== (dir === 1 ? b.charAt(n) : b.charAt(b.length - 1 - n)) || /[\p{L}\p{N}]/u.test(c)) break;
    n++;
  }
  return n;
}

/**
 * The spoken stream of a speakable text and its map back to the source. Feed it what the core
 * gives out (`add`), then ask where a run of spoken text is (`locate`) and what it was
 * written as (`sourceOf`). Offsets are absolute over the whole stream; `forget` frees what
 * is before an offset (a long session keeps only its last segments).
 */
export class CaptionMap {
  /** The source text seen so far, from absolute offset `sourceBase`. */
  private source = '';
  private sourceBase = 0;
  /** The spoken text so far, from absolute offset `spokenBase`. */
  private spoken = '';
  private spokenBase = 0;
  private placed: Placed[] = [];
  /** Absolute source offset up to which the core has decided (later pieces start there or after). */
  private decided = 0;

  /** The source (`text`) and what the core made of it, in order; hidden pieces are not spoken. */
  add(text: string, pieces: readonly SpeakablePiece[]): void {
    this.source += text;
    for (const p of pieces) {
      this.decided = Math.max(this.decided, p.end);
      if (p.hidden !== undefined) continue;
      const source = this.sourceSlice(p.start, p.end);
      if (p.text === source) this.place(p.text, p.start, p.end, true);
      else {
        // a rewrite (`three dollars and fifty cents.` for `$3.50.`): punctuation both share at
        // its ends stays itself, so `cents.` maps to `$3.50.` and a following `.` to `.`
        const head = sharedEnd(p.text, source, 1);
        const tail = sharedEnd(p.text.slice(head), source.slice(head), -1);
        this.place(p.text.slice(0, head), p.start, p.start + head, true);
        this.place(p.text.slice(head, p.text.length - tail), p.start + head, p.end - tail, false);
        this.place(p.text.slice(p.text.length - tail), p.end - tail, p.end, true);
      }
    }
  }

  private place(text: string, start: number, end: number, verbatim: boolean): void {
    if (text.length === 0) return;
    this.placed.push({ at: this.spokenEnd, text, start, end, verbatim });
    this.spoken += text;
  }

  /** Absolute end of the spoken stream so far. */
  get spokenEnd(): number {
    return this.spokenBase + this.spoken.length;
  }

  /**
   * Where `text` is in the spoken stream at or after `from`, compared without whitespace and
   * case (the service trims and may fold): its absolute [start, end), or undefined.
   */
  locate(text: string, from: number, until = this.spokenEnd): [number, number] | undefined {
    const want = [...text].filter((c) => !isSpace(c)).map((c) => c.toLowerCase());
    if (want.length === 0) return undefined;
    for (let p = Math.max(from, this.spokenBase); p < until; p++) {
      const c = this.spoken.charAt(p - this.spokenBase);
      if (isSpace(c) || c.toLowerCase() !== want[0]) continue;
      const end = this.matchAt(want, p, until);
      if (end !== undefined) return [p, end];
    }
    return undefined;
  }

  /** The source text the spoken run [from, to) came from, dropped markup left out; '' for none. */
  sourceOf(from: number, to: number): string {
    let out = '';
    for (const p of this.placed) {
      const a = Math.max(from, p.at);
      const b = Math.min(to, p.at + p.text.length);
      if (a >= b) continue;
      if (p.verbatim) out += this.sourceSlice(p.start + (a - p.at), p.start + (b - p.at));
      else if (p.text.slice(a - p.at, b - p.at).trim() !== '') out += this.sourceSlice(p.start, p.end); // a rewrite: all of it
    }
    return out.trim();
  }

  /** Frees the spoken stream before `offset` (absolute) and the source no later piece needs. */
  forget(offset: number): void {
    const keep = this.placed.findIndex((p) => p.at + p.text.length > offset);
    this.placed = keep < 0 ? [] : this.placed.slice(keep);
    const spokenCut = Math.min(offset, this.spokenEnd) - this.spokenBase;
    if (spokenCut > 0) {
      this.spoken = this.spoken.slice(spokenCut);
      this.spokenBase += spokenCut;
    }
    const sourceCut = (this.placed[0]?.start ?? this.decided) - this.sourceBase;
    if (sourceCut > 0) {
      this.source = this.source.slice(sourceCut);
      this.sourceBase += sourceCut;
    }
  }

  private matchAt(want: readonly string[], p: number, until: number): number | undefined {
    let i = p;
    for (const w of want) {
      while (i < until && isSpace(this.spoken.charAt(i - this.spokenBase))) i++;
      if (i >= until || this.spoken.charAt(i - this.spokenBase).toLowerCase() !== w) return undefined;
      i++;
    }
    return i;
  }

  private sourceSlice(start: number, end: number): string {
    return this.source.slice(start - this.sourceBase, end - this.sourceBase);
  }
}
