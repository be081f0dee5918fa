/**
 * Profiling harness of the live-session overhead: many ping-pong and burst sessions,
 * through `client.speak` (`ours`) or the hand-written peer (`peer`), to run under
 * `node --cpu-prof --import tsx bench/tools/profile-live.ts [ours|peer] [sessions]`,
 * then `npx tsx bench/tools/summarize-profile.ts <file.cpuprofile>`.
 */
import { createClient } from '../../src/index.js';
import { startEmulator } from '../../src/emulator/index.js';
import { sentences } from '../util.js';
import { oursSession, peerSession } from '../sessions.js';

const who = process.argv[2] === 'peer' ? 'peer' : 'ours';
const sessions = Number(process.argv[3] ?? 400);
const emulator = await startEmulator({ synth: 'tone', toneWordSeconds: 0.005, concurrency: 3 });
const client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.baseUrl });
const texts = sentences(10, 6);
const t0 = performance.now();
for (let i = 0; i < sessions; i++) {
  if (who === 'ours') {
    await oursSession(client, texts, 'pingpong');
    await oursSession(client, texts, 'burst');
  } else {
    await peerSession(emulator.wsUrl, emulator.apiKey, texts, 'pingpong');
    await peerSession(emulator.wsUrl, emulator.apiKey, texts, 'burst');
  }
}
console.log(`${who}: ${sessions} x 2 sessions in ${(performance.now() - t0).toFixed(0)} ms`);
await client.close();
await emulator.close();
