/**
 * The metrics and the stall fallback loaded on demand, in this process (the bundled page of
 * test/live/features-page.test.ts does the same through esbuild, outside coverage's view):
 * `features-node.js` is replaced by the browser stand-in here, as a browser bundle's
 * `"browser"` field replaces it, so each feature is `import()`ed when a session that uses it
 * starts. Checked: a session without the options needs nothing; one with them holds its text
 * (no socket) until the code is in, then speaks it all; a load that fails errors the output
 * with a typed, retryable error carrying the held text, before any socket; and the Node
 * build (every feature there from the start) starts synchronously.
 */
import { describe, expect, it, vi } from 'vitest';
import { from, lastValueFrom, of, Subject, toArray } from 'rxjs';
import { concatSegments } from '../../src/operators/index.js';
import { WebSocket as NodeWebSocket } from 'ws';
import { newMetricsRecorder, reconnectCode, sessionCodeLoad, startStallFallback } from '../../src/live/features.js';
import { speak, LiveSessionError, type SpeechMetrics } from '../../src/live/index.js';
import { emulator, scriptedServer, segmentsOf, squash, upgrades } from './helpers.js';

vi.mock('../../src/live/features-node.js', () => import('../../src/live/features-browser.js'));
vi.mock('../../src/text/languages/all.js', () => ({}));

/** The next `import()` of the metrics module fails (a page offline), once. */
const offline = vi.hoisted(() => ({ metrics: false }));
vi.mock('../../src/live/metrics.js', async (importOriginal) => {
  if (offline.metrics) {
    offline.metrics = false;
    throw new Error('Failed to fetch dynamically imported module: metrics.js');
  }
  return importOriginal();
});

const TEXT = 'The first sentence is here. The second one follows it.';
const pieces = (text: string) => text.match(/.{1,6}/gs)!;

describe('session features loaded on demand (a browser bundle, in this process)', () => {
  it('a session without metrics or fallback needs no code; one with them needs theirs, and the language table', () => {
    expect(sessionCodeLoad({ locale: 'en-us', metrics: undefined, stall: undefined })).toBeUndefined();
    expect(sessionCodeLoad({ locale: 'en-us', metrics: undefined, stall: { fallback: 'error' } })).toBeUndefined();
    expect(sessionCodeLoad({ locale: 'en-us', metrics: () => undefined, stall: undefined })).toBeTypeOf('function');
    expect(sessionCodeLoad({ locale: 'en-us', metrics: undefined, stall: { fallback: 'tts-stream' } })).toBeTypeOf('function');
    expect(sessionCodeLoad({ locale: 'cs-cz', metrics: undefined, stall: undefined })).toBeTypeOf('function');
    // made before the code is in: a bug, never a session silently without its feature
    expect(() => newMetricsRecorder(() => undefined, { now: () => 0 } as never)).toThrow(/before its code loaded/);
    expect(() => startStallFallback({} as never, () => of(), 10, undefined)).toThrow(/before its code loaded/);
    expect(() => reconnectCode()).toThrow(/before its code loaded/);
  });

  it('a failed load errors the output with a retryable LiveSessionError holding the text, before any socket; the next subscription loads it', async () => {
    const emu = await emulator();
    const connection = { wsUrl: emu.wsUrl, apiKey: emu.apiKey, WebSocket: NodeWebSocket };
    const reports: SpeechMetrics[] = [];
    const operator = speak(connection, { voice_id: 1, metrics: (m) => reports.push(m) });

    offline.metrics = true;
    const source = new Subject<string>();
    const failed = lastValueFrom(source.pipe(operator)).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(source.observed).toBe(true); // subscribed at once, held while the code loads
    source.next('  Held while ');
    source.next('loading.');
    const error = await failed;
    expect(error).toBeInstanceOf(LiveSessionError);
    expect(error).toMatchObject({ code: 'connection', retryable: true, unspoken: 'Held while loading.' });
    expect((error as Error).message).toMatch(/^Could not load the live session's code: /);
    expect((error as Error).cause).toBeInstanceOf(Error); // the loader's own error
    expect(source.observed).toBe(false);
    expect(upgrades(emu)).toBe(0); // nothing sent, nothing paid

    // the same operator, subscribed again: the code loads, the session speaks, metrics report
    const events = await lastValueFrom(of(...pieces(TEXT)).pipe(operator, toArray()));
    expect(events.at(-1)?.type).toBe('done');
    expect(squash(segmentsOf(events).map((s) => s.text).join(''))).toBe(squash(TEXT));
    expect(reports.filter((r) => r.type === 'segment')).toHaveLength(2);
    expect(reports.at(-1)).toMatchObject({ type: 'session', outcome: 'complete', segments: 2 });
    expect(upgrades(emu)).toBe(1);
    // loaded now: later sessions need nothing more
    expect(sessionCodeLoad({ locale: 'en-us', metrics: () => undefined, stall: undefined })).toBeUndefined();
  });

  it('the stall fallback: the text waits for its code, then a session that stalls speaks it over fallbackSpeech', async () => {
    expect(sessionCodeLoad({ locale: undefined, metrics: undefined, stall: { fallback: 'tts-stream' } })).toBeTypeOf('function');
    // a service that accepts the session and never answers: the fallback speaks every sentence
    const server = await scriptedServer((socket) => {
      socket.on('message', (data) => {
        const frame = JSON.parse(String(data)) as { type: string };
        if (frame.type === 'session.start') socket.send(JSON.stringify({ type: 'session.ready', session_id: 's', run_id: 1 }));
      });
    });
    const spoken: string[] = [];
    const events = await lastValueFrom(
      of(...pieces(TEXT)).pipe(
        speak(
          { wsUrl: server.wsUrl, apiKey: 'k'.repeat(12), WebSocket: NodeWebSocket },
          {
            voice_id: 1,
            stall: { afterMs: 50, fallback: 'tts-stream' },
            fallbackSpeech: (text) => {
              spoken.push(text);
              return of(new Uint8Array([1, 2, 3]));
            },
          },
        ),
        toArray(),
      ),
    );
    expect(events.filter((e) => e.type === 'segmentFallback')).toHaveLength(2);
    expect(squash(spoken.join(''))).toBe(squash(TEXT));
    expect(events.at(-1)?.type).toBe('done');
  });

  it('reconnect: a session with the option loads its code first, then reconnects after drops without loss; one without needs none', async () => {
    const reconnect = { maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 20, random: () => 0.5 };
    expect(sessionCodeLoad({ locale: 'en-us', metrics: undefined, stall: undefined, reconnect: undefined })).toBeUndefined();
    expect(sessionCodeLoad({ locale: 'en-us', metrics: undefined, stall: undefined, reconnect })).toBeTypeOf('function');
    const emu = await emulator({ faults: { dropAfterFrames: 2 } });
    const connection = { wsUrl: emu.wsUrl, apiKey: emu.apiKey, WebSocket: NodeWebSocket };
    const events = await lastValueFrom(of(...pieces(TEXT)).pipe(speak(connection, { voice_id: 1, reconnect }), toArray()));
    const reconnects = events.filter((e) => e.type === 'reconnected');
    expect(reconnects.length).toBeGreaterThanOrEqual(1);
    expect(reconnects[0]).toMatchObject({ type: 'reconnected', attempt: 1 });
    // every sentence delivered once, in order (a segment cut by a drop starts again)
    const delivered = await lastValueFrom(from(events).pipe(concatSegments(), toArray()));
    expect(squash(delivered.map((s) => s.text).join(''))).toBe(squash(TEXT));
    expect(events.at(-1)?.type).toBe('done');
    expect(upgrades(emu)).toBe(reconnects.length + 1);
    expect(sessionCodeLoad({ locale: 'en-us', metrics: undefined, stall: undefined, reconnect })).toBeUndefined(); // loaded once
  });
});
