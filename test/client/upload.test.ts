import { spawn } from 'node:child_process';
import { mkdtemp, rm, truncate, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { createReadStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { lastValueFrom } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { taskResult, type RxVoiceClient } from '../../src/index.js';
import { ValidationError } from '../../src/live/index.js';
import type { Emulator } from '../../src/emulator/index.js';
import { clientFor, countingProxy, emulator } from './helpers.js';

let emu: Emulator;
let proxy: Awaited<ReturnType<typeof countingProxy>>;
let client: RxVoiceClient;
let dir: string;
const SAMPLE = Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(40, 7)]);

beforeAll(async () => {
  emu = await emulator();
  proxy = await countingProxy(emu.baseUrl);
  client = clientFor({ baseUrl: proxy.baseUrl, apiKey: emu.apiKey });
  dir = await mkdtemp(join(tmpdir(), 'rxvoice-upload-'));
  await writeFile(join(dir, 'voice.wav'), SAMPLE);
  await writeFile(join(dir, 'story.txt'), 'A fox. A dog. The end.');
});
afterAll(async () => {
  await client.close();
  await proxy.close();
  await emu.close();
  await rm(dir, { recursive: true, force: true });
});

/** The multipart body the service saw for the last POST to `path`. */
function lastUpload(path: string): string {
  const seen = proxy.seen.filter((r) => r.method === 'POST' && r.path === path).at(-1);
  if (!seen) throw new Error(`no POST ${path}`);
  return seen.body;
}

describe('multipart uploads from every input kind', () => {
  const kinds: Array<[string, () => Parameters<RxVoiceClient['voices']['create']>[0]['file'], string]> = [
    ['a file path', () => join(dir, 'voice.wav'), 'voice.wav'],
    ['a file URL', () => new URL(`file://${join(dir, 'voice.wav')}`), 'voice.wav'],
    ['a Buffer with a filename', () => ({ data: SAMPLE, filename: 'buf.wav' }), 'buf.wav'],
    ['a Uint8Array with a filename', () => ({ data: new Uint8Array(SAMPLE), filename: 'u8.mp3' }), 'u8.mp3'],
    ['a File', () => new File([SAMPLE], 'file.flac', { type: 'audio/flac' }), 'file.flac'],
    ['a Blob with a MIME type', () => new Blob([SAMPLE], { type: 'audio/wav' }), 'upload.wav'],
    ['a Readable with a filename', () => ({ data: Readable.from([SAMPLE.subarray(0, 10), SAMPLE.subarray(10)]), filename: 'stream.aac' }), 'stream.aac'],
    ['an fs ReadStream (name from its path)', () => createReadStream(join(dir, 'voice.wav')), 'voice.wav'],
  ];
  for (const [name, make, filename] of kinds) {
    it(name, async () => {
      const { voice_id } = await lastValueFrom(client.voices.create({ voice_name: `v-${name}`, gender: 1, age: 40, enhance_audio: true, file: make() }));
      expect(voice_id).toBeGreaterThan(0);
      const body = lastUpload('/create-custom-voice');
      expect(body).toContain(`filename="${filename}"`);
      expect(body).toContain(SAMPLE.subarray(4).toString('latin1').slice(0, 10));
      expect(body).toMatch(/name="enhance_audio"\r\n\r\ntrue/);
      const voices = await lastValueFrom(client.voices.list());
      expect(voices.find((v) => v.id === voice_id)).toMatchObject({ voice_name: `v-${name}`, age: 40 });
    });
  }

  it('a null field is left out of the form, not sent as "null" (control: a given one is sent)', async () => {
    await lastValueFrom(client.voices.create({ voice_name: 'nulls', gender: 1, description: null, file: join(dir, 'voice.wav') }));
    expect(lastUpload('/create-custom-voice')).not.toContain('name="description"');
    await lastValueFrom(client.voices.create({ voice_name: 'given', gender: 1, description: 'calm', file: join(dir, 'voice.wav') }));
    expect(lastUpload('/create-custom-voice')).toMatch(/name="description"\r\n\r\ncalm\r\n/);
  });

  it('the file type: an extension in any case, a MIME type with parameters, a name without extension completed from it', async () => {
    await lastValueFrom(client.voices.create({ voice_name: 'loud', gender: 1, file: { data: SAMPLE, filename: 'LOUD.WAV' } }));
    expect(lastUpload('/create-custom-voice')).toContain('filename="LOUD.WAV"');
    await lastValueFrom(client.voices.create({ voice_name: 'typed', gender: 1, file: { data: SAMPLE, filename: 'take-1', contentType: 'Audio/Wav; codecs=1' } }));
    expect(lastUpload('/create-custom-voice')).toContain('filename="upload.wav"');
  });

  it('an unread fs.ReadStream is sent from its path and closed (its file descriptor not left open)', async () => {
    const stream = createReadStream(join(dir, 'voice.wav'));
    expect(stream.destroyed).toBe(false);
    await lastValueFrom(client.voices.create({ voice_name: 'closed', gender: 1, file: stream }));
    expect(stream.destroyed).toBe(true);
  });

  it('story from a .txt path, separation and subtitles from a Readable', async () => {
    const story = await lastValueFrom(client.story({ file: join(dir, 'story.txt'), source_language: 'en-us', chosen_dictionaries: [1, 2] }).pipe(taskResult()));
    expect(story.transcript.map((d) => d.text).join(' ')).toContain('fox');
    expect(lastUpload('/create-story')).toContain('filename="story.txt"');
    // a list goes as one part per item (the service reads repeated fields), not "1,2"
    expect(lastUpload('/create-story').match(/name="chosen_dictionaries"\r\n\r\n[^\r]*/g)).toEqual([
      'name="chosen_dictionaries"\r\n\r\n1',
      'name="chosen_dictionaries"\r\n\r\n2',
    ]);
    const sep = await lastValueFrom(client.audioSeparation({ media_file: { data: Readable.from([SAMPLE]), filename: 'mix.mp3' } }).pipe(taskResult()));
    expect(sep.background_audio_url).toBeTruthy();
    const sub = await lastValueFrom(client.subtitle({ language: 'en-us', media_file: join(dir, 'voice.wav') }).pipe(taskResult()));
    expect(sub.subtitles.length).toBeGreaterThan(0);
  });

  it('rejects locally, before sending: wrong extension, no name, missing path, both media sources', async () => {
    const before = proxy.seen.length;
    const attempts: Array<[() => Promise<unknown>, Array<string | number>]> = [
      [() => lastValueFrom(client.voices.create({ voice_name: 'x', gender: 1, file: join(dir, 'story.txt') })), ['body', 'file']],
      [() => lastValueFrom(client.voices.create({ voice_name: 'x', gender: 1, file: Readable.from([SAMPLE]) })), ['body', 'file']],
      [() => lastValueFrom(client.voices.create({ voice_name: 'x', gender: 1, file: new Blob([SAMPLE]) })), ['body', 'file']],
      [() => lastValueFrom(client.voices.create({ voice_name: 'x', gender: 1, file: join(dir, 'absent.wav') })), ['body', 'file']],
      [() => lastValueFrom(client.stories.create({ file: join(dir, 'voice.wav'), source_language: 'en-us' })), ['body', 'file']],
      [() => lastValueFrom(client.transcription.create({ language: 'en-us', media_url: 'https://e.com/a.mp3', media_file: join(dir, 'voice.wav') })), ['body', 'media_file']],
      [() => lastValueFrom(client.voices.create({ voice_name: 'x', gender: 1 } as never)), ['body', 'file']],
    ];
    for (const [attempt, loc] of attempts) {
      const error = await attempt().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).issues[0]!.loc).toEqual(loc);
      expect((error as ValidationError).source).toBe('local');
    }
    expect(proxy.seen.length).toBe(before);
  });
});

describe('an empty file is refused before any call', () => {
  it('0 bytes from a path, a Buffer, a Blob or a Readable: ValidationError at the field, nothing sent (control: 44 bytes are sent)', async () => {
    await writeFile(join(dir, 'empty.wav'), '');
    const before = proxy.seen.length;
    const empties = [join(dir, 'empty.wav'), createReadStream(join(dir, 'empty.wav')), { data: Buffer.alloc(0), filename: 'e.wav' }, new File([], 'e.wav'), { data: Readable.from([]), filename: 'e.wav' }];
    for (const media_file of empties) {
      const error = await lastValueFrom(client.transcription.create({ language: 'en-us', media_file })).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).issues[0]).toMatchObject({ loc: ['body', 'media_file'], msg: expect.stringMatching(/empty \(0 bytes\)/) });
      expect((error as ValidationError).source).toBe('local');
    }
    expect(proxy.seen.length).toBe(before);
    // Control: a file with bytes is sent.
    await lastValueFrom(client.transcription.create({ language: 'en-us', media_file: join(dir, 'voice.wav') }));
    expect(proxy.seen.filter((r) => r.path === '/transcription')).toHaveLength(1);
  });
});

describe('uploads streamed from disk', () => {
  /**
   * A stand-in for the service that reads and discards the body (the emulator keeps
   * whole bodies, which would measure the emulator rather than the client), answering
   * as the contract does. The client runs in its own process, which reports its memory.
   */
  async function upload(file: string, mode: 'path' | 'readstream' | 'buffer'): Promise<{ rssGrowth: number; arrayBuffersGrowth: number; received: number }> {
    let received = 0;
    const sink = createServer((req, res) => {
      req.on('data', (chunk: Buffer) => (received += chunk.byteLength));
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ task_id: 'sink-task' }));
      });
    });
    await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
    const { port } = sink.address() as { port: number };
    try {
      const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, '../fixtures/upload-memory.ts'), `http://127.0.0.1:${port}`, 'rxv-sink-key', file, mode], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let out = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
      const code = await new Promise((resolve) => child.on('exit', resolve));
      expect(code).toBe(0);
      return { ...(JSON.parse(out) as { rssGrowth: number; arrayBuffersGrowth: number }), received };
    } finally {
      await new Promise((resolve) => sink.close(resolve));
    }
  }

  it('a 200 MB file from a path or an fs.ReadStream: the client grows by a few MB, not the file (control: a Buffer of it grows by 200 MB)', async () => {
    const SIZE = 200 * 1024 * 1024;
    const big = join(dir, 'big.wav');
    await writeFile(big, '');
    await truncate(big, SIZE); // sparse: no disk blocks used
    const MB = 1024 * 1024;
    for (const mode of ['path', 'readstream'] as const) {
      const seen = await upload(big, mode);
      expect(seen.received, mode).toBeGreaterThan(SIZE);
      expect(seen.rssGrowth, `${mode}: RSS growth ${(seen.rssGrowth / MB).toFixed(1)} MB`).toBeLessThan(64 * MB);
      expect(seen.arrayBuffersGrowth, mode).toBeLessThan(64 * MB);
      console.log(`upload of 200 MB from a ${mode}: client RSS +${(seen.rssGrowth / MB).toFixed(1)} MB, ArrayBuffers +${(seen.arrayBuffersGrowth / MB).toFixed(1)} MB`);
    }
    // Control: the measure sees a body held in memory.
    const control = await upload(big, 'buffer');
    expect(control.received).toBeGreaterThan(SIZE);
    expect(control.arrayBuffersGrowth).toBeGreaterThan(SIZE);
    console.log(`control, the same file as a Buffer: client RSS +${(control.rssGrowth / MB).toFixed(1)} MB, ArrayBuffers +${(control.arrayBuffersGrowth / MB).toFixed(1)} MB`);
  }, 120_000);
});
