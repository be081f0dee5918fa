/**
 * Speakable text from markdown: a pure incremental core (`feed`/`end`) wrapped by the
 * `speakableText()` operator.
 *
 * LLM answers are markdown; a speech service would read `**`, `##`, list numbers, URLs and
 * emoji aloud. The core drops markup and keeps words:
 *
 * - **Not spoken**: emphasis markers (`*` `**` `_` `__` `~~`), heading (`#`) and quote (`>`)
 *   markers, list bullets and numbers (`- ` `* ` `+ ` `1. ` `1) `, task boxes `[ ]`),
 *   horizontal rules, HTML tags, link and image addresses (`[text](url)` speaks `text`),
 *   inline-code backticks (the code is spoken), emoji with their variation selectors, skin
 *   tones and ZWJ sequences, table pipes (`|` between cells becomes `,`; the `|---|` row is
 *   dropped), NUL and other control characters, lone surrogates.
 * - **Sentence ends**: each list item, heading, quote line, table row and rule ends a
 *   sentence even without a stop: its line break becomes a paragraph break (`"\n\n"`), which
 *   every sentence splitter (ours, the service's) takes as a boundary.
 * - **Fenced code blocks** are not spoken by default (`codeBlocks: 'skip'`); `'speak'` speaks
 *   their lines, `{ say: 'Here is some code.' }` says a phrase instead.
 * - **Thoughts and tool calls** (`<think>`, `<thinking>`, `<reasoning>`, `<tool_call>`) are not
 *   spoken (`thoughts`/`toolCalls: 'speak'` to speak them): their content comes out as pieces
 *   with `hidden` set, for captions; a text that ends inside one sets `unclosed`. With
 *   `thoughts: 'drop-open'` the text starts inside a thought (its `<think>` was in the prompt).
 * - **Markup**: SSML-like tags (`<break/>`, `<say-as>`, `<phoneme>`, `<spell>`) are stripped
 *   (`<break/>` becomes a space), or kept intact with `markup: 'keep'`.
 * - **Words** (the word stage, `speakable-words.ts`): a URL is spoken as its host (`links`),
 *   e-mail addresses and file paths mark by mark (`addresses`), the `lexicon`'s pronunciations,
 *   and with `spokenForm` numbers, money, dates, times and units in words of `language`.
 * - **Kept**: underscores inside words (`my_value_2`), a lone `*` in arithmetic (`2 * 3`,
 *   `2*3`), `°`, `%`, `€`, `<` in `a < b`, escaped characters (`\*` is spoken as `*`).
 *
 * Streaming: a character is decided as soon as the text after it settles what it is; only
 * markers wait (a `*` at the end of a chunk, a `[` until its `]` and `(address)` or at most
 * 512 code units, a `<` until its `>`, a line's first characters until its block marker is
 * known). The output does not depend on how the input was split.
 *
 * Bad input never throws from `feed`/`end` and never loses words: an unterminated code
 * span or emphasis is spoken (markers dropped); an unterminated fenced block is spoken at the
 * end (its text is not lost); a fenced block longer than `maxBufferSize` is spoken from the
 * moment it is that long; a megabyte without a line break streams through in linear time.
 *
 * Every output piece says where it came from: `input.slice(start, end)` is the markdown it
 * renders, so captions can show the markdown's own words.
 *
 * This file joins the two stages. The streaming scanner (buffer, line start, inline text, fenced
 * blocks, hidden blocks) is `speakable-scanner.ts`; the markdown syntax it recognizes is in
 * `speakable-markdown.ts`, tags in `speakable-tags.ts`, the character kinds and emoji in
 * `speakable-marks.ts`, the pieces with their offset map and the options in
 * `speakable-pieces.ts`; the word stage in `speakable-words.ts` with `speakable-lexicon.ts`,
 * `speakable-spoken.ts` and `speakable-numbers.ts` (n2words, loaded lazily).
 */
import { optionError } from '../core/validation.js';
import { compileLexicon } from './speakable-lexicon.js';
import { speakableTextOptions, type SpeakableTextCore, type SpeakableTextOptions } from './speakable-pieces.js';
import { createScanner } from './speakable-scanner.js';
import { numberLocale, type NumberWords } from './speakable-numbers.js';
import { WordStage } from './speakable-words.js';

export { speakableTextOptions, type CodeBlockMode, type HiddenBlock, type HiddenKind, type LinkMode, type SpeakablePiece, type SpeakableTextCore, type SpeakableTextOptions } from './speakable-pieces.js';
export { loadNumberWords, type NumberWords } from './speakable-numbers.js';
export type { Lexicon, LexiconRule } from './speakable-lexicon.js';

/**
 * Create the incremental markdown-to-speech core (see the module documentation): the markdown
 * scanner, then the word stage (links, addresses, lexicon, spoken forms).
 *
 * @example
 * ```ts
 * import { createSpeakableText } from 'rxvoice/operators';
 * const core = createSpeakableText({ links: 'host' });
 * const pieces = [...core.feed('<think>hm</think>See https://example.com/a?b=1 now.'), ...core.end()];
 * const spoken = pieces.filter((p) => !p.hidden).map((p) => p.text).join(''); // 'See example.com now.'
 * ```
 * @throws {ValidationError} When an option is invalid, or `spokenForm` is on without `numberWords`.
 */
export function createSpeakableText(options: SpeakableTextOptions = {}): SpeakableTextCore {
  const checked = speakableTextOptions(options);
  if (checked.spokenForm && options.numberWords === undefined) {
    throw optionError('speakableText', ['numberWords'], 'spokenForm needs numberWords: await loadNumberWords(language) (the speakableText() operator loads them itself)');
  }
  const scanner = createScanner(checked, options.onHiddenBlock);
  const lexicon = compileLexicon(checked.lexicon, checked.language);
  if (checked.links === 'verbatim' && checked.addresses === 'verbatim' && lexicon === undefined && !checked.spokenForm) return scanner; // no word waits
  const words = new WordStage({
    links: checked.links,
    addresses: checked.addresses,
    lexicon,
    numberWords: checked.spokenForm ? numberWordsOf(options.numberWords!, checked.language) : undefined,
    language: checked.language,
  });
  return {
    feed: (text) => (text.length === 0 ? [] : words.push(scanner.feed(text), false)),
    end: () => words.push(scanner.end(), true),
    get unclosed() {
      return scanner.unclosed;
    },
  };
}

/** Number words given (an `n2words/<locale>` module will do), checked, with their locale. */
function numberWordsOf(given: NumberWords, language: string): NumberWords {
  if (typeof given !== 'object' || given === null || typeof given.toCardinal !== 'function' || typeof given.toOrdinal !== 'function') {
    throw optionError('speakableText', ['numberWords'], 'must have toCardinal and toOrdinal (an n2words locale module, or loadNumberWords(language))');
  }
  const words: NumberWords = { locale: given.locale ?? numberLocale(language)!, toCardinal: (v) => given.toCardinal(v), toOrdinal: (v) => given.toOrdinal(v) };
  if (typeof given.toCurrency === 'function') words.toCurrency = (v) => given.toCurrency!(v);
  return words;
}

