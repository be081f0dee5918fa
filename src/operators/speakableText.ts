import type { OperatorFunction } from 'rxjs';
import { speakableStep } from '../client/speakable.js';
import type { SpeakableTextOptions } from '../text/speakable.js';

export type { SpeakableTextOptions, SpeakablePiece, CodeBlockMode, HiddenBlock, HiddenKind, LinkMode, Lexicon, LexiconRule, NumberWords } from '../text/speakable.js';

/**
 * Turns a stream of markdown tokens (an LLM's answer) into a stream of text to speak.
 *
 * <span class="informal">Markdown in, speakable text out: markers, addresses, HTML tags
 * and emoji are not spoken; every list item, heading and quote line ends a sentence.</span>
 *
 * Built on the pure core `createSpeakableText` (`src/text/speakable.ts`, exported for
 * captions that need, per spoken piece, the range of the markdown it came from). Not
 * spoken: emphasis markers (`**` `*` `_` `__` `~~`), heading and quote markers, list
 * bullets and numbers, task boxes, horizontal rules, HTML tags, link and image addresses
 * (`[text](url)` speaks `text`), inline-code backticks (the code itself is spoken), emoji
 * (with variation selectors, skin tones and ZWJ sequences), table pipes, control
 * characters and lone surrogates. Fenced code blocks are skipped by default
 * (`codeBlocks: 'skip'`), or spoken (`'speak'`), or replaced by a phrase
 * (`{ say: 'Here is the code.' }`). Kept: `my_value_2`, `2 * 3`, `°`, `%`, `€`, `a < b`.
 * The line break after a list item, heading, quote line, table row or rule becomes a
 * paragraph break (`"\n\n"`), so any sentence splitter ends the sentence there, stop or not.
 *
 * Thoughts and tool calls (`<think>...</think>`, `<tool_call>...</tool_call>`) are not spoken
 * (`onHiddenBlock` hears of each, also one cut off by the end; `thoughts: 'drop-open'` when the
 * model's template already sent `<think>`); a URL is spoken as its host
 * (`links`), e-mail addresses and paths readably (`addresses`); SSML-like tags are stripped
 * or kept (`markup`); the `lexicon` rewrites words; `spokenForm` with `language` speaks
 * numbers, money, dates and times in words (the number words load on subscription; tokens
 * wait for them, nothing is lost).
 *
 * Text is emitted as soon as it is decided, in the same frame as the token that decides
 * it; only markers wait (a `*` at the end of a token until the next character, a `[` until
 * its `](address)` or 512 code units, a `<` until its `>`, a line's first characters until
 * its block marker is known). The output text does not depend on how the markdown was split.
 *
 * ```
 * tokens:  -a----b-----c--|     a = "**Ti", b = "p:** use `npm", c = " test`.\n- one\n"
 * output:  -x----y-----z--|     x = "Ti", y = "p: use npm", z = " test.\n\none\n\n"
 * ```
 *
 * On completion, what was still undecided is emitted (a marker at the very end counts as
 * text; an unterminated fenced block is spoken, not lost), then completion. On error the
 * same, then the error. Unsubscribing unsubscribes from the source. Empty outputs are not
 * emitted.
 *
 * ## Example
 * ```ts
 * import { from } from 'rxjs';
 * import { speakableText, segmentSentences } from 'rxvoice/operators';
 *
 * from(['## Plan\n', '1. **Boil** water 🍵\n', '2. See [docs](https://x.y).'])
 *   .pipe(speakableText(), segmentSentences())
 *   .subscribe((s) => console.log(JSON.stringify(s)));
 * // "Plan"  "\n\nBoil water"  " \n\nSee docs."
 * ```
 *
 * @param options `codeBlocks` (default `'skip'`), `maxBufferSize` (code units of a skipped code
 * block held in case it never closes; default 65 536, at least 16), `thoughts`, `toolCalls`
 * (`'drop'`), `markup` (`'strip'`), `links` (`'host'`), `addresses` (`'readable'`), `lexicon`,
 * `spokenForm` (false), `language` (`'en-us'`), `onHiddenBlock`: see `docs/speakable.md`.
 * @throws {RangeError} At creation, when an option is invalid.
 * @return A function that returns an Observable of speakable text.
 */
export function speakableText(options: SpeakableTextOptions = {}): OperatorFunction<string, string> {
  return speakableStep(options);
}
