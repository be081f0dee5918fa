/**
 * The Vercel AI SDK's own `generateSpeech` and `transcribe` on this service, through
 * `rxvoice/ai-sdk`: a sentence spoken to `out/ai-sdk.wav`, then that file transcribed,
 * each segment printed with its start and end in seconds.
 *
 *   npx tsx examples/ai-sdk.ts            (no env: the embedded emulator)
 *   RXVOICE_API_KEY=... RXVOICE_BASE_URL=... npx tsx examples/ai-sdk.ts "Text to speak."
 *
 * Flags: --synth espeak|tone (embedded emulator; default espeak-ng when installed, else
 * tones), --out FILE.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { experimental_generateSpeech as generateSpeech, experimental_transcribe as transcribe } from 'ai';
import { createCamb } from '../src/ai-sdk/index.js';
import { speechService, synthOption } from './lib/speech-service.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    synth: { type: 'string' },
    out: { type: 'string', default: 'out/ai-sdk.wav' },
  },
});
const { synth, positionals: rest } = synthOption(values.synth, process.env, positionals);
const text = rest[0] ?? 'Hello from the AI SDK. This sentence was spoken by rxvoice.';
const outPath = resolve(values.out);
mkdirSync(dirname(outPath), { recursive: true });

const { client, emulator } = await speechService(synth);
if (emulator) console.error(`speech: embedded emulator at ${emulator.baseUrl}`);
// An rxvoice client used as it is; `createCamb({ apiKey, baseUrl })` or the default
// `camb` (RXVOICE_API_KEY, RXVOICE_BASE_URL) make their own.
const camb = createCamb({ client });
try {
  const speech = await generateSpeech({ model: camb.speech(), text, voice: '1', language: 'en', outputFormat: 'wav' });
  writeFileSync(outPath, speech.audio.uint8Array);
  const credits = speech.providerMetadata['camb']?.['creditsRequired'];
  console.log(`spoke ${speech.audio.uint8Array.byteLength} bytes of ${speech.audio.mediaType} to ${outPath} (${String(credits)} credits)`);
  for (const warning of speech.warnings) console.log(`warning: ${JSON.stringify(warning)}`);

  const transcript = await transcribe({ model: camb.transcription(), audio: speech.audio.uint8Array });
  console.log(`transcribed ${transcript.durationInSeconds?.toFixed(2)} s of ${transcript.language} audio:`);
  for (const segment of transcript.segments) {
    console.log(`  ${segment.startSecond.toFixed(2)}-${segment.endSecond.toFixed(2)} s  ${segment.text}`);
  }
} finally {
  await client.close();
  await emulator?.close();
}
