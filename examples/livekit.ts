/**
 * A LiveKit Agents voice session speaking through rxvoice: `voice.AgentSession` with
 * `rxvoice/livekit`'s `TTS`, no LiveKit server needed.
 *
 * The agent says a few sentences (`session.say`): LiveKit's TTS node streams them into the
 * plugin, which speaks them over the live session (client-side sentence boundaries, word
 * timestamps as LiveKit's aligned transcript, reconnect without loss, a warm session ready
 * before the text). The session's audio output here writes a WAV file and prints each word
 * with its time in the audio, as LiveKit's transcription would show it; in a room the same
 * session plays to the participants (see the README, "LiveKit Agents").
 *
 * The service is the one `RXVOICE_API_KEY` / `RXVOICE_BASE_URL` name, else an embedded
 * emulator. Run: `npx tsx examples/livekit.ts [--synth tone] [--out out/livekit.wav]`.
 */
import { AudioOutput, USERDATA_TIMED_TRANSCRIPT, initializeLogger, voice, type TimedString } from '@livekit/agents';
import type { AudioFrame } from '@livekit/rtc-node';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { encodeWav16 } from '../src/audio/wav.js';
import { TTS } from '../src/livekit/index.js';
import { speechService, synthOption } from './lib/speech-service.js';

const { values } = parseArgs({ options: { synth: { type: 'string' }, out: { type: 'string', default: 'out/livekit.wav' } } });
const out = values.out ?? 'out/livekit.wav';

/** An audio output that keeps the samples (for the WAV file) and prints the aligned words. */
class WavOutput extends AudioOutput {
  readonly samples: Int16Array[] = [];
  #seconds = 0;
  #playing = false;
  override async captureFrame(frame: AudioFrame): Promise<void> {
    await super.captureFrame(frame);
    if (!this.#playing) {
      this.#playing = true;
      this.onPlaybackStarted(Date.now());
    }
    for (const word of (frame.userdata[USERDATA_TIMED_TRANSCRIPT] as TimedString[] | undefined) ?? []) {
      console.log(`${(word.startTime ?? 0).toFixed(2).padStart(6)} s  ${word.text.trim()}`);
    }
    this.samples.push(frame.data.slice());
    this.#seconds += frame.samplesPerChannel / frame.sampleRate;
  }
  override flush(): void {
    super.flush();
    if (!this.#playing) return;
    this.#playing = false;
    this.onPlaybackFinished({ playbackPosition: this.#seconds, interrupted: false });
  }
  clearBuffer(): void {
    this.flush();
  }
}

initializeLogger({ pretty: true, level: 'error' });
const { client, emulator } = await speechService(synthOption(values.synth).synth);
// warm: a live session is opened now, so the first words leave with no connection round trip
const tts = new TTS({ client, voice_id: 1, language: 'en-us', sampleRate: 24000, warm: true });
const session = new voice.AgentSession({ tts });
const output = new WavOutput(tts.sampleRate);
session.output.audio = output;
tts.on('metrics_collected', (m) => console.log(`tts metrics: first audio after ${m.ttfbMs} ms, ${m.audioDurationMs} ms of audio for ${m.charactersCount} characters`));
try {
  await session.start({ agent: new voice.Agent({ instructions: 'You read announcements aloud.' }) });
  await session.say('Good morning, this is Dr. Smith. The train to Berlin leaves at 9.30 from platform four. Have a pleasant journey!').waitForPlayout();
  const total = output.samples.reduce((n, s) => n + s.length, 0);
  const all = new Int16Array(total);
  let at = 0;
  for (const s of output.samples) {
    all.set(s, at);
    at += s.length;
  }
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, encodeWav16(all, tts.sampleRate));
  console.log(`wrote ${out}: ${(total / tts.sampleRate).toFixed(2)} s of audio`);
} finally {
  await session.close();
  await tts.close();
  await client.close();
  await emulator?.close();
}
