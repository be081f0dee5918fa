/**
 * Sentence boundaries: a pure incremental core shared by the client operator
 * (`segmentSentences`), the live session's client-side boundaries and the emulator.
 *
 * `feed(text)` returns the sentences whose end is now certain; `end()` returns the
 * remainder. Joining every returned piece gives back the input exactly.
 *
 * The core is four parts:
 * - this file, the streaming engine: it buffers the text, scans it once, code unit by code
 *   unit, keeps a bounded look-back (the word being read, the word before, open quotes, the
 *   last list marker, the current line) and emits a piece at each boundary;
 * - `sentence-decision.ts`, the decision: a run of stops (with the closing quotes glued to it)
 *   is a *candidate*, decided by a pure function of the look-back and of at most
 *   {@link LOOKAHEAD} characters after it: an end, not an end, or wait for more text;
 * - `sentence-breaks.ts`, the boundaries that are not stops: line breaks, list items, rules;
 * - plain tables: the marks (`sentence-marks.ts`: stops, quotes, brackets), list markers
 *   (`sentence-lists.ts`) and words (abbreviations, titles, sentence starters, weekdays and
 *   months, speech tags): English and common ones in `abbreviations.ts`, each other
 *   language's in `languages/<lang>.ts` (`language-tables.ts`).
 *
 * Boundaries that are not stops (`sentence-breaks.ts`): a blank line ends a piece at once; a
 * single line break ends one when the line is a list item (`- `, `1. `, `a) `, `(2) `) or the
 * next line starts one, when the lines before and after it are both short (`SHORT_LINE`) and
 * end with no stop (titles, menu items: `Home` / `About us`), or after a line of no letters
 * or digits (`_____`); otherwise (hard-wrapped prose) it is a space. A rule after text
 * (`RESULTS =====`) ends a piece. Inline lists end an item before the next marker of the same
 * sequence (`1) one 2) two`, `a. one b. two`, `• 9. one • 10. two`, `Steps: i) one ii) two`).
 * A citation after a stop is part of its run (`gas. [1] It`).
 *
 * The contract (lossless, the same pieces however the text is split, whitespace leads, timing)
 * is documented on {@link SentenceSegmenter}.
 */
import { rulesFor, type LocaleRules } from './abbreviations.js';
import { citation, decide, extendRun, LOOKAHEAD, LOOKBACK } from './sentence-decision.js';
import { lastLineCut, lineEndCut, lineStarts, nextLineCut, wordEndCut, type ListMemory } from './sentence-breaks.js';
import { expectedCloser, isCjk, isCloser, isDot, isInert, isNewline, isWhitespace, isWordChar } from './sentence-marks.js';
import { sentenceSegmenterOptions, type FlushPoint, type SentenceSegmenter, type SentenceSegmenterOptions } from './sentence-options.js';
import { newPieceScan, openCandidate, PieceText, type PieceScan, popQuote, quoteOpen, stopKindOf } from './sentence-scan.js';
import { tagSafeSegmenter, TagSafeSegmenter, type ResettableSegmenter } from './sentence-tags.js';

export { bufferSizeOption, DEFAULT_MAX_BUFFER_SIZE, sentenceSegmenterOptions, type SentenceSegmenter, type SentenceSegmenterOptions } from './sentence-options.js';
export { isWhitespace } from './sentence-marks.js';
export { LOOKAHEAD } from './sentence-decision.js';

/**
 * The engine behind {@link createSentenceSegmenter}: the per-session state is a handful of
 * fields (the buffered text, the scan of the current piece, the last list marker); the
 * code is prototype methods, shared by every segmenter of the process.
 */
class SentenceEngine implements ResettableSegmenter {
  /** The rules and buffer bound of the options (a spare engine is reused only for the same). @internal */
  readonly rules: LocaleRules;
  readonly maxBuffer: number;
  private readonly text = new PieceText();
  private out: string[] = [];
  /** The scan of the current piece (fresh after every cut). */
  private st: PieceScan;
  /** The current piece starts at a line start (start of input, or a piece after a cut at a line break). */
  private atLineStart: boolean;
  /** The last list marker read (survives cuts): value and suffix, for inline lists. */
  private readonly list: ListMemory = { marker: undefined };

  constructor(options: SentenceSegmenterOptions) {
    const checked = sentenceSegmenterOptions(options);
    this.rules = rulesFor(checked.locale);
    this.maxBuffer = checked.maxBufferSize;
    // Set here, not where declared: a field given a value where declared and another later is
    // constant to V8 until its first reassignment (here a cut, seconds into a process), which
    // throws away the optimized code that relied on it. Stored twice (declared, then here), the
    // fields are variable from the first engine on. `docs/performance.md`, round 10.
    this.st = newPieceScan();
    this.atLineStart = true;
  }

  feed(chunk: string): string[] {
    if (chunk.length === 0) return [];
    this.text.push(chunk);
    const n = chunk.length;
    for (let i = 0; i < n; ) {
      if (this.st.cand === undefined && this.st.nlCand < 0 && !this.st.inWs && this.st.len > this.st.wordStart) {
        // fast path: inside a word, letters and digits change nothing but the length
        let j = i;
        const limit = Math.min(n, i + (this.maxBuffer - 1 - this.st.len));
        while (j < limit) {
          const c = chunk.charCodeAt(j);
          if (isInert(c)) j++;
          else break;
        }
        if (j > i) {
          if (this.st.wordHead.length <= LOOKBACK) this.st.wordHead += chunk.slice(i, Math.min(j, i + LOOKBACK + 1 - this.st.wordHead.length));
          this.st.len += j - i;
          this.st.lastCode = chunk.charCodeAt(j - 1);
          this.st.omissionRun = false;
          i = j;
          continue;
        }
      }
      this.step(chunk.charCodeAt(i));
      i++;
    }
    return this.take();
  }

  end(): string[] {
    if (this.st.cand) {
      // a decision still waiting on a word (`the U.S. Then`); trailing whitespace stays
      const k = this.st.cand;
      if (k.ahead.trim().length > 0 && decide(k, k.ahead, true, this.rules) === 'end') this.cut(k.end);
    } else {
      // the last line ends with the input: `Home` / `Contact`
      const at = lastLineCut(this.st, this.text);
      if (at > 0) this.cut(at);
    }
    const rest = this.text.all();
    this.text.clear();
    this.st = newPieceScan();
    this.atLineStart = true;
    this.list.marker = undefined;
    const r = this.take();
    if (rest.length > 0) r.push(rest);
    return r;
  }

  pending(): string {
    return this.text.all();
  }

  reset(): void {
    this.text.clear();
    this.out = [];
    this.st = newPieceScan();
    this.atLineStart = true;
    this.list.marker = undefined;
  }

  flushAt(where: FlushPoint): string[] {
    const at = where(this.st, this.text);
    if (at <= 0) return [];
    this.cut(at);
    return this.take();
  }

  atBoundary(): boolean {
    if (!this.st.hasContent) return true;
    if (!this.st.cand) return false;
    return decide(this.st.cand, `${this.st.cand.ahead} A`, true, this.rules) === 'end';
  }

  undecidedFrom(): number {
    return this.st.cand ? this.st.cand.start : this.st.lineBreak;
  }

  /** Emit [0, at) and re-scan the processed rest as the start of a new piece. */
  private cut(at: number): void {
    this.out.push(this.text.cutAt(at));
    const rest = this.text.all();
    const processed = this.st.len - at;
    this.st = newPieceScan();
    this.atLineStart = false; // a line break in the rest is seen again by the replay
    for (let i = 0; i < processed; i++) this.step(rest.charCodeAt(i));
  }

  /** Re-scan the candidate's look-ahead as ordinary text (the candidate did not end). */
  private dropCandidate(): void {
    const c = this.st.cand!;
    this.st.cand = undefined;
    const ahead = c.ahead;
    this.st.len = c.end;
    for (let i = 0; i < ahead.length; i++) this.step(ahead.charCodeAt(i));
  }

  private forceCut(): void {
    let at: number;
    if (this.st.cand) at = this.st.cand.end;
    else if (this.st.inWs && this.st.hasContent && this.st.wsStart > 0) at = this.st.wsStart;
    else if (this.st.lastWsStart > 0 && this.st.len - this.st.lastWsStart <= this.maxBuffer / 2) at = this.st.lastWsStart;
    else {
      at = this.st.len;
      if (this.st.lastCode >= 0xd800 && this.st.lastCode <= 0xdbff) at = this.st.len - 1; // keep a surrogate pair whole
    }
    if (at <= 0) at = this.st.len;
    this.cut(at);
  }

  /** One code unit while a candidate waits: extend its run, or add to its look-ahead. */
  private stepPending(c: number): void {
    const k = this.st.cand!;
    const extend = extendRun(k, c, stopKindOf(c, this.rules), this.st.len === k.end, this.rules.spacedClosers);
    if (extend === 'closer') popQuote(this.st, c);
    this.st.lastCode = c;
    this.st.len++;
    if (extend) {
      k.end = this.st.len;
      k.ahead = '';
      k.inQuote = quoteOpen(this.st);
      return;
    }
    k.ahead += String.fromCharCode(c);
    const ahead = k.ahead;
    const cite = citation(k, ahead);
    if (cite === 'extend') {
      // `gas. [1]`: the citation belongs to the sentence it follows; the text after it decides
      k.end = this.st.len;
      k.ahead = '';
      return;
    }
    if (cite === 'wait') return;
    let d = decide(k, ahead, false, this.rules);
    if (d === 'wait' && ahead.length >= LOOKAHEAD) d = decide(k, ahead, true, this.rules);
    if (d === 'end') this.cut(k.end);
    else if (d === 'not-end') this.dropCandidate();
  }

  /** One code unit: a waiting candidate, a line break being decided, whitespace, or a word's character. */
  private step(c: number): void {
    if (this.st.cand) {
      this.stepPending(c);
      if (this.st.len >= this.maxBuffer) this.forceCut();
      return;
    }
    if (this.st.nlCand >= 0 && this.stepAfterLineBreak(c)) return;
    if (isWhitespace(c)) this.stepWhitespace(c);
    else this.stepWordChar(c);
  }

  /**
   * A single line break waits for the next line's start: a list marker there (`- `, `1. `)
   * ends the piece at the break. Returns true when the text was cut (and `c` re-scanned).
   */
  private stepAfterLineBreak(c: number): boolean {
    const at = nextLineCut(this.st, c, this.text);
    if (at < 0) return false;
    this.cut(at);
    this.step(c);
    return true;
  }

  /** Whitespace: ends the word; a blank line, a list line's end or a short line may cut. */
  private stepWhitespace(c: number): void {
    const st = this.st;
    if (!st.inWs) {
      st.inWs = true;
      st.wsStart = st.len;
      st.wsNl = 0;
      if (st.hasContent) {
        st.lastWsStart = st.len;
        if (this.endWord()) {
          this.step(c); // an inline list item starts: cut before it, re-scanned
          return;
        }
      }
    }
    if (isNewline(c)) {
      st.wsNl += c === 0x2029 ? 2 : 1;
      if (st.hasContent && (st.wsNl >= 2 || st.lineIsList) && st.wsStart > 0) {
        this.cut(st.wsStart);
        this.step(c);
        return;
      }
      if (st.hasContent && st.wsNl === 1 && this.endOfLine()) {
        this.step(c);
        return;
      }
    }
    this.advance(c);
  }

  /** A non-space character: maybe a new word, a stop (a candidate opens), a quote or bracket. */
  private stepWordChar(c: number): void {
    const st = this.st;
    const inWsBefore = st.inWs;
    if (st.inWs || st.len === 0) this.startWord(c, st.inWs ? st.wsNl : 0);
    st.inWs = false;

    const kind = stopKindOf(c, this.rules);
    const inOmission = (kind === 'dot' || kind === 'ellipsis') && (st.lastCode === 0x5b || st.lastCode === 0x28 || (st.omissionRun && (isDot(st.lastCode) || st.lastCode === 0x2026)));
    st.omissionRun = inOmission;
    if (kind !== undefined && !inOmission) openCandidate(this.st, kind, c, this.list.marker, this.rules);
    if (st.wordHead.length <= LOOKBACK) st.wordHead += String.fromCharCode(c);
    if (!st.cand && !inOmission && !popQuote(st, c) && !(isCloser(c) && st.len > 0 && !inWsBefore && isWordChar(st.lastCode))) {
      // `"` opens when none is open; other quotes and brackets open by kind, unless glued
      // after a word (`nicht“`: a German closing quote)
      const closer = expectedCloser(c);
      if (closer !== 0) st.quotes.push({ closer, at: st.len });
    }
    st.hasContent = true;
    this.advance(c);
  }

  /** A word starts at `len` (after `nlBefore` line breaks): its flags, and a line's start. */
  private startWord(c: number, nlBefore: number): void {
    const st = this.st;
    if (st.hasContent) st.prevWordStart = st.wordStart;
    st.wordStart = st.len;
    st.wordHead = '';
    st.wordLineStart = nlBefore > 0 || (!st.hasContent && this.atLineStart);
    st.wordItemStart = nlBefore > 0 || !st.hasContent || (st.prevWordBullet && st.wordItemStart);
    if (nlBefore > 0) lineStarts(st, c, nlBefore);
  }

  /** `c` was read: count it, and force a cut when the buffer is full. */
  private advance(c: number): void {
    this.st.lastCode = c;
    this.st.len++;
    if (this.st.len >= this.maxBuffer) this.forceCut();
  }

  /**
   * A word just ended (whitespace follows): returns true when the piece was cut there (a
   * rule after text, an inline list item starting: `sentence-breaks.ts`).
   */
  private endWord(): boolean {
    const at = wordEndCut(this.st, this.text, this.list);
    if (at < 0) return false;
    this.cut(at);
    return true;
  }

  /** A line just ended at a single line break: returns true when the piece was cut (short lines, a line of no letters: `sentence-breaks.ts`). */
  private endOfLine(): boolean {
    const at = lineEndCut(this.st, this.text);
    if (at < 0) return false;
    this.cut(at);
    return true;
  }

  private take(): string[] {
    const r = this.out;
    this.out = [];
    return r;
  }
}

/** Create an incremental sentence segmenter (see the module documentation for the rules). */
export function createSentenceSegmenter(options: SentenceSegmenterOptions = {}): SentenceSegmenter {
  return tagSafeSegmenter(new SentenceEngine(options)); // a tag (`<break time="1.5s"/>`) is never cut: sentence-tags.ts
}

/**
 * The process's spare segmenters: the last two a live session's gate or ledger let go of
 * ({@link releaseSentenceSegmenter}), reset, for the next sentence of any session with the
 * same options ({@link takeSentenceSegmenter}), the last one let go of first. A session starts
 * a segmenter at each sentence's first token and lets it go at the sentence's end (a waiting
 * session keeps none); a spare saves the new engine where one session's sentence ends before
 * another's starts, and keeps the engine's hidden classes alive while every session waits,
 * which a memory-reducing GC would otherwise drop with V8's optimized code of the engine
 * (`docs/performance.md`, round 11). Two: a sentence said token by token has two, the gate's
 * and the ledger's model, let go of together at its end (round 12).
 */
const spares: TagSafeSegmenter<SentenceEngine>[] = [];
/** How many spares are kept. */
const SPARES = 2;

/** A segmenter as {@link createSentenceSegmenter} makes one: the last spare when it has the same options. @internal */
export function takeSentenceSegmenter(options: SentenceSegmenterOptions = {}): SentenceSegmenter {
  const taken = spares[spares.length - 1];
  if (taken !== undefined) {
    const checked = sentenceSegmenterOptions(options);
    if (taken.inner.rules === rulesFor(checked.locale) && taken.inner.maxBuffer === checked.maxBufferSize) return spares.pop()!;
  }
  return createSentenceSegmenter(options);
}

/**
 * The caller is done with `segmenter` (a segmenter of {@link takeSentenceSegmenter}) and
 * keeps no reference to it: it becomes a spare, reset. @internal
 */
export function releaseSentenceSegmenter(segmenter: SentenceSegmenter): void {
  if (!(segmenter instanceof TagSafeSegmenter) || !(segmenter.inner instanceof SentenceEngine)) return;
  if (spares.length === SPARES) spares.shift(); // the older one goes
  segmenter.reset();
  spares.push(segmenter as TagSafeSegmenter<SentenceEngine>);
}
