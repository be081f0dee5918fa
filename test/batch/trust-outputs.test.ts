/**
 * `trustOutputs` checks each output before it takes it as a finished job (issue 28, item 4):
 * half-written, empty or HTML outputs are not trusted, and their jobs run again. The output
 * checks on files we did not write (cut WAVs, streaming headers, odd frames), and against the
 * emulator a batch whose journal was lost beside outputs of every kind of damage, with the
 * control that whole outputs are all skipped.
 */
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lastValueFrom, toArray } from 'rxjs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { batch, type BatchEvent, type BatchJobInput, type BatchProgressEvent } from '../../src/batch/index.js';
import { outputProblem } from '../../src/batch/output-check.js';
import { streamingWavHeader, STREAMING_WAV_SIZE } from '../../src/audio/pcm.js';
import { wavHeader } from '../../src/audio/wav.js';
import type { Emulator } from '../../src/emulator/index.js';
import { clientFor, emulator } from '../client/helpers.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rxvoice-trust-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const FORMAT = { sampleRate: 22050, channels: 1, bitsPerSample: 16, audioFormat: 1 as const };
const wav = (dataBytes: number, present = dataBytes): Buffer => Buffer.concat([Buffer.from(wavHeader(FORMAT, dataBytes)), Buffer.alloc(present, 1)]);
/** `file` with its RIFF size claiming `more` bytes past its end. */
const riffClaiming = (file: Buffer, more: number): Buffer => {
  const out = Buffer.from(file);
  out.writeUInt32LE(out.byteLength - 8 + more, 4);
  return out;
};

describe('outputProblem: is an output whole?', () => {
  const cases: Array<[string, string, Buffer | string, RegExp | undefined]> = [
    ['a whole WAV', 'a.wav', wav(2000), undefined],
    ['a streaming WAV (placeholder sizes) with whole frames', 'b.wav', Buffer.concat([Buffer.from(streamingWavHeader(FORMAT)), Buffer.alloc(400, 2)]), undefined],
    ['a WAV cut short of what its header claims', 'c.wav', wav(2000, 1200), /cut short/],
    // the data chunk whole, a chunk after it cut: only the RIFF size tells (by as little as 1 byte)
    ['a WAV whose RIFF size claims 1 byte more than the file holds', 'c1.wav', riffClaiming(wav(2000), 1), /cut short/],
    ['a WAV header alone', 'd.wav', wav(0, 0), /no audio/],
    ['a streaming WAV cut inside a sample frame', 'e.wav', Buffer.concat([Buffer.from(streamingWavHeader(FORMAT)), Buffer.alloc(401, 2)]), /sample frame/],
    ['a WAV that is not one', 'f.wav', Buffer.from('RIFF....WAVEjunkjunkjunkjunkjunkjunkjunkjunkjunk'), /not a WAV/],
    ['an empty file', 'g.json', '', /empty/],
    ['an HTML error page', 'h.json', '<!DOCTYPE html>\n<html><body>502 Bad Gateway</body></html>', /HTML/],
    ['an HTML body alone', 'p.json', '<body>Service Unavailable</body>', /HTML/],
    ['an HTML page saved as WAV', 'i.wav', '  <html><head><title>Error</title></head></html>', /HTML/],
    ['JSON cut short', 'j.json', '{"texts":["Hallo", "Welt"', /not valid JSON/],
    ['whole JSON', 'k.json', '{"texts":["Hallo"]}', undefined],
    ['subtitles', 'l.srt', '1\n00:00:00,000 --> 00:00:01,000\nHallo\n', undefined],
    // a crash after the file's length reached the disk but not its blocks: zeros
    ['subtitles of zeros (length written, blocks not)', 'n.srt', Buffer.alloc(64), /not text/],
    ['subtitles cut into zeros', 'o.vtt', Buffer.concat([Buffer.from('WEBVTT\n\n00:00.000 --> 00:01.000\nHal'), Buffer.alloc(40)]), /not text/],
  ];
  for (const [name, file, content, problem] of cases) {
    it(`${name}: ${problem ? `not trusted (${problem.source})` : 'trusted'}`, async () => {
      await writeFile(join(dir, file), content);
      const found = await outputProblem(join(dir, file));
      if (problem) expect(found).toMatch(problem);
      else expect(found).toBeUndefined();
    });
  }

  it('the placeholder is the one streams use (0xFFFFFFFF), and a real size past the end is not one', async () => {
    expect(Buffer.from(streamingWavHeader(FORMAT)).readUInt32LE(40)).toBe(STREAMING_WAV_SIZE);
    await writeFile(join(dir, 'm.wav'), wav(STREAMING_WAV_SIZE - 2, 100));
    expect(await outputProblem(join(dir, 'm.wav'))).toMatch(/cut short/);
  });

  it('a file that cannot be read is not trusted', async () => {
    expect(await outputProblem(join(dir, 'missing.json'))).toMatch(/cannot be read/);
  });
});

describe('batch with trustOutputs: only whole outputs stand for finished jobs', () => {
  const JOBS: BatchJobInput[] = Array.from({ length: 6 }, (_, i) => ({
    kind: 'translation' as const,
    id: `j${i}`,
    request: { texts: [`Sentence number ${i}.`], source_language: 'en-us', target_language: 'de-de' },
  }));
  let emu: Emulator;
  beforeEach(async () => {
    emu = await emulator();
  });
  afterEach(async () => {
    await emu.close();
  });
  const creations = (): number => emu.requests.filter((r) => r.method === 'POST' && r.path === '/translation').length;
  const progress = (events: BatchEvent[]): BatchProgressEvent => events.filter((e): e is BatchProgressEvent => e.type === 'progress').at(-1) as BatchProgressEvent;
  const run = async (options: { trustOutputs?: boolean } = {}): Promise<BatchEvent[]> => {
    const client = clientFor(emu);
    try {
      return await lastValueFrom(batch(JOBS, { client, out: dir, ...options }).pipe(toArray()));
    } finally {
      await client.close();
    }
  };

  it('a lost journal beside half-written, empty and HTML outputs: those jobs run again, the whole ones are skipped', async () => {
    expect(progress(await run())).toMatchObject({ done: 6, created: 6 });
    const whole = await readFile(join(dir, 'j0.json'), 'utf8');
    await rm(join(dir, '.rxvoice-batch.jsonl'));
    await writeFile(join(dir, 'j1.json'), '');
    await writeFile(join(dir, 'j2.json'), '<html><body>Gateway Timeout</body></html>');
    await writeFile(join(dir, 'j3.json'), whole.slice(0, Math.floor(whole.length / 2)));
    const events = await run({ trustOutputs: true });
    const untrusted = events.find((e) => e.type === 'outputs-untrusted');
    expect(untrusted).toMatchObject({ type: 'outputs-untrusted' });
    expect(untrusted?.type === 'outputs-untrusted' && untrusted.outputs.map((o) => [o.id, o.problem])).toEqual([
      ['j1', 'is empty'],
      ['j2', 'is an HTML page'],
      ['j3', 'is not valid JSON (cut short?)'],
    ]);
    expect(progress(events)).toMatchObject({ skipped: 3, done: 3, created: 3 });
    expect(creations()).toBe(9);
    // the outputs run again are whole now
    for (const id of ['j1', 'j2', 'j3']) expect(await outputProblem(join(dir, `${id}.json`))).toBeUndefined();
  });

  it('an output that cannot be put in place (a directory stands at its path): the job fails, no temporary file is left', async () => {
    await mkdir(join(dir, 'j0.json'));
    const client = clientFor(emu);
    const events = await lastValueFrom(batch(JOBS, { client, out: dir, trustOutputs: true, retries: 0 }).pipe(toArray())).finally(() => client.close());
    // Control: the write was tried, and failed naming the output (its temporary file was made beside it).
    const failed = events.find((e) => e.type === 'failed');
    expect(failed).toMatchObject({ id: 'j0' });
    expect(failed?.type === 'failed' && failed.error.message).toMatch(/j0\.json/);
    expect(progress(events)).toMatchObject({ done: 5, failed: 1 });
    expect((await readdir(dir)).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('control: whole outputs are all trusted, nothing is created again', async () => {
    expect(progress(await run())).toMatchObject({ done: 6 });
    await rm(join(dir, '.rxvoice-batch.jsonl'));
    const events = await run({ trustOutputs: true });
    expect(events.some((e) => e.type === 'outputs-untrusted')).toBe(false);
    expect(progress(events)).toMatchObject({ skipped: 6, created: 0 });
    expect(creations()).toBe(6);
  });
});
