/**
 * The live-captions example in headless Chromium: the page plays each segment's audio,
 * highlights the words in order as `currentTime` passes them, and "Interrupt" stops at
 * once: audio paused, no further word highlighted, and the server-side live session's
 * WebSocket closed. The API key never reaches the page.
 *
 * Needs Chromium (`chromium` on PATH or CHROMIUM_PATH; CI installs Debian's `chromium`):
 * fails under CI=true when absent, else skipped with one line.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import { concat, NEVER, takeUntil, Subject } from 'rxjs';
import { WebSocket } from 'ws';
import { startEmulator, type Emulator } from '../src/emulator/index.js';
import { createClient, type ClientOptions, type RxVoiceClient } from '../src/index.js';
import { startCaptionsServer, type CaptionsServer } from '../examples/captions-ui/server.js';
import { requireTool } from './setup/tools.js';

const CHROMIUM = requireTool('chromium', 'captions UI in headless Chromium (test/captions-ui.test.ts)');

const WORD_SECONDS = 0.3;
const SECRET_KEY = 'rxv-captions-secret-key-7731';
const TEXT =
  'Captions follow the voice closely. Every word lights up in turn. ' +
  'The audio plays segment by segment. An interrupt stops everything at once. ' +
  'Nothing more should be highlighted after that. This sentence must never be heard.';

/** Every live session socket the server opens, to check they close. */
const liveSockets: WebSocket[] = [];
class TrackingWebSocket extends WebSocket {
  constructor(address: string | URL, protocols?: string | string[], options?: WebSocket.ClientOptions) {
    super(address, protocols, options);
    liveSockets.push(this);
  }
}

interface Highlight {
  segment_id: number;
  index: number;
  word: string;
  start: number;
  currentTime: number;
}
interface PageState {
  status: string;
  highlighted: Highlight[];
  segments: Array<{ segment_id: number; text: string; words: Array<{ word: string; start: number; end: number }> }>;
  played: number[];
  interrupted: boolean;
  serverClosedSession: boolean;
  errors: string[];
}

describe.skipIf(!CHROMIUM)('captions UI in headless Chromium', { timeout: 60_000 }, () => {
  let emulator: Emulator;
  let client: RxVoiceClient;
  let captions: CaptionsServer;
  let browser: Browser;
  let page: Page;
  const release = new Subject<void>();

  beforeAll(async () => {
    emulator = await startEmulator({ synth: 'tone', toneWordSeconds: WORD_SECONDS, apiKeys: [SECRET_KEY] });
    client = createClient({ apiKey: SECRET_KEY, baseUrl: emulator.baseUrl, WebSocket: TrackingWebSocket as unknown as NonNullable<ClientOptions['WebSocket']> });
    // The text input is held open after its last token (until the test ends), so the live
    // session is still running when the test interrupts, however slow the machine is.
    captions = await startCaptionsServer({
      speak: (options) => (text$) => concat(text$, NEVER).pipe(takeUntil(release), client.speak(options)),
      pace: { chars: [3, 5], delayMs: [20, 40] },
    });
    browser = await chromium.launch({
      executablePath: CHROMIUM!,
      timeout: 20_000,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--autoplay-policy=no-user-gesture-required',
      ],
    });
    page = await browser.newPage();
    // Every wait is bounded well under the test timeout, so a failure says what it waited for.
    page.setDefaultTimeout(15_000);
  });

  afterAll(async () => {
    release.next();
    await browser?.close();
    await captions?.close();
    await client?.close();
    await emulator?.close();
  });

  const state = (): Promise<PageState> => page.evaluate(() => (window as unknown as { captions: PageState }).captions);
  const audio = (): Promise<{ currentTime: number; paused: boolean; src: string }> =>
    page.evaluate(() => {
      const el = document.getElementById('player') as HTMLAudioElement;
      return { currentTime: el.currentTime, paused: el.paused, src: el.src };
    });

  it('highlights words in order as the audio plays, and Interrupt stops everything', async () => {
    const framesToPage: string[] = [];
    page.on('websocket', (ws) => {
      ws.on('framereceived', (frame) => {
        if (typeof frame.payload === 'string') framesToPage.push(frame.payload);
      });
    });
    await page.goto(captions.url);
    await page.waitForFunction(() => (window as unknown as { captions: PageState }).captions.status === 'ready');
    await page.fill('#text', TEXT);
    await page.click('#speak');

    // Words light up while the audio element plays.
    await page.waitForFunction(() => (window as unknown as { captions: PageState }).captions.highlighted.length >= 6, undefined, {
      timeout: 15_000,
    });
    // The audio element progresses: its position (segments started, then currentTime) moves on.
    const position = async (): Promise<[number, number]> => [(await state()).played.length, (await audio()).currentTime];
    const [segmentsAtT1, t1] = await position();
    await expect
      .poll(async () => {
        const [segmentsNow, now] = await position();
        return segmentsNow > segmentsAtT1 || now > t1 + 0.1;
      }, { timeout: 10_000 })
      .toBe(true);
    const playing = await audio();
    expect(playing.paused).toBe(false);
    expect(playing.src).toMatch(/^blob:/);

    // In order: exactly the words of the segments, in segment order then word order (a
    // prefix of them: the speech is still going); each only once its start has passed.
    const before = await state();
    expect(before.errors).toEqual([]);
    const allWords = before.segments.flatMap((segment) => segment.words.map((word, index) => `${segment.segment_id}:${index}:${word.word}`));
    const highlightedWords = before.highlighted.map((h) => `${h.segment_id}:${h.index}:${h.word}`);
    expect(highlightedWords).toEqual(allWords.slice(0, highlightedWords.length));
    expect(before.segments.map((segment) => segment.segment_id)).toEqual([...before.segments.map((segment) => segment.segment_id)].sort((a, b) => a - b));
    for (const h of before.highlighted) {
      const segment = before.segments.find((seg) => seg.segment_id === h.segment_id);
      expect(segment?.words[h.index]?.word).toBe(h.word);
      if (h.currentTime > 0) expect(h.currentTime).toBeGreaterThanOrEqual(h.start - 0.05);
    }
    expect(before.played[0]).toBe(before.segments[0]?.segment_id);
    expect(captions.stats().sessionsActive).toBe(1);
    expect(liveSockets.length).toBeGreaterThanOrEqual(1);

    // Interrupt: silence at once, the server ends the session, nothing more is highlighted.
    await page.click('#interrupt');
    expect((await audio()).paused).toBe(true);
    await page.waitForFunction(() => (window as unknown as { captions: PageState }).captions.status === 'interrupted');
    const atInterrupt = await state();
    expect(atInterrupt.serverClosedSession).toBe(true);
    await page.waitForTimeout(1000);
    const after = await state();
    expect(after.highlighted.length).toBe(atInterrupt.highlighted.length);
    expect((await audio()).paused).toBe(true);
    const totalWords = TEXT.split(/\s+/).length;
    expect(after.highlighted.length).toBeLessThan(totalWords);
    expect(after.highlighted.some((h) => h.word === 'heard.')).toBe(false);

    const stats = captions.stats();
    expect(stats).toMatchObject({ sessionsStarted: 1, sessionsActive: 0, sessionsEnded: 1, interrupts: 1 });
    await expect.poll(() => liveSockets.every((s) => s.readyState === WebSocket.CLOSED), { timeout: 5000 }).toBe(true);

    // The key stayed on the server.
    expect(await page.content()).not.toContain(SECRET_KEY);
    expect(readFileSync(new URL('../examples/captions-ui/app.js', import.meta.url), 'utf8')).not.toContain(SECRET_KEY);
    expect(framesToPage.length).toBeGreaterThan(0);
    expect(framesToPage.some((f) => f.includes(SECRET_KEY))).toBe(false);
  });
});
