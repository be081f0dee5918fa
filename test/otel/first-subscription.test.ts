/**
 * traceSpeech's first subscription in a process, while `@opentelemetry/api` is still being
 * imported: the session starts at once, so a hot text source (an LLM's tokens in a `Subject`)
 * loses nothing, and the span still records every event, dated from the subscription.
 * A file of its own: its module state is fresh (the API not loaded yet, checked first).
 */
import { Subject, lastValueFrom, toArray } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { createClient } from '../../src/index.js';
import { traceSpeech } from '../../src/otel/index.js';
import { loadedApi } from '../../src/otel/load.js';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import type { LiveSpeechEvent } from '../../src/live/index.js';

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });

describe('traceSpeech: the first subscription of a process', () => {
  let emulator: Emulator;
  beforeAll(async () => {
    emulator = await startEmulator({ synth: 'tone' });
  });
  afterAll(async () => {
    await emulator.close();
  });

  it('text sent while the API is imported is spoken, and its segments are on the span', async () => {
    expect(loadedApi()).toBeUndefined(); // the path under test: the import has not run yet
    const client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.baseUrl });
    const text$ = new Subject<string>();
    const subscribedAt = Date.now();
    const events = lastValueFrom(text$.pipe(client.speak({ voice_id: 1 }), traceSpeech({ tracerProvider: provider }), toArray()));
    const subscribed = Date.now();
    text$.next('Hello there. '); // before the import has ended
    await new Promise((resolve) => setTimeout(resolve, 100));
    text$.next('How are you?');
    text$.complete();
    const out: LiveSpeechEvent[] = await events;
    await client.close();
    const spoken = out.flatMap((e) => (e.type === 'segmentStart' ? [e.text.trim()] : []));
    expect(spoken).toEqual(['Hello there.', 'How are you?']);
    const [span, ...others] = exporter.getFinishedSpans().filter((s) => s.name === 'rxvoice.speak');
    expect(others).toEqual([]);
    expect(span!.attributes['rxvoice.segments']).toBe(2);
    expect(span!.events.filter((e) => e.name === 'rxvoice.segment')).toHaveLength(2);
    expect(span!.attributes['rxvoice.session.id']).toBe((out.find((e) => e.type === 'ready') as { session_id: string }).session_id);
    // dated from the subscription (between the two readings around it), not from the end of the import
    const startMs = span!.startTime[0] * 1000 + span!.startTime[1] / 1e6;
    expect(startMs).toBeGreaterThanOrEqual(subscribedAt - 1);
    expect(startMs).toBeLessThanOrEqual(subscribed + 1);
  });
});
