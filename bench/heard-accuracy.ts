/**
 * Heard text: how many words the estimate (audio length and characters, no word timestamps)
 * is off from the cut the word timestamps give, on espeak audio from the emulator, in
 * several languages; cut points every 50 ms over each session. Not part of `npm run bench`
 * (an accuracy figure, not a speed one).
 *
 * Run alone: `npx tsx bench/heard-accuracy.ts`.
 */
import { from, lastValueFrom, toArray } from 'rxjs';
import { startEmulator } from '../src/emulator/index.js';
import { heardText, HeardTracker, speak, type LiveSpeechEvent } from '../src/live/index.js';

const TEXTS: Record<string, string> = {
  'en-us': 'The quick brown fox jumps over the lazy dog. It was a sunny afternoon, and the children played in the park until dinner. Dr. Smith paid 42 dollars for lunch.',
  'de-de': 'Der schnelle braune Fuchs springt über den faulen Hund. Es war ein sonniger Nachmittag, und die Kinder spielten bis zum Abendessen im Park.',
  'fr-fr': "Le renard brun rapide saute par-dessus le chien paresseux. C'était un après-midi ensoleillé, et les enfants ont joué dans le parc jusqu'au dîner.",
  'es-es': 'El rápido zorro marrón salta sobre el perro perezoso. Era una tarde soleada, y los niños jugaron en el parque hasta la cena.',
  'it-it': 'La veloce volpe marrone salta sopra il cane pigro. Era un pomeriggio di sole, e i bambini hanno giocato nel parco fino a cena.',
  'ru-ru': 'Быстрая коричневая лиса прыгает через ленивую собаку. Был солнечный день, и дети играли в парке до ужина.',
};

const words = (text: string): number => (text.match(/\S+/g) ?? []).length;

async function main(): Promise<void> {
  const emulator = await startEmulator();
  try {
    console.log('language | cut points | words | mean words off | p95 | max');
    for (const [language, text] of Object.entries(TEXTS)) {
      const events: LiveSpeechEvent[] = await lastValueFrom(
        from([text]).pipe(speak({ wsUrl: emulator.wsUrl, apiKey: emulator.apiKey }, { voice_id: 1, language, word_timestamps: true, output_format: 'wav' }), toArray()),
      );
      const stripped = events.map((e): LiveSpeechEvent => (e.type === 'segmentStart' ? { type: e.type, segment_id: e.segment_id, text: e.text } : e));
      const tracker = new HeardTracker();
      events.forEach((e) => tracker.push(e));
      const off: number[] = [];
      for (let t = 0; t <= tracker.totalSeconds + 0.05; t += 0.05) {
        off.push(Math.abs(words(heardText(events, t).heard) - words(heardText(stripped, t).heard)));
      }
      off.sort((a, b) => a - b);
      const mean = off.reduce((s, x) => s + x, 0) / off.length;
      console.log(`${language} | ${off.length} | ${words(text)} | ${mean.toFixed(2)} | ${off[Math.floor(off.length * 0.95)]} | ${off[off.length - 1]}`);
    }
  } finally {
    await emulator.close();
  }
}

await main();
