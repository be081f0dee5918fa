/**
 * Hits and misses merge back in order, whatever the token split and whichever sentences
 * the cache holds: fast-check picks the sentences, the subset cached beforehand and the
 * cut points of the text; the emulator speaks the misses. Each sentence comes out once, in
 * order, a cached one with the very bytes stored, and only the misses are paid.
 */
import { from, lastValueFrom, toArray } from 'rxjs';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type RxVoiceClient } from '../../src/index.js';
import { memoryCacheStore, speechCache } from '../../src/cache/index.js';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import type { LiveSpeechEvent } from '../../src/live/index.js';

const POOL = [
  'The first sentence is short.',
  'Here comes another one!',
  'Is this the third?',
  'Dr. Smith arrived at noon.',
  'Numbers like 3.5 stay inside.',
  'The last one ends here.',
  'Quotes end "like this."',
];

function texts(events: LiveSpeechEvent[]): string[] {
  return events.filter((e) => e.type === 'segmentStart').map((e) => (e as { text: string }).text.trim());
}
function audioOf(events: LiveSpeechEvent[]): Buffer[] {
  const out: Buffer[] = [];
  for (const e of events) {
    if (e.type === 'segmentStart') out.push(Buffer.alloc(0));
    if (e.type === 'audio') out[out.length - 1] = Buffer.concat([out.at(-1)!, e.bytes]);
  }
  return out;
}

describe('speechCache: order of hits and misses', () => {
  let emulator: Emulator;
  let client: RxVoiceClient;
  beforeAll(async () => {
    emulator = await startEmulator({ synth: 'tone' });
    client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.baseUrl });
  });
  afterAll(async () => {
    await client.close();
    await emulator.close();
  });

  it('any sentences, any cached subset, any token split: every sentence once, in order, hits byte-identical, misses alone paid', async () => {
    const sample = fc
      .uniqueArray(fc.constantFrom(...POOL), { minLength: 1, maxLength: 5 })
      .chain((sentences) =>
        fc.record({
          sentences: fc.constant(sentences),
          cached: fc.subarray(sentences),
          cuts: fc.uniqueArray(fc.integer({ min: 1, max: sentences.join(' ').length - 1 }), { maxLength: 8 }),
        }),
      );
    await fc.assert(
      fc.asyncProperty(sample, async ({ sentences, cached, cuts }) => {
        const cache = speechCache({ store: memoryCacheStore() });
        const stored = new Map<string, Buffer>();
        for (const sentence of cached) {
          const events = await lastValueFrom(from([sentence]).pipe(client.speak({ voice_id: 1, cache }), toArray()));
          stored.set(sentence, audioOf(events)[0]!);
        }
        const text = sentences.join(' ');
        const points = [0, ...[...cuts].sort((a, b) => a - b), text.length];
        const tokens = points.slice(1).map((end, i) => text.slice(points[i], end));
        const before = emulator.context.credits.balance(emulator.apiKey);
        const events = await lastValueFrom(from(tokens).pipe(client.speak({ voice_id: 1, cache }), toArray()));
        const paid = before - emulator.context.credits.balance(emulator.apiKey);
        expect(texts(events)).toEqual(sentences);
        const audio = audioOf(events);
        sentences.forEach((sentence, i) => {
          if (stored.has(sentence)) expect(audio[i]!.equals(stored.get(sentence)!)).toBe(true);
          expect(audio[i]!.byteLength).toBeGreaterThan(0);
        });
        expect(paid).toBe((sentences.length - cached.length) * emulator.context.options.prices.speechSegment);
        expect(events.filter((e) => e.type === 'done')).toHaveLength(1);
        expect(events[0]!.type).toBe('ready');
      }),
      { numRuns: 15 },
    );
  }, 120_000);
});
