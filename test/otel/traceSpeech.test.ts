/**
 * rxvoice/otel against the emulator, with the SDK's InMemorySpanExporter: the session span
 * of traceSpeech (segments, skips and resubmissions, reconnects, errors, unsubscribe),
 * events passed through unchanged, nothing recorded without a provider (with a control),
 * and tracedFetch's spans of a task (create, polls, result).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { lastValueFrom, from, tap, take, toArray } from 'rxjs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { createClient } from '../../src/index.js';
import { traceSpeech, tracedFetch } from '../../src/otel/index.js';
import { pathTemplate, routeStart, taskPhase } from '../../src/otel/tracedFetch.js';
import { resubmitSkipped } from '../../src/operators/index.js';
import { memoryCacheStore, speechCache } from '../../src/cache/index.js';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import type { LiveSpeechEvent } from '../../src/live/index.js';
import { ValidationError } from '../../src/core/errors.js';

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const speakSpans = (): ReadableSpan[] => exporter.getFinishedSpans().filter((s) => s.name === 'rxvoice.speak');

describe('traceSpeech', () => {
  let emulator: Emulator;
  beforeAll(async () => {
    emulator = await startEmulator({
      synth: 'tone',
      apiKeys: ['key-ok-000000', 'key-skip-00000', 'key-drop-00000', 'key-poor-00000'],
      faultsByKey: {
        'key-skip-00000': { failSynthesisMatching: { text: 'Flaky', times: 4 } },
        'key-drop-00000': { dropAfterFrames: 1 },
        'key-poor-00000': { creditsAfterSegments: 1 },
      },
    });
  });
  afterAll(async () => {
    await emulator.close();
  });
  afterEach(() => exporter.reset());

  const clientFor = (apiKey: string) => createClient({ apiKey, baseUrl: emulator.baseUrl });

  it('one span per session: events unchanged, segments as span events, totals, status OK, server.address', async () => {
    const client = clientFor('key-ok-000000');
    const seen: LiveSpeechEvent[] = [];
    const out = await lastValueFrom(
      from(['Hello there. ', 'How are you today?']).pipe(
        client.speak({ voice_id: 1 }),
        tap((event) => seen.push(event)),
        traceSpeech({ tracerProvider: provider, serverAddress: emulator.baseUrl, creditsPerSegment: 3, attributes: { 'app.flow': 'greeting' } }),
        toArray(),
      ),
    );
    await client.close();
    expect(out).toEqual(seen);
    const [span, ...others] = speakSpans();
    expect(others).toEqual([]);
    const ready = out.find((e) => e.type === 'ready') as { session_id: string; run_id: number };
    const audioBytes = out.reduce((sum, e) => sum + (e.type === 'audio' ? e.bytes.byteLength : 0), 0);
    expect(span!.status.code).toBe(1); // OK
    expect(span!.attributes).toMatchObject({
      'server.address': '127.0.0.1',
      'server.port': emulator.port,
      'app.flow': 'greeting',
      'rxvoice.session.id': ready.session_id,
      'rxvoice.run.id': ready.run_id,
      'rxvoice.outcome': 'complete',
      'rxvoice.segments': 2,
      'rxvoice.segments.skipped': 0,
      'rxvoice.characters': 'Hellothere.Howareyoutoday?'.length,
      'rxvoice.audio_bytes': audioBytes,
      'rxvoice.credits': 6,
    });
    expect(span!.attributes['rxvoice.time_to_first_audio_ms']).toBeGreaterThanOrEqual(0);
    const segments = span!.events.filter((e) => e.name === 'rxvoice.segment');
    expect(segments.map((e) => e.attributes?.['rxvoice.segment.characters'])).toEqual([11, 15]);
    expect(segments.every((e) => typeof e.attributes?.['rxvoice.segment.first_audio_ms'] === 'number')).toBe(true);
  });

  it('segments replayed from a speech cache are marked cached and cost no credits; live ones are (control)', async () => {
    const client = clientFor('key-ok-000000');
    const cache = speechCache({ store: memoryCacheStore() });
    const say = async (tokens: string[]): Promise<{ events: LiveSpeechEvent[]; span: ReadableSpan }> => {
      exporter.reset();
      const events = await lastValueFrom(from(tokens).pipe(client.speak({ voice_id: 1, cache }), traceSpeech({ tracerProvider: provider, creditsPerSegment: 3 }), toArray()));
      return { events, span: speakSpans()[0]! };
    };
    const starts = (events: LiveSpeechEvent[]) => events.flatMap((e) => (e.type === 'segmentStart' ? [{ text: e.text.trim(), cached: e.cached }] : []));
    // control: both sentences are new, said by the service and paid
    const first = await say(['Hello there. ', 'How are you today?']);
    expect(starts(first.events)).toEqual([
      { text: 'Hello there.', cached: undefined },
      { text: 'How are you today?', cached: undefined },
    ]);
    expect(first.span.attributes).toMatchObject({ 'rxvoice.segments': 2, 'rxvoice.segments.cached': 0, 'rxvoice.credits': 6 });
    // the same two again and a new one: two replays, one paid segment
    const second = await say(['Hello there. ', 'How are you today? ', 'See you soon.']);
    await client.close();
    expect(starts(second.events)).toEqual([
      { text: 'Hello there.', cached: true },
      { text: 'How are you today?', cached: true },
      { text: 'See you soon.', cached: undefined },
    ]);
    expect(second.span.attributes).toMatchObject({ 'rxvoice.segments': 3, 'rxvoice.segments.cached': 2, 'rxvoice.credits': 3 });
    const marks = second.span.events.filter((e) => e.name === 'rxvoice.segment').map((e) => e.attributes?.['rxvoice.segment.cached']);
    expect(marks).toEqual([true, true, undefined]);
    expect(cache.stats).toMatchObject({ hits: 2 });
  });

  it('skipped and resubmitted segments are events and totals', async () => {
    const client = clientFor('key-skip-00000');
    const text$ = from(['Flaky sentence here. ', 'Fine sentence here.']);
    await lastValueFrom(text$.pipe(resubmitSkipped(client.speak({ voice_id: 1 }), { maxAttempts: 2 }), traceSpeech({ tracerProvider: provider }), toArray()));
    await client.close();
    const [span] = speakSpans();
    const skips = span!.events.filter((e) => e.name === 'rxvoice.segment.skipped');
    expect(skips.length).toBeGreaterThanOrEqual(1);
    expect(skips[0]!.attributes).toMatchObject({ 'rxvoice.segment.final': false, 'rxvoice.segment.characters': 'Flakysentencehere.'.length });
    expect(span!.attributes['rxvoice.segments.resubmitted']).toBeGreaterThanOrEqual(1);
    expect(span!.attributes['rxvoice.segments.skipped']).toBe(skips.length);
  });

  it('reconnects are events and a total', async () => {
    const client = clientFor('key-drop-00000');
    await lastValueFrom(
      from(['One sentence first. ', 'Then another one.']).pipe(
        client.speak({ voice_id: 1, reconnect: { maxAttempts: 5, baseDelayMs: 1, maxDelayMs: 5 } }),
        traceSpeech({ tracerProvider: provider }),
        toArray(),
      ),
    ).catch(() => undefined);
    await client.close();
    const [span] = speakSpans();
    expect(span!.attributes['rxvoice.reconnects']).toBeGreaterThanOrEqual(1);
    expect(span!.events.filter((e) => e.name === 'rxvoice.reconnect').length).toBe(span!.attributes['rxvoice.reconnects']);
  });

  it('an error: status ERROR, error.type from the error code, the exception recorded', async () => {
    const client = clientFor('key-poor-00000');
    const failed = lastValueFrom(from(['Paid sentence. ', 'Unpaid sentence.']).pipe(client.speak({ voice_id: 1 }), traceSpeech({ tracerProvider: provider })));
    await expect(failed).rejects.toMatchObject({ code: 'credits_exhausted' });
    await client.close();
    const [span] = speakSpans();
    expect(span!.status.code).toBe(2); // ERROR
    expect(span!.attributes).toMatchObject({ 'error.type': 'credits_exhausted', 'rxvoice.outcome': 'error', 'rxvoice.segments': 1 });
    expect(span!.events.some((e) => e.name === 'exception')).toBe(true);
  });

  it('unsubscribing ends the span with outcome unsubscribed', async () => {
    const client = clientFor('key-ok-000000');
    await lastValueFrom(from(['First one here. ', 'Second one here.']).pipe(client.speak({ voice_id: 1 }), traceSpeech({ tracerProvider: provider }), take(2)));
    await client.close();
    const [span] = speakSpans();
    expect(span!.attributes['rxvoice.outcome']).toBe('unsubscribed');
    expect(span!.ended).toBe(true);
  });

  it('no provider registered: nothing recorded, events pass; control: the global provider registered records', async () => {
    const client = clientFor('key-ok-000000');
    const run = () => lastValueFrom(from(['Quiet sentence.']).pipe(client.speak({ voice_id: 1 }), traceSpeech(), toArray()));
    const quiet = await run();
    expect(quiet.map((e) => e.type)).toContain('audio');
    expect(exporter.getFinishedSpans()).toEqual([]);
    trace.setGlobalTracerProvider(provider);
    try {
      await run();
      expect(speakSpans()).toHaveLength(1);
    } finally {
      trace.disable();
      await client.close();
    }
  });

  it('bad options throw a ValidationError at once', () => {
    expect(() => traceSpeech({ tracerProvider: {} as never })).toThrow(ValidationError);
    expect(() => traceSpeech({ creditsPerSegment: -1 })).toThrow(ValidationError);
    expect(() => tracedFetch({ fetch: 1 as never })).toThrow(ValidationError);
  });
});

describe('tracedFetch', () => {
  let emulator: Emulator;
  beforeAll(async () => {
    emulator = await startEmulator({ synth: 'tone' });
  });
  afterAll(async () => {
    await emulator.close();
  });
  afterEach(() => exporter.reset());

  it('a task: one span for the creation, each poll and the result, with HTTP attributes and no key', async () => {
    const client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.baseUrl, fetch: tracedFetch({ tracerProvider: provider }), polling: { initialDelayMs: 5, maxDelayMs: 5, jitter: 0 } });
    await lastValueFrom(client.textToSound({ prompt: 'rain on a tin roof' }));
    await lastValueFrom(client.ttsStream({ text: 'Credits are counted.', voice_id: 1, language: 'en-us' }).pipe(toArray()));
    await client.close();
    const spans = exporter.getFinishedSpans();
    const names = spans.map((s) => s.name);
    expect(names[0]).toBe('POST /text-to-sound');
    expect(names).toContain('GET /text-to-sound/{id}');
    expect(names).toContain('GET /text-to-sound-result/{id}');
    const phases = spans.map((s) => s.attributes['rxvoice.task.phase']);
    expect(phases.slice(0, 1)).toEqual(['create']);
    expect(phases).toContain('poll');
    expect(phases).toContain('result');
    expect(spans[0]!.attributes).toMatchObject({ 'http.request.method': 'POST', 'server.address': '127.0.0.1', 'server.port': emulator.port, 'http.response.status_code': 200, 'url.template': '/text-to-sound' });
    const stream = spans.find((s) => s.name === 'POST /tts-stream');
    expect(stream?.attributes['rxvoice.credits']).toBeGreaterThan(0);
    expect(JSON.stringify(spans.map((s) => [s.name, s.attributes, s.events]))).not.toContain(emulator.apiKey);
  });

  it('under a base address with a path (the public one is https://client.camb.ai/apis): the path kept, the route templated, the phases right', async () => {
    // the client sends to <emulator>/apis/...; the fetch under the tracer takes the prefix off for the emulator
    const unprefixed = (input: string, init: Record<string, unknown>) => globalThis.fetch(input.replace('/apis/', '/'), init as RequestInit);
    const client = createClient({ apiKey: emulator.apiKey, baseUrl: `${emulator.baseUrl}/apis`, fetch: tracedFetch({ tracerProvider: provider, fetch: unprefixed }), polling: { initialDelayMs: 5, maxDelayMs: 5, jitter: 0 } });
    await lastValueFrom(client.textToSound({ prompt: 'rain on a tin roof' }));
    await lastValueFrom(client.voices.list());
    await client.close();
    const spans = exporter.getFinishedSpans();
    const named = (name: string) => spans.filter((s) => s.name === name).map((s) => s.attributes['rxvoice.task.phase']);
    expect(named('POST /apis/text-to-sound')).toEqual(['create']);
    expect(new Set(named('GET /apis/text-to-sound/{id}'))).toEqual(new Set(['poll']));
    expect(named('GET /apis/text-to-sound-result/{id}')).toEqual(['result']);
    expect(named('GET /apis/list-voices')).toEqual(['call']);
    expect(spans.find((s) => s.name === 'GET /apis/list-voices')!.attributes['url.template']).toBe('/apis/list-voices');
    // the route found after any base path; none named: the whole path
    expect(['/apis/tts/abc', '/a/b/text-to-sound', '/tts/abc', '/unknown/x'].map(routeStart)).toEqual([5, 4, 0, 0]);
  });

  it("every task endpoint of the contract has its phase: creations, status polls, results; other calls are 'call'", () => {
    const phases = (requests: string[]) => requests.map((r) => taskPhase(r.split(' ')[0]!, r.split(' ')[1]!));
    const creations = ['/create-story', '/end-to-end-dubbing', '/sub', '/text-to-sound', '/transcription', '/translation', '/tts'];
    expect(phases(creations.map((path) => `POST ${path}`))).toEqual(creations.map(() => 'create'));
    const polls = ['/audio-separation', '/end-to-end-dubbing', '/story', '/sub', '/text-to-sound', '/transcription', '/translation', '/tts'];
    expect(phases(polls.map((path) => `GET ${path}/a1b2`))).toEqual(polls.map(() => 'poll'));
    const results = ['GET /tts-result/7', 'GET /translation-result/7', 'GET /translated-story-result/7/de-de', 'POST /fetch-tts-results', 'POST /text-to-sound-results'];
    expect(phases(results)).toEqual(results.map(() => 'result'));
    const calls = ['POST /tts-stream', 'POST /translation/stream', 'POST /create-custom-voice', 'GET /list-voices'];
    expect(phases(calls)).toEqual(calls.map(() => 'call'));
    // the span's name: ids become {id}, the stream of /translation/stream is no id
    expect(['/translation/stream', '/translation/a1b2', '/translated-story-result/7/de-de'].map(pathTemplate)).toEqual([
      '/translation/stream',
      '/translation/{id}',
      '/translated-story-result/{id}/{id}',
    ]);
  });

  it('an HTTP error: error.type is the status code', async () => {
    const client = createClient({ apiKey: 'wrong-key-000000', baseUrl: emulator.baseUrl, fetch: tracedFetch({ tracerProvider: provider }), maxRetries: 0 });
    await expect(lastValueFrom(client.voices.list())).rejects.toThrow();
    await client.close();
    const [span] = exporter.getFinishedSpans();
    expect(span!.attributes).toMatchObject({ 'http.response.status_code': 401, 'error.type': '401', 'rxvoice.task.phase': 'call' });
    expect(span!.status.code).toBe(2);
  });

  const tracedClient = (options: Partial<Parameters<typeof createClient>[0]> = {}) =>
    createClient({ apiKey: emulator.apiKey, baseUrl: emulator.baseUrl, fetch: tracedFetch({ tracerProvider: provider }), maxRetries: 0, polling: { initialDelayMs: 5, maxDelayMs: 5, jitter: 0 }, ...options });

  it('a 400 answer is an error too; control: the same call answered 200 is not', async () => {
    const client = tracedClient();
    emulator.context.options.faults.httpErrors = { status: 400, count: 1 };
    try {
      await expect(lastValueFrom(client.voices.list())).rejects.toThrow();
      await lastValueFrom(client.voices.list());
    } finally {
      emulator.context.options.faults.httpErrors = undefined;
      await client.close();
    }
    const [failed, control] = exporter.getFinishedSpans();
    expect(failed!.attributes).toMatchObject({ 'http.response.status_code': 400, 'error.type': '400' });
    expect(failed!.status.code).toBe(2);
    expect(control!.attributes['http.response.status_code']).toBe(200);
    expect(control!.attributes).not.toHaveProperty('error.type');
    expect(control!.status.code).toBe(0);
  });

  it('bulk results (POST) are phase result; a call answered without X-Credits-Required records no credits', async () => {
    const client = tracedClient();
    const runs = await Promise.all(['rain', 'wind'].map(async (prompt) => (await lastValueFrom(client.textToSound({ prompt }))) as { run_id: number }));
    await lastValueFrom(client.sound.results(runs.map((r) => r.run_id)));
    await client.close();
    const bulk = exporter.getFinishedSpans().find((s) => s.name === 'POST /text-to-sound-results');
    expect(bulk?.attributes).toMatchObject({ 'rxvoice.task.phase': 'result', 'url.template': '/text-to-sound-results' });
    expect(bulk?.attributes).not.toHaveProperty('rxvoice.credits');
  });

  it('no answer at all (nothing listens): error.type is the failure class, the status message its name only', async () => {
    const gone = await startEmulator({ synth: 'tone' });
    await gone.close();
    const client = tracedClient({ baseUrl: gone.baseUrl, apiKey: gone.apiKey });
    await expect(lastValueFrom(client.voices.list())).rejects.toThrow();
    await client.close();
    const [span] = exporter.getFinishedSpans();
    expect(span!.name).toBe('GET /list-voices');
    expect(span!.attributes['error.type']).toBe('TypeError');
    expect(span!.attributes).not.toHaveProperty('http.response.status_code');
    expect(span!.status).toEqual({ code: 2, message: 'TypeError' });
    expect(span!.ended).toBe(true);
    expect(JSON.stringify([span!.attributes, span!.events, span!.status])).not.toContain(gone.apiKey);
  });

  it("a request the client's timeoutMs cut is a TimeoutError on its span, one the caller aborted an AbortError (control)", async () => {
    // a server that takes requests and never answers
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const baseUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
    try {
      const timed = tracedClient({ baseUrl, apiKey: emulator.apiKey, timeoutMs: 300 });
      await expect(lastValueFrom(timed.voices.list())).rejects.toMatchObject({ name: 'TimeoutError' });
      await timed.close();
      const aborted = tracedClient({ baseUrl, apiKey: emulator.apiKey });
      const controller = new AbortController();
      const call = lastValueFrom(aborted.voices.list({ signal: controller.signal }));
      setTimeout(() => controller.abort(), 100);
      await expect(call).rejects.toMatchObject({ name: 'AbortError' });
      await aborted.close();
      const spans = exporter.getFinishedSpans();
      expect(spans.map((s) => [s.name, s.attributes['error.type'], s.status.message])).toEqual([
        ['GET /list-voices', 'TimeoutError', 'TimeoutError'],
        ['GET /list-voices', 'AbortError', 'AbortError'],
      ]);
    } finally {
      silent.closeAllConnections();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it("server.port defaults to the scheme's port: 443 for https, 80 for http", async () => {
    // The requests go to the emulator whatever host the client names (a fetch that forwards them).
    const forward = (input: string, init: Record<string, unknown>) => {
      const url = new URL(input);
      return globalThis.fetch(emulator.baseUrl + url.pathname + url.search, init as RequestInit);
    };
    for (const baseUrl of ['https://speech.example.com', 'http://speech.example.com']) {
      const client = createClient({ apiKey: emulator.apiKey, baseUrl, allowInsecureHttp: true, fetch: tracedFetch({ tracerProvider: provider, fetch: forward }) });
      await lastValueFrom(client.voices.list());
      await client.close();
    }
    expect(exporter.getFinishedSpans().map((s) => [s.attributes['server.address'], s.attributes['server.port']])).toEqual([
      ['speech.example.com', 443],
      ['speech.example.com', 80],
    ]);
  });
});
