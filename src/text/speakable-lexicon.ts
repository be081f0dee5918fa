/**
 * Pronunciation lexicons for speakable text: whole-word replacements (`{ SQL: 'sequel' }`) and
 * rules (a regular expression and its replacement), chosen by the text's language. The word
 * stage (`speakable-words.ts`) applies them to each word before it is sent, and keeps the range
 * of the original word for captions.
 */
import { optionError } from '../core/validation.js';

/** A rule: every match of `match` in a word is replaced by `replace` (`$1` refers to groups). */
export interface LexiconRule {
  /** A regular expression (its flags are kept, `g` is added), or a string taken literally. */
  match: RegExp | string;
  replace: string;
}

/**
 * Pronunciations for one language (or all).
 *
 * @example
 * ```ts
 * import type { Lexicon } from 'rxvoice/operators';
 * const lexicon: Lexicon[] = [
 *   { words: { SQL: 'sequel', Nguyen: 'Win' } },
 *   { language: 'de', words: { GmbH: 'Gesellschaft mit beschränkter Haftung' } },
 *   { rules: [{ match: /^v(\d+)$/, replace: 'version $1' }] },
 * ];
 * ```
 */
export interface Lexicon {
  /** The language it applies to (`en` matches `en-us` and `en-gb`); every language when absent. */
  language?: string;
  /** Whole words (letters, digits, `_`; case-sensitive) and what to say instead. */
  words?: Readonly<Record<string, string>>;
  /** Rules applied to each whitespace-delimited word (without the punctuation around it), after `words`, in order. */
  rules?: readonly LexiconRule[];
}

/** The lexicon of one language, ready to apply. */
export interface CompiledLexicon {
  words: ReadonlyMap<string, string>;
  rules: ReadonlyArray<{ re: RegExp; replace: string }>;
}

const WORD = /[\p{L}\p{M}\p{N}_]+/gu;

/** Checks the `lexicon` option (the one place): throws a ValidationError. */
export function lexiconOption(value: Lexicon | readonly Lexicon[] | undefined): readonly Lexicon[] {
  if (value === undefined) return [];
  const list: readonly Lexicon[] = Array.isArray(value) ? value : [value as Lexicon];
  list.forEach((lex, i) => {
    if (lex === null || typeof lex !== 'object') throw optionError('speakableText', ['lexicon', i], 'must be an object { language?, words?, rules? }');
    if (lex.language !== undefined && typeof lex.language !== 'string') throw optionError('speakableText', ['lexicon', i, 'language'], 'must be a locale tag');
    if (lex.words !== undefined) {
      if (lex.words === null || typeof lex.words !== 'object') throw optionError('speakableText', ['lexicon', i, 'words'], 'must be an object of word to replacement');
      for (const [word, say] of Object.entries(lex.words)) {
        if (typeof say !== 'string') throw optionError('speakableText', ['lexicon', i, 'words', word], 'must be a string');
        if (!new RegExp(`^${WORD.source}$`, 'u').test(word)) throw optionError('speakableText', ['lexicon', i, 'words', word], 'must be one word (letters, digits, _)');
      }
    }
    if (lex.rules !== undefined) {
      if (!Array.isArray(lex.rules)) throw optionError('speakableText', ['lexicon', i, 'rules'], 'must be an array of { match, replace }');
      lex.rules.forEach((rule: LexiconRule, j: number) => {
        const okMatch = rule !== null && typeof rule === 'object' && (rule.match instanceof RegExp || (typeof rule.match === 'string' && rule.match.length > 0));
        if (!okMatch || typeof rule.replace !== 'string') throw optionError('speakableText', ['lexicon', i, 'rules', j], 'must be { match: RegExp | non-empty string, replace: string }');
      });
    }
  });
  return list;
}

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The entries of `lexicons` that apply to `language` (a lower-case locale tag), merged in order (later words win). */
export function compileLexicon(lexicons: readonly Lexicon[], language: string): CompiledLexicon | undefined {
  const words = new Map<string, string>();
  const rules: Array<{ re: RegExp; replace: string }> = [];
  for (const lex of lexicons) {
    const lang = lex.language?.toLowerCase().replace('_', '-');
    if (lang !== undefined && language !== lang && !language.startsWith(`${lang}-`)) continue;
    for (const [word, say] of Object.entries(lex.words ?? {})) words.set(word, say);
    for (const rule of lex.rules ?? []) {
      const re = typeof rule.match === 'string' ? new RegExp(escape(rule.match), 'gu') : new RegExp(rule.match.source, rule.match.flags.includes('g') ? rule.match.flags : `${rule.match.flags}g`);
      rules.push({ re, replace: rule.replace });
    }
  }
  return words.size > 0 || rules.length > 0 ? { words, rules } : undefined;
}

/** Punctuation around a word that rules do not see (`(v2).` is matched as `v2`). */
const AROUND = /^([("'«¿¡]*)(.*?)([)"'».,;:!?]*)$/su;

/** `word` (one whitespace-delimited token) as the lexicon says it. */
export function applyLexicon(word: string, lexicon: CompiledLexicon): string {
  const out = lexicon.words.size > 0 ? word.replace(WORD, (w) => lexicon.words.get(w) ?? w) : word;
  if (lexicon.rules.length === 0) return out;
  const [, lead, core, trail] = AROUND.exec(out)!;
  let said = core!;
  for (const rule of lexicon.rules) said = said.replace(rule.re, rule.replace);
  return `${lead}${said}${trail}`;
}
