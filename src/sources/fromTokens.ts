import { Observable } from 'rxjs';
import type { Readable } from 'node:stream';
import { fromReadable } from './fromReadable.js';

/**
 * The part of an OpenAI-style chat completion chunk (`stream: true`) that carries text:
 * `choices[0].delta.content`. The `openai` package's `ChatCompletionChunk` fits it.
 */
export interface ChatCompletionChunkLike {
  /** The chunk's choices; only `choices[0].delta.content` is read. */
  choices: ReadonlyArray<ChatCompletionChoiceLike | undefined>;
  /** Other fields of a chunk (`id`, `object`, `created`, `model`, ...): accepted, not read. */
  id?: string;
  object?: string;
  created?: number;
  model?: string;
  system_fingerprint?: string | null;
  service_tier?: string | null;
  usage?: unknown;
}

/**
 * One choice of a {@link ChatCompletionChunkLike}, as the `openai` package types it: the
 * role announcement (`delta.role`), content pieces and the final `finish_reason` all fit.
 */
export interface ChatCompletionChoiceLike {
  /** The new piece: `content` is the text (absent or `null` in role and final chunks). */
  delta?: {
    content?: string | null;
    role?: string | null;
    refusal?: string | null;
    tool_calls?: unknown;
    function_call?: unknown;
  } | null;
  /** Which choice (0 for the first). */
  index?: number;
  /** Why the answer ended (`stop`, `length`, ...), on the last chunk; else `null`. */
  finish_reason?: string | null;
  logprobs?: unknown;
}

/**
 * A block of a LangChain message's content array. Blocks of type `text` carry the text;
 * other blocks (tool calls, images, reasoning, ...) are not speech and are skipped.
 */
export type MessageContentBlockLike = { type: 'text'; text: string } | { type: string; text?: unknown };

/**
 * A LangChain message chunk, such as `AIMessageChunk` of `@langchain/core` (what a chat
 * model's `.stream()` yields): `content` is a string, or an array of content blocks. A
 * structural type: rxvoice does not load `@langchain/core`.
 */
export interface MessageChunkLike {
  /** The text, or content blocks of which those of type `text` are read. */
  content: string | ReadonlyArray<MessageContentBlockLike>;
}

/** An item of a token stream: text, UTF-8 bytes, a chat completion chunk or a LangChain message chunk. */
export type TokenItem = string | Uint8Array | ChatCompletionChunkLike | MessageChunkLike;

/** A stream that can be aborted at once, like the `openai` package's `Stream` (`controller`). */
interface AbortableLike {
  controller?: { abort(): void };
}

/**
 * Token stream in, `Observable<string>` out: the bridge from chat-bot (LLM) output, web
 * streams and Node streams to rxvoice pipelines.
 *
 * <span class="informal">Accepts an `AsyncIterable` of strings, of UTF-8 bytes, of
 * OpenAI-style chat completion chunks (the `openai` package's streams as they are) or of
 * LangChain message chunks (a chat model's `.stream()` as it is), a web `ReadableStream`
 * of any of those, or a Node `Readable`.</span>
 *
 * Bytes are decoded as UTF-8, a character split across chunks held back until whole.
 * Chat completion chunks give `choices[0].delta.content`; chunks with no content (role
 * announcements, `null`, `''`, the final chunk with `finish_reason`) are skipped.
 * LangChain message chunks (`AIMessageChunk`) give their string `content`, or the `text`
 * of the content blocks of type `text` in order (other blocks, such as tool calls, are
 * skipped). Empty strings are never emitted.
 *
 * ```text
 * input:      -'Hel'-'lo'-{delta:{content:null}}-' world'-|
 * fromTokens: -'Hel'-'lo'-----------------------' world'-|
 * ```
 *
 * Cold: the input is read from on subscribe (it can be read once, so subscribe once).
 * Completes when the input ends; errors when it throws (or an item is of no known kind:
 * `TypeError`). Unsubscribing early stops the producer: `iterator.return()` (and
 * `controller.abort()` when the input has an abort controller, as `openai` streams do,
 * which closes the HTTP stream at once), `reader.cancel()`, or `readable.destroy()`.
 * An object-mode Node `Readable` is read item by item (strings, bytes or chat completion
 * chunks); a byte or text one is decoded as {@link fromReadable} does.
 *
 * ## Example
 * ```ts
 * const stream = await openai.chat.completions.create({ model, messages, stream: true });
 * fromTokens(stream).pipe(segmentSentences(), client.speak({ voice_id: 1 })).subscribe();
 * // LangChain: fromTokens(await chatModel.stream('Tell me a story.'))
 * ```
 *
 * @param input The token stream.
 * @return An Observable of the text pieces.
 */
export function fromTokens(input: AsyncIterable<string>): Observable<string>;
export function fromTokens(input: AsyncIterable<Uint8Array>): Observable<string>;
export function fromTokens(input: AsyncIterable<ChatCompletionChunkLike>): Observable<string>;
export function fromTokens(input: AsyncIterable<MessageChunkLike>): Observable<string>;
export function fromTokens(input: ReadableStream<string> | ReadableStream<Uint8Array> | ReadableStream<MessageChunkLike>): Observable<string>;
export function fromTokens(input: Readable): Observable<string>;
export function fromTokens(input: AsyncIterable<TokenItem> | ReadableStream<TokenItem>): Observable<string>;
export function fromTokens(input: AsyncIterable<TokenItem> | ReadableStream<TokenItem> | Readable): Observable<string> {
  if (isNodeReadable(input)) {
    // Object-mode readables may carry chat completion chunks: read them as items.
    if (input.readableObjectMode) return fromAsyncIterable(input as AsyncIterable<TokenItem>, () => input.destroy());
    return fromReadable(input);
  }
  if (isReadableStream(input)) return fromWebStream(input);
  if (isAsyncIterable(input)) return fromAsyncIterable(input);
  throw new TypeError('fromTokens: expected an AsyncIterable, a ReadableStream or a Node Readable');
}

/** A Node `Readable`, recognized by shape (no `node:stream` import, so browsers can load this). */
function isNodeReadable(value: unknown): value is Readable {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Readable).pipe === 'function' &&
    typeof (value as Readable).on === 'function' &&
    typeof (value as Readable).readableObjectMode === 'boolean'
  );
}

function isReadableStream(value: unknown): value is ReadableStream<TokenItem> {
  return typeof value === 'object' && value !== null && typeof (value as ReadableStream).getReader === 'function';
}

function isAsyncIterable(value: unknown): value is AsyncIterable<TokenItem> {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as AsyncIterable<TokenItem>)[Symbol.asyncIterator] === 'function'
  );
}

/** Turns items into text; `undefined` for an item of no known kind. */
function createItemDecoder(): { text(item: unknown): string | undefined; flush(): string } {
  let decoder: TextDecoder | undefined;
  return {
    text(item) {
      if (item instanceof Uint8Array) {
        decoder ??= new TextDecoder('utf-8');
        return decoder.decode(item, { stream: true });
      }
      const text = itemText(item);
      // bytes that ended inside a character (ill-formed input: U+FFFD) come before the text
      // that follows them, not after it
      return text === undefined || decoder === undefined ? text : decoder.decode() + text;
    },
    flush() {
      return decoder ? decoder.decode() : '';
    },
  };
}

/** The text of an item that is not bytes; `undefined` for an item of no known kind. */
function itemText(item: unknown): string | undefined {
  if (typeof item === 'string') return item;
  if (typeof item !== 'object' || item === null) return undefined;
  if (Array.isArray((item as ChatCompletionChunkLike).choices)) {
    const content = (item as ChatCompletionChunkLike).choices[0]?.delta?.content;
    return typeof content === 'string' ? content : '';
  }
  if ('content' in item) return messageText((item as MessageChunkLike).content);
  return undefined;
}

/** The text of a LangChain message's content: the string, or its `text` blocks joined; undefined when neither. */
function messageText(content: unknown): string | undefined {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return undefined;
  let text = '';
  for (const block of content as unknown[]) {
    if (typeof block === 'object' && block !== null && (block as MessageContentBlockLike).type === 'text') {
      const piece = (block as MessageContentBlockLike).text;
      if (typeof piece === 'string') text += piece;
    }
  }
  return text;
}

/** One subscription's reader of items, for {@link readItems}. */
interface ItemReader {
  /** The next item, or `done`. */
  next(): Promise<{ done?: boolean | undefined; value?: unknown }>;
  /** Called after the last item was delivered and the Observable completed. */
  done?(): void;
  /** Gives up the source after an item of no known kind. */
  abandon(): void;
  /** Stops the source on unsubscribe before its end. */
  stop(): void;
  /** The TypeError message for an item of no known kind. */
  badItem: string;
}

/** The read loop shared by async iterables and web streams: items as text, in order. */
function readItems(open: () => ItemReader): Observable<string> {
  return new Observable<string>((subscriber) => {
    const reader = open();
    const items = createItemDecoder();
    let stopped = false;
    let finished = false;
    const run = async (): Promise<void> => {
      try {
        for (;;) {
          const result = await reader.next();
          if (stopped) return;
          if (result.done) {
            finished = true;
            const rest = items.flush();
            if (rest.length > 0) subscriber.next(rest);
            subscriber.complete();
            reader.done?.();
            return;
          }
          const text = items.text(result.value);
          if (text === undefined) {
            finished = true;
            subscriber.error(new TypeError(reader.badItem));
            reader.abandon();
            return;
          }
          if (text.length > 0) subscriber.next(text);
          // unsubscribed by that value (take(1)): no further pull, which the source's
          // return() would wait behind
          if (stopped) return;
        }
      } catch (error) {
        finished = true;
        if (!stopped) subscriber.error(error);
      }
    };
    void run();
    return () => {
      stopped = true;
      if (!finished) reader.stop();
    };
  });
}

function fromAsyncIterable(input: AsyncIterable<TokenItem>, stop?: () => void): Observable<string> {
  return readItems(() => {
    const iterator = input[Symbol.asyncIterator]();
    return {
      badItem: 'fromTokens: an item is neither text, bytes, a chat completion chunk nor a message chunk',
      next: () => iterator.next(),
      abandon: () => void Promise.resolve(iterator.return?.()).catch(() => undefined),
      stop: () => {
        (input as AbortableLike).controller?.abort();
        stop?.();
        // An async generator queues return() behind a pending next(); never wait for it.
        void Promise.resolve()
          .then(() => iterator.return?.())
          .catch(() => undefined);
      },
    };
  });
}

function fromWebStream(stream: ReadableStream<TokenItem>): Observable<string> {
  return readItems(() => {
    const reader = stream.getReader();
    const cancel = (): void => void reader.cancel().catch(() => undefined);
    return {
      badItem: 'fromTokens: a stream chunk is neither text, bytes, a chat completion chunk nor a message chunk',
      next: () => reader.read(),
      done: () => reader.releaseLock(),
      abandon: cancel,
      stop: cancel,
    };
  });
}
