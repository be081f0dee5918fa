import { spawn as nodeSpawn, type SpawnOptions } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { StreamWriter } from '../../src/sinks/streamWriter.js';
import { from, lastValueFrom, Observable, Subject, tap, toArray, VirtualTimeScheduler } from 'rxjs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { streamingWavHeader, type PcmChunk } from '../../src/audio/pcm.js';
import type { PcmFormat } from '../../src/audio/wav.js';
import type { SpokenSegment } from '../../src/live/events.js';
import {
  findExecutable,
  SinkError,
  toAudioDevice,
  type AudioDeviceDone,
  type AudioDevicePlaying,
  type AudioDeviceProgress,
} from '../../src/sinks/index.js';
import {
  bytesOf,
  catchError,
  concatBytes,
  makeTempDir,
  processGone,
  RECORDING_PLAYER,
  removeDir,
  samples16,
  waitFor,
  wavSegment,
} from '../fixtures/sinkFixtures.js';

let dir: string;
beforeEach(async () => {
  dir = await makeTempDir('rxvoice-device-');
});
afterEach(async () => {
  await removeDir(dir);
});

const mono16: PcmFormat = { sampleRate: 22050, channels: 1, bitsPerSample: 16, audioFormat: 1 };

/** The recording player run directly with node, recording into `out`. */
function recordingPlayer(out: string): { command: string; args: string[] } {
  return { command: process.execPath, args: [RECORDING_PLAYER, `--out=${out}`] };
}

/** A directory holding an executable `name` that runs the recording player (env RECORDING_PLAYER_OUT). */
async function fakePlayerOnPath(name: string): Promise<string> {
  const bin = join(dir, 'bin');
  await mkdir(bin, { recursive: true });
  const file = join(bin, name);
  await writeFile(file, `#!/bin/sh\nexec "${process.execPath}" "${RECORDING_PLAYER}" "$@"\n`);
  await chmod(file, 0o755);
  return bin;
}

describe('toAudioDevice', () => {
  it('streams one WAV (streaming header + unwrapped PCM) to a real player process, then waits for it to exit', async () => {
    const out = join(dir, 'played.raw');
    const parts = [samples16(3000, 1), samples16(5001, 2), samples16(7, 3)];
    const events = await lastValueFrom(
      from(parts.map((s, i) => wavSegment(i, s))).pipe(toAudioDevice({ player: recordingPlayer(out) }), toArray()),
    );
    const pcm = concatBytes(parts.map(bytesOf));
    const recorded = new Uint8Array(await readFile(out));
    expect(recorded.byteLength).toBe(44 + pcm.byteLength);
    expect(Buffer.from(recorded.subarray(0, 44)).equals(Buffer.from(streamingWavHeader(mono16)))).toBe(true);
    expect(Buffer.from(recorded.subarray(44)).equals(Buffer.from(pcm))).toBe(true);
    // The player saw the end of its stdin and exited 0 before `done`.
    expect(existsSync(`${out}.done`)).toBe(true);
    const playing = events.filter((e): e is AudioDevicePlaying => e.type === 'playing');
    expect(playing).toHaveLength(3);
    expect(playing[0]!.command).toBe(process.execPath);
    const done = events.at(-1) as AudioDeviceDone;
    expect(done).toMatchObject({ type: 'done', segments: 3, bytes: 44 + pcm.byteLength });
    expect(done.seconds).toBeCloseTo(8008 / 22050, 6);
    expect(processGone(playing[0]!.pid)).toBe(true);
  });

  it('respects the player pace (a slow device): everything arrives, in order', async () => {
    const out = join(dir, 'slow.raw');
    const chunks: PcmChunk[] = Array.from({ length: 12 }, (_, i) => ({ pcm: bytesOf(samples16(16384, i)), format: mono16 }));
    const done = (await lastValueFrom(
      from(chunks).pipe(
        toAudioDevice({
          player: recordingPlayer(out),
          env: { ...process.env, RECORDING_PLAYER_DELAY_MS: '5' },
        }),
      ),
    )) as AudioDeviceDone;
    const recorded = new Uint8Array(await readFile(out));
    expect(done.bytes).toBe(44 + 12 * 32768);
    expect(Buffer.from(recorded.subarray(44)).equals(Buffer.from(concatBytes(chunks.map((c) => c.pcm))))).toBe(true);
  });

  it('finds a player named aplay on PATH and gives it WAV-on-stdin arguments', async () => {
    const bin = await fakePlayerOnPath('aplay');
    const out = join(dir, 'aplay.raw');
    expect(await findExecutable('aplay', { PATH: bin })).toBe(join(bin, 'aplay'));
    const events = await lastValueFrom(
      from([wavSegment(0, samples16(100))]).pipe(
        toAudioDevice({ env: { PATH: `${join(dir, 'nothing-here')}:${bin}`, RECORDING_PLAYER_OUT: out } }),
        toArray(),
      ),
    );
    expect((events[0] as AudioDevicePlaying).command).toBe(join(bin, 'aplay'));
    const started = JSON.parse(await readFile(`${out}.json`, 'utf8')) as { argv: string[] };
    expect(started.argv).toEqual(['-q', '-t', 'wav', '-']);
    expect((await readFile(out)).byteLength).toBe(44 + 200);
  });

  it('prefers aplay over play, and uses play (sox) when it is the only one', async () => {
    const bin = await fakePlayerOnPath('play');
    const out = join(dir, 'play.raw');
    const events = await lastValueFrom(
      from([wavSegment(0, samples16(10))]).pipe(toAudioDevice({ env: { PATH: bin, RECORDING_PLAYER_OUT: out } }), toArray()),
    );
    expect((events[0] as AudioDevicePlaying).command).toBe(join(bin, 'play'));
    expect((JSON.parse(await readFile(`${out}.json`, 'utf8')) as { argv: string[] }).argv).toEqual(['-q', '-t', 'wav', '-']);
    await fakePlayerOnPath('aplay');
    const again = await lastValueFrom(
      from([wavSegment(0, samples16(10))]).pipe(toAudioDevice({ env: { PATH: bin, RECORDING_PLAYER_OUT: out } }), toArray()),
    );
    expect((again[0] as AudioDevicePlaying).command).toBe(join(bin, 'aplay'));
  });

  it('errors with SinkError no_player naming every player looked for', async () => {
    const error = await catchError(
      lastValueFrom(from([wavSegment(0, samples16(10))]).pipe(toAudioDevice({ env: { PATH: join(dir, 'empty') } }))),
    );
    expect(error).toBeInstanceOf(SinkError);
    expect(error).toMatchObject({ code: 'sink', reason: 'no_player' });
    for (const name of ['aplay', 'paplay', 'ffplay', 'play']) expect((error as Error).message).toContain(name);
    // mp3 needs a player that decodes it: aplay and paplay are not offered.
    const mp3: SpokenSegment = { segment_id: 0, text: '', word_timestamps: [], audio: new Uint8Array([0xff, 0xfb]), format: 'mp3' };
    const mp3Error = await catchError(lastValueFrom(from([mp3]).pipe(toAudioDevice({ env: { PATH: join(dir, 'empty') } }))));
    expect((mp3Error as Error).message).toContain('ffplay, play');
    expect((mp3Error as Error).message).not.toContain('aplay');
  });

  it('kills the player on unsubscribe (barge-in): the process is gone', async () => {
    const out = join(dir, 'barge.raw');
    const segments = new Subject<SpokenSegment>();
    const events: AudioDeviceProgress[] = [];
    const subscription = segments.pipe(toAudioDevice({ player: recordingPlayer(out), killGraceMs: 200 })).subscribe({
      next: (e) => events.push(e),
    });
    segments.next(wavSegment(0, samples16(1000)));
    await waitFor(() => events.length > 0, 5000, 'first playing event');
    const pid = (events[0] as AudioDevicePlaying).pid;
    expect(processGone(pid)).toBe(false);
    subscription.unsubscribe();
    await waitFor(() => processGone(pid), 5000, 'player to be killed');
    expect(existsSync(`${out}.done`)).toBe(false); // it never saw a normal end of stream
  });

  /**
   * Plays into a player that outlives the end of its stdin (`onSigterm`: what it does on
   * SIGTERM), once it is ready (its handler installed: a SIGTERM before that would kill
   * it whatever it meant to do), then unsubscribes; resolves with the player's pid.
   */
  async function bargeInto(onSigterm: string, options: { killGraceMs: number; scheduler?: VirtualTimeScheduler }): Promise<number> {
    const script = join(dir, 'lingering.mjs');
    const ready = join(dir, 'lingering.ready');
    await writeFile(
      script,
      `import { writeFileSync } from 'node:fs';\n` +
        `process.on('SIGTERM', () => { ${onSigterm} }); process.stdin.on('data', () => {}); setInterval(() => {}, 1000);\n` +
        `writeFileSync(${JSON.stringify(ready)}, '');\n`,
    );
    const segments = new Subject<SpokenSegment>();
    const events: AudioDeviceProgress[] = [];
    const subscription = segments
      .pipe(toAudioDevice({ player: { command: process.execPath, args: [script] }, ...options }))
      .subscribe((e) => events.push(e));
    segments.next(wavSegment(0, samples16(10)));
    await waitFor(() => events.length > 0 && existsSync(ready), 5000, 'the player ready');
    const pid = (events[0] as AudioDevicePlaying).pid;
    subscription.unsubscribe();
    return pid;
  }

  /** A player a failing test left running (its code would not stop it): stopped here. */
  const killLeftover = (pid: number): void => {
    if (!processGone(pid)) process.kill(pid, 'SIGKILL');
  };

  it('SIGKILLs a player that ignores SIGTERM after the grace period', async () => {
    const pid = await bargeInto('', { killGraceMs: 100 });
    await waitFor(() => processGone(pid), 5000, 'SIGKILL').finally(() => killLeftover(pid));
  });

  it('SIGTERMs the player at once: one that stays after its stdin ends but obeys SIGTERM is gone with no SIGKILL', async () => {
    // the grace period never passes: this scheduler's clock is never advanced
    const pid = await bargeInto('process.exit(0);', { killGraceMs: 100, scheduler: new VirtualTimeScheduler() });
    await waitFor(() => processGone(pid), 5000, 'SIGTERM').finally(() => killLeftover(pid));
  });

  it('errors with SinkError player_failed when the player crashes mid-stream (exit code and stderr in the message)', async () => {
    const out = join(dir, 'crash.raw');
    const segments = Array.from({ length: 20 }, (_, i) => wavSegment(i, samples16(8192, i)));
    const error = await catchError(
      lastValueFrom(
        from(segments).pipe(
          toAudioDevice({ player: recordingPlayer(out), env: { ...process.env, RECORDING_PLAYER_FAIL_AFTER: '40000' } }),
        ),
      ),
    );
    expect(error).toBeInstanceOf(SinkError);
    expect(error).toMatchObject({ reason: 'player_failed' });
    expect((error as Error).message).toMatch(/code 3/);
    expect((error as Error).message).toContain('simulated device failure');
  });

  it('errors when the player dies between writes (no write in flight)', async () => {
    const out = join(dir, 'idle-crash.raw');
    const segments = new Subject<SpokenSegment>();
    const result = lastValueFrom(
      segments.pipe(toAudioDevice({ player: recordingPlayer(out), env: { ...process.env, RECORDING_PLAYER_FAIL_AFTER: '50' } })),
    );
    segments.next(wavSegment(0, samples16(100)));
    const error = await catchError(result);
    expect(error).toMatchObject({ reason: 'player_failed' });
  });

  it('errors (does not hang) when the player exits after the last write and before the stream ends', async () => {
    // Node destroys a child's stdin when it exits; ending that stdin then never finishes.
    // Here the source completes at the player's exit, before its 'close' (a helper it left
    // behind holds its stderr open for 300 ms), every time.
    const player = join(dir, 'exits-at-once.sh');
    await writeFile(player, `#!/bin/sh\necho 'audio open error: no card' >&2\nsleep 0.3 &\nexit 1\n`, { mode: 0o755 });
    let exitedPlayer: Promise<void> | undefined;
    const spawnSpy: typeof nodeSpawn = ((command: string, args: readonly string[], options: SpawnOptions) => {
      const proc = nodeSpawn(command, args, options);
      exitedPlayer = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
      return proc;
    }) as typeof nodeSpawn;
    const source = new Observable<SpokenSegment>((subscriber) => {
      subscriber.next(wavSegment(0, samples16(10)));
      // the write is handed over before toAudioDevice asks for the next value; the player exits soon after
      void waitFor(() => exitedPlayer !== undefined)
        .then(() => exitedPlayer)
        .then(() => subscriber.complete());
    });
    const error = await catchError(lastValueFrom(source.pipe(toAudioDevice({ player: { command: player }, spawn: spawnSpy }))));
    expect(error).toMatchObject({ name: 'SinkError', reason: 'player_failed' });
    expect((error as Error).message).toMatch(/exited with code 1: audio open error: no card/);
  });

  it('StreamWriter.end rejects for a stream destroyed before or while it finishes, and resolves for one that finishes', async () => {
    const stalled = new Writable({ write: (_c, _e, done) => done(), final: () => undefined });
    const ending = new StreamWriter(stalled).end();
    setImmediate(() => stalled.destroy());
    await expect(ending).rejects.toThrow('closed before it finished');
    const destroyed = new Writable({ write: (_c, _e, done) => done() });
    destroyed.destroy();
    await expect(new StreamWriter(destroyed).end()).rejects.toThrow('closed');
    // control
    await expect(new StreamWriter(new Writable({ write: (_c, _e, done) => done() })).end()).resolves.toBeUndefined();
  });

  it('errors when the player cannot be spawned, and when it exits non-zero at the end', async () => {
    const missing = await catchError(
      lastValueFrom(from([wavSegment(0, samples16(10))]).pipe(toAudioDevice({ player: { command: join(dir, 'no-such-player') } }))),
    );
    expect(missing).toMatchObject({ name: 'SinkError', reason: 'player_failed' });
    expect((missing as Error).message).toContain('ENOENT');

    const failing = join(dir, 'fails-at-end.mjs');
    await writeFile(failing, `process.stdin.resume(); process.stdin.on('end', () => { console.error('bad device'); process.exit(1); });\n`);
    const atEnd = await catchError(
      lastValueFrom(from([wavSegment(0, samples16(10))]).pipe(toAudioDevice({ player: { command: process.execPath, args: [failing] } }))),
    );
    expect(atEnd).toMatchObject({ reason: 'player_failed' });
    expect((atEnd as Error).message).toContain('code 1');
    expect((atEnd as Error).message).toContain('bad device');
  });

  it('plays through a file player (afplay on macOS): one temporary WAV per segment, in order, each removed after playing', async () => {
    const bin = join(dir, 'bin');
    await mkdir(bin, { recursive: true });
    const out = join(dir, 'afplay.log');
    // A stand-in afplay: appends the file it was given (and its path) to the log.
    await writeFile(join(bin, 'afplay'), `#!/bin/sh\nPATH=/usr/bin:/bin\necho "$@" >> "${out}.args"\ncat "$1" >> "${out}"\n`);
    await chmod(join(bin, 'afplay'), 0o755);
    const parts = [samples16(300, 1), samples16(501, 2)];
    const events = await lastValueFrom(
      from(parts.map((s, i) => wavSegment(i, s))).pipe(toAudioDevice({ env: { PATH: bin } }), toArray()),
    );
    expect((events[0] as AudioDevicePlaying).command).toBe(join(bin, 'afplay'));
    const files = (await readFile(`${out}.args`, 'utf8')).trim().split('\n');
    expect(files).toHaveLength(2);
    for (const file of files) {
      expect(file).toMatch(/rxvoice-play-[0-9a-f]+\.wav$/);
      expect(existsSync(file)).toBe(false); // removed once played
    }
    // Each file is a complete WAV (exact sizes) of its segment.
    const played = new Uint8Array(await readFile(out));
    const first = played.subarray(0, 44 + 600);
    const second = played.subarray(44 + 600);
    expect(new DataView(first.buffer, first.byteOffset).getUint32(40, true)).toBe(600);
    expect(new DataView(second.buffer, second.byteOffset).getUint32(4, true)).toBe(36 + 1002);
    expect(Buffer.from(first.subarray(44)).equals(Buffer.from(bytesOf(parts[0]!)))).toBe(true);
    expect(Buffer.from(second.subarray(44)).equals(Buffer.from(bytesOf(parts[1]!)))).toBe(true);
    expect(events.at(-1)).toMatchObject({ type: 'done', segments: 2, bytes: 2 * 44 + 1602 });
  });

  it('file player: unsubscribe kills the one playing and removes its file; a failing one errors', async () => {
    const bin = join(dir, 'bin');
    await mkdir(bin, { recursive: true });
    const log = join(dir, 'slow.args');
    await writeFile(join(bin, 'afplay'), `#!/bin/sh\nPATH=/usr/bin:/bin\necho "$$ $1" > "${log}"\nexec sleep 30\n`);
    await chmod(join(bin, 'afplay'), 0o755);
    const segments = new Subject<SpokenSegment>();
    const subscription = segments.pipe(toAudioDevice({ env: { PATH: bin }, killGraceMs: 100 })).subscribe();
    segments.next(wavSegment(0, samples16(100)));
    await waitFor(async () => existsSync(log) && (await readFile(log, 'utf8')).endsWith('\n'), 5000, 'the player to start');
    const [pid, file] = (await readFile(log, 'utf8')).trim().split(' ') as [string, string];
    expect(existsSync(file)).toBe(true);
    subscription.unsubscribe();
    await waitFor(() => processGone(Number(pid)), 5000, 'the player to be killed');
    await waitFor(() => !existsSync(file), 5000, 'the temporary file to be removed');

    const failing = join(dir, 'fails.mjs');
    await writeFile(failing, `console.error('Error: AudioQueueStart failed'); process.exit(1);\n`);
    const error = await catchError(
      lastValueFrom(
        from([wavSegment(0, samples16(10))]).pipe(toAudioDevice({ player: { command: process.execPath, args: [failing], file: true } })),
      ),
    );
    expect(error).toMatchObject({ name: 'SinkError', reason: 'player_failed' });
    expect((error as Error).message).toContain('AudioQueueStart failed');
  });

  it('keeps only the last lines of a noisy player stderr in the error (one short reason)', async () => {
    const noisy = join(dir, 'noisy.mjs');
    await writeFile(
      noisy,
      `for (let i = 0; i < 40; i++) console.error('ALSA lib noise line ' + i + ' ' + 'x'.repeat(60));\n` +
        `console.error('play FAIL sox: Sorry, there is no default audio device configured'); process.exit(1);\n`,
    );
    const error = await catchError(
      lastValueFrom(from([wavSegment(0, samples16(10))]).pipe(toAudioDevice({ player: { command: process.execPath, args: [noisy] } }))),
    );
    expect(error).toMatchObject({ reason: 'player_failed' });
    const message = (error as Error).message;
    expect(message).toContain('no default audio device configured');
    expect(message).toContain('noise line 39');
    expect(message).not.toContain('noise line 38');
    expect(message).not.toContain('\n');
    expect(message.length).toBeLessThan(450);
  });

  it('plays mp3 segments as one stream (ID3v2 of later segments dropped) through the given player', async () => {
    const out = join(dir, 'mp3.raw');
    const id3 = new Uint8Array([0x49, 0x44, 0x33, 4, 0, 0, 0, 0, 0, 2, 0x41, 0x41]);
    const mp3 = (id: number, frame: number[]): SpokenSegment => ({
      segment_id: id,
      text: '',
      word_timestamps: [],
      audio: concatBytes([id3, new Uint8Array(frame)]),
      format: 'mp3',
    });
    const done = (await lastValueFrom(
      from([mp3(0, [0xff, 0xfb, 1]), mp3(1, [0xff, 0xfb, 2])]).pipe(toAudioDevice({ player: recordingPlayer(out) })),
    )) as AudioDeviceDone;
    expect(done).toMatchObject({ type: 'done', segments: 2, seconds: 0 });
    expect([...(await readFile(out))]).toEqual([...id3, 0xff, 0xfb, 1, 0xff, 0xfb, 2]);
  });

  it('completes without spawning anything on an empty stream', async () => {
    const done = await lastValueFrom(from([] as SpokenSegment[]).pipe(toAudioDevice({ env: { PATH: '' } })));
    expect(done).toMatchObject({ type: 'done', segments: 0, bytes: 0, pid: undefined });
  });

  it('errors on a format change mid-stream, and kills the player', async () => {
    const out = join(dir, 'mismatch.raw');
    const segments = new Subject<SpokenSegment>();
    const events: AudioDeviceProgress[] = [];
    const result = lastValueFrom(segments.pipe(toAudioDevice({ player: recordingPlayer(out) }), tap((e) => events.push(e))));
    segments.next(wavSegment(0, samples16(10), 22050));
    segments.next(wavSegment(1, samples16(10), 16000));
    const error = await catchError(result);
    expect(error).toMatchObject({ reason: 'format_mismatch' });
    // The error is delivered after the player is gone.
    expect(processGone((events[0] as AudioDevicePlaying).pid)).toBe(true);
  });
});
