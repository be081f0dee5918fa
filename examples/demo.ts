/**
 * `npm start`: a chat-bot answer in markdown, streamed token by token like an LLM, made
 * speakable (`speakableText()`: no `**`, list numbers, link addresses or emoji read
 * aloud; each list item its own sentence), spoken through a live speech session on the
 * embedded emulator, written to `out/demo.wav` (and played when an audio player exists),
 * with a timeline of each segment's latency.
 *
 *   npm start                      # espeak-ng speech
 *   npm start -- --synth tone      # fast, deterministic tones
 *   npx tsx examples/demo.ts --no-play --out out/demo.wav
 */
import { mkdirSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { lastValueFrom, merge, share, tap } from 'rxjs';
import { parseWavHeader } from '../src/audio/wav.js';
import { startEmulator } from '../src/emulator/index.js';
import { createClient, type LiveSpeechEvent, type SpokenSegment } from '../src/index.js';
import { concatSegments, speakableText } from '../src/operators/index.js';
import { findPlayer, toWavFile } from '../src/sinks/index.js';
import { MARKDOWN_ANSWER, tokenStream } from './lib/chat-answer.js';
import { playUnlessBroken } from './lib/playback.js';

const { values } = parseArgs({
  options: {
    synth: { type: 'string', default: 'espeak' },
    out: { type: 'string', default: 'out/demo.wav' },
    'no-play': { type: 'boolean', default: false },
    voice: { type: 'string', default: '1' },
  },
});
const synth = values.synth === 'tone' ? 'tone' : 'espeak';
const outPath = resolve(values.out);
mkdirSync(dirname(outPath), { recursive: true });

/** What we learn about each segment while it streams. */
interface SegmentTiming {
  id: number;
  text: string;
  /** When the token that completed the segment's text was pushed, ms. */
  completedAt: number | undefined;
  firstAudioAt: number | undefined;
  seconds: number;
  words: number;
}

const started = performance.now();
const emulator = await startEmulator({ synth });
const client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.baseUrl });
const player = values['no-play'] ? undefined : await findPlayer('wav').catch(() => undefined);

console.log(`rxvoice demo: emulator at ${emulator.baseUrl} (synth ${synth}); the chat-bot starts answering…\n`);

// The chat-bot's markdown tokens are printed as they come (as a chat window shows them);
// the speakable text made of them is what is spoken. Where each speakable piece ends, and when.
const tokens: Array<{ end: number; at: number }> = [];
let pushed = '';
let inputEndedAt: number | undefined;
const text$ = tokenStream(MARKDOWN_ANSWER).pipe(
  tap({
    next: (token) => process.stdout.write(token),
    complete: () => process.stdout.write('\n\n'),
  }),
  speakableText(),
  tap({
    next: (text) => {
      pushed += text;
      tokens.push({ end: pushed.length, at: performance.now() });
    },
    complete: () => {
      inputEndedAt = performance.now();
    },
  }),
);

const timings = new Map<number, SegmentTiming>();
let searchFrom = 0;

const events$ = text$.pipe(
  client.speak({ voice_id: Number(values.voice), word_timestamps: true, output_format: 'wav' }),
  tap((event: LiveSpeechEvent) => {
    if (event.type === 'segmentStart') {
      const located = locate(event.text);
      timings.set(event.segment_id, {
        id: event.segment_id,
        text: event.text.trim(),
        completedAt: located,
        firstAudioAt: undefined,
        seconds: 0,
        words: event.word_timestamps?.length ?? 0,
      });
    } else if (event.type === 'audio') {
      const timing = timings.get(event.segment_id);
      if (timing && timing.firstAudioAt === undefined) timing.firstAudioAt = performance.now();
    } else if (event.type === 'segmentSkipped') {
      console.warn(`segment ${event.segment_id} skipped: ${event.text}`);
    }
  }),
  share(),
);

const segments$ = events$.pipe(
  concatSegments(),
  tap((segment: SpokenSegment) => {
    const timing = timings.get(segment.segment_id);
    if (timing) timing.seconds = wavSeconds(segment.audio);
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

/**
 * When was the text of a segment complete? Find it in the text pushed so far (ignoring
 * whitespace, which the service may trim or fold), then take the token that pushed the
 * character after it (the boundary), or the end of the input.
 */
function locate(segmentText: string): number | undefined {
  const compactSegment = segmentText.replace(/\s+/g, '');
  if (compactSegment === '') return undefined;
  const offsets: number[] = [];
  let compact = '';
  for (let i = 0; i < pushed.length; i++) {
    const ch = pushed[i] as string;
    if (!/\s/.test(ch)) {
      compact += ch;
      offsets.push(i);
    }
  }
  const at = compact.indexOf(compactSegment, searchFrom);
  if (at < 0) return inputEndedAt;
  searchFrom = at + compactSegment.length;
  const lastChar = offsets[at + compactSegment.length - 1] ?? 0;
  const completing = tokens.find((t) => t.end > lastChar + 1);
  return completing?.at ?? inputEndedAt ?? performance.now();
}

function wavSeconds(audio: Uint8Array): number {
  const info = parseWavHeader(audio);
  if (!info) return 0;
  const frame = (info.channels * info.bitsPerSample) / 8;
  return Math.min(info.dataBytes, audio.byteLength - info.dataOffset) / frame / info.sampleRate;
}

function printTimeline(): void {
  const rows = [...timings.values()].sort((a, b) => a.id - b.id);
  const ttfa = rows
    .map((r) => (r.firstAudioAt !== undefined && r.completedAt !== undefined ? Math.max(0, r.firstAudioAt - r.completedAt) : undefined))
    .filter((v): v is number => v !== undefined);
  console.log('Timeline (first audio: from the token that completed the segment to its first audio byte)');
  console.log('  seg  first audio  duration  text');
  for (const row of rows) {
    const first =
      row.firstAudioAt !== undefined && row.completedAt !== undefined ? `${Math.max(0, row.firstAudioAt - row.completedAt).toFixed(0)} ms` : '-';
    const text = row.text.length > 60 ? `${row.text.slice(0, 57)}...` : row.text;
    console.log(`  ${String(row.id).padStart(3)}  ${first.padStart(11)}  ${row.seconds.toFixed(2).padStart(6)} s  ${text}`);
  }
  const audioSeconds = rows.reduce((sum, r) => sum + r.seconds, 0);
  const firstToken = tokens[0]?.at;
  const firstAudio = rows[0]?.firstAudioAt;
  const mean = ttfa.length > 0 ? ttfa.reduce((a, b) => a + b, 0) / ttfa.length : 0;
  const max = ttfa.length > 0 ? Math.max(...ttfa) : 0;
  console.log('');
  console.log(`Totals: ${rows.length} segments, ${rows.reduce((s, r) => s + r.words, 0)} words, ${audioSeconds.toFixed(2)} s of audio`);
  console.log(
    `  first token -> first audio: ${firstToken !== undefined && firstAudio !== undefined ? (firstAudio - firstToken).toFixed(0) : '-'} ms; ` +
      `time to first audio per segment: mean ${mean.toFixed(0)} ms, max ${max.toFixed(0)} ms`,
  );
  console.log(
    `  answer streamed in ${((inputEndedAt ?? finished) - (firstToken ?? started)) / 1000 > 0 ? (((inputEndedAt ?? finished) - (firstToken ?? started)) / 1000).toFixed(2) : '0'} s; ` +
      `whole run ${((finished - started) / 1000).toFixed(2)} s`,
  );
  const playback = !player
    ? '; no audio player found, playback skipped'
    : playbackFailure
      ? `; playback with ${player.command} failed: ${playbackFailure}`
      : `; played with ${player.command}`;
  console.log(`  wrote ${relative(process.cwd(), outPath) || outPath}${playback}`);
  if (playbackFailure) console.warn('(playback failed; the WAV above is complete)');
}
