/**
 * A voice agent's answers at 50 ms one-way latency (the emulator's `latencyMs: 50`, a
 * 100 ms round trip; a new connection pays one more for the TCP handshake): time to
 * first audio of the chat-bot pipeline with a warm session (`client.warmSpeaker`,
 * ours) against a cold `client.speak` (peer: what the README's chat-bot example did),
 * on the same emulator and client.
 *
 * Each answer is an LLM-like token stream (a token every 15 ms) piped into the
 * session the moment its first token exists, as a chat bot does. Between answers the
 * warm speaker's replacement session gets ready (`speaker.ready()`), as it would while
 * the user speaks. Every figure comes from the session's `metrics` option (the public
 * API): connect time, time to `session.ready`, time to the first audio byte, from the
 * subscription.
 *
 * Run alone: `npx tsx bench/warm.ts`.
 */
import { lastValueFrom, map, timer, zip, from, type Observable } from 'rxjs';
import { startEmulator } from '../src/emulator/index.js';
import { createClient, type RxVoiceClient } from '../src/index.js';
import type { SessionMetrics, SpeakOptions, SpeechMetrics } from '../src/live/index.js';
import type { BenchRow } from './types.js';
import { QUICK, median, row, runAlone } from './util.js';

/** One-way latency of the emulated network, ms. */
export const ONE_WAY_MS = 50;

const ANSWER =
  'Sure, I can help with that. Your train leaves at noon from platform four, and the trip takes about two hours. Anything else?';

/** The answer's tokens, one every `everyMs`, the first at once. */
function llmTokens(everyMs = 15): Observable<string> {
  const tokens = ANSWER.split(/(?<= )/);
  return zip(from(tokens), timer(0, everyMs)).pipe(map(([token]) => token));
}

/** Speak one answer with `speak`; resolves with the session's metrics report. */
async function answer(speak: (options: SpeakOptions) => ReturnType<RxVoiceClient['speak']>, options: SpeakOptions): Promise<SessionMetrics> {
  let report: SessionMetrics | undefined;
  const metrics = (m: SpeechMetrics): void => {
    if (m.type === 'session') report = m;
  };
  await lastValueFrom(llmTokens().pipe(speak({ ...options, metrics })), { defaultValue: undefined });
  if (!report) throw new Error('warm bench: no session metrics');
  return report;
}

export interface WarmBenchOptions {
  /** Answers per side. */
  answers?: number;
}

export async function run(options: WarmBenchOptions = {}): Promise<BenchRow[]> {
  const answers = options.answers ?? (QUICK ? 4 : 10);
  const emulator = await startEmulator({ synth: 'tone', latencyMs: ONE_WAY_MS });
  const client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.baseUrl });
  const speech: SpeakOptions = { voice_id: 1, language: 'en-us' };
  try {
    const cold: SessionMetrics[] = [];
    const warm: SessionMetrics[] = [];
    const speaker = client.warmSpeaker(speech);
    for (let i = 0; i < answers; i++) {
      // Alternate, so that both sides see the same conditions.
      cold.push(await answer((o) => client.speak(o), { ...speech, voice_id: 2 }));
      await speaker.ready();
      warm.push(await answer((o) => client.speak(o), speech));
    }
    speaker.close();
    const med = (list: SessionMetrics[], pick: (m: SessionMetrics) => number | undefined): number =>
      Math.round(median(list.map((m) => pick(m) ?? Number.NaN)));
    const firstWarm = med(warm, (m) => m.firstAudioMs);
    const firstCold = med(cold, (m) => m.firstAudioMs);
    const saved = (firstCold - firstWarm) / (2 * ONE_WAY_MS);
    const name = `chat-bot answer, ${ONE_WAY_MS} ms one-way`;
    const note = `median of ${answers} answers; warm (client.warmSpeaker) vs cold client.speak (another voice, so it cannot take the warm session); from the session's metrics option`;
    return [
      row(`${name}: time to first audio`, firstWarm, firstCold, 'ms', `${note}; warm saves ${saved.toFixed(1)} round trips`, 'lower'),
      row(`${name}: time to session.ready`, med(warm, (m) => m.readyMs), med(cold, (m) => m.readyMs), 'ms', note, 'lower'),
      row(`${name}: connect time`, med(warm, (m) => m.connectMs), med(cold, (m) => m.connectMs), 'ms', `${note}; cold: TCP handshake + upgrade`, 'lower'),
      row(`${name}: first text to first audio`, med(warm, (m) => m.textToFirstAudioMs), med(cold, (m) => m.textToFirstAudioMs), 'ms', note, 'lower'),
    ];
  } finally {
    await client.close();
    await emulator.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) runAlone(run);
