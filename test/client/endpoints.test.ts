import { lastValueFrom, toArray } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, taskResult, type RxVoiceClient } from '../../src/index.js';
import { ValidationError } from '../../src/live/index.js';
import type { Emulator } from '../../src/emulator/index.js';
import { clientFor, emulator } from './helpers.js';

let emu: Emulator;
let client: RxVoiceClient;
const wav = new Uint8Array([82, 73, 70, 70, 0, 0, 0, 0, 87, 65, 86, 69]);

beforeAll(async () => {
  emu = await emulator();
  client = clientFor(emu);
});
afterAll(async () => {
  await client.close();
  await emu.close();
});

describe('every endpoint on its happy path', () => {
  it('text-to-sound: create, status, result, task', async () => {
    const { task_id } = await lastValueFrom(client.sound.create({ prompt: 'rain on a tin roof', duration: 2 }));
    expect(typeof task_id).toBe('string');
    const status = await lastValueFrom(client.sound.status(task_id));
    expect(['PENDING', 'SUCCESS']).toContain(status.status);
    const events = await lastValueFrom(client.textToSound({ prompt: 'a bell', duration: 1 }).pipe(toArray()));
    expect(events[0]).toMatchObject({ type: 'created' });
    const last = events.at(-1)!;
    expect(last.type).toBe('result');
    if (last.type !== 'result') throw new Error('unreachable');
    expect(last.result.byteLength).toBeGreaterThan(44);
    expect(Buffer.from(last.result.subarray(0, 4)).toString()).toBe('RIFF');
    const again = await lastValueFrom(client.sound.result(last.run_id));
    expect(again.byteLength).toBe(last.result.byteLength);
  });

  it('sound: a duration of exactly 10 s (the limit) is sent', async () => {
    const before = emu.requests.length;
    await expect(lastValueFrom(client.sound.create({ prompt: 'ten seconds', duration: 10 }))).resolves.toHaveProperty('task_id');
    expect(emu.requests.slice(before).map((r) => `${r.method} ${r.path}`)).toEqual(['POST /text-to-sound']);
  });

  it('music: the duration limit is not enforced (fixed-length clip)', async () => {
    const before = emu.requests.length;
    const { task_id } = await lastValueFrom(client.sound.create({ prompt: 'a march', audio_type: 'music', duration: 30 }));
    expect(task_id).toBeTruthy();
    expect(emu.requests.length).toBe(before + 1);
    // the field's type holds: not a number of seconds is refused before anything is sent
    for (const duration of ['abc', -5, Number.NaN]) {
      await expect(lastValueFrom(client.sound.create({ prompt: 'a march', audio_type: 'music', duration: duration as number }))).rejects.toBeInstanceOf(ValidationError);
    }
    expect(emu.requests.length).toBe(before + 1);
  });

  it('ttsTask (deprecated /tts flow, formerly client.speech): task, status, result, fetchResults; warns once per method', async () => {
    const warnings: string[] = [];
    const c = clientFor(emu, { warn: (m) => warnings.push(m) });
    const ev = await lastValueFrom(c.ttsTask.task({ text: 'Hello there.', voice_id: 1, language: 'en-us' }));
    expect(ev.type).toBe('result');
    if (ev.type !== 'result') throw new Error('unreachable');
    expect(ev.result.byteLength).toBeGreaterThan(0);
    const { task_id } = await lastValueFrom(c.ttsTask.create({ text: 'Again.', voice_id: 1, language: 'en-us' }));
    for (let i = 0; i < 2; i++) expect(['PENDING', 'SUCCESS']).toContain((await lastValueFrom(c.ttsTask.status(task_id))).status);
    const audio = await lastValueFrom(c.ttsTask.result(ev.run_id));
    expect(audio.byteLength).toBe(ev.result.byteLength);
    expect(warnings.filter((w) => w.includes('ttsTask.status'))).toHaveLength(1);
    expect(warnings.some((w) => w.includes('ttsTask.task'))).toBe(true);
    await c.close();
  });

  it('numeric language ids work and warn once', async () => {
    const warnings: string[] = [];
    const c = clientFor(emu, { warn: (m, code) => warnings.push(`${code} ${m}`) });
    const ev = await lastValueFrom(c.translate({ texts: ['Hello'], source_language: 'en-us', target_language: '7' }).pipe(taskResult()));
    expect(ev.texts).toHaveLength(1);
    await lastValueFrom(c.translate({ texts: ['Bye'], source_language: 'en-us', target_language: 7 }));
    expect(warnings.filter((w) => w.includes('NUMERIC_LANGUAGE'))).toHaveLength(1);
    await c.close();
  });

  it('locale tags never warn of numeric ids; a numeric id inside target_languages does', async () => {
    const warnings: string[] = [];
    const c = clientFor(emu, { warn: (m, code) => warnings.push(`${code} ${m}`) });
    await lastValueFrom(c.translate({ texts: ['Hello'], source_language: 'en-us', target_language: 'de-de' }));
    await lastValueFrom(c.dubbing.create({ video_url: 'https://example.com/v.mp4', source_language: 'en-us', target_languages: ['de-de', 'pt-br'] }));
    expect(warnings.filter((w) => w.includes('NUMERIC_LANGUAGE'))).toEqual([]);
    await lastValueFrom(c.dubbing.create({ video_url: 'https://example.com/v.mp4', source_language: 'en-us', target_languages: ['de-de', '7'] }));
    expect(warnings.filter((w) => w.includes('NUMERIC_LANGUAGE'))).toHaveLength(1);
    await c.close();
  });

  it('voices: list and create', async () => {
    const voices = await lastValueFrom(client.voices.list());
    expect(voices.length).toBeGreaterThan(0);
    const { voice_id } = await lastValueFrom(client.voices.create({ voice_name: 'Mine', gender: 2, file: { data: wav, filename: 'me.wav' } }));
    const after = await lastValueFrom(client.voices.list());
    expect(after.some((v) => v.id === voice_id)).toBe(true);
  });

  it('tts-stream answers audio with credits', async () => {
    const chunks = await lastValueFrom(
      client.ttsStream({ text: 'Hello world. Second one.', voice_id: 1, language: 'en-us', output_configuration: { format: 'pcm_s16le' } }).pipe(toArray()),
    );
    expect(chunks.length).toBeGreaterThan(0);
    expect(chunks[0]!.creditsRequired).toBeGreaterThan(0);
    expect(chunks[0]!.format).toBe('pcm_s16le');
    for (const c of chunks) expect(c.bytes.byteLength % 2).toBe(0);
  });

  it('audio separation', async () => {
    const ev = await lastValueFrom(client.audioSeparation({ media_file: { data: wav, filename: 'mix.wav' } }));
    if (ev.type !== 'result') throw new Error('expected a result');
    expect(ev.result.foreground_audio_url).toMatch(/^http/);
    expect(ev.result.background_audio_url).toMatch(/^http/);
    expect((await lastValueFrom(client.separation.status(ev.task_id))).status).toBe('SUCCESS');
    expect((await lastValueFrom(client.separation.result(ev.run_id))).foreground_audio_url).toMatch(/^http.*\/files\//);
  });

  it('stories: task, status, run, translated result with and without transcript', async () => {
    const ev = await lastValueFrom(
      client.story({ file: { data: Buffer.from('Once upon a time. The end.'), filename: 'tale.txt' }, source_language: 'en-us' }),
    );
    if (ev.type !== 'result') throw new Error('expected a result');
    expect(ev.result.transcript.length).toBeGreaterThan(0);
    expect(await lastValueFrom(client.stories.status(ev.task_id))).toMatchObject({ status: 'SUCCESS', run_id: ev.run_id });
    const run = await lastValueFrom(client.stories.run(ev.run_id));
    expect(run.audio_url).toBeTruthy();
    const plain = await lastValueFrom(client.stories.translatedResult(ev.run_id, 'fr-fr'));
    expect(plain.transcript).toBeUndefined();
    const full = await lastValueFrom(client.stories.translatedResult(ev.run_id, 'fr-fr', { includeTranscript: true }));
    expect(full.transcript?.length).toBeGreaterThan(0);
  });

  it('dubbing: end-to-end and project setup', async () => {
    const dub = await lastValueFrom(
      client.endToEndDubbing({ video_url: 'https://example.com/v.mp4', source_language: 'en-us', target_languages: ['de-de'] }).pipe(taskResult()),
    );
    expect(dub.video_url).toBeTruthy();
    const { task_id } = await lastValueFrom(client.dubbing.create({ video_url: 'https://example.com/v.mp4', source_language: 'en-us', target_languages: ['de-de'] }));
    expect(['PENDING', 'SUCCESS']).toContain((await lastValueFrom(client.dubbing.status(task_id))).status);
    const ended = await lastValueFrom(client.tasks.resume('dubbing', task_id));
    if (ended.type !== 'result') throw new Error('expected a result');
    expect(await lastValueFrom(client.dubbing.status(task_id))).toMatchObject({ status: 'SUCCESS', run_id: ended.run_id });
    expect((await lastValueFrom(client.dubbing.result(ended.run_id))).audio_url).toBeTruthy();
    const setup = await lastValueFrom(
      client.projectSetup({ media_url: 'https://example.com/v.mp4', source_language: 'en-us', target_languages: ['es-es'], project_name: 'Dub' }),
    );
    if (setup.type !== 'result') throw new Error('expected a result');
    expect(setup.result.project_details.project_name).toBe('Dub');
    expect(await lastValueFrom(client.dubbing.projectSetupStatus(setup.task_id))).toMatchObject({ status: 'SUCCESS', run_id: setup.run_id });
    const again = await lastValueFrom(client.dubbing.projectSetupResult(setup.run_id));
    expect(again.run_id).toBe(setup.result.run_id);
  });

  it('translation, transcription, subtitles', async () => {
    const t = await lastValueFrom(client.translate({ texts: ['Hello', 'World'], source_language: 'en-us', target_language: 'de-de' }));
    if (t.type !== 'result') throw new Error('expected a result');
    expect(t.result.texts).toHaveLength(2);
    expect(await lastValueFrom(client.translation.status(t.task_id))).toMatchObject({ status: 'SUCCESS', run_id: t.run_id });
    const tr = await lastValueFrom(client.transcribe({ language: 'en-us', media_url: 'https://example.com/a.mp3' }).pipe(taskResult()));
    expect(Array.isArray(tr.transcript)).toBe(true);
    const tr2 = await lastValueFrom(client.transcribe({ language: 'en-us', media_file: { data: wav, filename: 'a.wav' } }).pipe(taskResult()));
    expect(Array.isArray(tr2.transcript)).toBe(true);
    const sub = await lastValueFrom(client.subtitle({ language: 'en-us', media_url: 'https://example.com/a.mp3', subtitle_format: 'vtt' }));
    if (sub.type !== 'result') throw new Error('expected a result');
    expect(sub.result.subtitle_format).toBe('vtt');
    expect(await lastValueFrom(client.subtitles.status(sub.task_id))).toMatchObject({ status: 'SUCCESS', run_id: sub.run_id });
    const ev = await lastValueFrom(client.transcribe({ language: 'en-us', media_url: 'https://example.com/b.mp3' }));
    if (ev.type !== 'result') throw new Error('expected a result');
    expect(await lastValueFrom(client.transcription.status(ev.task_id))).toMatchObject({ status: 'SUCCESS', run_id: ev.run_id });
    expect(await lastValueFrom(client.transcription.result(ev.run_id))).toEqual(ev.result);
    expect((await lastValueFrom(client.subtitles.result(sub.run_id))).subtitles).toBe(sub.result.subtitles);
    expect(await lastValueFrom(client.translation.result(t.run_id))).toEqual(t.result);
  });

  it('resume polls an existing task', async () => {
    const { task_id } = await lastValueFrom(client.translation.create({ texts: ['Hi'], source_language: 'en-us', target_language: 'it-it' }));
    const ev = await lastValueFrom(client.tasks.resume('translation', task_id));
    expect(ev.type).toBe('result');
  });
});

describe('limits rejected locally, nothing sent', () => {
  const cases: Array<[string, () => Promise<unknown>, Array<string | number>]> = [
    ['duration > 10', () => lastValueFrom(client.sound.create({ prompt: 'x', duration: 11 })), ['body', 'duration']],
    ['prompt missing', () => lastValueFrom(client.sound.create({} as never)), ['body', 'prompt']],
    ['project_name too short', () => lastValueFrom(client.sound.create({ prompt: 'x', project_name: 'ab' })), ['body', 'project_name']],
    ['project_description too long', () => lastValueFrom(client.sound.create({ prompt: 'x', project_description: 'x'.repeat(5001) })), ['body', 'project_description']],
    ['audio_type enum', () => lastValueFrom(client.sound.create({ prompt: 'x', audio_type: 'noise' as never })), ['body', 'audio_type']],
    ['tts gender enum', () => lastValueFrom(client.speech.create({ text: 'x', voice_id: 1, language: 'en-us', gender: 3 as never })), ['body', 'gender']],
    ['tts-stream text too short', () => lastValueFrom(client.ttsStream({ text: 'hi', voice_id: 1, language: 'en-us' })), ['body', 'text']],
    ['locale tag', () => lastValueFrom(client.translation.create({ texts: ['a'], source_language: 'EN_US', target_language: 'de-de' })), ['body', 'source_language']],
    ['selected_audio_tracks > 2', () => lastValueFrom(client.dubbing.projectSetup({ media_url: 'https://e.com/v.mxf', source_language: 'en-us', target_languages: ['de-de'], selected_audio_tracks: [0, 1, 2] })), ['body', 'selected_audio_tracks']],
    ['chosen_dictionaries empty', () => lastValueFrom(client.dubbing.projectSetup({ media_url: 'https://e.com/v.mp4', source_language: 'en-us', target_languages: ['de-de'], chosen_dictionaries: [] })), ['body', 'chosen_dictionaries']],
    ['folder_id < 1', () => lastValueFrom(client.dubbing.projectSetup({ media_url: 'https://e.com/v.mp4', source_language: 'en-us', target_languages: ['de-de'], folder_id: 0 })), ['body', 'folder_id']],
    ['media_url not a URL', () => lastValueFrom(client.dubbing.projectSetup({ media_url: 'not a url', source_language: 'en-us', target_languages: ['de-de'] })), ['body', 'media_url']],
    ['voice age < 1', () => lastValueFrom(client.voices.create({ voice_name: 'v', gender: 1, age: 0, file: { data: wav, filename: 'a.wav' } })), ['body', 'age']],
    ['voice file extension', () => lastValueFrom(client.voices.create({ voice_name: 'v', gender: 1, file: { data: wav, filename: 'a.ogg' } })), ['body', 'file']],
    ['voice file without name', () => lastValueFrom(client.voices.create({ voice_name: 'v', gender: 1, file: wav })), ['body', 'file']],
    ['separation media_file extension', () => lastValueFrom(client.separation.create({ media_file: { data: wav, filename: 'x.mp4' } })), ['body', 'media_file']],
    ['story file extension', () => lastValueFrom(client.stories.create({ file: { data: wav, filename: 'x.pdf' }, source_language: 'en-us' })), ['body', 'file']],
    ['transcription without media', () => lastValueFrom(client.transcription.create({ language: 'en-us' })), ['body', 'media_file']],
    ['sub media_file extension', () => lastValueFrom(client.subtitles.create({ language: 'en-us', media_file: { data: wav, filename: 'x.txt' } })), ['body', 'media_file']],
    ['bulk run ids not integers', () => lastValueFrom(client.sound.results([1, 2.5])), ['body', 'run_ids', 1]],
    ['bulk run ids empty', () => lastValueFrom(client.sound.results([])), ['body', 'run_ids']],
    ['result run id', () => lastValueFrom(client.translation.result(0)), ['path', 'run_id']],
    ['status task id', () => lastValueFrom(client.sound.status('')), ['path', 'task_id']],
    ['translated story language', () => lastValueFrom(client.stories.translatedResult(1, 'French')), ['path', 'target_language']],
    ['project_name too long', () => lastValueFrom(client.sound.create({ prompt: 'x', project_name: 'x'.repeat(256) })), ['body', 'project_name']],
    ['project_description too short', () => lastValueFrom(client.speech.create({ text: 'x', voice_id: 1, language: 'en-us', project_description: 'ab' })), ['body', 'project_description']],
    ['tts-stream text too long', () => lastValueFrom(client.ttsStream({ text: 'x'.repeat(3001), voice_id: 1, language: 'en-us' })), ['body', 'text']],
    ['selected_audio_tracks empty', () => lastValueFrom(client.dubbing.projectSetup({ media_url: 'https://e.com/v.mxf', source_language: 'en-us', target_languages: ['de-de'], selected_audio_tracks: [] })), ['body', 'selected_audio_tracks']],
    ['target_languages locale tag', () => lastValueFrom(client.dubbing.projectSetup({ media_url: 'https://e.com/v.mp4', source_language: 'en-us', target_languages: ['de-de', 'German'] })), ['body', 'target_languages', 1]],
    ['formality enum', () => lastValueFrom(client.translation.create({ texts: ['a'], source_language: 'en-us', target_language: 'de-de', formality: 3 as never })), ['body', 'formality']],
    ['voice gender enum', () => lastValueFrom(client.voices.create({ voice_name: 'v', gender: 3 as never, file: { data: wav, filename: 'a.wav' } })), ['body', 'gender']],
    ['bulk run ids not positive', () => lastValueFrom(client.speech.fetchResults([0, 4])), ['body', 'run_ids', 0]],
  ];
  for (const [name, call, loc] of cases) {
    it(name, async () => {
      const before = emu.requests.length;
      const error = await call().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(ValidationError);
      const v = error as ValidationError;
      expect(v.source).toBe('local');
      expect(v.issues.map((i) => i.loc)).toContainEqual(loc);
      for (const issue of v.issues) expect(typeof issue.type).toBe('string');
      expect(emu.requests.length).toBe(before);
    });
  }
});

describe('server errors', () => {
  it('a server 422 has the same shape as a local one', async () => {
    const error = await lastValueFrom(client.ttsStream({ text: 'Hello there.', voice_id: 999_999, language: 'en-us' })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    const v = error as ValidationError;
    expect(v.source).toBe('server');
    expect(v.issues).toEqual([expect.objectContaining({ loc: ['body', 'voice_id'], msg: expect.any(String), type: expect.any(String) })]);
    const local = await lastValueFrom(client.ttsStream({ text: 'Hello there.', voice_id: -1, language: 'en-us' })).catch((e: unknown) => e);
    expect(Object.keys((local as ValidationError).issues[0]!).sort()).toEqual(Object.keys(v.issues[0]!).sort());
  });

  it('mixed kinds in a bulk call: a server 422, or local when the client made the runs', async () => {
    const a = await lastValueFrom(client.textToSound({ prompt: 'a', duration: 1 }));
    const b = await lastValueFrom(client.translate({ texts: ['x'], source_language: 'en-us', target_language: 'de-de' }));
    if (a.type !== 'result' || b.type !== 'result') throw new Error('expected results');
    // A fresh client does not know the kinds: the service answers 422.
    const fresh = clientFor(emu);
    const before = emu.requests.length;
    const error = await lastValueFrom(fresh.sound.results([a.run_id, b.run_id])).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).source).toBe('server');
    expect(emu.requests.length).toBe(before + 1);
    await fresh.close();
    // The client that made both runs knows their kinds: rejected locally, nothing sent.
    const local = await lastValueFrom(client.sound.results([a.run_id, b.run_id])).catch((e: unknown) => e);
    expect(local).toBeInstanceOf(ValidationError);
    expect((local as ValidationError).source).toBe('local');
    expect((local as ValidationError).issues.map((i) => i.loc)).toEqual([['body', 'run_ids', 1]]);
    expect(emu.requests.length).toBe(before + 1);
  });

  it('an unknown task is an ApiError 404 naming the endpoint', async () => {
    const error = await lastValueFrom(client.sound.status('nope')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(404);
    expect((error as ApiError).message).toContain('text-to-sound');
  });

  it('a task id is one path segment: reserved characters are escaped, never read as a path or a query', async () => {
    const before = emu.requests.length;
    const error = await lastValueFrom(client.tasks.resume('sound', '../x?y#z')).catch((e: unknown) => e);
    expect((error as ApiError).status).toBe(404);
    expect(emu.requests.slice(before).map((r) => r.path)).toEqual(['/text-to-sound/..%2Fx%3Fy%23z']);
  });
});
