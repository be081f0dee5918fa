/**
 * The word stage of speakable text: after the markdown scanner (`speakable.ts`), each
 * whitespace-delimited word is spoken as a listener would want it: a URL as its host, an
 * e-mail address or file path readably, the lexicon's pronunciations, and (with `spokenForm`)
 * numbers, money, dates and times in words. A word waits only for the whitespace after it (at
 * most {@link MARKER_LOOKAHEAD} code units; a number also for the word after it, which may be
 * its unit), so the output does not depend on how the text was split.
 *
 * A rewritten word is one piece whose range covers the source of the whole word, so captions
 * and word timestamps map back to the words as written.
 */
import { MARKER_LOOKAHEAD } from './speakable-marks.js';
import { applyLexicon, type CompiledLexicon } from './speakable-lexicon.js';
import type { NumberWords } from './speakable-numbers.js';
import type { LinkMode, SpeakablePiece } from './speakable-pieces.js';
import { spokenFormOf } from './speakable-spoken.js';

/** What the word stage does. */
export interface WordPolicy {
  links: LinkMode;
  addresses: 'readable' | 'verbatim';
  lexicon: CompiledLexicon | undefined;
  numberWords: NumberWords | undefined;
  language: string;
}

/** Words for the marks inside addresses, per language. */
const MARK_WORDS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  en: { '@': 'at', '.': 'dot', '/': 'slash', '\\': 'backslash', _: 'underscore', '-': 'dash', '~': 'tilde' },
  de: { '@': 'at', '.': 'Punkt', '/': 'Schrägstrich', '\\': 'Backslash', _: 'Unterstrich', '-': 'Bindestrich', '~': 'Tilde' },
  es: { '@': 'arroba', '.': 'punto', '/': 'barra', '\\': 'barra invertida', _: 'guion bajo', '-': 'guion', '~': 'virgulilla' },
  fr: { '@': 'arobase', '.': 'point', '/': 'barre oblique', '\\': 'barre oblique inversée', _: 'tiret bas', '-': 'tiret', '~': 'tilde' },
};

const URL_RE = /^(?:(?:https?|ftp):\/\/|www\.)[^\s<>]+$/i;
const EMAIL = /^[\w.+-]+@[\w-]+(?:\.[\w-]+)+$/;
const PATH = /^(?:~|\.{1,2})?(?:\/[\w.@+-]+){2,}\/?$|^(?:~|\.{1,2})\/[\w.@+-]+$|^[A-Za-z]:\\[\w.\\ -]+$/;
/** Brackets and quotes before a word (curly, German, CJK ones too). */
const LEAD = /^[("'«<“‘„‚»[（「『【]+/;
/** Brackets, quotes and punctuation after a word (curly, German and CJK ones too). */
const TRAIL = /[)"'»>.,;:!?”’“«\]）」』】。，、！？；：…]+$/;

/** `(` in `text` not closed in it, less `)`. */
function unclosed(text: string): number {
  let open = 0;
  for (const c of text) open += c === '(' ? 1 : c === ')' ? -1 : 0;
  return open;
}

/** An address spoken mark by mark: `a.b@c.de` as `a dot b at c dot de`. */
function readable(address: string, language: string): string {
  const words = MARK_WORDS[language.split('-')[0]!] ?? MARK_WORDS.en!;
  return address
    .split(/([@./\\_~-])/)
    .filter((part) => part.length > 0)
    .map((part) => words[part] ?? part)
    .join(' ');
}

/** The host of a URL (`example.com`), or the URL itself when it does not parse. */
function hostOf(url: string): string {
  try {
    return new URL(/^www\./i.test(url) ? `http://${url}` : url).hostname.replace(/^www\./i, '');
  } catch {
    return url;
  }
}

/** A link or address as spoken, or undefined when `core` is neither. */
function addressForm(core: string, policy: WordPolicy): string | undefined {
  if (URL_RE.test(core)) {
    if (policy.links === 'verbatim') return undefined;
    return policy.links === 'drop' ? '' : hostOf(core);
  }
  if (policy.addresses === 'verbatim') return undefined;
  if (EMAIL.test(core) || PATH.test(core)) return readable(core, policy.language);
  return undefined;
}

/** One word as spoken, and whether the next word was taken into it; undefined: as written. */
export function wordForm(word: string, next: string | undefined, policy: WordPolicy): { text: string; usedNext: boolean } | undefined {
  const lead = LEAD.exec(word)?.[0] ?? '';
  const rest = word.slice(lead.length);
  let trail = TRAIL.exec(rest)?.[0] ?? '';
  let core = rest.slice(0, rest.length - trail.length);
  // a bracket the word opened is the word's own (`…/Rust_(language)`), not punctuation after it
  for (let open = unclosed(core); open > 0 && trail.startsWith(')'); open--) {
    core += ')';
    trail = trail.slice(1);
  }
  const address = addressForm(core, policy);
  if (address !== undefined) return { text: address.length > 0 ? `${lead}${address}${trail}` : `${lead}${trail}`, usedNext: false };
  const said = policy.lexicon ? applyLexicon(word, policy.lexicon) : word;
  if (policy.numberWords) {
    const form = spokenFormOf(said, next, policy.language, policy.numberWords);
    if (form) return form;
  }
  return said === word ? undefined : { text: said, usedNext: false };
}

const isSpace = (c: number): boolean => c === 0x20 || c === 9 || c === 10 || c === 13 || c === 0xa0 || c === 0x3000;

/** The word stage: fed the scanner's pieces, gives out the same text with words rewritten. */
export class WordStage {
  /** Spoken pieces not decided yet, and their text joined. */
  private pending: SpeakablePiece[] = [];
  private text = '';
  private out: SpeakablePiece[] = [];
  /**
   * The text starts inside a word longer than {@link MARKER_LOOKAHEAD}, whose start went out as
   * written (no word waits longer): its rest goes out as written too, as the whole word would
   * have, until whitespace ends it.
   */
  private inLongWord = false;

  constructor(private readonly policy: WordPolicy) {}

  /** Feed pieces; returns those now decided. `final`: the text is over. */
  push(pieces: readonly SpeakablePiece[], final: boolean): SpeakablePiece[] {
    for (const piece of pieces) {
      if (piece.hidden) {
        this.decide(true); // a hidden block ends the word before it
        this.out.push(piece);
      } else {
        this.pending.push(piece);
        this.text += piece.text;
      }
    }
    this.decide(final);
    const out = this.out;
    this.out = [];
    return out;
  }

  /** Give out every word whose end (and, for a number, next word) is known. */
  private decide(final: boolean): void {
    const s = this.text;
    let i = 0;
    for (;;) {
      let j = i;
      while (j < s.length && isSpace(s.charCodeAt(j))) j++;
      if (j > i) {
        this.pass(i, j);
        this.inLongWord = false; // whitespace ends a word
      }
      if (j >= s.length) {
        i = j;
        break;
      }
      let k = j;
      while (k < s.length && !isSpace(s.charCodeAt(k))) k++;
      if (this.inLongWord) {
        this.pass(j, k);
        this.inLongWord = k >= s.length && !final;
        i = k;
        continue;
      }
      if (k >= s.length && !final) {
        if (k - j < MARKER_LOOKAHEAD) {
          i = j;
          break;
        }
        this.inLongWord = true; // too long to wait for: as written (below), and so is its rest
      }
      const word = s.slice(j, k);
      let next: string | undefined;
      let nextEnd = k;
      if (this.policy.numberWords && /\d/.test(word)) {
        let a = k;
        while (a < s.length && isSpace(s.charCodeAt(a))) a++;
        let b = a;
        while (b < s.length && !isSpace(s.charCodeAt(b))) b++;
        if (b >= s.length && !final && b - j < MARKER_LOOKAHEAD) {
          i = j; // the word after a number may be its unit: wait for it
          break;
        }
        next = b > a ? s.slice(a, b) : undefined;
        nextEnd = b;
      }
      const form = k - j < MARKER_LOOKAHEAD ? wordForm(word, next, this.policy) : undefined;
      if (!form) this.pass(j, k);
      else {
        const end = form.usedNext ? nextEnd : k;
        this.rewrite(j, end, form.text);
        k = end;
      }
      i = k;
    }
    this.consume(i);
  }

  /** The source range of text [a, b) of the pending pieces. */
  private sourceRange(a: number, b: number): { start: number; end: number } {
    let off = 0;
    let start = -1;
    let end = -1;
    for (const p of this.pending) {
      const len = p.text.length;
      const exact = len === p.end - p.start;
      if (start < 0 && a < off + len) start = exact ? p.start + (a - off) : p.start;
      if (b <= off + len) {
        end = exact ? p.start + (b - off) : p.end;
        break;
      }
      off += len;
    }
    return { start, end };
  }

  private emit(text: string, start: number, end: number): void {
    const last = this.out[this.out.length - 1];
    if (last && !last.hidden && start < last.end) {
      // a piece the scanner wrote as a whole (a phrase) cut in words: keep it one range
      last.text += text;
      last.end = Math.max(last.end, end);
      return;
    }
    if (last && !last.hidden && last.end === start && last.text.length === last.end - last.start && text.length === end - start) {
      last.text += text;
      last.end = end;
      return;
    }
    this.out.push({ text, start, end });
  }

  /** Text [a, b) as written, piece by piece. */
  private pass(a: number, b: number): void {
    let off = 0;
    for (const p of this.pending) {
      const len = p.text.length;
      const from = Math.max(a, off);
      const to = Math.min(b, off + len);
      if (from < to) {
        if (len === p.end - p.start) this.emit(p.text.slice(from - off, to - off), p.start + (from - off), p.start + (to - off));
        else this.emit(p.text.slice(from - off, to - off), p.start, p.end);
      }
      off += len;
      if (off >= b) break;
    }
  }

  /** Text [a, b) spoken as `text`. */
  private rewrite(a: number, b: number, text: string): void {
    const { start, end } = this.sourceRange(a, b);
    if (text.length > 0) this.emit(text, start, end);
  }

  /** Forget the first `n` code units of the pending text. */
  private consume(n: number): void {
    if (n === 0) return;
    let left = n;
    while (this.pending.length > 0 && left >= this.pending[0]!.text.length) left -= this.pending.shift()!.text.length;
    if (left > 0) {
      const p = this.pending[0]!;
      const exact = p.text.length === p.end - p.start;
      this.pending[0] = { text: p.text.slice(left), start: exact ? p.start + left : p.start, end: p.end };
    }
    this.text = this.text.slice(n);
  }
}
