/**
 * Translate, then speak, as the translation streams: English in, German speech out.
 *
 * Starts the embedded emulator (no account, no network), streams the translation
 * (POST /translation/stream), cuts it into German sentences and speaks each one in a live
 * session as soon as it is translated. Prints each sentence when its audio starts, with
 * the time since the start, and the moment the translation ended: the first sentence is
 * heard before the translation is over.
 *
 * Run: `npx tsx examples/translate-then-speak.ts` (add `--tone` for the tone synth instead
 * of espeak-ng speech).
 */
import { filter, lastValueFrom, tap } from 'rxjs';
import { createClient } from '../src/index.js';
import { startEmulator } from '../src/emulator/index.js';
import { translateThenSpeak } from '../src/chains/translateThenSpeak.js';

const text =
  'Good morning everyone. The train to Berlin leaves at noon from platform four. ' +
  'Please keep your tickets ready. We wish you a pleasant journey.';

const emulator = await startEmulator({ ...(process.argv.includes('--tone') ? { synth: 'tone' as const } : {}), streamDelayMs: 40 });
const client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.baseUrl, warn: () => undefined });

const t0 = performance.now();
const ms = (): string => `${String(Math.round(performance.now() - t0)).padStart(5)} ms`;
let bytes = 0;
try {
  console.log(`source (en-us): ${text}\n`);
  await lastValueFrom(
    translateThenSpeak(client, {
      translation: { text, source_language: 'en-us', target_language: 'de-de' },
      // The stream (deprecated by the service) speaks the first sentence soonest; the
      // default, polled translation speaks text by text.
      translationMode: 'streamed',
      speech: { voice_id: 1 },
      observeTranslation: { complete: () => console.log(`${ms()}  (translation stream complete)`) },
    }).pipe(
      tap((event) => {
        if (event.type === 'audio') bytes += event.bytes.byteLength;
      }),
      filter((event) => event.type === 'segmentStart' || event.type === 'segmentSkipped'),
      tap((event) => {
        if (event.type === 'segmentStart') {
          const words = event.word_timestamps?.length ?? 0;
          console.log(`${ms()}  segment ${event.segment_id}: ${event.text.trim()}  [${words} word timestamps]`);
        } else console.log(`${ms()}  segment ${event.segment_id} skipped: ${event.text.trim()}`);
      }),
    ),
    { defaultValue: undefined },
  );
  console.log(`${ms()}  done: ${bytes} bytes of audio`);
} finally {
  await client.close();
  await emulator.close();
}
