import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { from, lastValueFrom, share, forkJoin, filter } from 'rxjs';
import wavefile from 'wavefile';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../src/index.js';
import { DEFAULT_VOICE_ID, startEmulator, type Emulator } from '../src/emulator/index.js';
import { concatSegments } from '../src/operators/index.js';
import { toAudioDevice, toWavFile, type AudioDeviceDone, type WavFileDone } from '../src/sinks/index.js';
import { makeTempDir, RECORDING_PLAYER, removeDir } from './fixtures/sinkFixtures.js';

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
});
