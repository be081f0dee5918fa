/**
 * Sentence boundaries: a pure incremental core shared by the client operator
 * (`segmentSentences`), the live session's client-side boundaries and the emulator.
 *
 * `feed(text)` returns the sentences whose end is now certain; `end()` returns the
 * remainder. Joining every returned piece gives back the input exactly.
 *
 * The core is three parts:
 * - this file, the streaming engine: it buffers the text, scans it once, code unit by code
 *   unit, keeps a bounded look-back (the word being read, the word before, open quotes, the
 *   last list marker, the current line) and emits a piece at each boundary;
 * - `sentence-decision.ts`, the decision: a run of stops (with the closing quotes glued to it)
 *   is a *candidate*, decided by a pure function of the look-back and of at most
 *   {@link LOOKAHEAD} characters after it: an end, not an end, or wait for more text;
 * - plain tables: the marks (`sentence-marks.ts`: stops, quotes, brackets), list markers
 *   (`sentence-lists.ts`) and per-language words (`abbreviations.ts`: abbreviations, titles,
 *   sentence starters, weekdays and months, speech tags).
 *
 * Boundaries that are not stops are decided here: a blank line ends a piece at once; a single
 * line break ends one when the line is a list item (`- `, `1. `, `a) `, `(2) `) or the next
 * line starts one, when the lines before and after it are both short ({@link SHORT_LINE}) and
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
import { citation, classOfWord, decide, extendRun, LOOKAHEAD, LOOKBACK, type StopKind } from './sentence-decision.js';
import { BULLET, isNextMarker, LIST_MARKER, LIST_PREFIX, markerOf, RULE, type Marker } from './sentence-lists.js';
// prettier-ignore
import { Char, classify, endsWithStop, expectedCloser, isCjk, isCloser, isDot, isHardStop, isInert, isNewline, isStrongStop, isWhitespace, isWordChar } from './sentence-marks.js';
import { sentenceSegmenterOptions, type SentenceSegmenter, type SentenceSegmenterOptions } from './sentence-options.js';
import { lastWsBefore, newPieceScan, PieceText, popQuote, quoteOpen } from './sentence-scan.js';
import { tagSafeSegmenter } from './sentence-tags.js';

export { bufferSizeOption, sentenceSegmenterOptions, type SentenceSegmenter, type SentenceSegmenterOptions } from './sentence-options.js';
export { isWhitespace } from './sentence-marks.js';
export { LOOKAHEAD } from './sentence-decision.js';

/** A title, menu item or list line without markers: at most this many code units. */
const SHORT_LINE = 40;

/**
 * Create an incremental sentence segmenter (see the module documentation for the rules). A tag
 * (`<break time="1.5s"/>`) is never cut: see `sentence-tags.ts`.
 */
export function createSentenceSegmenter(options: SentenceSegmenterOptions = {}): SentenceSegmenter {
  return tagSafeSegmenter(createSentenceCore(options));
}

/** The segmenter without the tag wrapper. */
function createSentenceCore(options: SentenceSegmenterOptions): SentenceSegmenter {
  const checked = sentenceSegmenterOptions(options);
  const rules: LocaleRules = rulesFor(checked.locale);
  const maxBuffer = checked.maxBufferSize;

  const text = new PieceText();
  let out: string[] = [];
  /** The scan of the current piece (fresh after every cut). */
  let st = newPieceScan();
  /** The current piece starts at a line start (start of input, or a piece after a cut at a line break). */
  let atLineStart = true;
  /** The last list marker read (survives cuts): value and suffix, for inline lists. */
  let marker: Marker | undefined;

  /** Emit [0, at) and re-scan the processed rest as the start of a new piece. */
  function cut(at: number): void {
    out.push(text.cutAt(at));
    const rest = text.all();
    const processed = st.len - at;
    st = newPieceScan();
    atLineStart = false; // a line break in the rest is seen again by the replay
    for (let i = 0; i < processed; i++) step(rest.charCodeAt(i));
  }

  /** Re-scan the candidate's look-ahead as ordinary text (the candidate did not end). */
  function dropCandidate(): void {
    const c = st.cand!;
    st.cand = undefined;
    const ahead = c.ahead;
    st.len = c.end;
    for (let i = 0; i < ahead.length; i++) step(ahead.charCodeAt(i));
  }

  function openCandidate(kind: StopKind, c: number): void {
    // the word before the stop (its head, ending in `…` when longer than LOOKBACK)
    const raw = st.inWs || st.len === st.wordStart ? '' : st.len - st.wordStart <= LOOKBACK ? st.wordHead : `${st.wordHead.slice(0, LOOKBACK)}\u2026`;
    const spaced = kind === 'dot' && raw.length === 0 && st.lastDotEnd >= 0 && st.lastDotEnd === st.len - 1 ? st.spacedDots + 1 : kind === 'dot' && raw.length === 0 ? 1 : 0;
    const afterBullet = st.prevWordBullet && st.wordItemStart;
    st.cand = {
      kind,
      start: st.len,
      end: st.len + 1,
      word: raw,
      wordClass:
        kind === 'dot'
          ? classOfWord(raw, { itemStart: st.wordItemStart, afterBullet, lineStart: st.wordLineStart, afterNumber: st.prevWordNumeric, marker }, rules)
          : 'plain',
      closed: false,
      cornerClose: false,
      inQuote: quoteOpen(st),
      spacedDots: spaced,
      prevCapitalized: st.prevWordCapitalized,
      prevWord: st.prevWordHead,
      ahead: '',
    };
    st.spacedDots = spaced;
    if (kind === 'dot' && c !== 0x2026) st.lastDotEnd = st.len + 1;
  }

  function stopKind(c: number): StopKind | undefined {
    if (isHardStop(c)) return 'hard';
    if (isStrongStop(c, rules.semicolonQuestion)) return 'strong';
    if (c === 0x3a && rules.colonStop) return 'colon';
    if (c === 0x2026) return 'ellipsis';
    if (isDot(c)) return 'dot';
    return undefined;
  }

  function forceCut(): void {
    let at: number;
    if (st.cand) at = st.cand.end;
    else if (st.inWs && st.hasContent && st.wsStart > 0) at = st.wsStart;
    else if (st.lastWsStart > 0 && st.len - st.lastWsStart <= maxBuffer / 2) at = st.lastWsStart;
    else {
      at = st.len;
      if (st.lastCode >= 0xd800 && st.lastCode <= 0xdbff) at = st.len - 1; // keep a surrogate pair whole
    }
    if (at <= 0) at = st.len;
    cut(at);
  }

  /** One code unit while a candidate waits: extend its run, or add to its look-ahead. */
  function stepPending(c: number): void {
    const k = st.cand!;
    const extend = extendRun(k, c, stopKind(c), st.len === k.end, rules.spacedClosers);
    if (extend === 'closer') popQuote(st, c);
    st.lastCode = c;
    st.len++;
    if (extend) {
      k.end = st.len;
      k.ahead = '';
      k.inQuote = quoteOpen(st);
      return;
    }
    k.ahead += String.fromCharCode(c);
    const ahead = k.ahead;
    const cite = citation(k, ahead);
    if (cite === 'extend') {
      // `gas. [1]`: the citation belongs to the sentence it follows; the text after it decides
      k.end = st.len;
      k.ahead = '';
      return;
    }
    if (cite === 'wait') return;
    let d = decide(k, ahead, false, rules);
    if (d === 'wait' && ahead.length >= LOOKAHEAD) d = decide(k, ahead, true, rules);
    if (d === 'end') cut(k.end);
    else if (d === 'not-end') dropCandidate();
  }

  function step(c: number): void {
    if (st.cand) {
      stepPending(c);
      if (st.len >= maxBuffer) forceCut();
      return;
    }
    if (st.nlCand >= 0) {
      if (isWhitespace(c)) {
        const at = st.nlCand;
        const list = LIST_MARKER.test(st.nlLook);
        st.nlCand = -1;
        st.nlLook = '';
        if (list) {
          cut(at);
          step(c);
          return;
        }
      } else {
        st.nlLook += String.fromCharCode(c);
        if (!LIST_PREFIX.test(st.nlLook)) {
          st.nlCand = -1;
          st.nlLook = '';
        }
      }
    }

    if (isWhitespace(c)) {
      if (!st.inWs) {
        st.inWs = true;
        st.wsStart = st.len;
        st.wsNl = 0;
        if (st.hasContent) {
          st.lastWsStart = st.len;
          if (endWord()) {
            step(c); // an inline list item starts: cut before it, re-scanned
            return;
          }
        }
      }
      if (isNewline(c)) {
        st.wsNl += c === 0x2029 ? 2 : 1;
        if (st.hasContent && (st.wsNl >= 2 || st.lineIsList)) {
          if (st.wsStart > 0) {
            cut(st.wsStart);
            step(c);
            return;
          }
        }
        if (st.hasContent && st.wsNl === 1 && endOfLine()) {
          step(c);
          return;
        }
      }
      st.lastCode = c;
      st.len++;
      if (st.len >= maxBuffer) forceCut();
      return;
    }

    // A non-space character.
    const newWord = st.inWs || st.len === 0;
    const inWsBefore = st.inWs;
    const nlBefore = st.inWs ? st.wsNl : 0;
    st.inWs = false;

    if (newWord) {
      if (st.hasContent) st.prevWordStart = st.wordStart;
      st.wordStart = st.len;
      st.wordHead = '';
      st.wordLineStart = nlBefore > 0 || (!st.hasContent && atLineStart);
      st.wordItemStart = nlBefore > 0 || !st.hasContent || (st.prevWordBullet && st.wordItemStart);
      if (nlBefore > 0) {
        st.lineIsList = false;
        st.lineStart = st.len;
        if (st.hasContent && nlBefore === 1) {
          st.nlCand = st.wsStart;
          st.nlLook = String.fromCharCode(c);
          if (!LIST_PREFIX.test(st.nlLook)) {
            st.nlCand = -1;
            st.nlLook = '';
          }
        }
      }
    }

    const kind = stopKind(c);
    const inOmission = (kind === 'dot' || kind === 'ellipsis') && (st.lastCode === 0x5b || st.lastCode === 0x28 || (st.omissionRun && (isDot(st.lastCode) || st.lastCode === 0x2026)));
    st.omissionRun = inOmission;
    if (kind !== undefined && !inOmission) openCandidate(kind, c);
    if (st.wordHead.length <= LOOKBACK) st.wordHead += String.fromCharCode(c);
    if (st.cand) {
      st.hasContent = true;
      st.lastCode = c;
      st.len++;
      if (st.len >= maxBuffer) forceCut();
      return;
    }
    if (!inOmission && !popQuote(st, c) && !(isCloser(c) && st.len > 0 && !inWsBefore && isWordChar(st.lastCode))) {
      // `"` opens when none is open; other quotes and brackets open by kind, unless glued
      // after a word (`nicht“`: a German closing quote)
      const closer = expectedCloser(c);
      if (closer !== 0) st.quotes.push({ closer, at: st.len });
    }
    st.hasContent = true;
    st.lastCode = c;
    st.len++;
    if (st.len >= maxBuffer) forceCut();
  }

  /**
   * A word just ended (whitespace follows): note list bullets and markers; returns true when
   * an inline list item starts here and the text was cut before it.
   */
  function endWord(): boolean {
    st.prevWordHead = st.wordHead;
    if (st.len - st.wordStart >= 5 && st.wordStart > st.lineStart && RULE.test(st.wordHead)) {
      // a rule after text on its line (`RESULTS =====`) underlines it: the piece ends after it
      // (a rule alone on its line is a line of its own, see endOfLine)
      cut(st.len);
      return true;
    }
    if (st.len - st.wordStart > 6) {
      st.prevWordBullet = false;
      st.prevWordCapitalized = classify(st.wordHead.charCodeAt(0)) === Char.Upper;
      st.prevWordNumeric = false;
      return false;
    }
    const word = text.range(st.wordStart, st.len);
    if (st.wordLineStart && LIST_MARKER.test(word)) st.lineIsList = true;
    const bullet = BULLET.test(word);
    const m = markerOf(word);
    if (m) {
      if (st.wordItemStart) {
        marker = m;
        st.markerAt = -1;
      } else if (isNextMarker(m, marker)) {
        // `1) one 2) two`: the item ends before this marker (and before its bullet); when the
        // first marker was inside the text (`Steps: i) one ii) two`), first before that one
        const at = st.markerAt > 0 ? st.markerAt : st.prevWordBullet && st.prevWordStart > 0 ? lastWsBefore(text, st.prevWordStart) : lastWsBefore(text, st.wordStart);
        if (at > 0) {
          cut(at);
          return true;
        }
      } else if (m.suffix !== '.' && (m.number === 1 || m.letter > 0 || m.roman > 0)) {
        // `x) first`, `i) one` inside a sentence: an item if the next marker follows
        marker = m;
        st.markerAt = lastWsBefore(text, st.wordStart);
      }
    }
    st.prevWordBullet = bullet;
    st.prevWordCapitalized = classify(word.charCodeAt(0)) === Char.Upper;
    st.prevWordNumeric = /^\d+$/.test(word);
    return false;
  }

  /**
   * A line just ended at a single line break (at `wsStart`). Short lines without a stop are
   * titles, menu items or list items without markers: when two follow each other, the break
   * between them ends a piece (`Home` / `About us`); a line of no letters or digits (`_____`)
   * is a piece of its own. Returns true when the text was cut.
   */
  function endOfLine(): boolean {
    const lineLen = st.wsStart - st.lineStart;
    const line = lineLen <= 4 * SHORT_LINE ? text.range(st.lineStart, st.wsStart).trim() : '';
    const short = line.length > 0 && line.length <= SHORT_LINE && !endsWithStop(line);
    const pendingBreak = st.lineBreak;
    st.lineBreak = -1;
    if (short && pendingBreak > 0) {
      cut(pendingBreak);
      return true;
    }
    if (line.length > 0 && !/[\p{L}\p{N}]/u.test(line) && st.wsStart > 0) {
      cut(st.wsStart);
      return true;
    }
    if (short) st.lineBreak = st.wsStart;
    return false;
  }

  function take(): string[] {
    const r = out;
    out = [];
    return r;
  }

  return {
    feed(chunk) {
      if (chunk.length === 0) return [];
      text.push(chunk);
      const n = chunk.length;
      for (let i = 0; i < n; ) {
        if (st.cand === undefined && st.nlCand < 0 && !st.inWs && st.len > st.wordStart) {
          // fast path: inside a word, letters and digits change nothing but the length
          let j = i;
          const limit = Math.min(n, i + (maxBuffer - 1 - st.len));
          while (j < limit) {
            const c = chunk.charCodeAt(j);
            if (isInert(c)) j++;
            else break;
          }
          if (j > i) {
            if (st.wordHead.length <= LOOKBACK) st.wordHead += chunk.slice(i, Math.min(j, i + LOOKBACK + 1 - st.wordHead.length));
            st.len += j - i;
            st.lastCode = chunk.charCodeAt(j - 1);
            st.omissionRun = false;
            i = j;
            continue;
          }
        }
        step(chunk.charCodeAt(i));
        i++;
      }
      return take();
    },
    end() {
      if (st.cand) {
        // a decision still waiting on a word (`the U.S. Then`); trailing whitespace stays
        const k = st.cand;
        if (k.ahead.trim().length > 0 && decide(k, k.ahead, true, rules) === 'end') cut(k.end);
      } else if (st.lineBreak > 0 && st.lineStart > st.lineBreak && st.len - st.lineStart <= 4 * SHORT_LINE) {
        // the last line ends with the input: `Home` / `Contact`
        const line = text.range(st.lineStart, st.len).trim();
        if (line.length > 0 && line.length <= SHORT_LINE && !endsWithStop(line)) cut(st.lineBreak);
      }
      const rest = text.all();
      text.clear();
      st = newPieceScan();
      atLineStart = true;
      marker = undefined;
      const r = take();
      if (rest.length > 0) r.push(rest);
      return r;
    },
    pending() {
      return text.all();
    },
    flushWords() {
      if (!st.hasContent) return [];
      let at: number;
      if (st.cand) at = st.cand.end;
      else if (st.inWs) at = st.wsStart;
      else if (isCjk(st.lastCode) || st.lastCode === 0x2c || st.lastCode === 0x3b || st.lastCode === 0x3a || st.lastCode === 0x3001 || st.lastCode === 0xff0c || st.lastCode === 0x060c || isCloser(st.lastCode)) {
        at = st.len;
      } else at = st.lastWsStart;
      if (at <= 0) return [];
      cut(at);
      return take();
    },
    atBoundary() {
      if (!st.hasContent) return true;
      if (!st.cand) return false;
      return decide(st.cand, `${st.cand.ahead} A`, true, rules) === 'end';
    },
    undecidedFrom() {
      return st.cand ? st.cand.start : st.lineBreak;
    },
  };
}
