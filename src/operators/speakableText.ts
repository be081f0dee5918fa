import { Observable, type OperatorFunction } from 'rxjs';
import { createSpeakableText, speakableTextOptions, type SpeakableTextOptions } from '../text/speakable.js';

export type { SpeakableTextOptions, SpeakablePiece, CodeBlockMode } from '../text/speakable.js';

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
 * @param options `codeBlocks` (default `'skip'`) and `maxBufferSize` (code units of a
 * skipped code block held in case it never closes; default 65 536, at least 16).
 * @throws {RangeError} At creation, when an option is invalid.
 * @return A function that returns an Observable of speakable text.
 */
export function speakableText(options: SpeakableTextOptions = {}): OperatorFunction<string, string> {
  speakableTextOptions(options); // throws now, not inside the stream
  return (source) =>
    new Observable<string>((subscriber) => {
      const core = createSpeakableText(options);
      const emit = (pieces: { text: string }[]): void => {
        let text = '';
        for (const p of pieces) text += p.text;
        if (text.length > 0) subscriber.next(text);
      };
      return source.subscribe({
        next(token) {
          emit(core.feed(token));
        },
        error(err: unknown) {
          emit(core.end());
          subscriber.error(err);
        },
        complete() {
          emit(core.end());
          subscriber.complete();
        },
      });
    });
}
