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
beforeEach(() => {
  exporter.reset();
  scheduler = new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
});

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
