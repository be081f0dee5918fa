/**
 * Client-side sentence boundaries end to end: `client.speak` against the emulator over a
 * real socket. Sentences with abbreviations, initials, times, decimals, URLs and ellipses,
 * split into two tokens at every position, are spoken as the same segments; so are random
 * splits into many tokens. Bad options are refused before anything is sent.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { from, lastValueFrom, Subject, tap, toArray } from 'rxjs';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import { createClient } from '../../src/index.js';
import { concatSegments } from '../../src/operators/index.js';

const TEXT =
  'I work for the U.S. Government in Virginia. The train leaves at 6 p.m. tomorrow. See docs. ' +
  'Then visit example.com/start for setup. I thought... maybe not. It costs 3.50 dollars. Dr. Smith agreed!';
const SENTENCES = [
  'I work for the U.S. Government in Virginia.',
  'The train leaves at 6 p.m. tomorrow.',
  'See docs.',
  'Then visit example.com/start for setup.',
  'I thought... maybe not.',
  'It costs 3.50 dollars.',
  'Dr. Smith agreed!',
];

let emulator: Emulator;
let client: ReturnType<typeof createClient>;
beforeAll(async () => {
  emulator = await startEmulator({ synth: 'tone', toneWordSeconds: 0.002 });
  client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.baseUrl });
});
afterAll(async () => {
  await client.close();
  await emulator.close();
});

/** The segments spoken for these tokens (text trimmed). */
async function spoken(tokens: string[], clientBoundaries = true): Promise<string[]> {
  // idle_timeout 30 s: a segment that waited for it would time the test out
  const segments = await lastValueFrom(
    from(tokens).pipe(client.speak({ voice_id: 1, idle_timeout: 30, clientBoundaries }), concatSegments(), toArray()),
  );
  return segments.map((s) => s.text.trim()).filter((t) => t.length > 0);
}

describe('client.speak with client-side boundaries', () => {
  it('speaks the same sentences for a split at every position', { timeout: 120_000 }, async () => {
    const positions = Array.from({ length: TEXT.length - 1 }, (_, i) => i + 1);
    const results = new Map<number, string[]>();
    const workers = Array.from({ length: 6 }, async (_, w) => {
      for (let k = w; k < positions.length; k += 6) {
        const at = positions[k]!;
        results.set(at, await spoken([TEXT.slice(0, at), TEXT.slice(at)]));
      }
    });
    await Promise.all(workers);
    for (const at of positions) expect(results.get(at), `split at ${at}: ${JSON.stringify(TEXT.slice(at - 5, at))}|`).toEqual(SENTENCES);
  });

  it('speaks the same sentences for random token splits (word by word and 1-6 characters)', { timeout: 60_000 }, async () => {
    expect(await spoken(TEXT.match(/\s*\S+/g) ?? [])).toEqual(SENTENCES);
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 1, max: 6 }), { minLength: 1, maxLength: 40 }), async (sizes) => {
        const tokens: string[] = [];
        for (let i = 0, k = 0; i < TEXT.length; k++) {
          const n = sizes[k % sizes.length]!;
          tokens.push(TEXT.slice(i, i + n));
          i += n;
        }
        expect(await spoken(tokens)).toEqual(SENTENCES);
      }),
      { numRuns: 8 },
    );
  });

  it('clientBoundaries: false sends each string as it is (already segmented text)', async () => {
    expect(await spoken(SENTENCES.map((s, i) => (i === 0 ? s : ` ${s}`)), false)).toEqual(SENTENCES);
  });

  it('clientBoundaries: false speaks a ten-sentence ping-pong with no idle_timeout wait', async () => {
    // Each sentence is pushed only once the one before is spoken: its stop ends its chunk, and
    // the service speaks it at once (idle_timeout 30 s would time the test out otherwise).
    const text = new Subject<string>();
    const sentences = Array.from({ length: 10 }, (_, i) => `${i === 0 ? '' : ' '}Answer number ${i + 1} is here.`);
    let next = 0;
    const done = lastValueFrom(
      text.pipe(
        client.speak({ voice_id: 1, idle_timeout: 30, clientBoundaries: false }),
        tap((event) => {
          if (event.type === 'ready' || event.type === 'segmentDone') {
            if (next < sentences.length) text.next(sentences[next++]!);
            else text.complete();
          }
        }),
        concatSegments(),
        toArray(),
      ),
    );
    expect((await done).map((s) => s.text)).toEqual(sentences);
  });

  it('refuses bad boundary options when the operator is made, before connecting', async () => {
    const upgrades = (): number => emulator.requests.filter((r) => r.method === 'UPGRADE').length;
    const before = upgrades();
    // one validation policy: bad options throw when the operator is made
    expect(() => client.speak({ voice_id: 1, boundaryHoldMs: -1 })).toThrow(expect.objectContaining({ name: 'ValidationError' }));
    expect(() => client.speak({ voice_id: 1, clientBoundaries: 'yes' as unknown as boolean })).toThrow(
      expect.objectContaining({ name: 'ValidationError' }),
    );
    expect(upgrades()).toBe(before);
    await spoken(['Hi.']); // control: a good session is counted
    expect(upgrades()).toBe(before + 1);
  });
});
