/**
 * Speech in a browser page: how soon audio that reached it plays.
 *
 * - bundle sizes are in `bundle.ts`;
 * - first frame to first sample: in headless Chromium, through the relay, from an
 *   emulator behind an emulated network (30 ms one way, 256 kB/s: about six times the
 *   speed of 22 kHz WAV), speaking a chat answer with espeak: for each segment, the audio
 *   clock from its first audio frame reaching the page to its first sample playing
 *   (`toWebAudio`, which decodes WAV as it streams); peer: the same segment played whole,
 *   as an `<audio>` element or `decodeAudioData` must, which cannot start before the
 *   segment's last frame has arrived (the lower bound: decoding time not counted).
 *   Skipped without Chromium.
 *
 * Run alone: `npx tsx bench/web.ts`.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { startEmulator } from '../src/emulator/index.js';
import { attachLiveRelay } from '../src/relay/index.js';
import { CHAT_ANSWER } from '../examples/lib/chat-answer.js';
import { findTool } from '../test/setup/tools.js';
import type { BenchRow } from './types.js';
import { CAPTIONS_PAGE, browserBundle } from './bundle.js';
import { median, row } from './util.js';

/**
 * In the page: speaks `texts` through the relay and plays them; per segment, the audio
 * clock at its first audio frame, at its `segmentDone`, and at its first sample.
 * (Plain JavaScript, so the bundler of this file cannot rewrite it.)
 */
const PAGE_RUN = `
window.benchRun = async function (wsUrl, texts) {
  const rx = window.rxweb;
  const context = new AudioContext();
  await context.resume();
  const seen = new Map();
  function entry(id) {
    if (!seen.has(id)) seen.set(id, { first: NaN, done: NaN, start: NaN });
    return seen.get(id);
  }
  await rx.lastValueFrom(rx.of(...texts).pipe(
    rx.speak({ wsUrl, WebSocket }, { voice_id: 1, output_format: 'wav' }),
    rx.tap(function (event) {
      if (event.type === 'audio' && Number.isNaN(entry(event.segment_id).first)) entry(event.segment_id).first = context.currentTime;
      if (event.type === 'segmentDone') entry(event.segment_id).done = context.currentTime;
    }),
    rx.toWebAudio({ context }),
    rx.tap(function (event) {
      if (event.type === 'segmentScheduled') entry(event.segment_id).start = event.startTime;
    }),
    rx.toArray(),
  ));
  await context.close();
  return [...seen.values()];
};`;

interface SegmentTiming {
  first: number;
  done: number;
  start: number;
}

async function firstSample(chromiumPath: string, count: number): Promise<BenchRow[]> {
  const { chromium } = await import('playwright-core');
  const emulator = await startEmulator({ synth: 'espeak', latencyMs: 30, bandwidthBytesPerSecond: 256_000 });
  // the page is served by the relay's server: the relay serves pages of its own origin only
  const server = createServer((_, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>bench</title>'));
  const relay = attachLiveRelay(server, { path: '/speech', apiKey: emulator.apiKey, baseUrl: emulator.baseUrl });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const wsUrl = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/speech`;
  const browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox', '--disable-gpu', '--autoplay-policy=no-user-gesture-required'] });
  try {
    const script = new TextDecoder().decode(await browserBundle(`${CAPTIONS_PAGE}\nexport { of, tap, toArray, lastValueFrom } from 'rxjs';`, 'rxweb'));
    const page = await browser.newPage();
    await page.goto(wsUrl.replace(/^ws/, 'http').replace(/\/speech$/, '/'));
    await page.addScriptTag({ content: script });
    await page.addScriptTag({ content: PAGE_RUN });
    const timings: SegmentTiming[] = [];
    // one sentence a session: its segment finds nothing playing (a later segment of a
    // session waits for the ones before it, which is playback, not latency)
    for (const sentence of CHAT_ANSWER.split(/(?<=[.!?])\s+/).slice(0, count)) {
      const result = (await page.evaluate(`window.benchRun(${JSON.stringify(wsUrl)}, ${JSON.stringify([sentence])})`)) as SegmentTiming[];
      timings.push(...result.filter((t) => [t.first, t.done, t.start].every(Number.isFinite)));
    }
    const ours = median(timings.map((t) => (t.start - t.first) * 1000));
    const peer = median(timings.map((t) => (t.done - t.first) * 1000));
    return [
      row(
        'web: a segment\'s first audio frame in the page to its first sample playing',
        ours,
        peer,
        'ms',
        `median of ${timings.length} sentences (espeak, 30 ms one way, 256 kB/s); ours includes bufferSeconds 50 ms; peer: whole-segment playback, earliest start`,
        'lower',
      ),
    ];
  } finally {
    await browser.close();
    await relay.close();
    server.closeAllConnections();
    server.close();
    await emulator.close();
  }
}

/** The rows of this benchmark (the latency row only when Chromium is found); `sentences`: of the chat answer, one session each (default all). */
export async function run(options: { sentences?: number } = {}): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  const chromiumPath = findTool('chromium');
  if (chromiumPath !== undefined) rows.push(...(await firstSample(chromiumPath, options.sentences ?? Number.POSITIVE_INFINITY)));
  else console.error('bench web: no Chromium (chromium on PATH or CHROMIUM_PATH): the first-sample row is skipped');
  return rows;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const r of await run()) console.log(r);
}
