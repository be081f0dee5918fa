/**
 * Nothing is paid for work that fails on a local check: an output that cannot be
 * written (missing directory, a directory as the path) stops the CLI and the file sinks
 * before any creation call or live session; an upload input that cannot be read stops
 * the creation call. Each case has a control where the same call with a good path does
 * spend (so the emulator's ledger and request log would have shown it).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { lastValueFrom, Observable, of } from 'rxjs';
import { encodeWav16 } from '../../src/audio/wav.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main, type CliIo } from '../../src/cli/main.js';
import { routes } from '../../src/core/routes.js';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import { createClient, type RxVoiceClient } from '../../src/index.js';
import { ValidationError } from '../../src/live/index.js';
import { concatSegments } from '../../src/operators/index.js';
import { checkWritablePath, SinkError, toFile, toWavFile } from '../../src/sinks/index.js';

let emulator: Emulator;
let client: RxVoiceClient;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'rxvoice-no-spend-'));
  emulator = await startEmulator({ synth: 'tone', toneWordSeconds: 0.02, taskDurationMs: 5 });
  client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.baseUrl, polling: { initialDelayMs: 5, jitter: 0 }, warn: () => undefined });
});
afterAll(async () => {
  await client.close();
  await emulator.close();
  rmSync(dir, { recursive: true, force: true });
});

class Collector extends Writable {
  text = '';
  override _write(chunk: Buffer | string, _encoding: BufferEncoding, callback: () => void): void {
    this.text += chunk.toString();
    callback();
  }
}

async function cli(argv: string[]): Promise<{ code: number; stderr: string }> {
  const stderr = new Collector();
  const io: CliIo = {
    stdout: new Collector(),
    stderr,
    stdin: Readable.from([]),
    env: { RXVOICE_API_KEY: emulator.apiKey, RXVOICE_BASE_URL: emulator.baseUrl },
    cwd: dir,
    onInterrupt: () => () => undefined,
  };
  const code = await main(argv, io);
  return { code, stderr: stderr.text };
}

/** Credits of the key, and paid calls seen: live sessions (upgrades) and creation calls. */
function spending(): { credits: number; upgrades: number; creations: number } {
  return {
    credits: emulator.context.credits.balance(emulator.apiKey),
    upgrades: emulator.requests.filter((r) => r.method === 'UPGRADE').length,
    creations: emulator.requests.filter((r) => r.method === 'POST').length,
  };
}

describe('checkWritablePath', () => {
  it('accepts a new file in an existing directory, and an existing file', () => {
    expect(() => checkWritablePath(join(dir, 'new.wav'))).not.toThrow();
    writeFileSync(join(dir, 'existing.wav'), 'x');
    expect(() => checkWritablePath(join(dir, 'existing.wav'))).not.toThrow();
  });

  it('rejects a missing directory, a directory as the path, and a file as the directory', () => {
    let missing: unknown;
    try {
      checkWritablePath(join(dir, 'missing', 'x.wav'));
    } catch (error) {
      missing = error;
    }
    expect(missing).toBeInstanceOf(SinkError);
    expect((missing as SinkError).reason).toBe('io');
    expect((missing as SinkError).message).toMatch(/directory .*missing.* does not exist/);
    mkdirSync(join(dir, 'a-directory'), { recursive: true });
    expect(() => checkWritablePath(join(dir, 'a-directory'))).toThrow(/is a directory/);
    writeFileSync(join(dir, 'plain'), 'x');
    expect(() => checkWritablePath(join(dir, 'plain', 'x.wav'))).toThrow(/not a directory/);
  });
});

describe('the CLI spends nothing when the output cannot be written', () => {
  it('speak -o into a missing directory: no live session, no credits; control: a good path spends', async () => {
    const before = spending();
    const bad = await cli(['speak', 'Hello there.', '-o', join(dir, 'missing', 'x.wav')]);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/does not exist/);
    expect(spending()).toEqual(before);

    const good = await cli(['speak', 'Hello there.', '-o', join(dir, 'hello.wav')]);
    expect(good.code).toBe(0);
    const after = spending();
    expect(after.upgrades).toBe(before.upgrades + 1);
    expect(after.credits).toBeLessThan(before.credits);
  });

  it('speak -o a directory, also with --play: nothing paid', async () => {
    mkdirSync(join(dir, 'out-dir'), { recursive: true });
    const before = spending();
    const bad = await cli(['speak', 'Hello there.', '-o', join(dir, 'out-dir'), '--play']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/is a directory/);
    expect(spending()).toEqual(before);
  });

  it('sound -o into a missing directory: no task created; control: a good path creates one', async () => {
    const before = spending();
    const bad = await cli(['sound', 'rain', '--duration', '1', '-o', join(dir, 'nowhere', 'rain.wav')]);
    expect(bad.code).not.toBe(0);
    expect(spending()).toEqual(before);
    expect(emulator.requests.filter((r) => r.path === routes.textToSound)).toHaveLength(0);

    const good = await cli(['sound', 'rain', '--duration', '1', '-o', join(dir, 'rain.wav')]);
    expect(good.code).toBe(0);
    expect(emulator.requests.filter((r) => r.path === routes.textToSound)).toHaveLength(1);
    expect(spending().credits).toBeLessThan(before.credits);
  });
});

describe('file sinks check the output before subscribing to what they write', () => {
  const speech$ = () => of('Hello there.').pipe(client.speak({ voice_id: 1, output_format: 'wav' }), concatSegments());

  it('toWavFile into a missing directory: SinkError, no live session opened; control: a good path opens one', async () => {
    const before = spending();
    const error = await lastValueFrom(speech$().pipe(toWavFile(join(dir, 'gone', 'x.wav')))).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SinkError);
    expect(spending()).toEqual(before);

    const done = await lastValueFrom(speech$().pipe(toWavFile(join(dir, 'sink.wav'))));
    expect(done.type).toBe('done');
    expect(spending().upgrades).toBe(before.upgrades + 1);
  });

  it('toFile onto a directory: SinkError before the source is subscribed', async () => {
    mkdirSync(join(dir, 'dir-target'), { recursive: true });
    let subscribed = false;
    const source$ = new Observable<Uint8Array>((subscriber) => {
      subscribed = true;
      subscriber.next(new Uint8Array([1, 2, 3]));
      subscriber.complete();
    });
    const error = await lastValueFrom(source$.pipe(toFile(join(dir, 'dir-target')))).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SinkError);
    expect(subscribed).toBe(false);
    // Control: the same source into a good path is subscribed and written.
    const done = await lastValueFrom(source$.pipe(toFile(join(dir, 'bytes.bin'))));
    expect(subscribed).toBe(true);
    expect(done.type).toBe('done');
  });
});

describe('uploads check their input before the creation call', () => {
  it('a missing file: ValidationError, no POST; control: an existing file is sent', async () => {
    const before = spending();
    const error = await lastValueFrom(client.voices.create({ voice_name: 'Me', gender: 1, file: join(dir, 'missing.wav') })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect(spending()).toEqual(before);

    const sample = join(dir, 'sample.wav');
    writeFileSync(sample, encodeWav16(new Int16Array(22050), 22050));
    const created = await lastValueFrom(client.voices.create({ voice_name: 'Me', gender: 1, file: sample }));
    expect(created.voice_id).toBeGreaterThan(0);
    expect(spending().creations).toBe(before.creations + 1);
  });

  it('a directory as the file: ValidationError, no POST', async () => {
    const before = spending();
    mkdirSync(join(dir, 'folder.wav'), { recursive: true });
    const error = await lastValueFrom(client.voices.create({ voice_name: 'Me', gender: 1, file: join(dir, 'folder.wav') })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect(spending()).toEqual(before);
  });
});
