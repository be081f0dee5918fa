import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { from, lastValueFrom, share, forkJoin, filter, tap } from 'rxjs';
import wavefile from 'wavefile';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/index.js';
import { DEFAULT_VOICE_ID, startEmulator, type Emulator } from '../../src/emulator/index.js';
import { concatSegments } from '../../src/operators/index.js';
import { loadMp3Encoder } from '../../src/audio/mp3.js';
import { needs } from '../setup/tools.js';
import { toAudioDevice, toFile, toWavFile, type AudioDeviceDone, type FileDone, type WavFileDone } from '../../src/sinks/index.js';
import { makeTempDir, RECORDING_PLAYER, removeDir } from '../fixtures/sinkFixtures.js';

/** The encoder is a devDependency: loaded here, so the mp3 test runs. */
const hasMp3 = await loadMp3Encoder();

let emulator: Emulator;
let dir: string;
beforeAll(async () => {
  emulator = await startEmulator({ synth: 'tone' });
  dir = await makeTempDir('rxvoice-sinks-live-');
});
afterAll(async () => {
  await emulator?.close();
  await removeDir(dir);
});

describe('sinks on a live session (emulator)', () => {
  it('writes the segments of a real session into one WAV and plays them, at once', async () => {
    const client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.baseUrl });
    try {
      const path = join(dir, 'live.wav');
      const recorded = join(dir, 'live.raw');
      const segments$ = from(['Hello there. ', 'This is a test of the sinks. ', 'Goodbye.']).pipe(
        client.speak({ voice_id: DEFAULT_VOICE_ID, output_format: 'wav' }),
        concatSegments(),
        share(),
      );
      const { file, device } = await lastValueFrom(
        forkJoin({
          file: segments$.pipe(toWavFile(path), filter((e): e is WavFileDone => e.type === 'done')),
          device: segments$.pipe(
            toAudioDevice({ player: { command: process.execPath, args: [RECORDING_PLAYER, `--out=${recorded}`] } }),
            filter((e): e is AudioDeviceDone => e.type === 'done'),
          ),
        }),
      );
      expect(file.segments).toBeGreaterThanOrEqual(1);
      expect(file.bytes).toBeGreaterThan(0);
      const bytes = new Uint8Array(await readFile(path));
      const wav = new wavefile.WaveFile(bytes);
      expect((wav.fmt as { sampleRate: number }).sampleRate).toBe(file.sampleRate);
      expect((wav.data as { chunkSize: number }).chunkSize).toBe(file.bytes);
      expect(Buffer.from(bytes).indexOf('RIFF', 1)).toBe(-1);
      const played = await readFile(recorded);
      expect(device.bytes).toBe(44 + file.bytes);
      expect(played.subarray(44).equals(Buffer.from(bytes.subarray(44)))).toBe(true);
    } finally {
      await client.close();
    }
  });

  it.skipIf(!needs(hasMp3, 'the mp3 encoder (@breezystack/lamejs, a dev dependency)', 'sinks-live: mp3 segments'))('joins the mp3 segments of a real session into one stream of whole MPEG frames', async () => {
    const client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.baseUrl });
    try {
      const path = join(dir, 'live.mp3');
      const segments: Array<{ audio: Uint8Array }> = [];
      const done = (await lastValueFrom(
        from(['First sentence here. ', 'A second one follows. ', 'And the third.']).pipe(
          client.speak({ voice_id: DEFAULT_VOICE_ID, output_format: 'mp3' }),
          concatSegments(),
          tap((segment) => segments.push(segment)),
          toFile(path),
        ),
      )) as FileDone;
      expect(done).toMatchObject({ type: 'done', format: 'mp3' });
      expect(segments.length).toBeGreaterThanOrEqual(2);
      const file = new Uint8Array(await readFile(path));
      // Walk the file frame by frame: it must be whole MPEG audio frames from start to end
      // (no tag or header in the middle), as many as in the segments together.
      const joined = walkMpegFrames(file);
      expect(joined.end).toBe(file.byteLength);
      const perSegment = segments.map((segment) => walkMpegFrames(segment.audio));
      for (const walked of perSegment) expect(walked.end).toBe(walked.length);
      expect(joined.frames).toBe(perSegment.reduce((n, walked) => n + walked.frames, 0));
      expect(joined.seconds).toBeCloseTo(perSegment.reduce((n, walked) => n + walked.seconds, 0), 6);
      expect(joined.seconds).toBeGreaterThan(0.5);
    } finally {
      await client.close();
    }
  });
});

/** Walk MPEG-1/2/2.5 Layer III frames from the start (after an ID3v2 tag, if any). */
function walkMpegFrames(bytes: Uint8Array): { frames: number; seconds: number; end: number; length: number } {
  const BITRATES: Record<string, number[]> = {
    v1: [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],
    v2: [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
  };
  const RATES: Record<number, number[]> = { 3: [44100, 48000, 32000], 2: [22050, 24000, 16000], 0: [11025, 12000, 8000] };
  let at = 0;
  if (bytes[0] === 0x49 && bytes[1] === 0x44 && bytes[2] === 0x33) {
    at = 10 + (((bytes[6]! & 0x7f) << 21) | ((bytes[7]! & 0x7f) << 14) | ((bytes[8]! & 0x7f) << 7) | (bytes[9]! & 0x7f));
  }
  let frames = 0;
  let seconds = 0;
  while (at + 4 <= bytes.byteLength) {
    const b1 = bytes[at + 1]!;
    const b2 = bytes[at + 2]!;
    if (bytes[at] !== 0xff || (b1 & 0xe0) !== 0xe0 || ((b1 >> 1) & 0x03) !== 1) break; // sync + Layer III
    const version = (b1 >> 3) & 0x03; // 3: MPEG-1, 2: MPEG-2, 0: MPEG-2.5
    const bitrate = (version === 3 ? BITRATES['v1'] : BITRATES['v2'])![(b2 >> 4) & 0x0f]!;
    const rate = RATES[version]?.[(b2 >> 2) & 0x03];
    if (!bitrate || !rate) break;
    const samples = version === 3 ? 1152 : 576;
    const size = Math.floor(((samples / 8) * bitrate * 1000) / rate) + ((b2 >> 1) & 0x01);
    frames++;
    seconds += samples / rate;
    at += size;
  }
  return { frames, seconds, end: at, length: bytes.byteLength };
}
