import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lastValueFrom, tap, toArray } from 'rxjs';
import { LiveSessionError, StreamError, ValidationError, type RxVoiceClient } from '../src/index.js';
import { TRANSLATION_FAIL_TRIGGER, type Emulator } from '../src/emulator/index.js';
import { translateThenSpeak } from '../src/chains/translateThenSpeak.js';
import type { LiveSpeechEvent } from '../src/live/events.js';
import { clientFor, emulator } from './client-helpers.js';

const SOURCE =
  'Good morning everyone. The weather is fine today and the sun is shining. ' +
  'We will meet at the station at noon. Please bring something to eat.';

describe('translateThenSpeak on the emulator', () => {
  let emu: Emulator;
  let client: RxVoiceClient;
  beforeAll(async () => {
    emu = await emulator({ streamDelayMs: 40, toneWordSeconds: 0.05 });
    client = clientFor(emu);
  });
  afterAll(async () => {
    await client.close();
    await emu.close();
  });

  it('speaks the translation sentence by sentence in the target language', async () => {
    const pieces: string[] = [];
    const events = await lastValueFrom(
      translateThenSpeak(client, {
        translation: { text: SOURCE, source_language: 'en-us', target_language: 'de-de' },
        speech: { voice_id: 1 },
        observeTranslation: { next: (p) => pieces.push(p) },
      }).pipe(toArray()),
    );
    const translation = pieces.join('');
    expect(translation).not.toContain('Good morning');
    expect(events[0]?.type).toBe('ready');
    expect((events[0] as Extract<LiveSpeechEvent, { type: 'ready' }>).config).toMatchObject({ language: 'de-de', word_timestamps: true });
    expect(events.at(-1)?.type).toBe('done');
    const starts = events.filter((e): e is Extract<LiveSpeechEvent, { type: 'segmentStart' }> => e.type === 'segmentStart');
    expect(starts.length).toBeGreaterThanOrEqual(4);
    expect(starts.map((s) => s.text).join('').replace(/\s+/g, ' ').trim()).toBe(translation.replace(/\s+/g, ' ').trim());
    expect(events.filter((e) => e.type === 'audio').length).toBeGreaterThanOrEqual(starts.length);
    expect(starts.some((s) => (s.word_timestamps?.length ?? 0) > 0)).toBe(true);
    expect(events.filter((e) => e.type === 'segmentDone')).toHaveLength(starts.length);
  });

  it('first audio arrives before the translation stream completes', async () => {
    const log: Array<{ what: 'piece' | 'translation complete' | 'audio' | 'segmentStart'; at: number }> = [];
    const t0 = performance.now();
    const mark = (what: (typeof log)[number]['what']) => log.push({ what, at: performance.now() - t0 });
    await lastValueFrom(
      translateThenSpeak(client, {
        translation: { text: SOURCE, source_language: 'en-us', target_language: 'fr-fr' },
        speech: { voice_id: 1 },
        observeTranslation: { next: () => mark('piece'), complete: () => mark('translation complete') },
      }).pipe(
        tap((e) => {
          if (e.type === 'audio' || e.type === 'segmentStart') mark(e.type);
        }),
        toArray(),
      ),
    );
    const firstAudio = log.findIndex((e) => e.what === 'audio');
    const done = log.findIndex((e) => e.what === 'translation complete');
    expect(firstAudio).toBeGreaterThan(0);
    expect(done).toBeGreaterThan(0);
    // the first sentence is spoken while later pieces are still being translated
    expect(firstAudio).toBeLessThan(done);
    expect(log.slice(firstAudio).some((e) => e.what === 'piece')).toBe(true);
  });

  it('a bad translation request throws a ValidationError at once, before anything is sent', async () => {
    const before = emu.requests.length;
    expect(() =>
      translateThenSpeak(client, {
        translation: { text: '', source_language: 'en-us', target_language: 'de-de' },
        speech: { voice_id: 1 },
      }),
    ).toThrow(ValidationError);
    // control: a valid request does reach the emulator
    await lastValueFrom(
      translateThenSpeak(client, {
        translation: { text: 'Good morning.', source_language: 'en-us', target_language: 'de-de' },
        speech: { voice_id: 1 },
      }),
    );
    // one translation and one live session: the valid call's only (nothing from the bad one)
    expect(emu.requests.slice(before).map((r) => r.method).sort()).toEqual(['POST', 'UPGRADE']);
  });

  it('a failed translation ends the chain: the StreamError is the cause, the unspoken text on the session error', async () => {
    const error = await lastValueFrom(
      translateThenSpeak(client, {
        translation: {
          text: `Good morning everyone. How are you today ${TRANSLATION_FAIL_TRIGGER} never.`,
          source_language: 'en-us',
          target_language: 'de-de',
        },
        speech: { voice_id: 1 },
      }),
    ).catch((e: unknown) => e);
    // the translation's StreamError, unchanged, is the cause of the session's error
    expect(error).toMatchObject({ name: 'LiveSessionError', code: 'text_source' });
    const sessionError = error as LiveSessionError;
    expect(sessionError.cause).toBeInstanceOf(StreamError);
    const streamError = sessionError.cause as StreamError;
    expect(streamError.received.length).toBeGreaterThan(0);
    // the text after the last delivered segment: at least the unfinished last sentence,
    // which segmentSentences pushed into the session just before the error
    const squash = (text: string) => text.replace(/\s+/g, '');
    expect(squash(sessionError.unspoken).length).toBeGreaterThan(0);
    expect(squash(streamError.received).endsWith(squash(sessionError.unspoken))).toBe(true);
  });
});
