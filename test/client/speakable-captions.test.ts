/**
 * client.speak({ speakable }) captions (issue 31): each segmentStart's `sourceText` and each word
 * timestamp's `source` give the words as written (a lexicon rewrite, a URL, a spoken number),
 * while `text` and `word` stay what was spoken. Against the emulator over real sockets, with
 * word timestamps on.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { from, lastValueFrom, toArray } from 'rxjs';
import { createClient } from '../../src/index.js';
import type { ClientSpeakOptions, RxVoiceClient } from '../../src/client/client.js';
import type { LiveSpeechEvent, SegmentStartEvent } from '../../src/live/index.js';
import { emulator } from '../live/helpers.js';

const clients: RxVoiceClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});
async function speakAll(tokens: readonly string[], options: ClientSpeakOptions): Promise<SegmentStartEvent[]> {
  const emu = await emulator();
  const client = createClient({ apiKey: emu.apiKey, baseUrl: emu.baseUrl });
  clients.push(client);
  const events: LiveSpeechEvent[] = await lastValueFrom(from(tokens).pipe(client.speak(options), toArray()));
  return events.filter((e): e is SegmentStartEvent => e.type === 'segmentStart');
}
/** Each spoken word with the original it maps to ('' when none). */
const wordMap = (segments: readonly SegmentStartEvent[]): Array<[string, string]> =>
  segments.flatMap((s) => (s.word_timestamps ?? []).map((w): [string, string] => [w.word, w.source ?? '']));

const LLM = '<think>Pick SQL.</think>Use **SQL** daily. See https://example.com/docs?x=1 now. It costs $3.50 today.';
const options: ClientSpeakOptions = { voice_id: 1, word_timestamps: true, speakable: { lexicon: { words: { SQL: 'sequel' } }, spokenForm: true } };

describe('client.speak({ speakable }) captions', () => {
  for (const [name, tokens] of [
    ['whole', [LLM]],
    ['one character at a time', [...LLM]],
  ] as const) {
    it(`maps segments and words back to the words as written (${name})`, async () => {
      const segments = await speakAll(tokens, options);
      // what was spoken is unchanged
      expect(segments.map((s) => s.text.trim())).toEqual(['Use sequel daily.', 'See example.com now.', 'It costs three dollars and fifty cents today.']);
      // captions: the words as written, markup and the thought left out
      expect(segments.map((s) => s.sourceText)).toEqual(['Use SQL daily.', 'See https://example.com/docs?x=1 now.', 'It costs $3.50 today.']);
      const words = wordMap(segments);
      expect(words.find(([w]) => w.startsWith('sequel'))?.[1]).toBe('SQL');
      expect(words.find(([w]) => w.startsWith('example.com'))?.[1]).toMatch(/^https:\/\/example\.com\/docs\?x=1/);
      // one written `$3.50` spoken as five words: all five map to it
      for (const spoken of ['three', 'dollars', 'and', 'fifty', 'cents']) expect(words.find(([w]) => w === spoken)?.[1]).toBe('$3.50');
      // a word spoken as written maps to itself
      expect(words.find(([w]) => w === 'daily.')?.[1]).toBe('daily.');
      expect(words.find(([w]) => w === 'Use')?.[1]).toBe('Use');
    });
  }

  it('control: without the mapping the captions would show the spoken words', async () => {
    const segments = await speakAll([LLM], options);
    // the spoken text alone does not contain the originals: a caption from `text` would be wrong
    const spokenText = segments.map((s) => s.text).join(' ');
    expect(spokenText).not.toContain('SQL');
    expect(spokenText).not.toContain('$3.50');
    expect(spokenText).not.toContain('https://');
    expect(wordMap(segments).filter(([w, source]) => w !== source && source !== '').length).toBeGreaterThanOrEqual(7);
    // and without speakable, no source is given at all (the field is the feature's, not the service's)
    const plain = await speakAll(['Use SQL daily.'], { voice_id: 1, word_timestamps: true });
    expect(plain[0]!.sourceText).toBeUndefined();
    expect(plain[0]!.word_timestamps!.length).toBeGreaterThan(0);
    expect(plain[0]!.word_timestamps!.every((w) => (w as { source?: string }).source === undefined)).toBe(true);
  });
});

describe('client.speak({ speakable }) captions across a reconnect', () => {
  it('segments sent again after the connection dropped map back as the first time', async () => {
    const emu = await emulator({ faults: { dropAfterFrames: 2 } });
    const client = createClient({ apiKey: emu.apiKey, baseUrl: emu.baseUrl });
    clients.push(client);
    const events: LiveSpeechEvent[] = await lastValueFrom(
      from([LLM]).pipe(client.speak({ ...options, reconnect: { maxAttempts: 20, baseDelayMs: 1, maxDelayMs: 5 } }), toArray()),
    );
    expect(events.filter((e) => e.type === 'reconnected').length).toBeGreaterThanOrEqual(1); // control: it did reconnect
    const starts = events.filter((e): e is SegmentStartEvent => e.type === 'segmentStart');
    const byText = new Map([
      ['Use sequel daily.', 'Use SQL daily.'],
      ['See example.com now.', 'See https://example.com/docs?x=1 now.'],
      ['It costs three dollars and fifty cents today.', 'It costs $3.50 today.'],
    ]);
    expect(new Set(starts.map((s) => s.text.trim()))).toEqual(new Set(byText.keys()));
    expect(starts.length).toBeGreaterThan(byText.size); // control: some segment was started again
    for (const s of starts) expect(s.sourceText).toBe(byText.get(s.text.trim()));
  });
});
