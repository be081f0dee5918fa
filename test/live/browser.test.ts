/**
 * The live session in a real browser: `rxvoice/live` and `rxvoice/operators` bundled for
 * the browser (esbuild, `platform: 'browser'`, which fails on any Node built-in), loaded
 * into headless Chromium, speaking to the emulator through the browser's own WebSocket
 * (the key in `api_key`). Needs Chromium (`chromium` on PATH or CHROMIUM_PATH): fails under
 * CI=true when absent, else skipped with one line.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import { requireTool } from '../setup/tools.js';

const CHROMIUM = requireTool('chromium', 'the live session in headless Chromium (test/live-browser.test.ts)');

describe.skipIf(!CHROMIUM)('the live session in headless Chromium', { timeout: 60_000 }, () => {
  let emulator: Emulator;
  let browser: Browser;
  let bundle: string;

  beforeAll(async () => {
    // esbuild comes with tsx (a dev dependency)
    const esbuild = await import('esbuild');
    const root = fileURLToPath(new URL('../..', import.meta.url));
    const result = await esbuild.build({
      stdin: {
        contents: [
          "export { speak } from './src/live/index.ts';",
          "export { concatSegments, segmentSentences } from './src/operators/index.ts';",
          "export { fromTokens } from './src/sources/index.ts';",
          "export { lastValueFrom, toArray } from 'rxjs';",
        ].join('\n'),
        resolveDir: root,
        loader: 'ts',
      },
      absWorkingDir: root,
      bundle: true,
      platform: 'browser',
      format: 'iife',
      globalName: 'rxvoiceLive',
      write: false,
      logLevel: 'silent',
    });
    bundle = result.outputFiles[0]!.text;
    emulator = await startEmulator({ synth: 'tone', toneWordSeconds: 0.02 });
    browser = await chromium.launch({ executablePath: CHROMIUM!, timeout: 20_000, args: ['--no-sandbox', '--disable-gpu', '--no-first-run'] });
  });

  afterAll(async () => {
    await browser?.close();
    await emulator?.close();
  });

  it('speaks with the browser WebSocket: whole WAV segments, in order, key in api_key', async () => {
    const page = await browser.newPage();
    try {
      await page.addScriptTag({ content: bundle });
      const result = await page.evaluate(
        async ({ wsUrl, apiKey }) => {
          type Live = {
            speak: (c: object, o: object) => (s: unknown) => unknown;
            concatSegments: () => (s: unknown) => unknown;
            segmentSentences: (o?: object) => (s: unknown) => unknown;
            fromTokens: (input: unknown) => { pipe: (...ops: unknown[]) => unknown };
            lastValueFrom: (o: unknown) => Promise<unknown>;
            toArray: () => (s: unknown) => unknown;
          };
          const live = (window as unknown as { rxvoiceLive: Live }).rxvoiceLive;
          // a fetch-like body: a web ReadableStream of UTF-8 bytes
          const bytes = new TextEncoder().encode('Hello there. General Kenobi!');
          const body = new ReadableStream<Uint8Array>({
            start(controller) {
              for (let i = 0; i < bytes.length; i += 5) controller.enqueue(bytes.slice(i, i + 5));
              controller.close();
            },
          });
          const segments = (await live.lastValueFrom(
            live
              .fromTokens(body)
              .pipe(
                live.segmentSentences({ locale: 'en-us' }),
                live.speak({ wsUrl, apiKey, WebSocket: WebSocket }, { voice_id: 1 }),
                live.concatSegments(),
                live.toArray(),
              ),
          )) as Array<{ text: string; audio: Uint8Array }>;
          return segments.map((s) => ({ text: s.text.trim(), riff: new TextDecoder().decode(s.audio.subarray(0, 4)), bytes: s.audio.byteLength }));
        },
        { wsUrl: emulator.wsUrl, apiKey: emulator.apiKey },
      );
      expect(result.map((s) => s.text)).toEqual(['Hello there.', 'General Kenobi!']);
      for (const segment of result) {
        expect(segment.riff).toBe('RIFF');
        expect(segment.bytes).toBeGreaterThan(44);
      }
      // one session, accepted: a browser WebSocket cannot send headers, so the key went as api_key
      expect(emulator.requests.filter((r) => r.method === 'UPGRADE')).toHaveLength(1);
    } finally {
      await page.close();
    }
  });
});
