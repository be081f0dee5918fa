/**
 * A chat-bot's streamed answer, spoken as it streams: any OpenAI-compatible endpoint
 * (the real `openai` package), tokens through `fromTokens`, speech through a live
 * session, to the speaker (when a player exists) and to `out/chatbot.wav`.
 *
 *   npx tsx examples/chatbot-to-speech.ts
 *       (no env: a built-in fake OpenAI-compatible server and the embedded emulator)
 *   OPENAI_BASE_URL=https://api.openai.com/v1 OPENAI_API_KEY=sk-... OPENAI_MODEL=gpt-4o-mini \
 *   RXVOICE_API_KEY=... RXVOICE_BASE_URL=... npx tsx examples/chatbot-to-speech.ts "Why is the sky blue?"
 *
 * Flags: --synth espeak|tone (embedded emulator; default espeak-ng when installed, else
 * tones), --no-play, --out FILE.
 *
 * The answer is printed as it streams, with a `[segment N spoken]` note each time a
 * sentence's audio is complete, put between words (never inside one).
 */
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import OpenAI from 'openai';
import { lastValueFrom, merge, share, tap } from 'rxjs';
import type { SpokenSegment } from '../src/live/index.js';
import { concatSegments, speakableText } from '../src/operators/index.js';
import { findPlayer, toWavFile } from '../src/sinks/index.js';
import { fromTokens } from '../src/sources/index.js';
import { startFakeOpenAi, type FakeOpenAiServer } from './lib/fake-openai.js';
import { playUnlessBroken } from './lib/playback.js';
import { speechService, synthOption } from './lib/speech-service.js';
import { wordPrinter } from './lib/word-printer.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    synth: { type: 'string' },
    out: { type: 'string', default: 'out/chatbot.wav' },
    'no-play': { type: 'boolean', default: false },
  },
});
const { synth, positionals: rest } = synthOption(values.synth, process.env, positionals);
const question = rest[0] ?? 'How do I make a good cup of coffee?';
const outPath = resolve(values.out);
mkdirSync(dirname(outPath), { recursive: true });

// The chat-bot: a real endpoint from the environment, or the built-in fake one.
let fake: FakeOpenAiServer | undefined;
if (!process.env['OPENAI_BASE_URL'] && !process.env['OPENAI_API_KEY']) {
  fake = await startFakeOpenAi({ apiKey: 'sk-fake' });
  console.error(`chat-bot: built-in fake OpenAI-compatible server at ${fake.baseURL}`);
}
const openai = new OpenAI({
  baseURL: fake?.baseURL ?? process.env['OPENAI_BASE_URL'] ?? 'https://api.openai.com/v1',
  apiKey: fake ? 'sk-fake' : (process.env['OPENAI_API_KEY'] ?? ''),
});
const model = process.env['OPENAI_MODEL'] ?? 'gpt-4o-mini';

// The speech service: RXVOICE_* from the environment, or the embedded emulator.
const { client, emulator } = await speechService(synth);
if (emulator) console.error(`speech: embedded emulator at ${emulator.baseUrl}`);
const player = values['no-play'] ? undefined : await findPlayer('wav').catch(() => undefined);

try {
  const stream = await openai.chat.completions.create({
    model,
    stream: true,
    messages: [
      { role: 'system', content: 'You are a friendly assistant. Answer in a few short paragraphs.' },
      { role: 'user', content: question },
    ],
  });
  console.log(`> ${question}\n`);

  const answer = wordPrinter((text) => process.stdout.write(text));
  const segments$ = fromTokens(stream).pipe(
    tap({ next: (token) => answer.text(token), complete: () => answer.end() }),
    speakableText(), // LLM answers are markdown: no `**`, list numbers or link addresses aloud
    client.speak({ voice_id: 1, output_format: 'wav' }),
    concatSegments(),
    share(),
  );
  let spoken = 0;
  const written$ = segments$.pipe(
    tap((segment: SpokenSegment) => {
      spoken++;
      answer.note(`[segment ${segment.segment_id} spoken]`);
    }),
    toWavFile(outPath),
  );
  // A player that cannot play (no sound card, no audio server) must not cost the WAV.
  let playbackFailure: string | undefined;
  const played$ = playUnlessBroken(segments$, player, (error) => {
    playbackFailure = error.message;
  });
  await lastValueFrom(merge(written$, played$), { defaultValue: undefined });
  answer.end(); // notes of segments completed after the last token
  const playback = !player
    ? ' (no audio player found: playback skipped)'
    : playbackFailure
      ? ` (playback with ${player.command} failed)`
      : ` and through ${player.command}`;
  console.log(`\n\nspoke ${spoken} segments to ${outPath}${playback}`);
  if (playbackFailure) console.error(`(playback failed: ${playbackFailure})`);
} finally {
  await client.close();
  await emulator?.close();
  await fake?.close();
}
