/**
 * A LangChain chat model's stream, spoken as it streams: `model.stream()` straight into
 * `fromTokens` (message chunks as they come), made speakable, spoken in a live session
 * and written to `out/langchain.wav`, each segment printed when its audio is done.
 *
 *   npx tsx examples/langchain.ts         (LangChain's fake streaming chat model, the embedded emulator)
 *
 * Any LangChain chat model streams the same way: put, e.g.,
 * `new ChatOpenAI({ model: 'gpt-4o-mini' })` of `@langchain/openai` in place of the fake.
 * With RXVOICE_API_KEY and RXVOICE_BASE_URL set, the speech comes from that service.
 *
 * Flags: --synth espeak|tone (embedded emulator; default espeak-ng when installed, else
 * tones), --out FILE.
 */
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { FakeListChatModel } from '@langchain/core/utils/testing';
import { lastValueFrom, tap } from 'rxjs';
import { concatSegments, speakableText } from '../src/operators/index.js';
import { toWavFile } from '../src/sinks/index.js';
import { fromTokens } from '../src/sources/index.js';
import { MARKDOWN_ANSWER } from './lib/chat-answer.js';
import { speechService, synthOption } from './lib/speech-service.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    synth: { type: 'string' },
    out: { type: 'string', default: 'out/langchain.wav' },
  },
});
const { synth } = synthOption(values.synth, process.env, positionals);
const outPath = resolve(values.out);
mkdirSync(dirname(outPath), { recursive: true });

// A chat model that streams a canned markdown answer a few characters at a time.
const model = new FakeListChatModel({ responses: [MARKDOWN_ANSWER], sleep: 1 });

const { client, emulator } = await speechService(synth);
if (emulator) console.error(`speech: embedded emulator at ${emulator.baseUrl}`);
try {
  const stream = await model.stream('How do I make a good cup of coffee?');
  let segments = 0;
  await lastValueFrom(
    fromTokens(stream).pipe(
      speakableText(), // chat answers are markdown: no `**`, list numbers or link addresses aloud
      client.speak({ voice_id: 1, output_format: 'wav' }),
      concatSegments(),
      tap((segment) => {
        segments++;
        console.log(`segment ${segment.segment_id}: ${segment.text.trim()}`);
      }),
      toWavFile(outPath),
    ),
    { defaultValue: undefined },
  );
  console.log(`spoke ${segments} segments to ${outPath}`);
} finally {
  await client.close();
  await emulator?.close();
}
