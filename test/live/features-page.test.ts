/**
 * The metrics and the stall fallback in a browser bundle: not in what a page loads at start,
 * each a chunk of its own, `import()`ed when a session that uses it starts (its text held,
 * no socket opened meanwhile). The bundle is built here as a page's bundler builds it
 * (esbuild, browser platform, code splitting) and run in Node against the emulator; Node's
 * own build (every feature there from the start) is the control.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readdir, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { lastValueFrom, of, toArray } from 'rxjs';
import { WebSocket as NodeWebSocket } from 'ws';
import { sessionCodeLoad as nodeSessionCodeLoad } from '../../src/live/features.js';
import type { speak as Speak } from '../../src/live/session.js';
import type { LiveSpeechEvent } from '../../src/live/events.js';
import type { SpeechMetrics } from '../../src/live/metrics.js';
import { bundlePage } from '../setup/page-bundle.js';
import { emulator, scriptedServer, segmentsOf, squash, upgrades } from './helpers.js';


interface Page {
  speak: typeof Speak;
  LiveSessionError: new (...args: never[]) => Error;
  sessionCodeLoad: typeof nodeSessionCodeLoad;
}

let dir: string;
let page: Page;
let start: string;

beforeAll(async () => {
  const built = await bundlePage<Page>([
    "export { speak, LiveSessionError } from './src/live/index.ts';",
    "export { sessionCodeLoad } from './src/live/features.ts';",
  ]);
  ({ dir, page } = built);
  start = await readFile(built.startFile, 'utf8');
}, 60_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const TEXT = 'The first sentence is here. The second one follows it.';
const pieces = (text: string) => text.match(/.{1,6}/gs)!;
const NEEDS_NOTHING = { locale: 'en-us', metrics: undefined, stall: undefined };
const NEEDS_METRICS = { ...NEEDS_NOTHING, metrics: () => undefined };
const NEEDS_FALLBACK = { ...NEEDS_NOTHING, stall: { fallback: 'tts-stream' as const } };

/** The page's chunk of a feature (its file name starts with the module's name). */
async function chunk(name: string): Promise<string> {
  const file = (await readdir(dir)).find((f) => f.startsWith(`${name}-`));
  expect(file, name).toBeDefined();
  return file!;
}

/** Runs `body` with the chunks of `names` gone from the page's folder (a page offline for them), then puts them back. */
async function without<T>(names: string[], body: () => Promise<T>): Promise<T> {
  const files = await Promise.all(names.map(chunk));
  for (const file of files) await rename(join(dir, file), join(dir, `${file}.away`));
  try {
    return await body();
  } finally {
    for (const file of files) await rename(join(dir, `${file}.away`), join(dir, file));
  }
}

describe('session features in a browser bundle', () => {
  it('the page loads neither feature at start; each is a chunk of its own', async () => {
    expect(await readFile(join(dir, await chunk('metrics')), 'utf8')).toContain('textToFirstAudioMs');
    expect(await readFile(join(dir, await chunk('stall-fallback')), 'utf8')).toContain('segmentFallback');
    expect(start).not.toContain('textToFirstAudioMs');
    expect(start).not.toContain("type: \"segmentFallback\"");
    // the reconnect too: the session's `reconnected` event is built in its chunk only
    expect(await readFile(join(dir, await chunk('reconnect')), 'utf8')).toContain('"reconnected"');
    expect(start).not.toContain('"reconnected"');
    // the control: the session itself is in the page (its messages are)
    expect(start).toContain('No session.ready within');
  });

  it('Node has both features from the start (a session starts synchronously); the page, neither until used', () => {
    for (const needs of [NEEDS_NOTHING, NEEDS_METRICS, NEEDS_FALLBACK]) expect(nodeSessionCodeLoad(needs)).toBeUndefined();
    expect(page.sessionCodeLoad(NEEDS_NOTHING)).toBeUndefined();
    expect(page.sessionCodeLoad(NEEDS_METRICS)).toBeTypeOf('function');
    expect(page.sessionCodeLoad(NEEDS_FALLBACK)).toBeTypeOf('function');
  });

  it('without the options a session speaks with both chunks gone; with metrics it fails typed, before any socket; back online, it loads and reports', async () => {
    const emu = await emulator();
    const connection = { wsUrl: emu.wsUrl, apiKey: emu.apiKey, WebSocket: NodeWebSocket };
    const reports: SpeechMetrics[] = [];
    const withMetrics = page.speak(connection, { voice_id: 1, metrics: (m) => reports.push(m) });
    await without(['metrics', 'stall-fallback'], async () => {
      const plain = await lastValueFrom(of(...pieces(TEXT)).pipe(page.speak(connection, { voice_id: 1 }), toArray()));
      expect(plain.at(-1)?.type).toBe('done');
      expect(upgrades(emu)).toBe(1);
      // the control: the same text with metrics needs the chunk that is gone
      const failed = await lastValueFrom(of(...pieces(TEXT)).pipe(withMetrics)).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(failed).toBeInstanceOf(page.LiveSessionError);
      expect(failed).toMatchObject({ code: 'connection', retryable: true, unspoken: TEXT });
      expect(upgrades(emu)).toBe(1); // no socket for it: nothing sent, nothing paid
    });
    const events = await lastValueFrom(of(...pieces(TEXT)).pipe(withMetrics, toArray()));
    expect(events.at(-1)?.type).toBe('done');
    expect(squash(segmentsOf(events as LiveSpeechEvent[]).map((s) => s.text).join(''))).toBe(squash(TEXT));
    expect(reports.at(-1)).toMatchObject({ type: 'session', outcome: 'complete', segments: 2 });
    expect(page.sessionCodeLoad(NEEDS_METRICS)).toBeUndefined(); // loaded once, for every later session
  });

  it('a session with the stall fallback loads it when it starts; when the service stalls, every sentence is spoken over fallbackSpeech', async () => {
    const server = await scriptedServer((socket) => {
      socket.on('message', (data) => {
        const frame = JSON.parse(String(data)) as { type: string };
        if (frame.type === 'session.start') socket.send(JSON.stringify({ type: 'session.ready', session_id: 's', run_id: 1 }));
      });
    });
    expect(page.sessionCodeLoad(NEEDS_FALLBACK)).toBeTypeOf('function');
    const spoken: string[] = [];
    const operator = page.speak(
      { wsUrl: server.wsUrl, WebSocket: NodeWebSocket },
      {
        voice_id: 1,
        stall: { afterMs: 50, fallback: 'tts-stream' },
        fallbackSpeech: (text) => {
          spoken.push(text);
          return of(new Uint8Array([1, 2, 3]));
        },
      },
    );
    const events = await lastValueFrom(of(...pieces(TEXT)).pipe(operator, toArray()));
    expect(events.filter((e) => e.type === 'segmentFallback').map((e) => (e as { text: string }).text.trim())).toEqual([
      'The first sentence is here.',
      'The second one follows it.',
    ]);
    expect(squash(spoken.join(''))).toBe(squash(TEXT));
    expect(events.at(-1)?.type).toBe('done');
    expect(page.sessionCodeLoad(NEEDS_FALLBACK)).toBeUndefined();
  });
});
