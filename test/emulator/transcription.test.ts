/**
 * The emulator's transcription (issue 29): a fixed three-line dialogue, its times scaled
 * to fit a WAV shorter than the dialogue's 7 s, so no segment ends after the audio does.
 */
import { lastValueFrom } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, taskResult, type RxVoiceClient } from '../../src/index.js';
import { encodeWav16 } from '../../src/audio/wav.js';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import { heardTranscript, mediaDurationSeconds } from '../../src/emulator/http-media.js';

const wavOf = (seconds: number, rate = 16_000): Uint8Array => encodeWav16(new Int16Array(Math.round(seconds * rate)), rate);

let emulator: Emulator;
let client: RxVoiceClient;
beforeAll(async () => {
  emulator = await startEmulator({ synth: 'tone', taskDurationMs: 5 });
  client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.baseUrl, polling: { initialDelayMs: 5, adaptive: false } });
});
afterAll(async () => {
  await client.close();
  await emulator.close();
});

async function transcriptOf(wav: Uint8Array) {
  const { transcript } = await lastValueFrom(client.transcribe({ language: 'en-us', media_file: { data: wav, filename: 'a.wav' } }).pipe(taskResult()));
  return transcript;
}

describe("the emulator's transcription", () => {
  it('a 1.25 s WAV: every segment inside 0..1.25 s, in order, the same three lines', async () => {
    const transcript = await transcriptOf(wavOf(1.25));
    expect(transcript.map((t) => t.text)).toEqual(heardTranscript('en-us').map((t) => t.text));
    for (const item of transcript) {
      expect(item.start).toBeGreaterThanOrEqual(0);
      expect(item.end).toBeLessThanOrEqual(1.25);
      expect(item.start).toBeLessThanOrEqual(item.end);
    }
    expect(transcript.at(-1)?.end).toBeCloseTo(1.25, 3);
  });

  it('control: a WAV longer than the dialogue keeps its 0..7 s times (a test that scaled nothing would fail above)', async () => {
    const transcript = await transcriptOf(wavOf(10));
    expect(transcript.map((t) => [t.start, t.end])).toEqual([
      [0, 2.1],
      [2.1, 4.4],
      [4.4, 7],
    ]);
  });

  it('reads the duration of a WAV (a streamed one by its bytes), nothing of other media', () => {
    expect(mediaDurationSeconds(wavOf(1.25))).toBeCloseTo(1.25, 6);
    const streamed = wavOf(0.5);
    new DataView(streamed.buffer, streamed.byteOffset).setUint32(40, 0xffffffff, true);
    expect(mediaDurationSeconds(streamed)).toBeCloseTo(0.5, 6);
    expect(mediaDurationSeconds(new TextEncoder().encode('ID3 not a wav file'))).toBeUndefined();
  });
});
