/**
 * traceSpeech in virtual time: events pass through unchanged (values, timing, completion,
 * error, unsubscription), and the span's timings are measured on the given scheduler.
 */
import { TestScheduler } from 'rxjs/testing';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { traceSpeech } from '../../src/otel/index.js';
import { loadApi } from '../../src/otel/load.js';
import type { LiveSpeechEvent } from '../../src/live/index.js';

const exporter = new InMemorySpanExporter();
const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });

const values: Record<string, LiveSpeechEvent> = {
  r: { type: 'ready', session_id: 's1', run_id: 7, config: {} },
  s: { type: 'segmentStart', segment_id: 0, text: 'Hi there.' },
  a: { type: 'audio', segment_id: 0, bytes: new Uint8Array(10) },
  d: { type: 'segmentDone', segment_id: 0 },
  k: { type: 'segmentSkipped', segment_id: 1, text: 'Lost words.', final: true },
  D: { type: 'done' },
};

let scheduler: TestScheduler;
beforeAll(async () => {
  // Loaded once per process; from then on the operator subscribes synchronously.
  expect(await loadApi()).not.toBeNull();
});
/** A new scheduler (virtual time starts at 0) and no finished span: before each test, and before each run of a test that runs several. */
function fresh(): void {
  exporter.reset();
  scheduler = new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
}
beforeEach(fresh);

describe('traceSpeech (marbles)', () => {
  it('passes values, timing and completion through; first audio measured in virtual time', () => {
    scheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('--r--s-a--d-k-D|', values);
      expectObservable(source.pipe(traceSpeech({ tracerProvider, scheduler }))).toBe('--r--s-a--d-k-D|', values);
      expectSubscriptions(source.subscriptions).toBe('^--------------!');
    });
    const [span] = exporter.getFinishedSpans();
    expect(span!.attributes).toMatchObject({
      'rxvoice.time_to_first_audio_ms': 7,
      'rxvoice.segments': 1,
      'rxvoice.segments.skipped': 1,
      'rxvoice.segments.resubmitted': 0,
      'rxvoice.characters': 'Hithere.'.length,
      'rxvoice.audio_bytes': 10,
      'rxvoice.session.id': 's1',
      'rxvoice.outcome': 'complete',
    });
    expect(span!.events.map((e) => e.name)).toEqual(['rxvoice.segment', 'rxvoice.segment.skipped']);
    expect(span!.events[0]!.attributes?.['rxvoice.segment.first_audio_ms']).toBe(2);
  });

  it('empty and never: the span ends on completion, and on unsubscription of a never-ending source', () => {
    scheduler.run(({ cold, expectObservable }) => {
      expectObservable(cold<LiveSpeechEvent>('|').pipe(traceSpeech({ tracerProvider, scheduler }))).toBe('|');
      expectObservable(cold<LiveSpeechEvent>('-').pipe(traceSpeech({ tracerProvider, scheduler })), '^--!').toBe('-');
    });
    expect(exporter.getFinishedSpans().map((s) => s.attributes['rxvoice.outcome'])).toEqual(['complete', 'unsubscribed']);
  });

  it('an error passes through unchanged and marks the span', () => {
    const error = Object.assign(new Error('gone'), { code: 'connection' });
    scheduler.run(({ cold, expectObservable }) => {
      expectObservable(cold('--r--#', values, error).pipe(traceSpeech({ tracerProvider, scheduler }))).toBe('--r--#', values, error);
    });
    const [span] = exporter.getFinishedSpans();
    expect(span!.attributes).toMatchObject({ 'error.type': 'connection', 'rxvoice.outcome': 'error' });
    expect(span!.status).toMatchObject({ code: 2, message: 'gone' });
  });

  it('early unsubscription unsubscribes the source and ends the span once', () => {
    scheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('--r--s--a--|', values);
      expectObservable(source.pipe(traceSpeech({ tracerProvider, scheduler })), '^-----!').toBe('--r--s', values);
      expectSubscriptions(source.subscriptions).toBe('^-----!');
    });
    expect(exporter.getFinishedSpans()).toHaveLength(1);
    expect(exporter.getFinishedSpans()[0]!.attributes['rxvoice.outcome']).toBe('unsubscribed');
  });
});

describe('traceSpeech (marbles): what the span records', () => {
  const more: Record<string, LiveSpeechEvent> = {
    ...values,
    c: { type: 'ready', session_id: 'cache', run_id: -1, config: { cached: true } },
    b: { type: 'audio', segment_id: 0, bytes: new Uint8Array(5) },
    u: { type: 'segmentSkipped', segment_id: 1, text: 'Lost words.' },
    f: { type: 'segmentSkipped', segment_id: 2, text: 'Tried again.', final: false, resubmissions: 2 },
    R: { type: 'reconnected', attempt: 1, session_id: 's2', run_id: 8, resent: 'Said again.' },
  };
  const spanOf = (marbles: string, unsubscription?: string) => {
    fresh();
    scheduler.run(({ cold, expectObservable }) => {
      expectObservable(cold(marbles, more).pipe(traceSpeech({ tracerProvider, scheduler })), unsubscription).toBe(marbles, more);
    });
    const spans = exporter.getFinishedSpans();
    expect(spans).toHaveLength(1);
    return spans[0]!;
  };

  it('times are to the first audio byte: later audio moves neither the session nor the segment time', () => {
    const span = spanOf('--s-a--b-d|');
    expect(span.attributes).toMatchObject({ 'rxvoice.time_to_first_audio_ms': 4, 'rxvoice.audio_bytes': 15 });
    expect(span.events[0]!.attributes).toMatchObject({ 'rxvoice.segment.first_audio_ms': 2, 'rxvoice.segment.audio_bytes': 15 });
  });

  it("a cache's own ready names no session; the live ready after it does (control)", () => {
    expect(spanOf('c|').attributes['rxvoice.session.id']).toBeUndefined();
    expect(spanOf('c-r|').attributes).toMatchObject({ 'rxvoice.session.id': 's1', 'rxvoice.run.id': 7 });
  });

  it('a skip counts as resubmitted only when final is false; final and resubmissions recorded as given', () => {
    const plain = spanOf('u|');
    expect(plain.attributes).toMatchObject({ 'rxvoice.segments.skipped': 1, 'rxvoice.segments.resubmitted': 0 });
    expect(plain.events[0]!.attributes).toEqual({ 'rxvoice.segment.id': 1, 'rxvoice.segment.characters': 'Lostwords.'.length });
    const retried = spanOf('f|');
    expect(retried.attributes).toMatchObject({ 'rxvoice.segments.skipped': 1, 'rxvoice.segments.resubmitted': 1 });
    expect(retried.events[0]!.attributes).toMatchObject({ 'rxvoice.segment.final': false, 'rxvoice.segment.resubmissions': 2 });
  });

  it('a reconnect: an event with the text sent again, and the span names the new session', () => {
    const span = spanOf('r-R|');
    expect(span.attributes).toMatchObject({ 'rxvoice.reconnects': 1, 'rxvoice.session.id': 's2', 'rxvoice.run.id': 8 });
    expect(span.events).toEqual([expect.objectContaining({ name: 'rxvoice.reconnect', attributes: { 'rxvoice.reconnect.attempt': 1, 'rxvoice.reconnect.resent_characters': 'Saidagain.'.length } })]);
  });

  it('status: OK on completion, left unset on unsubscription (no error, no success)', () => {
    expect(spanOf('r|').status.code).toBe(1);
    expect(spanOf('r-', '^-!').status.code).toBe(0);
  });

  it("error.type: the error's code, else its class name, else _OTHER; a thrown non-Error is the status message", () => {
    const failed = (error: unknown) => {
      fresh();
      scheduler.run(({ cold, expectObservable }) => {
        expectObservable(cold('-#', values, error).pipe(traceSpeech({ tracerProvider, scheduler }))).toBe('-#', values, error);
      });
      return exporter.getFinishedSpans()[0]!;
    };
    const typeError = failed(new TypeError('bad'));
    expect(typeError.attributes['error.type']).toBe('TypeError');
    expect(typeError.events.map((e) => e.name)).toEqual(['exception']);
    const text = failed('just text');
    expect(text.attributes['error.type']).toBe('_OTHER');
    expect(text.status).toEqual({ code: 2, message: 'just text' });
    expect(text.events).toEqual([]);
    expect(failed({ code: '' }).attributes['error.type']).toBe('_OTHER');
  });
});

describe('traceSpeech: serverAddress', () => {
  const attributesFor = (serverAddress: string) => {
    fresh();
    scheduler.run(({ cold, expectObservable }) => {
      expectObservable(cold<LiveSpeechEvent>('|').pipe(traceSpeech({ tracerProvider, scheduler, serverAddress }))).toBe('|');
    });
    return exporter.getFinishedSpans()[0]!.attributes;
  };

  it("a URL gives host and port (its scheme's when it names none, as tracedFetch records it); a host name is the address as given", () => {
    expect(attributesFor('http://127.0.0.1:8123/base')).toMatchObject({ 'server.address': '127.0.0.1', 'server.port': 8123 });
    expect(attributesFor('https://client.camb.ai/apis')).toMatchObject({ 'server.address': 'client.camb.ai', 'server.port': 443 });
    expect(attributesFor('http://speech.example.com')).toMatchObject({ 'server.port': 80 });
    expect(attributesFor('wss://speech.example.com/live')).toMatchObject({ 'server.port': 443 });
    expect(attributesFor('speech.example.com')).not.toHaveProperty('server.port'); // a bare host names no scheme
    expect(attributesFor('speech.example.com')['server.address']).toBe('speech.example.com');
    expect(attributesFor('not a host name')['server.address']).toBe('not a host name'); // kept as given
  });

  it('a host and port without a scheme (which URL reads as a scheme of its own) gives both', () => {
    expect(attributesFor('localhost:8080')).toMatchObject({ 'server.address': 'localhost', 'server.port': 8080 });
    expect(attributesFor('speech.example.com:443')).toMatchObject({ 'server.address': 'speech.example.com', 'server.port': 443 });
    expect(attributesFor('127.0.0.1:80')).toMatchObject({ 'server.address': '127.0.0.1', 'server.port': 80 });
  });
});
