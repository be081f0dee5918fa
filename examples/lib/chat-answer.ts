/**
 * A canned chat-bot answer, and a token stream that replays it at an LLM-like pace:
 * a few characters every few tens of milliseconds. Shared by the examples.
 */
import { concatMap, defer, from, map, timer, type Observable, type SchedulerLike } from 'rxjs';

/** A realistic chat-bot answer: a few paragraphs. */
export const CHAT_ANSWER = `Great question! A good cup of coffee starts with fresh beans. Buy whole beans roasted within the last few weeks, and grind them just before you brew.

Use about sixty grams of coffee per litre of water. The water should be hot but not boiling, around ninety-three degrees Celsius. If it tastes bitter, grind a little coarser; if it tastes sour, grind finer.

Finally, keep your equipment clean. Old oils turn rancid and spoil the flavour. Enjoy your coffee!`;

/**
 * The same kind of answer as an LLM writes it: markdown, with a heading, bold text, a
 * numbered list, inline code, a link and an emoji. Spoken through `speakableText()`.
 */
export const MARKDOWN_ANSWER = `## Better coffee at home ☕

Great question! **A good cup starts with fresh beans.** Here is what matters most:

1. **Buy whole beans** roasted within the last few weeks, and grind them just before you brew.
2. Use about *sixty grams* of coffee per litre of water, at around ninety-three degrees Celsius.
3. If it tastes bitter, grind a little coarser; if it tastes sour, grind finer.

Finally, keep your equipment clean: old oils spoil the flavour. See the [brewing guide](https://example.com/brew) for more. Enjoy your coffee! 🎉`;

/** A short answer for quick runs. */
export const SHORT_ANSWER = 'Hello there! This is a short answer. It has three sentences.';

export interface TokenPace {
  /** Characters per token, inclusive range (default [3, 5]). */
  chars?: [number, number];
  /** Delay between tokens, ms, inclusive range (default [15, 30]). */
  delayMs?: [number, number];
  /** Random source in [0, 1) (default Math.random). */
  random?: () => number;
}

/**
 * Split `text` into tokens of a few characters each. Characters are code points: a token
 * never ends inside a surrogate pair (an emoji is never cut into two U+FFFD), though it
 * may end between the code points of a sequence (a skin tone, a ZWJ), as real LLM
 * tokens do.
 */
export function tokenize(text: string, pace: TokenPace = {}): string[] {
  const [minChars, maxChars] = pace.chars ?? [3, 5];
  const random = pace.random ?? Math.random;
  const codePoints = Array.from(text);
  const tokens: string[] = [];
  let i = 0;
  while (i < codePoints.length) {
    const size = minChars + Math.floor(random() * (maxChars - minChars + 1));
    tokens.push(codePoints.slice(i, i + size).join(''));
    i += size;
  }
  return tokens;
}

/** Draw a delay from the pace's range, ms. */
export function tokenDelay(pace: TokenPace = {}): number {
  const [minDelay, maxDelay] = pace.delayMs ?? [15, 30];
  const random = pace.random ?? Math.random;
  return minDelay + Math.floor(random() * (maxDelay - minDelay + 1));
}

/** The tokens of `text`, emitted one by one with a delay before each (a fake LLM). */
export function tokenStream(text: string, pace: TokenPace = {}, scheduler?: SchedulerLike): Observable<string> {
  return defer(() => from(tokenize(text, pace))).pipe(
    concatMap((token) => timer(tokenDelay(pace), scheduler).pipe(map(() => token))),
  );
}

/** The same tokens as an async iterable (what LLM SDKs hand out). */
export async function* tokenIterable(text: string, pace: TokenPace = {}): AsyncGenerator<string> {
  for (const token of tokenize(text, pace)) {
    await new Promise((resolve) => setTimeout(resolve, tokenDelay(pace)));
    yield token;
  }
}
