/**
 * rxvoice/cache against the emulator: a sentence said twice is replayed the second time
 * (byte-identical audio and word timestamps) with the service gone; hits come out in order
 * with live sentences and cost no credit; a changed setting misses; a skipped segment is
 * never stored; /tts-stream the same way.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lastValueFrom, from, Subject, toArray, type Subscription } from 'rxjs';
import { WebSocket } from 'ws';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createClient, type RxVoiceClient } from '../../src/index.js';
import { fileCacheStore, memoryCacheStore, speechCache, type SpeechCache } from '../../src/cache/index.js';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import type { LiveSpeechEvent } from '../../src/live/index.js';
import { ValidationError } from '../../src/core/errors.js';

/** Per segment, in output order: text, word timestamps and the audio bytes joined. */
function segmentsOf(events: LiveSpeechEvent[]): { text: string; words: unknown; audio: Buffer }[] {
  const out: { id: number; text: string; words: unknown; chunks: Uint8Array[] }[] = [];
  for (const event of events) {
    if (event.type === 'segmentStart') out.push({ id: event.segment_id, text: event.text.trim(), words: event.word_timestamps, chunks: [] });
    if (event.type === 'audio') out.find((s) => s.id === event.segment_id)?.chunks.push(event.bytes);
  }
  return out.map(({ text, words, chunks }) => ({ text, words, audio: Buffer.concat(chunks) }));
}

/** A ws WebSocket that counts the connections made (three parameters: the session sends the key as a header). */
let opened = 0;
class CountingWebSocket extends WebSocket {
  constructor(url: string, protocols?: string | string[], options?: Record<string, unknown>) {
    super(url, protocols, options);
    opened++;
  }
}

describe('speechCache with client.speak', () => {
  let emulator: Emulator;
  let client: RxVoiceClient;
  let cache: SpeechCache;
  beforeEach(async () => {
    opened = 0;
    emulator = await startEmulator({ synth: 'tone' });
    client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.baseUrl, WebSocket: CountingWebSocket });
    cache = speechCache({ store: memoryCacheStore() });
  });
  afterEach(async () => {
    await client.close();
    await emulator.close();
  });

  const say = (tokens: string[], options: Record<string, unknown> = {}) =>
    lastValueFrom(from(tokens).pipe(client.speak({ voice_id: 1, word_timestamps: true, cache, ...options }), toArray()));

  it('the same text twice: the second, with the emulator closed, replays identical audio and timestamps and opens no connection', async () => {
    const tokens = ['Thanks for ', 'calling. One', ' moment, please.'];
    const first = await say(tokens);
    expect(opened).toBe(1);
    expect(cache.stats).toMatchObject({ hits: 0, misses: 2, stored: 2 });
    await emulator.close();
    const second = await say(tokens);
    expect(opened).toBe(1); // no new connection
    expect(cache.stats).toMatchObject({ hits: 2, misses: 2 });
    const a = segmentsOf(first);
    const b = segmentsOf(second);
    expect(a.map((s) => s.text)).toEqual(['Thanks for calling.', 'One moment, please.']);
    expect(b).toEqual(a);
    expect(a[0]!.audio.byteLength).toBeGreaterThan(1000);
    expect(a[0]!.words).toEqual(expect.arrayContaining([expect.objectContaining({ word: 'Thanks' })]));
    expect(second[0]).toMatchObject({ type: 'ready', session_id: 'cache' });
    expect(second.at(-1)).toEqual({ type: 'done' });
    // Control: without the cache the same call fails with the emulator gone.
    await expect(lastValueFrom(from(tokens).pipe(client.speak({ voice_id: 1 })))).rejects.toThrow();
  });

  it('hits come out in order between live sentences, and cost no credit', async () => {
    await say(['Second sentence here.']);
    const before = emulator.context.credits.balance(emulator.apiKey);
    const events = await say(['First sentence here. ', 'Second sentence here. ', 'Third sentence here.']);
    const after = emulator.context.credits.balance(emulator.apiKey);
    expect(segmentsOf(events).map((s) => s.text)).toEqual(['First sentence here.', 'Second sentence here.', 'Third sentence here.']);
    // Segment ids are one sequence in output order.
    expect(events.filter((e) => e.type === 'segmentDone').map((e) => (e as { segment_id: number }).segment_id)).toEqual([0, 1, 2]);
    expect(cache.stats).toMatchObject({ hits: 1 });
    // Two segments paid (the emulator's price per segment is the same for each).
    const paidOnce = emulator.context.options.prices.speechSegment;
    expect(before - after).toBe(2 * paidOnce);
    expect(paidOnce).toBeGreaterThan(0);
    expect(events.filter((e) => e.type === 'done')).toHaveLength(1);
  });

  it('a changed setting that changes the audio misses; one that does not (idle_timeout) hits', async () => {
    await say(['A sentence to keep.']);
    await say(['A sentence to keep.'], { speaking_rate: 1.5 });
    expect(cache.stats).toMatchObject({ hits: 0, misses: 2 });
    await say(['A sentence to keep.'], { voice_id: 2 });
    expect(cache.stats).toMatchObject({ hits: 0, misses: 3 });
    await say(['A sentence to keep.'], { idle_timeout: 2 });
    expect(cache.stats).toMatchObject({ hits: 1, misses: 3 });
  });

  it("a segment larger than the cache's maxBytes is spoken whole and not stored (control: under the default bound it is)", async () => {
    cache = speechCache({ store: memoryCacheStore(), maxBytes: 1000 });
    const events = await say(['A sentence too long for a tiny cache.']);
    const [segment] = segmentsOf(events);
    expect(segment!.audio.byteLength).toBeGreaterThan(1000);
    expect(events.at(-1)).toEqual({ type: 'done' });
    expect(cache.stats).toMatchObject({ misses: 1, stored: 0, errors: 0 });
    cache = speechCache({ store: memoryCacheStore() });
    const control = await say(['A sentence too long for a tiny cache.']);
    expect(segmentsOf(control)[0]!.audio.equals(segment!.audio)).toBe(true);
    expect(cache.stats).toMatchObject({ misses: 1, stored: 1 });
  });

  it('a skipped segment is never stored; the delivered one beside it is', async () => {
    await emulator.close();
    emulator = await startEmulator({ synth: 'tone', faults: { failSynthesisMatching: { text: 'Broken', times: 4 } } });
    await client.close();
    client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.baseUrl, WebSocket: CountingWebSocket });
    const events = await say(['Broken sentence here. ', 'Good sentence here.']);
    expect(events.map((e) => e.type)).toContain('segmentSkipped');
    expect(cache.stats).toMatchObject({ stored: 1 });
    // The service is healthy again: the good sentence hits, the skipped one is spoken live.
    await emulator.close();
    emulator = await startEmulator({ synth: 'tone' });
    await client.close();
    client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.baseUrl, WebSocket: CountingWebSocket });
    const again = await say(['Broken sentence here. ', 'Good sentence here.']);
    expect(cache.stats).toMatchObject({ hits: 1, misses: 3, stored: 2 });
    expect(segmentsOf(again).map((s) => s.text)).toEqual(['Broken sentence here.', 'Good sentence here.']);
  });

  it('unsubscribing mid-speech closes the live session the cache opened (control: it is open before)', async () => {
    const input = new Subject<string>();
    let subscription: Subscription | undefined;
    const firstAudio = new Promise<void>((resolve) => {
      subscription = input.pipe(client.speak({ voice_id: 1, cache })).subscribe((event) => {
        if (event.type === 'audio') resolve();
      });
    });
    input.next('A sentence spoken live. And the start of another');
    await firstAudio;
    expect(emulator.liveConnections).toBe(1);
    subscription!.unsubscribe();
    for (let i = 0; i < 1000 && emulator.liveConnections > 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(emulator.liveConnections).toBe(0);
  });

  it('fileCacheStore: a new cache on the same directory (a restart) replays with the emulator closed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rxvoice-cache-speak-'));
    try {
      cache = speechCache({ store: fileCacheStore(dir) });
      const first = await say(['Saved to disk. ', 'And read back.']);
      await emulator.close();
      cache = speechCache({ store: fileCacheStore(dir) });
      const second = await say(['Saved to disk. ', 'And read back.']);
      expect(segmentsOf(second)).toEqual(segmentsOf(first));
      expect(cache.stats).toMatchObject({ hits: 2, misses: 0 });
      expect(opened).toBe(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a bad cache option throws a ValidationError at once', () => {
    expect(() => client.speak({ voice_id: 1, cache: {} as never })).toThrow(ValidationError);
    expect(() => speechCache({ store: memoryCacheStore(), ttlSeconds: -1 })).toThrow(ValidationError);
    // an expiry no store can write (Redis's PX takes an integer, not `1e+20`); control: 100 years is fine
    expect(() => speechCache({ store: memoryCacheStore(), ttlSeconds: 1e17 })).toThrow(/at most 100 years/);
    expect(() => speechCache({ store: memoryCacheStore(), ttlSeconds: 100 * 365 * 24 * 3600 })).not.toThrow();
  });

  it('a setting given as null is the service default, as one left out: the same key; control: a value is another', async () => {
    const { cacheKey } = await import('../../src/cache/key.js');
    const absent = await cacheKey('Hello.', { path: 'live', voice_id: 1 });
    expect(await cacheKey('Hello.', { path: 'live', voice_id: 1, sample_rate: null, speaking_rate: null })).toBe(absent);
    expect(await cacheKey('Hello.', { path: 'live', voice_id: 1, sample_rate: 8000 })).not.toBe(absent);
  });

  it('ttsStream: the same request twice, the second with the emulator closed, gives the same bytes', async () => {
    const request = { text: 'Streamed and cached.', voice_id: 1, language: 'en-us' };
    const first = await lastValueFrom(client.ttsStream(request, { cache }).pipe(toArray()));
    await emulator.close();
    const second = await lastValueFrom(client.ttsStream(request, { cache }).pipe(toArray()));
    const bytes = (chunks: { bytes: Uint8Array }[]) => Buffer.concat(chunks.map((c) => c.bytes));
    expect(bytes(second).equals(bytes(first))).toBe(true);
    expect(bytes(first).byteLength).toBeGreaterThan(1000);
    expect(second[0]?.creditsRequired).toBe(0);
    expect(second[0]?.format).toBe(first[0]?.format);
    expect(first[0]?.sampleRate).toBeGreaterThan(0);
    expect(second[0]?.sampleRate).toBe(first[0]?.sampleRate);
    expect(cache.stats).toMatchObject({ hits: 1, misses: 1, stored: 1 });
    await expect(lastValueFrom(client.ttsStream({ ...request, text: 'Not cached at all.' }))).rejects.toThrow();
  });

  it('ttlSeconds counts seconds on the `now` clock: an entry hits until its time, and misses (paid again) from then on', async () => {
    let now = 5_000_000;
    cache = speechCache({ store: memoryCacheStore(), ttlSeconds: 60, now: () => now });
    const request = { text: 'Kept for a minute.', voice_id: 1, language: 'en-us' };
    const credits = async () => (await lastValueFrom(client.ttsStream(request, { cache }).pipe(toArray())))[0]?.creditsRequired;
    expect(await credits()).toBeGreaterThan(0);
    now += 59_999;
    expect(await credits()).toBe(0);
    now += 1;
    expect(await credits()).toBeGreaterThan(0);
    expect(cache.stats).toMatchObject({ hits: 1, misses: 2, stored: 2 });
  });

  it('ttsStream: the same text with another voice, language or setting misses and is paid; the same request hits (control)', async () => {
    const request = { text: 'One text, many voices.', voice_id: 1, language: 'en-us' };
    const call = (r: typeof request & Record<string, unknown>) => lastValueFrom(client.ttsStream(r, { cache }).pipe(toArray()));
    await call(request);
    const balance = () => emulator.context.credits.balance(emulator.apiKey);
    for (const changed of [{ voice_id: 2 }, { language: 'fr-fr' }, { voice_settings: { speaking_rate: 1.5 } }]) {
      const before = balance();
      const chunks = await call({ ...request, ...changed });
      expect(chunks[0]?.creditsRequired, JSON.stringify(changed)).toBeGreaterThan(0);
      expect(balance(), JSON.stringify(changed)).toBeLessThan(before);
    }
    expect(cache.stats).toMatchObject({ hits: 0, misses: 4, stored: 4 });
    const before = balance();
    expect((await call(request))[0]?.creditsRequired).toBe(0);
    expect(balance()).toBe(before);
    expect(cache.stats).toMatchObject({ hits: 1, misses: 4 });
  });
});
