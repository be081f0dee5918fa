import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lastValueFrom, tap, toArray, type Observer } from 'rxjs';
import { pseudoLocalize } from '../../src/emulator/index.js';
import { StreamError, TaskFailedError, type RxVoiceClient } from '../../src/index.js';
import { LiveSessionError, ValidationError } from '../../src/live/index.js';
import { TRANSLATION_FAIL_TRIGGER, type Emulator } from '../../src/emulator/index.js';
import { translateThenSpeak, type TranslateThenSpeakClient } from '../../src/chains/translateThenSpeak.js';
import type { LiveSpeechEvent } from '../../src/live/events.js';
import { clientFor, emulator } from '../client/helpers.js';

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

  it('streamed: speaks the translation sentence by sentence in the target language', async () => {
    const pieces: string[] = [];
    const events = await lastValueFrom(
      translateThenSpeak(client, {
        translation: { text: SOURCE, source_language: 'en-us', target_language: 'de-de' },
        translationMode: 'streamed',
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
        translationMode: 'streamed',
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
        translationMode: 'streamed',
        speech: { voice_id: 1 },
      }),
    );
    // one translation and one live session: the valid call's only (nothing from the bad one)
    expect(emu.requests.slice(before).map((r) => r.method).sort()).toEqual(['POST', 'UPGRADE']);
  });

  it("bad options of the chain's own throw a ValidationError at once, nothing sent or paid (control: the same options well formed are sent)", async () => {
    const before = emu.requests.length;
    const base = { translation: { text: 'Good morning.', source_language: 'en-us', target_language: 'de-de' }, speech: { voice_id: 1 } } as const;
    const bad: Array<[Record<string, unknown>, unknown[]]> = [
      [{ translationMode: 'streamed', onCredits: 5 }, ['options', 'onCredits']],
      [{ translationMode: 'bogus' }, ['options', 'translationMode']],
      [{ signal: 5 }, ['options', 'signal']],
      [{ observeTranslation: 5 }, ['options', 'observeTranslation']],
      [{ observeTranslation: { next: 'log' } }, ['options', 'observeTranslation', 'next']],
      [{ translation: { ...base.translation, texts: ['Bananas.'] } }, ['options', 'translation']],
    ];
    for (const [extra, loc] of bad) {
      const call = () => translateThenSpeak(client, { ...base, ...extra } as Parameters<typeof translateThenSpeak>[1]);
      expect(call, JSON.stringify(extra)).toThrow(ValidationError);
      try {
        call();
      } catch (error) {
        expect((error as ValidationError).issues.map((issue) => issue.loc)).toContainEqual(loc);
      }
    }
    // the client's own translateStream: the hook is checked before the request
    expect(() => client.translateStream(base.translation, { onCredits: 5 as unknown as () => void })).toThrow(ValidationError);
    expect(emu.requests.length).toBe(before);
    // control: the same options, well formed, are taken and sent
    const credits: Array<number | undefined> = [];
    const seen: string[] = [];
    const controller = new AbortController();
    await lastValueFrom(
      translateThenSpeak(client, {
        ...base,
        translationMode: 'streamed',
        onCredits: (n) => credits.push(n),
        signal: controller.signal,
        observeTranslation: { next: (piece) => seen.push(piece) },
      }),
    );
    expect(credits).toHaveLength(1);
    expect(seen.join('').length).toBeGreaterThan(0);
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
        translationMode: 'streamed',
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

  const spokenTexts = (events: LiveSpeechEvent[]) =>
    events.filter((e): e is Extract<LiveSpeechEvent, { type: 'segmentStart' }> => e.type === 'segmentStart').map((e) => e.text.trim());

  it('streamed with `texts`: the texts joined by blank lines, each spoken; onCredits hears the price of the stream', async () => {
    const texts = ['Good morning.', 'See you there.'];
    const credits: Array<number | undefined> = [];
    const events = await lastValueFrom(
      translateThenSpeak(client, {
        translation: { texts, source_language: 'en-us', target_language: 'de-de' },
        translationMode: 'streamed',
        speech: { voice_id: 1 },
        onCredits: (c) => credits.push(c),
      }).pipe(toArray()),
    );
    const spoken = spokenTexts(events);
    expect(spoken).toHaveLength(2);
    expect(spoken.join(' ')).toBe(pseudoLocalize(texts.join('\n\n'), 'de-de').replace(/\s+/g, ' '));
    expect(credits).toHaveLength(1);
    expect(credits[0]).toBeGreaterThan(0);
  });

  it("streamed with `texts` that end without a stop: each text is a sentence of its own (the blank line between them ends it)", async () => {
    const texts = ['Good morning', 'See you there'];
    const events = await lastValueFrom(
      translateThenSpeak(client, {
        translation: { texts, source_language: 'en-us', target_language: 'de-de' },
        translationMode: 'streamed',
        speech: { voice_id: 1 },
      }).pipe(toArray()),
    );
    expect(spokenTexts(events)).toEqual(pseudoLocalize(texts.join('\n\n'), 'de-de').split('\n\n'));
  });

  it("the translation is cut into sentences by the target language's rules unless segmentation names a locale (Greek ';' is a question mark)", async () => {
    /** The pieces the chain hands to the live session (the real client's speak, its input watched). */
    const piecesSent = async (segmentation?: { locale: string }) => {
      const pieces: string[] = [];
      const watched: TranslateThenSpeakClient = {
        translate: (request, options) => client.translate(request, options),
        translateStream: (request, options) => client.translateStream(request, options),
        speak: (options) => (text$) => text$.pipe(tap((piece) => pieces.push(piece)), client.speak(options)),
      };
      await lastValueFrom(
        translateThenSpeak(watched, {
          translation: { text: 'Ti kaneis; Kala.', source_language: 'en-us', target_language: 'el-gr' },
          translationMode: 'streamed',
          speech: { voice_id: 1 },
          ...(segmentation ? { segmentation } : {}),
        }),
      );
      return pieces;
    };
    const translated = pseudoLocalize('Ti kaneis; Kala.', 'el-gr');
    const cut = translated.indexOf(';') + 1;
    expect(await piecesSent()).toEqual([translated.slice(0, cut), translated.slice(cut)]);
    // control: English rules read ';' as no stop, so the same translation is one sentence
    expect(await piecesSent({ locale: 'en-us' })).toEqual([translated]);
  });

  it("speech.language, when given, is the session's language rather than the translation's target", async () => {
    const configOf = async (language?: 'en-us') => {
      const events = await lastValueFrom(
        translateThenSpeak(client, {
          translation: { text: 'Good morning.', source_language: 'en-us', target_language: 'de-de' },
          translationMode: 'streamed',
          speech: { voice_id: 1, ...(language ? { language } : {}) },
        }).pipe(toArray()),
      );
      return (events[0] as Extract<LiveSpeechEvent, { type: 'ready' }>).config;
    };
    expect(await configOf('en-us')).toMatchObject({ language: 'en-us' });
    expect(await configOf()).toMatchObject({ language: 'de-de' }); // control: the default
  });

  it('streamed, the signal aborts the translation: the chain errors with the AbortError as cause (control: not aborted, it completes)', async () => {
    const controller = new AbortController();
    const run = (signal?: AbortSignal) =>
      lastValueFrom(
        translateThenSpeak(client, {
          translation: { text: SOURCE, source_language: 'en-us', target_language: 'de-de' },
          translationMode: 'streamed',
          speech: { voice_id: 1 },
          observeTranslation: { next: () => controller.abort() },
          ...(signal ? { signal } : {}),
        }),
      ).then(
        (last) => last,
        (error: unknown) => error,
      );
    const aborted = await run(controller.signal);
    expect(aborted).toMatchObject({ name: 'LiveSessionError', code: 'text_source' });
    expect((aborted as LiveSessionError).cause).toMatchObject({ name: 'AbortError' });
    expect(await run()).toEqual({ type: 'done' });
  });

  describe('polled (the default)', () => {
    const TEXTS = [
      'Good morning everyone.',
      'The weather is fine today.',
      'The sun is shining.',
      'We will meet at the station at noon.',
      'Please bring something to eat.',
      'The train leaves at one.',
      'See you there.',
    ];

    /** Translation tasks take 150 ms per text (the service's time grows with the work), or `duration(texts)`. */
    function durationBySize(duration = (texts: number) => 150 * texts): () => void {
      const tasks = emu.context.tasks;
      const set = tasks.set.bind(tasks);
      tasks.set = (id, task) => {
        const data = task.data as { texts?: string[] };
        if (task.kind === 'translation' && Array.isArray(data.texts)) task.durationMs = duration(data.texts.length);
        return set(id, task);
      };
      return () => {
        tasks.set = set;
      };
    }

    it('translates with POST /translation tasks in batches of 1, 2, 4 and speaks every text in order; no stream, no warning', async () => {
      const warnings: string[] = [];
      const c = clientFor(emu, { warn: (message) => warnings.push(message) });
      const before = emu.requests.length;
      try {
        const events = await lastValueFrom(
          translateThenSpeak(c, { translation: { texts: TEXTS, source_language: 'en-us', target_language: 'de-de' }, speech: { voice_id: 1 } }).pipe(toArray()),
        );
        const requests = emu.requests.slice(before);
        expect(requests.filter((r) => r.method === 'POST' && r.path === '/translation')).toHaveLength(3);
        expect(requests.some((r) => r.path === '/translation/stream')).toBe(false);
        expect(warnings).toEqual([]);
        const spoken = events
          .filter((e): e is Extract<LiveSpeechEvent, { type: 'segmentStart' }> => e.type === 'segmentStart')
          .map((e) => e.text.trim());
        const expected = TEXTS.map((text) => pseudoLocalize(text, 'de-de').trim());
        expect(spoken.join(' ').replace(/\s+/g, ' ')).toBe(expected.join(' ').replace(/\s+/g, ' '));
        expect(events.at(-1)?.type).toBe('done');
      } finally {
        await c.close();
      }
    });

    it('first audio before the last batch is translated (multi-text input)', async () => {
      const restore = durationBySize();
      const log: string[] = [];
      try {
        await lastValueFrom(
          translateThenSpeak(client, {
            translation: { texts: TEXTS, source_language: 'en-us', target_language: 'fr-fr' },
            speech: { voice_id: 1 },
            observeTranslation: { next: () => log.push('text'), complete: () => log.push('translation complete') },
          }).pipe(
            tap((e) => {
              if (e.type === 'audio') log.push('audio');
            }),
          ),
        );
      } finally {
        restore();
      }
      const firstAudio = log.indexOf('audio');
      expect(firstAudio).toBeGreaterThan(0);
      expect(firstAudio).toBeLessThan(log.indexOf('translation complete'));
      // Texts still arrived after the first audio: the later batches were translating.
      expect(log.slice(firstAudio).includes('text')).toBe(true);
    });

    it('every batch is created at once: all three tasks before the first result is fetched', async () => {
      const restore = durationBySize();
      const before = emu.requests.length;
      try {
        await lastValueFrom(translateThenSpeak(client, { translation: { texts: TEXTS, source_language: 'en-us', target_language: 'de-de' }, speech: { voice_id: 1 } }));
      } finally {
        restore();
      }
      const steps = emu.requests
        .slice(before)
        .filter((r) => (r.method === 'POST' && r.path === '/translation') || r.path.startsWith('/translation-result/'))
        .map((r) => (r.method === 'POST' ? 'create' : 'result'));
      expect(steps).toEqual(['create', 'create', 'create', 'result', 'result', 'result']);
    });

    it('unsubscribing stops polling every batch still translating (control: a chain left running polls and fetches its results)', async () => {
      // the first batch is quick, the others take long enough that none is done (or being polled) when the first text arrives
      const restore = durationBySize((texts) => (texts === 1 ? 100 : 1500));
      const tasksBefore = new Set(emu.context.tasks.keys());
      const newTasks = () => [...emu.context.tasks.keys()].filter((id) => !tasksBefore.has(id));
      try {
        const chain = (observeTranslation?: Partial<Observer<string>>) =>
          translateThenSpeak(client, {
            translation: { texts: TEXTS, source_language: 'en-us', target_language: 'de-de' },
            speech: { voice_id: 1 },
            ...(observeTranslation ? { observeTranslation } : {}),
          });
        // unsubscribed as the first text (batch 1) arrives: batches 2 and 3 still run
        await new Promise<void>((resolve) => {
          const subscription = chain({ next: () => queueMicrotask(() => (subscription.unsubscribe(), resolve())) }).subscribe();
        });
        const stopped = newTasks();
        expect(stopped).toHaveLength(3);
        // a task's run is made when a poll finds it done: the runs of the stopped tasks so far
        const withRun = (ids: string[]) => ids.filter((id) => emu.context.tasks.get(id)?.run !== undefined);
        const stoppedRuns = withRun(stopped);
        for (const id of stopped) tasksBefore.add(id);
        await lastValueFrom(chain()); // the control, which takes as long as the stopped chain would have
        const control = newTasks();
        expect(withRun(control)).toEqual(control); // control: a running chain polls every task until it is done
        expect(withRun(stopped)).toEqual(stoppedRuns); // no stopped task was polled again
      } finally {
        restore();
      }
    });

    it('an aborted signal: the chain errors and no task is created (control: without it, one is)', async () => {
      const before = emu.requests.length;
      const error = await lastValueFrom(
        translateThenSpeak(client, { translation: { texts: TEXTS, source_language: 'en-us', target_language: 'de-de' }, speech: { voice_id: 1 }, signal: AbortSignal.abort() }),
      ).catch((e: unknown) => e);
      expect(error).toMatchObject({ name: 'LiveSessionError', code: 'text_source' });
      expect((error as LiveSessionError).cause).toMatchObject({ name: 'AbortError' });
      expect(emu.requests.slice(before).filter((r) => r.path === '/translation')).toEqual([]);
      await lastValueFrom(translateThenSpeak(client, { translation: { texts: ['Hello.'], source_language: 'en-us', target_language: 'de-de' }, speech: { voice_id: 1 } }));
      expect(emu.requests.slice(before).filter((r) => r.path === '/translation')).toHaveLength(1);
    });

    it('a text as `text` is one task; a bad request throws before anything is sent', async () => {
      const before = emu.requests.length;
      expect(() =>
        translateThenSpeak(client, { translation: { texts: ['Hi.', ''], source_language: 'en-us', target_language: 'de-de' }, speech: { voice_id: 1 } }),
      ).toThrow(ValidationError);
      // The whole request is checked first: not even the valid first batch was sent.
      expect(emu.requests.length).toBe(before);

      const mid = emu.requests.length;
      await lastValueFrom(translateThenSpeak(client, { translation: { text: 'Hello there.', source_language: 'en-us', target_language: 'de-de' }, speech: { voice_id: 1 } }));
      expect(emu.requests.slice(mid).filter((r) => r.method === 'POST' && r.path === '/translation')).toHaveLength(1);
    });

    it('a failed translation task ends the chain: its TaskFailedError is the cause', async () => {
      emu.context.options.faults.taskOutcome = { translation: 'ERROR' };
      try {
        const error = await lastValueFrom(
          translateThenSpeak(client, { translation: { texts: TEXTS, source_language: 'en-us', target_language: 'de-de' }, speech: { voice_id: 1 } }),
        ).catch((e: unknown) => e);
        expect(error).toMatchObject({ name: 'LiveSessionError', code: 'text_source' });
        expect((error as LiveSessionError).cause).toBeInstanceOf(TaskFailedError);
      } finally {
        emu.context.options.faults.taskOutcome = undefined;
      }
    });
  });
});
