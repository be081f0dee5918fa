/**
 * Pseudo-localization: the emulator's stand-in for machine translation.
 *
 * This is the known localization-testing practice (as in Windows "qps-ploc" or the
 * `pseudo-localization` tools): letters are replaced by accented look-alikes so the
 * text stays readable while any untranslated string stands out, and the result is
 * tagged with the target language. It is deterministic; whitespace, digits and
 * punctuation are kept as they are (so sentence boundaries survive and the
 * target-language segmenter still finds sentences), and placeholders such as `{name}`,
 * `%s` and `<b>` are left untouched.
 */
import { resolveLanguage } from './state.js';

const LOOK_ALIKES: Readonly<Record<string, string>> = {
  a: 'á', b: 'ƀ', c: 'ç', d: 'ď', e: 'é', f: 'ƒ', g: 'ĝ', h: 'ĥ', i: 'í', j: 'ĵ', k: 'ķ', l: 'ĺ', m: 'ɱ',
  n: 'ñ', o: 'ö', p: 'þ', q: 'ǫ', r: 'ŕ', s: 'š', t: 'ŧ', u: 'ü', v: 'ṽ', w: 'ŵ', x: 'ẋ', y: 'ý', z: 'ž',
  A: 'Á', B: 'Ɓ', C: 'Ç', D: 'Ď', E: 'É', F: 'Ƒ', G: 'Ĝ', H: 'Ĥ', I: 'Í', J: 'Ĵ', K: 'Ķ', L: 'Ĺ', M: 'Ṁ',
  N: 'Ñ', O: 'Ö', P: 'Þ', Q: 'Ǫ', R: 'Ŕ', S: 'Š', T: 'Ŧ', U: 'Ü', V: 'Ṽ', W: 'Ŵ', X: 'Ẋ', Y: 'Ý', Z: 'Ž',
};

/** Placeholders kept verbatim: `{name}`, `{{name}}`, `%s`/`%d`/`%1$s`, `<tag>`. */
const PLACEHOLDER = /\{\{[^{}]*\}\}|\{[^{}]*\}|%(?:\d+\$)?[sdif]|<[^<>]+>/g;

/** Replace letters by look-alikes; everything else unchanged. */
export function accentLetters(text: string): string {
  let out = '';
  let last = 0;
  for (const match of text.matchAll(PLACEHOLDER)) {
    out += mapLetters(text.slice(last, match.index));
    out += match[0];
    last = match.index + match[0].length;
  }
  return out + mapLetters(text.slice(last));
}

function mapLetters(text: string): string {
  let out = '';
  for (const ch of text) out += LOOK_ALIKES[ch] ?? ch;
  return out;
}

/** The language tag put before pseudo-localized text, e.g. `[fr-fr] `. */
export function pseudoTag(targetLanguage: string | number): string {
  return `[${resolveLanguage(targetLanguage)}] `;
}

/**
 * Pseudo-localize `text` into `targetLanguage`: the tag `[<locale>] ` followed by the
 * text with accented letters. Empty text stays empty.
 *
 * @example pseudoLocalize('Hello, world.', 'fr-fr') === '[fr-fr] Ĥéĺĺö, ŵöŕĺď.'
 */
export function pseudoLocalize(text: string, targetLanguage: string | number): string {
  if (text.length === 0) return text;
  return pseudoTag(targetLanguage) + accentLetters(text);
}
