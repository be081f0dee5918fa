/**
 * LangChain into `fromTokens`: the stream of `@langchain/core`'s fake streaming chat
 * models (`FakeListChatModel`, one character a chunk; `FakeStreamingChatModel`, the
 * chunks it is given, content arrays with text and non-text blocks) read as it is, typed
 * without casts, and spoken through the emulator's live session.
 */
import { AIMessageChunk } from '@langchain/core/messages';
import { FakeListChatModel, FakeStreamingChatModel } from '@langchain/core/utils/testing';
import { lastValueFrom, take, toArray } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/index.js';
import { segmentSentences } from '../../src/operators/index.js';
import { fromTokens } from '../../src/sources/index.js';
import { clientFor, emulator } from '../client/helpers.js';

const ANSWER = 'Hello there. LangChain streams one character at a time! Does it still speak whole sentences?';

let emu: Emulator;
beforeAll(async () => {
  emu = await emulator();
});
afterAll(async () => {
  await emu.close();
});

describe('fromTokens with LangChain', () => {
  it("a chat model's .stream() (FakeListChatModel, a chunk per character) is read as it is", async () => {
    const model = new FakeListChatModel({ responses: [ANSWER] });
    const stream = await model.stream('Say hello.');
    const pieces = await lastValueFrom(fromTokens(stream).pipe(toArray()));
    expect(pieces.length).toBeGreaterThan(20); // control: really streamed in pieces
    expect(pieces.join('')).toBe(ANSWER);
  });

  it('content arrays: the text blocks in order, other blocks skipped, empty chunks dropped', async () => {
    const chunks = [
      new AIMessageChunk({ content: '' }),
      new AIMessageChunk({ content: [{ type: 'text', text: 'Part one. ' }] }),
      new AIMessageChunk({ content: [{ type: 'image_url', image_url: 'data:image/png;base64,AAAA' }, { type: 'text', text: 'Part ' }] }),
      new AIMessageChunk({ content: [{ type: 'reasoning', reasoning: 'think' }] }),
      new AIMessageChunk({ content: 'two.' }),
    ];
    const model = new FakeStreamingChatModel({ chunks });
    const pieces = await lastValueFrom(fromTokens(await model.stream('go')).pipe(toArray()));
    expect(pieces).toEqual(['Part one. ', 'Part ', 'two.']);
  });

  it('an item that is no token at all still errors with TypeError (control for the chunk check)', async () => {
    async function* odd(): AsyncGenerator<unknown> {
      yield { contents: 'not a message chunk' };
    }
    const error = await lastValueFrom(fromTokens(odd() as AsyncIterable<string>)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TypeError);
  });

  it('the fake model speaks through the emulator: every sentence a segment, in order', async () => {
    const client = clientFor(emu);
    try {
      const model = new FakeListChatModel({ responses: [ANSWER] });
      const events = await lastValueFrom(
        fromTokens(await model.stream('Say hello.')).pipe(segmentSentences(), client.speak({ voice_id: 1 }), toArray()),
      );
      const segments = events.flatMap((e) => (e.type === 'segmentStart' ? [e.text.trim()] : []));
      expect(segments).toEqual(['Hello there.', 'LangChain streams one character at a time!', 'Does it still speak whole sentences?']);
      expect(events.filter((e) => e.type === 'audio').length).toBeGreaterThanOrEqual(segments.length);
      expect(events.at(-1)?.type).toBe('done');
    } finally {
      await client.close();
    }
  });

  it('unsubscribing early stops the model: it makes no more tokens (control: read whole, it makes them all)', async () => {
    const model = new FakeListChatModel({ responses: [ANSWER], sleep: 5 });
    const counted = async (pieces: number | undefined): Promise<number> => {
      let made = 0;
      const stream = await model.stream('Say hello.', { callbacks: [{ handleLLMNewToken: () => void (made += 1) }] });
      const text$ = fromTokens(stream);
      await lastValueFrom((pieces === undefined ? text$ : text$.pipe(take(pieces))).pipe(toArray()));
      await new Promise((resolve) => setTimeout(resolve, 150)); // time for ~30 more tokens
      return made;
    };
    expect(await counted(undefined)).toBe(ANSWER.length);
    expect(await counted(3)).toBeLessThanOrEqual(5);
  });
});
