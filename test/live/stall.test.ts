/**
 * Stalls fall back instead of going silent (`stall` speak option): a live service that accepts
 * the session and then never answers (a raw WebSocket server) while the emulator serves
 * `POST /tts-stream`: every sentence is spoken once over tts-stream, in order; a sentence the
 * live session already started stays live; with `fallback: 'error'` it times out instead.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { concat, from, interval, lastValueFrom, map, of, Subject, take, takeWhile, tap, throwError, toArray } from 'rxjs';
import { waitFor } from '../fixtures/sinkFixtures.js';
import { WebSocket, WebSocketServer } from 'ws';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import { createClient, type RxVoiceClient } from '../../src/index.js';
import { LiveSessionError, speak, ValidationError, type LiveSpeechEvent, type SpeechMetrics } from '../../src/live/index.js';
import { parseWavHeader, encodeWav16 } from '../../src/audio/wav.js';

const TEXT = 'First sentence here. Second one follows. Third and last.';
const TOKENS = ['First sent', 'ence here. Sec', 'ond one follows. Th', 'ird and last.'];

let emulator: Emulator;
let http: Server;
let stalled: WebSocketServer;
let stalledUrl: string;
/** How many first segments the fake live service speaks before it stalls. */
let answerSegments = 0;
/** `text.chunk`s the fake live service received. */
let received: string[] = [];

beforeAll(async () => {
  emulator = await startEmulator();
  http = createServer();
  stalled = new WebSocketServer({ server: http });
  stalled.on('connection', (socket) => {
    let spoken = 0;
    let pending = '';
    socket.on('message', (data, binary) => {
      if (binary) return;
      const frame = JSON.parse(String(data)) as { type: string; text?: string };
      if (frame.type === 'session.start') {
        socket.send(JSON.stringify({ type: 'session.ready', session_id: 'stalled', run_id: 1, config: { output_format: 'wav' } }));
      } else if (frame.type === 'text.chunk') {
        received.push(frame.text!);
        pending += frame.text!;
        // segments as the contract says: a complete sentence (here: up to a full stop)
        const end = pending.indexOf('.') + 1;
        if (spoken < answerSegments && end > 0) {
          const id = spoken++;
          const text = pending.slice(0, end);
          pending = pending.slice(end);
          socket.send(JSON.stringify({ type: 'segment.start', segment_id: id, text }));
          socket.send(encodeWav16(new Int16Array(1600), 16000));
          socket.send(JSON.stringify({ type: 'segment.done', segment_id: id }));
        }
        // then: accepted, never answered
      }
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  stalledUrl = `ws://127.0.0.1:${(http.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const client of stalled.clients) client.terminate();
  await new Promise((resolve) => stalled.close(resolve));
  await new Promise((resolve) => http.close(resolve));
  await emulator.close();
});

beforeEach(() => {
  received = [];
  ttsBodies = [];
  answerSegments = 0;
});

/** A client of the emulator whose live sessions go to the stalled service. */
function stalledClient(): RxVoiceClient {
  const url = stalledUrl;
  class ToStalled extends WebSocket {
    constructor(_url: string, protocols?: string | string[], options?: ConstructorParameters<typeof WebSocket>[2]) {
      super(url, protocols, options);
    }
  }
  return createClient({ apiKey: emulator.apiKey, baseUrl: emulator.baseUrl, WebSocket: ToStalled as never, fetch: recordingFetch });
}

/** The JSON bodies of the `POST /tts-stream` calls of {@link stalledClient}s, in order. */
let ttsBodies: Array<Record<string, unknown>> = [];
const recordingFetch: typeof fetch = async (input, init) => {
  if (String(input).endsWith('/tts-stream')) ttsBodies.push(JSON.parse(String(init?.body)) as Record<string, unknown>);
  return fetch(input, init);
};

const ttsCalls = (): number => emulator.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/tts-stream')).length;

describe('stall: { fallback: "tts-stream" }', () => {
  it('a service that accepts and never answers: every sentence spoken once over tts-stream, in order', async () => {
    const before = ttsCalls();
    const events = await lastValueFrom(
      from(TOKENS).pipe(stalledClient().speak({ voice_id: 1, stall: { afterMs: 300, fallback: 'tts-stream' } }), toArray()),
    );
    const fallbacks = events.filter((e) => e.type === 'segmentFallback');
    expect(fallbacks.map((e) => e.text.trim())).toEqual(['First sentence here.', 'Second one follows.', 'Third and last.']);
    expect(fallbacks.every((e) => e.type === 'segmentFallback' && e.reason === 'stall' && e.afterMs === 300)).toBe(true);
    expect(ttsCalls() - before).toBe(3);
    // the live service did get the text (sent live, never answered): it is spoken once, by tts-stream
    expect(received.join('')).toBe(TEXT);
    const starts = events.filter((e) => e.type === 'segmentStart');
    expect(starts.map((e) => e.text).join('')).toBe(TEXT);
    expect(starts.map((e) => e.segment_id)).toEqual([0, 1, 2]);
    // each sentence's audio is one WAV, between its start and its done, in order
    for (const start of starts) {
      const audio = events.filter((e) => e.type === 'audio' && e.segment_id === start.segment_id);
      expect(parseWavHeader((audio[0] as { bytes: Uint8Array }).bytes)).toBeDefined();
    }
    expect(events.map((e) => e.type).filter((t) => t !== 'audio')).toEqual([
      'ready',
      ...['segmentFallback', 'segmentStart', 'segmentDone'],
      ...['segmentFallback', 'segmentStart', 'segmentDone'],
      ...['segmentFallback', 'segmentStart', 'segmentDone'],
      'done',
    ]);
  });

  it('client.speak: a fallbackSpeech given is the one used, no POST /tts-stream of its own (control: without one, it calls /tts-stream)', async () => {
    const given: string[] = [];
    const events = await lastValueFrom(
      from(TOKENS).pipe(
        stalledClient().speak({ voice_id: 1, stall: { afterMs: 300, fallback: 'tts-stream' }, fallbackSpeech: (text) => (given.push(text), of(new Uint8Array([7, 7]))) }),
        toArray(),
      ),
    );
    expect(given.map((t) => t.trim())).toEqual(['First sentence here.', 'Second one follows.', 'Third and last.']);
    expect(events.filter((e) => e.type === 'audio').map((e) => [...(e as { bytes: Uint8Array }).bytes])).toEqual([[7, 7], [7, 7], [7, 7]]);
    expect(ttsBodies).toEqual([]);
    // control: the same speak without a fallbackSpeech calls /tts-stream, one call per sentence
    await lastValueFrom(from(TOKENS).pipe(stalledClient().speak({ voice_id: 1, stall: { afterMs: 300, fallback: 'tts-stream' } }), toArray()));
    expect(ttsBodies).toHaveLength(3);
  });

  it("client.speak's own fallback asks /tts-stream for the session's voice and settings; the live aac is its adts (which the emulator refuses)", async () => {
    const error = await lastValueFrom(
      from(TOKENS).pipe(
        stalledClient().speak({
          voice_id: 2,
          language: 'de-de',
          output_format: 'aac',
          sample_rate: 24000,
          speaking_rate: 1.25,
          apply_enhancement: true,
          enhance_named_entities_pronunciation: true,
          enhance_reference_audio_quality: true,
          maintain_source_accent: true,
          stall: { afterMs: 300, fallback: 'tts-stream' },
        }),
      ),
    ).catch((e: unknown) => e);
    expect(ttsBodies).toEqual([
      {
        text: 'First sentence here.',
        voice_id: 2,
        language: 'de-de',
        enhance_named_entities_pronunciation: true,
        output_configuration: { format: 'adts', sample_rate: 24000, apply_enhancement: true },
        voice_settings: { enhance_reference_audio_quality: true, maintain_source_accent: true, speaking_rate: 1.25 },
      },
    ]);
    expect(error).toBeInstanceOf(LiveSessionError);
    expect((error as LiveSessionError).message).toContain('"adts" is not supported by the emulator');
    // the defaults: wav, en-us, the enhancements off
    ttsBodies = [];
    await lastValueFrom(from(['First sentence here.']).pipe(stalledClient().speak({ voice_id: 1, stall: { afterMs: 300, fallback: 'tts-stream' } }), toArray()));
    expect(ttsBodies).toEqual([
      {
        text: 'First sentence here.',
        voice_id: 1,
        language: 'en-us',
        enhance_named_entities_pronunciation: false,
        output_configuration: { format: 'wav', sample_rate: null, apply_enhancement: null },
        voice_settings: { enhance_reference_audio_quality: false, maintain_source_accent: false, speaking_rate: null },
      },
    ]);
  });

  it('a last sentence under 3 characters is spoken too, padded to what /tts-stream accepts (it failed the fallback)', async () => {
    const before = ttsCalls();
    const events = await lastValueFrom(
      from(['First sentence here. ', 'Ok']).pipe(stalledClient().speak({ voice_id: 1, stall: { afterMs: 300, fallback: 'tts-stream' } }), toArray()),
    );
    expect(events.filter((e) => e.type === 'segmentFallback').map((e) => e.text)).toEqual(['First sentence here.', ' Ok']);
    expect(events.filter((e) => e.type === 'segmentDone')).toHaveLength(2);
    expect(events.at(-1)).toEqual({ type: 'done' });
    expect(ttsCalls() - before).toBe(2);
  });

  it('a sentence the live session already spoke stays live; only the rest falls back', async () => {
    answerSegments = 1;
    const spokenByFallback: string[] = [];
    const reports: SpeechMetrics[] = [];
    const client = stalledClient();
    const events = await lastValueFrom(
      from(TOKENS).pipe(
        speak(
          { wsUrl: stalledUrl },
          {
            voice_id: 1,
            stall: { afterMs: 300, fallback: 'tts-stream' },
            metrics: (report) => reports.push(report),
            fallbackSpeech: (text) => {
              spokenByFallback.push(text);
              return client.ttsStream({ text, voice_id: 1, language: 'en-us' }).pipe(map((chunk) => chunk.bytes));
            },
          },
        ),
        toArray(),
      ),
    );
    const live = 'First sentence here.';
    expect(spokenByFallback.join(' ')).not.toContain(live.trim());
    // every sentence spoken exactly once, across both paths (the text not spoken live comes with its leading space trimmed)
    const starts = events.filter((e): e is Extract<LiveSpeechEvent, { type: 'segmentStart' }> => e.type === 'segmentStart');
    expect(starts.map((e) => e.text.trim()).join(' ')).toBe(TEXT);
    // the metrics time the live session's segments only (the fallback's are told by segmentFallback)
    expect(events.filter((e) => e.type === 'segmentDone')).toHaveLength(3);
    expect(reports.filter((r) => r.type === 'segment')).toHaveLength(1);
    expect(reports.at(-1)).toMatchObject({ type: 'session', segments: 1 });
    expect(starts[0]!.text).toBe(live);
    expect(events.filter((e) => e.type === 'segmentFallback').map((e) => e.segment_id)).toEqual(starts.slice(1).map((e) => e.segment_id));
    expect(spokenByFallback.map((t) => t.trim())).toEqual(TEXT.slice(live.length).trim().split(/(?<=\.) /));
  });

  it('the fallback fails after its first sentence: the error carries what the fallback did not speak, not what the live session did not', async () => {
    const client = stalledClient();
    const spokenByFallback: string[] = [];
    const events: LiveSpeechEvent[] = [];
    const error = await lastValueFrom(
      from(TOKENS).pipe(
        speak(
          { wsUrl: stalledUrl },
          {
            voice_id: 1,
            stall: { afterMs: 300, fallback: 'tts-stream' },
            fallbackSpeech: (text) => {
              spokenByFallback.push(text);
              if (spokenByFallback.length > 1) return throwError(() => new Error('tts-stream refused'));
              return client.ttsStream({ text, voice_id: 1, language: 'en-us' }).pipe(map((chunk) => chunk.bytes));
            },
          },
        ),
        map((event) => events.push(event)),
      ),
    ).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(LiveSessionError);
    expect((error as LiveSessionError).message).toContain('tts-stream refused');
    // control: the first sentence was spoken, by the fallback (the live session spoke nothing)
    expect(events.filter((e) => e.type === 'segmentDone')).toHaveLength(1);
    expect(spokenByFallback.map((t) => t.trim())).toEqual(['First sentence here.', 'Second one follows.']);
    expect((error as LiveSessionError).unspoken).toBe('Second one follows. Third and last.');
  });

  it('a fallback that answers at once: its failure on the second sentence carries what it did not speak; an unsubscribe at its first event makes no call', async () => {
    const calls: string[] = [];
    const instant = (text: string) => {
      calls.push(text);
      return calls.length > 1 ? throwError(() => new Error('tts-stream refused')) : of(new Uint8Array([1, 2]));
    };
    const error = await lastValueFrom(
      from(TOKENS).pipe(speak({ wsUrl: stalledUrl }, { voice_id: 1, stall: { afterMs: 300, fallback: 'tts-stream' }, fallbackSpeech: instant })),
    ).catch((e: unknown) => e);
    expect(calls.map((t) => t.trim())).toEqual(['First sentence here.', 'Second one follows.']);
    expect(error).toMatchObject({ code: 'connection', unspoken: 'Second one follows. Third and last.' });
    // the consumer leaves at the first fallback event: no call is made for it, nor for any after it
    calls.length = 0;
    const events = await lastValueFrom(
      from(TOKENS).pipe(
        speak({ wsUrl: stalledUrl }, { voice_id: 1, stall: { afterMs: 300, fallback: 'tts-stream' }, fallbackSpeech: (text) => (calls.push(text), of(new Uint8Array([1, 2]))) }),
        takeWhile((event) => event.type !== 'segmentFallback', true),
        toArray(),
      ),
    );
    expect(events.map((e) => e.type)).toEqual(['ready', 'segmentFallback']);
    expect(calls).toHaveLength(0);
  });

  it('a text that ends after the stall: the fallback speaks it to the end, then done', async () => {
    const text$ = new Subject<string>();
    const events: LiveSpeechEvent[] = [];
    const done = lastValueFrom(text$.pipe(stalledClient().speak({ voice_id: 1, stall: { afterMs: 300, fallback: 'tts-stream' } }), tap((e) => events.push(e)), toArray()));
    text$.next(TOKENS[0]!);
    text$.next(TOKENS[1]!);
    await waitFor(() => events.some((e) => e.type === 'segmentDone'), 10_000, 'the fallback to speak the first sentence');
    text$.next(TOKENS[2]!);
    text$.next(TOKENS[3]!);
    text$.complete();
    const all = await done;
    expect(all.filter((e) => e.type === 'segmentFallback').map((e) => e.text.trim())).toEqual(['First sentence here.', 'Second one follows.', 'Third and last.']);
    expect(all.at(-1)).toEqual({ type: 'done' });
  });

  it("the fallback's failure is told without the API key", async () => {
    const key = 'key-of-the-fallback-test-0123456789';
    const error = await lastValueFrom(
      from(TOKENS).pipe(
        speak(
          { wsUrl: stalledUrl, apiKey: key },
          { voice_id: 1, stall: { afterMs: 300, fallback: 'tts-stream' }, fallbackSpeech: () => throwError(() => new Error(`refused for ${key}`)) },
        ),
      ),
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LiveSessionError);
    // the cause's message is told (control), the key in it is not
    expect((error as LiveSessionError).message).toContain('its fallback failed: refused for ***');
    expect((error as LiveSessionError).message).not.toContain(key);
  });

  it("control: with fallback 'error' the same stall times out with the text unspoken, nothing spoken over tts-stream", async () => {
    const before = ttsCalls();
    const started = Date.now();
    const error = await lastValueFrom(from(TOKENS).pipe(stalledClient().speak({ voice_id: 1, stall: { afterMs: 300, fallback: 'error' } }))).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LiveSessionError);
    expect(error).toMatchObject({ code: 'timeout', unspoken: TEXT });
    expect(Date.now() - started).toBeLessThan(15_000); // sooner than responseTimeoutMs
    expect(ttsCalls()).toBe(before);
    // a fallbackSpeech given is not used either
    const calls: string[] = [];
    const given = await lastValueFrom(
      from(TOKENS).pipe(speak({ wsUrl: stalledUrl }, { voice_id: 1, stall: { afterMs: 300, fallback: 'error' }, fallbackSpeech: (text) => (calls.push(text), of(new Uint8Array(2))) })),
    ).catch((e: unknown) => e);
    expect(given).toMatchObject({ code: 'timeout', unspoken: TEXT });
    expect(calls).toEqual([]);
  });

  it('a sentence an LLM streams slowly is no stall: the service rightly holds it until its end (or idle_timeout); control: a service that does stall, fed the same', async () => {
    // `Hi there.`, then 20 words at 150 ms (3 s, twice afterMs) before the second sentence ends
    const words = Array.from({ length: 20 }, (_, i) => (i === 0 ? 'Then ' : `word${i} `));
    const slow = () => concat(of('Hi there. '), interval(150).pipe(take(words.length), map((i) => words[i]!)), of('end.'));
    const healthy = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.baseUrl });
    const events = await lastValueFrom(slow().pipe(healthy.speak({ voice_id: 1, stall: { afterMs: 1500, fallback: 'error' } }), toArray()));
    await healthy.close();
    const spoken = events.flatMap((e) => (e.type === 'segmentStart' ? [e.text.trim()] : []));
    expect(spoken).toEqual(['Hi there.', `${words.join('')}end.`]);
    // control: a service that never answers, fed the same, is a stall within the slow sentence
    const started = Date.now();
    const error = await lastValueFrom(slow().pipe(stalledClient().speak({ voice_id: 1, stall: { afterMs: 1500, fallback: 'error' } }))).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'timeout' });
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it("rejects 'tts-stream' without a fallbackSpeech in rxvoice/live, and a bad stall, at once", () => {
    expect(() => speak({ wsUrl: stalledUrl }, { voice_id: 1, stall: { afterMs: 300, fallback: 'tts-stream' } })).toThrow(ValidationError);
    expect(() => speak({ wsUrl: stalledUrl }, { voice_id: 1, stall: { afterMs: -1, fallback: 'error' } })).toThrow(ValidationError);
    expect(() => speak({ wsUrl: stalledUrl }, { voice_id: 1, stall: { afterMs: 100, fallback: 'other' as never } })).toThrow(ValidationError);
  });
});
