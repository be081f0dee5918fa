/**
 * traceSpeech's first subscription when `@opentelemetry/api` loads slowly (a cold disk, a
 * large bundle): the whole session is over before the import ends. Its span events and its
 * exception are dated when they came, inside the span, not when the import ended.
 *
 * The import is held by a gate the test opens (vitest's mock of the module, the original
 * behind it): the session ends first whatever the machine's load. A file of its own: the
 * API must not be loaded yet in this process.
 */
import { Subject, lastValueFrom, toArray } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { createClient } from '../../src/index.js';
import { traceSpeech } from '../../src/otel/index.js';
import { loadedApi } from '../../src/otel/load.js';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';

const gate = vi.hoisted(() => {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
});
vi.mock('@opentelemetry/api', async (importOriginal) => {
  await gate.opened;
  return importOriginal();
});

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const ms = ([seconds, nanos]: readonly [number, number]): number => seconds * 1000 + nanos / 1e6;

/** The finished `rxvoice.speak` spans, once there are `count` (the import resolves after the gate opens). */
async function speakSpans(count: number): Promise<ReadableSpan[]> {
  for (let i = 0; i < 500; i++) {
    const spans = exporter.getFinishedSpans().filter((s) => s.name === 'rxvoice.speak');
    if (spans.length >= count) return spans;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`no ${count} rxvoice.speak spans after 5 s`);
}

describe('traceSpeech: the first subscription, the API imported after the session ended', () => {
  let emulator: Emulator;
  beforeAll(async () => {
    emulator = await startEmulator({ synth: 'tone', apiKeys: ['key-ok-000000'] });
  });
  afterAll(async () => {
    await emulator.close();
  });

  it('segment events and the exception are dated when they came, inside the span', async () => {
    expect(loadedApi()).toBeUndefined();
    const subscribedAt = Date.now();
    const ok = createClient({ apiKey: 'key-ok-000000', baseUrl: emulator.baseUrl });
    const text$ = new Subject<string>();
    const done = lastValueFrom(text$.pipe(ok.speak({ voice_id: 1 }), traceSpeech({ tracerProvider: provider }), toArray()));
    text$.next('Hello there. How are you?');
    text$.complete();
    const events = await done;
    expect(events.filter((e) => e.type === 'segmentDone')).toHaveLength(2);
    // a session the service refuses (4401): its exception
    const bad = createClient({ apiKey: 'key-bad-00000', baseUrl: emulator.baseUrl });
    await expect(lastValueFrom(new Subject<string>().pipe(bad.speak({ voice_id: 1 }), traceSpeech({ tracerProvider: provider })))).rejects.toThrow();
    const endedAt = Date.now();
    expect(loadedApi()).toBeUndefined(); // both sessions ended before the import: the path under test
    await new Promise((resolve) => setTimeout(resolve, 200));
    gate.open();
    const spans = await speakSpans(2);
    await Promise.all([ok.close(), bad.close()]);
    for (const span of spans) {
      expect(ms(span.startTime)).toBeGreaterThanOrEqual(subscribedAt - 1);
      expect(ms(span.endTime)).toBeLessThanOrEqual(endedAt + 1);
      expect(span.events.length).toBeGreaterThan(0);
      for (const event of span.events) {
        expect(ms(event.time), event.name).toBeGreaterThanOrEqual(ms(span.startTime) - 1);
        expect(ms(event.time), event.name).toBeLessThanOrEqual(ms(span.endTime) + 1);
      }
    }
    expect(spans.flatMap((s) => s.events.map((e) => e.name)).sort()).toEqual(['exception', 'rxvoice.segment', 'rxvoice.segment']);
  });
});
