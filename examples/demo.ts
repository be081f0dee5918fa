/**
 * `npm start`: a chat-bot answer in markdown, streamed token by token like an LLM, made
 * speakable (`speakableText()`: no `**`, list numbers, link addresses or emoji read
 * aloud; each list item its own sentence), spoken through a live speech session on the
 * embedded emulator, written to `out/demo.wav` (and played when an audio player exists),
 * with a timeline of each segment's latency.
 *
 *   npm start                      # espeak-ng speech (tones when espeak-ng is not installed)
 *   npm start -- --synth tone      # fast, deterministic tones (npm start --synth tone works too)
 *   npx tsx examples/demo.ts --no-play --out out/demo.wav
 */
import { mkdirSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { lastValueFrom, merge, share, tap } from 'rxjs';
import { parseWavHeader } from '../src/audio/wav.js';
import { startEmulator } from '../src/emulator/index.js';
import { createClient } from '../src/index.js';
import type { LiveSpeechEvent, SegmentMetrics, SessionMetrics, SpeechMetrics, SpokenSegment } from '../src/live/index.js';
import { concatSegments, speakableText } from '../src/operators/index.js';
import { findPlayer, toWavFile } from '../src/sinks/index.js';
import { MARKDOWN_ANSWER, tokenStream } from './lib/chat-answer.js';
import { playUnlessBroken } from './lib/playback.js';
import { synthOption } from './lib/speech-service.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    synth: { type: 'string' },
    out: { type: 'string', default: 'out/demo.wav' },
    'no-play': { type: 'boolean', default: false },
    voice: { type: 'string', default: '1' },
  },
});
const { synth, positionals: rest } = synthOption(values.synth, process.env, positionals);
if (rest.length > 0) throw new Error(`unexpected arguments: ${rest.join(' ')} (flags: --synth espeak|tone, --out FILE, --no-play, --voice ID)`);
const outPath = resolve(values.out);
mkdirSync(dirname(outPath), { recursive: true });

/** What we learn about each segment while it streams: text, words and duration from the events, timing from the session's metrics. */
interface SegmentRow {
  id: number;
  text: string;
  seconds: number;
  words: number;
  metrics: SegmentMetrics | undefined;
}

const started = performance.now();
const emulator = await startEmulator(synth ? { synth } : {});
const client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.baseUrl });
const player = values['no-play'] ? undefined : await findPlayer('wav').catch(() => undefined);

console.log(`rxvoice demo: emulator at ${emulator.baseUrl} (synth ${emulator.synth}); the chat-bot starts answering…\n`);

// The chat-bot's markdown tokens are printed as they come (as a chat window shows them);
// the speakable text made of them is what is spoken.
const text$ = tokenStream(MARKDOWN_ANSWER).pipe(
  tap({
    next: (token) => process.stdout.write(token),
    complete: () => process.stdout.write('\n\n'),
  }),
  speakableText(),
);

const rows = new Map<number, SegmentRow>();
// Timing as data, from the session itself (the `metrics` option of speak).
let session: SessionMetrics | undefined;
const metrics = (report: SpeechMetrics): void => {
  if (report.type === 'session') session = report;
  else {
    const row = rows.get(report.segment_id);
    if (row) row.metrics = report;
  }
};

const events$ = text$.pipe(
  client.speak({ voice_id: Number(values.voice), word_timestamps: true, output_format: 'wav', metrics }),
  tap((event: LiveSpeechEvent) => {
    if (event.type === 'segmentStart') {
      rows.set(event.segment_id, { id: event.segment_id, text: event.text.trim(), seconds: 0, words: event.word_timestamps?.length ?? 0, metrics: undefined });
    } else if (event.type === 'segmentSkipped') {
      console.warn(`segment ${event.segment_id} skipped: ${event.text}`);
    }
  }),
  share(),
);

const segments$ = events$.pipe(
  concatSegments(),
  tap((segment: SpokenSegment) => {
    const row = rows.get(segment.segment_id);
    if (row) row.seconds = wavSeconds(segment.audio);
  }),
  share(),
);

const written$ = segments$.pipe(toWavFile(outPath));
// A player that cannot play (no sound card, no audio server) must not cost the WAV: report it, go on.
let playbackFailure: string | undefined;
// Reported once, after the timeline, so it does not break into the streamed answer.
const played$ = playUnlessBroken(segments$, player, (error) => {
  playbackFailure = error.message;
});

try {
  await lastValueFrom(merge(written$, played$), { defaultValue: undefined });
} finally {
  await client.close();
  await emulator.close();
}
const finished = performance.now();
printTimeline();

function wavSeconds(audio: Uint8Array): number {
  const info = parseWavHeader(audio);
  if (!info) return 0;
  const frame = (info.channels * info.bitsPerSample) / 8;
  return Math.min(info.dataBytes, audio.byteLength - info.dataOffset) / frame / info.sampleRate;
}

function printTimeline(): void {
  const sorted = [...rows.values()].sort((a, b) => a.id - b.id);
  const firstAudio = sorted.map((r) => r.metrics?.firstAudioMs).filter((v): v is number => v !== undefined);
  console.log('Timeline (first audio: from the token that completed the segment to its first audio byte)');
  console.log('  seg  first audio  duration  text');
  for (const row of sorted) {
    const first = row.metrics?.firstAudioMs !== undefined ? `${row.metrics.firstAudioMs.toFixed(0)} ms` : '-';
    const text = row.text.length > 60 ? `${row.text.slice(0, 57)}...` : row.text;
    console.log(`  ${String(row.id).padStart(3)}  ${first.padStart(11)}  ${row.seconds.toFixed(2).padStart(6)} s  ${text}`);
  }
  const audioSeconds = sorted.reduce((sum, r) => sum + r.seconds, 0);
  const mean = firstAudio.length > 0 ? firstAudio.reduce((a, b) => a + b, 0) / firstAudio.length : 0;
  const max = firstAudio.length > 0 ? Math.max(...firstAudio) : 0;
  const synthesis = sorted.map((r) => r.metrics?.synthesisMs).filter((v): v is number => v !== undefined);
  const ms = (value: number | undefined): string => (value === undefined ? '-' : `${value.toFixed(0)} ms`);
  console.log('');
  console.log(`Totals: ${sorted.length} segments, ${sorted.reduce((s, r) => s + r.words, 0)} words, ${audioSeconds.toFixed(2)} s of audio`);
  console.log(
    `  connect ${ms(session?.connectMs)}, session.ready ${ms(session?.readyMs)}, first token -> first audio ${ms(session?.textToFirstAudioMs)}; ` +
      `time to first audio per segment: mean ${mean.toFixed(0)} ms, max ${max.toFixed(0)} ms`,
  );
  console.log(
    `  synthesis per segment (text -> last audio byte): mean ${(synthesis.reduce((a, b) => a + b, 0) / Math.max(1, synthesis.length)).toFixed(0)} ms; ` +
      `session ${((session?.totalMs ?? 0) / 1000).toFixed(2)} s; whole run ${((finished - started) / 1000).toFixed(2)} s`,
  );
  const playback = !player
    ? '; no audio player found, playback skipped'
    : playbackFailure
      ? `; playback with ${player.command} failed: ${playbackFailure}`
      : `; played with ${player.command}`;
  console.log(`  wrote ${relative(process.cwd(), outPath) || outPath}${playback}`);
  if (playbackFailure) console.warn('(playback failed; the WAV above is complete)');
}
