/**
 * The speakable-text flags of `rxvoice speak` (LLM text is its usual input, so speakable text
 * is on by default): `--links host|drop|verbatim`, `--lexicon file.json`, `--spoken-form`,
 * `--no-speakable`.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Lexicon, SpeakableTextOptions } from '../text/speakable.js';
import { UsageError } from './exit-codes.js';

/** The flags' definitions, for `parseCommand`. */
export const SPEAKABLE_FLAGS = {
  links: { type: 'string' },
  lexicon: { type: 'string' },
  'spoken-form': { type: 'boolean' },
  'no-speakable': { type: 'boolean' },
} as const;

/** A rule's `match` in a JSON lexicon: `"/v(\\d+)/i"` is a regular expression, any other string is literal. */
function reviveMatch(match: unknown): unknown {
  if (typeof match !== 'string') return match;
  const m = /^\/(.+)\/([a-z]*)$/s.exec(match);
  if (!m) return match;
  try {
    return new RegExp(m[1]!, m[2]);
  } catch (error) {
    throw new UsageError(`--lexicon: ${JSON.stringify(match)} is not a regular expression: ${(error as Error).message}`, 'speak');
  }
}

/** A lexicon file: one lexicon or a list, as JSON (the options are checked by the session). */
export function readLexicon(file: string, cwd: string): Lexicon[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(resolve(cwd, file), 'utf8'));
  } catch (error) {
    throw new UsageError(`--lexicon ${file}: ${(error as Error).message}`, 'speak');
  }
  const list = (Array.isArray(parsed) ? parsed : [parsed]) as Array<Record<string, unknown>>;
  return list.map((lex) => {
    if (lex === null || typeof lex !== 'object' || !Array.isArray(lex.rules)) return lex as Lexicon;
    return { ...lex, rules: lex.rules.map((rule: unknown) => (rule !== null && typeof rule === 'object' ? { ...rule, match: reviveMatch((rule as { match?: unknown }).match) } : rule)) } as Lexicon;
  });
}

/** The session's `speakable` option from the flags: false with `--no-speakable`, else its options. */
export function speakableFromFlags(values: { links?: string; lexicon?: string; 'spoken-form'?: boolean; 'no-speakable'?: boolean }, cwd: string): false | SpeakableTextOptions {
  if (values['no-speakable']) {
    if (values.links !== undefined || values.lexicon !== undefined || values['spoken-form']) throw new UsageError('--no-speakable cannot be combined with --links, --lexicon or --spoken-form', 'speak');
    return false;
  }
  const options: SpeakableTextOptions = {};
  if (values.links !== undefined) {
    if (values.links !== 'host' && values.links !== 'drop' && values.links !== 'verbatim') throw new UsageError(`--links must be host, drop or verbatim (not ${JSON.stringify(values.links)})`, 'speak');
    options.links = values.links;
  }
  if (values.lexicon !== undefined) options.lexicon = readLexicon(values.lexicon, cwd);
  if (values['spoken-form']) options.spokenForm = true;
  return options;
}
