/**
 * What the merge of a cached speech stores: a finished live segment is written under the
 * key of the sentence at the head of the queue only when it covers exactly that sentence.
 * When the service cuts the text elsewhere than the client's segmenter (its segment is a
 * part of the sentence), nothing is stored, so a later hit can never replay the audio of
 * another text. The live session's events are fed in as the session emits them.
 */
import { Observable, lastValueFrom, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { memoryCacheStore } from '../../src/cache/index.js';
import { CacheCore } from '../../src/cache/core.js';
import { cacheKey } from '../../src/cache/key.js';
import { HitMissMerge, nonSpace } from '../../src/cache/merge.js';
import type { LiveSpeechEvent } from '../../src/live/index.js';

const SENTENCE = 'Dr. Smith came at noon. ';

/**
 * One miss (`SENTENCE`) sent to a live session that answers with `segments` (their texts,
 * each with 100 bytes of audio); resolves with what the merge emitted and what it stored.
 */
async function speakMiss(
  segments: string[],
  how: { wantsTimestamps?: boolean; timestamps?: boolean; fallback?: boolean } = {},
): Promise<{ events: LiveSpeechEvent[]; stored: number; entry: Uint8Array | undefined }> {
  const store = memoryCacheStore();
  const core = new CacheCore(store, undefined, 1_000_000, () => undefined, Date.now);
  const key = await cacheKey(SENTENCE, { path: 'live', voice_id: 1 });
  const events = await lastValueFrom(
    new Observable<LiveSpeechEvent>((subscriber) => {
      const merge = new HitMissMerge(core, subscriber, 'wav', 24000, how.wantsTimestamps ?? false);
      merge.sentence({ kind: 'miss', text: SENTENCE, key, from: 0, upTo: nonSpace(SENTENCE) });
      merge.inputDone();
      merge.live({ type: 'ready', session_id: 's', run_id: 0, config: { output_format: 'wav' } });
      segments.forEach((text, id) => {
        if (how.fallback) merge.live({ type: 'segmentFallback', segment_id: id, text, reason: 'stall', afterMs: 500 });
        const word_timestamps = how.timestamps ? text.split(' ').map((word, i) => ({ word, start: i / 4, end: (i + 1) / 4 })) : undefined;
        merge.live(word_timestamps ? { type: 'segmentStart', segment_id: id, text, word_timestamps } : { type: 'segmentStart', segment_id: id, text });
        merge.live({ type: 'audio', segment_id: id, bytes: new Uint8Array(100).fill(id + 1) });
        merge.live({ type: 'segmentDone', segment_id: id });
      });
      merge.liveDone();
    }).pipe(toArray()),
  );
  return { events, stored: core.stats.stored, entry: await store.get(key) };
}

describe('HitMissMerge: what a live segment stores', () => {
  it('a segment covering only part of the sentence (the service cut it elsewhere) is not stored under its key; control: the whole sentence is', async () => {
    const cut = await speakMiss(['Dr.', 'Smith came at noon.']);
    // Both parts were spoken and passed on, in order, with one `done` last.
    expect(cut.events.filter((e) => e.type === 'segmentStart').map((e) => (e as { text: string }).text)).toEqual(['Dr.', 'Smith came at noon.']);
    expect(cut.events.at(-1)).toEqual({ type: 'done' });
    expect(cut.stored).toBe(0);
    expect(cut.entry).toBeUndefined();

    const whole = await speakMiss(['Dr. Smith came at noon.']);
    expect(whole.stored).toBe(1);
    expect(whole.entry).toBeDefined();
  });

  it('a segment spoken by the stall fallback is passed on with its segmentFallback, and not stored; control: the same live is', async () => {
    const fellBack = await speakMiss(['Dr. Smith came at noon.'], { fallback: true });
    expect(fellBack.events.map((e) => e.type)).toEqual(['ready', 'segmentFallback', 'segmentStart', 'audio', 'segmentDone', 'done']);
    expect(fellBack.events[1]).toMatchObject({ segment_id: 0, reason: 'stall' });
    expect(fellBack.stored).toBe(0);
    expect((await speakMiss(['Dr. Smith came at noon.'])).stored).toBe(1);
  });

  it('word timestamps asked for and not given (the service drops failed lookups): not stored; control: given, stored', async () => {
    expect((await speakMiss(['Dr. Smith came at noon.'], { wantsTimestamps: true })).stored).toBe(0);
    expect((await speakMiss(['Dr. Smith came at noon.'], { wantsTimestamps: true, timestamps: true })).stored).toBe(1);
  });
});
