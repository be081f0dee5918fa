/**
 * The emulator's HTTP side over real sockets (port 0), with plain `fetch`: every
 * endpoint's happy path, validation limits with exact `loc`, auth, task transitions,
 * result address expiry, streaming answers, faults, and a clean `close()`.
 */
import { connect } from 'node:net';
import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { WaveFile } from 'wavefile';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { WebSocket } from 'ws';
import { routes } from '../../src/core/routes.js';
import {
  AudioSeparationResultSchema,
  BulkResultsSchema,
  CreateCustomVoiceResponseSchema,
  DubbedRunInfoSchema,
  ErrorBodySchema,
  ProjectSetupResultSchema,
  StoryRunSchema,
  SubtitlesResultSchema,
  TaskCreatedSchema,
  TaskStatusSchema,
  TranscriptionResultSchema,
  TranslatedStoryResultSchema,
  TranslationResultSchema,
  ValidationErrorBodySchema,
  VoiceListSchema,
} from '../../src/core/schemas.js';
import { parseWavHeader } from '../../src/audio/wav.js';
import { startEmulator, DEFAULT_VOICE_ID, pseudoLocalize, type Emulator, type EmulatorOptions } from '../../src/emulator/index.js';

const RATE = 22050;
const WORD = 0.25;
const running: Emulator[] = [];

afterEach(async () => {
  await Promise.all(running.splice(0).map((e) => e.close()));
});

async function start(options: EmulatorOptions = {}): Promise<Emulator> {
  const emulator = await startEmulator({ synth: 'tone', taskDurationMs: 20, streamDelayMs: 2, ...options });
  running.push(emulator);
  return emulator;
}

interface Answer {
  status: number;
  headers: Headers;
  text: string;
  json: unknown;
}

async function call(
  em: Emulator,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = { 'x-api-key': em.apiKey },
): Promise<Answer> {
  const init: RequestInit = { method, headers: { ...headers } };
  if (body instanceof FormData) init.body = body;
  else if (typeof body === 'string') {
    init.body = body;
    (init.headers as Record<string, string>)['content-type'] = 'application/json';
  } else if (body !== undefined) {
    init.body = JSON.stringify(body);
    (init.headers as Record<string, string>)['content-type'] = 'application/json';
  }
  const res = await fetch(em.baseUrl + path, init);
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

async function bytesOf(url: string): Promise<{ status: number; bytes: Uint8Array; type: string | null }> {
  const res = await fetch(url);
  return { status: res.status, bytes: new Uint8Array(await res.arrayBuffer()), type: res.headers.get('content-type') };
}

/** Expect a 422 whose issues include one at `loc`. */
function expect422(answer: Answer, loc: Array<string | number>): void {
  expect(answer.status, answer.text).toBe(422);
  const body = ValidationErrorBodySchema.parse(answer.json);
  expect(body.detail.map((d) => d.loc)).toContainEqual(loc);
}

async function createTask(em: Emulator, path: string, body: unknown): Promise<string> {
  const answer = await call(em, 'POST', path, body);
  expect(answer.status, answer.text).toBe(200);
  return TaskCreatedSchema.parse(answer.json).task_id;
}

async function waitTask(em: Emulator, statusPath: string) {
  for (let i = 0; i < 200; i++) {
    const answer = await call(em, 'GET', statusPath);
    expect(answer.status, answer.text).toBe(200);
    const status = TaskStatusSchema.parse(answer.json);
    if (status.status !== 'PENDING') return status;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('task never finished');
}

async function runOf(em: Emulator, create: string, status: (id: string) => string, body: unknown): Promise<number> {
  const taskId = await createTask(em, create, body);
  const final = await waitTask(em, status(taskId));
  expect(final.status).toBe('SUCCESS');
  expect(final.run_id).toBeTypeOf('number');
  return final.run_id as number;
}

function file(name: string, content = 'RIFF....WAVEfake'): Blob {
  void name;
  return new Blob([content], { type: 'application/octet-stream' });
}

const sound = { prompt: 'rain on a tin roof', duration: 2 };
const speech = { text: 'Hello there. How are you today?', voice_id: DEFAULT_VOICE_ID, language: 'en-us' };

describe('authentication', () => {
  it('answers 401 without a key and with a wrong key, never echoing it', async () => {
    const em = await start();
    const none = await call(em, 'GET', routes.listVoices, undefined, {});
    expect(none.status).toBe(401);
    expect(ErrorBodySchema.parse(none.json)).toMatchObject({ status: 401 });
    const wrongKey = 'sk-wrong-secret-123456';
    const wrong = await call(em, 'POST', routes.textToSound, { ...sound, note: wrongKey }, { 'x-api-key': wrongKey });
    expect(wrong.status).toBe(401);
    expect(wrong.text).not.toContain(wrongKey);
    expect(ErrorBodySchema.parse(wrong.json).status).toBe(401);
    // an empty header is a missing key, and says so (control: a wrong key is called invalid)
    const empty = await call(em, 'GET', routes.listVoices, undefined, { 'x-api-key': '' });
    expect(ErrorBodySchema.parse(empty.json)).toEqual({ error: 'missing API key (header x-api-key)', status: 401 });
    expect(ErrorBodySchema.parse(wrong.json).error).toBe('invalid API key');
  });

  it('answers a known path asked with another method 405, an unknown path 404, both with { error, status }', async () => {
    const em = await start();
    const wrongMethod = await call(em, 'GET', routes.textToSound);
    expect(wrongMethod.status).toBe(405);
    expect(ErrorBodySchema.parse(wrongMethod.json)).toEqual({ error: 'method GET not allowed', status: 405 });
    const unknown = await call(em, 'GET', '/no-such-endpoint');
    expect(unknown.status).toBe(404);
    expect(ErrorBodySchema.parse(unknown.json).status).toBe(404);
  });

  it('keeps runs to their key: another key reading a result gets 404, its own key the result', async () => {
    const em = await start({ apiKeys: ['key-a', 'key-b'] });
    const taskId = TaskCreatedSchema.parse((await call(em, 'POST', routes.tts, speech, { 'x-api-key': 'key-a' })).json).task_id;
    let runId: number | null = null;
    for (let i = 0; i < 200 && runId === null; i++) {
      const status = await call(em, 'GET', routes.ttsStatus(taskId), undefined, { 'x-api-key': 'key-a' });
      runId = TaskStatusSchema.parse(status.json).run_id ?? null;
      if (runId === null) await new Promise((r) => setTimeout(r, 10));
    }
    expect(runId).toBeTypeOf('number');
    const other = await call(em, 'GET', routes.ttsResult(runId as number), undefined, { 'x-api-key': 'key-b' });
    expect(other.status).toBe(404);
    expect(ErrorBodySchema.parse(other.json).status).toBe(404);
    const own = await fetch(`${em.baseUrl}${routes.ttsResult(runId as number)}`, { headers: { 'x-api-key': 'key-a' } });
    expect(own.status).toBe(200);
    expect(parseWavHeader(new Uint8Array(await own.arrayBuffer()))?.sampleRate).toBe(RATE);
    // the task too: its status is another key's 404, the owner's 200
    expect((await call(em, 'GET', routes.ttsStatus(taskId), undefined, { 'x-api-key': 'key-b' })).status).toBe(404);
    expect((await call(em, 'GET', routes.ttsStatus(taskId), undefined, { 'x-api-key': 'key-a' })).status).toBe(200);
    // and bulk results: another key's run ids are unknown (422 at the first), the owner's are answered
    const second = await runOf(em, routes.tts, routes.ttsStatus, speech);
    expect((await call(em, 'POST', routes.fetchTtsResults, { run_ids: [second, runId] }, { 'x-api-key': 'key-a' })).status).toBe(200);
    const others = await call(em, 'POST', routes.fetchTtsResults, { run_ids: [second, runId] }, { 'x-api-key': 'key-b' });
    expect422(others, ['body', 'run_ids', 0]);
  });

  it("answers a task's status only at its own family's status path (404 at another's; control: its own is 200)", async () => {
    const em = await start();
    const taskId = await createTask(em, routes.tts, speech);
    expect((await call(em, 'GET', routes.ttsStatus(taskId))).status).toBe(200);
    const elsewhere = await call(em, 'GET', routes.textToSoundStatus(taskId));
    expect(elsewhere.status).toBe(404);
    expect(ErrorBodySchema.parse(elsewhere.json)).toEqual({ error: `task not found: ${taskId}`, status: 404 });
  });

  it('validates a run_id in the path: 0 is 422 greater_than, text is 422 int_parsing', async () => {
    const em = await start();
    const zero = await call(em, 'GET', routes.ttsResult(0));
    expect422(zero, ['path', 'run_id']);
    expect(ValidationErrorBodySchema.parse(zero.json).detail[0]?.type).toBe('greater_than');
    const text = await call(em, 'GET', '/tts-result/abc');
    expect422(text, ['path', 'run_id']);
    expect(ValidationErrorBodySchema.parse(text.json).detail[0]?.type).toBe('int_parsing');
  });

  it('logs requests without keys and counts them', async () => {
    const em = await start();
    expect(em.requests).toHaveLength(0);
    await call(em, 'GET', routes.listVoices);
    await call(em, 'GET', `${routes.listVoices}?api_key=secret`);
    expect(em.requests).toEqual([
      { method: 'GET', path: routes.listVoices },
      { method: 'GET', path: routes.listVoices },
    ]);
  });
});

describe('text to sound', () => {
  it('creates a task, reports PENDING then SUCCESS, serves WAV of the requested length', async () => {
    // long enough that the first status call comes before the task ends, even on a loaded machine
    const em = await start({ taskDurationMs: 1500 });
    const taskId = await createTask(em, routes.textToSound, sound);
    const first = TaskStatusSchema.parse((await call(em, 'GET', routes.textToSoundStatus(taskId))).json);
    expect(first).toEqual({ status: 'PENDING', run_id: null });
    const done = await waitTask(em, routes.textToSoundStatus(taskId));
    expect(done.status).toBe('SUCCESS');
    expect(done.audio_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/files\//);
    const res = await fetch(em.baseUrl + routes.textToSoundResult(done.run_id as number), { headers: { 'x-api-key': em.apiKey } });
    expect(res.headers.get('content-type')).toBe('audio/wav');
    const wav = new WaveFile(new Uint8Array(await res.arrayBuffer()));
    expect((wav.fmt as { sampleRate: number }).sampleRate).toBe(RATE);
    expect((wav.getSamples(false, Int16Array) as unknown as Int16Array).length).toBe(2 * RATE);
    const viaUrl = await bytesOf(done.audio_url as string);
    expect(viaUrl.status).toBe(200);
  });

  it('returns a fixed 10 s clip for music and does not enforce duration for it', async () => {
    const em = await start();
    const runId = await runOf(em, routes.textToSound, routes.textToSoundStatus, { prompt: 'calm piano', audio_type: 'music', duration: 30 });
    const res = await fetch(em.baseUrl + routes.textToSoundResult(runId), { headers: { 'x-api-key': em.apiKey } });
    const info = parseWavHeader(new Uint8Array(await res.arrayBuffer()));
    expect(info?.dataBytes).toBe(10 * RATE * 2);
  });

  it('validates duration and project fields', async () => {
    const em = await start();
    expect422(await call(em, 'POST', routes.textToSound, { ...sound, duration: 10.5 }), ['body', 'duration']);
    // music: no limit, but a number of seconds still
    for (const duration of ['abc', -5]) expect422(await call(em, 'POST', routes.textToSound, { ...sound, audio_type: 'music', duration }), ['body', 'duration']);
    expect422(await call(em, 'POST', routes.textToSound, { ...sound, project_name: 'ab' }), ['body', 'project_name']);
    expect422(await call(em, 'POST', routes.textToSound, { ...sound, project_name: 'x'.repeat(256) }), ['body', 'project_name']);
    expect422(await call(em, 'POST', routes.textToSound, { ...sound, project_description: 'ab' }), ['body', 'project_description']);
    expect422(await call(em, 'POST', routes.textToSound, { ...sound, project_description: 'x'.repeat(5001) }), ['body', 'project_description']);
    expect422(await call(em, 'POST', routes.textToSound, { duration: 3 }), ['body', 'prompt']);
    expect((await call(em, 'POST', routes.textToSound, { ...sound, duration: 10, project_name: 'abc', project_description: 'x'.repeat(5000) })).status).toBe(200);
  });

  it('rejects malformed JSON with json_invalid and oversized bodies with 413', async () => {
    const em = await start({ maxBodyBytes: 1000 });
    const bad = await call(em, 'POST', routes.textToSound, '{"prompt": ');
    expect(bad.status).toBe(422);
    expect(ValidationErrorBodySchema.parse(bad.json).detail[0]?.type).toBe('json_invalid');
    const big = await call(em, 'POST', routes.textToSound, { prompt: 'x'.repeat(2000) });
    expect(big.status).toBe(413);
  });

  it('takes a body of exactly maxBodyBytes; one byte more is 413, with content-length or streamed', async () => {
    const limit = 1000;
    const em = await start({ maxBodyBytes: limit });
    /** A valid text-to-sound body of exactly `size` bytes. */
    const bodyOf = (size: number): string => {
      const shell = JSON.stringify({ prompt: '', duration: 2 });
      return JSON.stringify({ prompt: 'x'.repeat(size - shell.length), duration: 2 });
    };
    expect(bodyOf(limit)).toHaveLength(limit);
    expect((await call(em, 'POST', routes.textToSound, bodyOf(limit))).status).toBe(200);
    expect((await call(em, 'POST', routes.textToSound, bodyOf(limit + 1))).status).toBe(413);
    // Streamed (chunked, no content-length): counted as it comes.
    const streamed = (body: string): Promise<number> =>
      new Promise((resolve, reject) => {
        const req = request(`${em.baseUrl}${routes.textToSound}`, {
          method: 'POST',
          headers: { 'x-api-key': em.apiKey, 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
        });
        req.on('response', (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        const half = Math.floor(body.length / 2);
        req.write(body.slice(0, half));
        req.end(body.slice(half));
      });
    expect(await streamed(bodyOf(limit))).toBe(200);
    expect(await streamed(bodyOf(limit + 1))).toBe(413);
  });
});

describe('bulk results and temporary addresses', () => {
  it('answers output_url per run, downloadable until it expires (403), unknown 404', async () => {
    const em = await start({ urlTtlMs: 150 });
    const a = await runOf(em, routes.textToSound, routes.textToSoundStatus, sound);
    const b = await runOf(em, routes.textToSound, routes.textToSoundStatus, { prompt: 'wind', duration: 1 });
    const answer = await call(em, 'POST', routes.textToSoundResults, { run_ids: [a, b] });
    expect(answer.status, answer.text).toBe(200);
    const results = BulkResultsSchema.parse(answer.json);
    expect(Object.keys(results).sort()).toEqual([String(a), String(b)].sort());
    const url = results[String(a)]?.output_url as string;
    const got = await bytesOf(url);
    expect(got.status).toBe(200);
    expect(got.type).toBe('audio/wav');
    expect(parseWavHeader(got.bytes)?.sampleRate).toBe(RATE);
    await new Promise((r) => setTimeout(r, 200));
    const expired = await bytesOf(url);
    expect(expired.status).toBe(403);
    expect((await bytesOf(`${em.baseUrl}/files/nope.wav`)).status).toBe(404);
  });

  it('validates run_ids: count, duplicates, kinds, unknown ids', async () => {
    const em = await start();
    const s1 = await runOf(em, routes.textToSound, routes.textToSoundStatus, sound);
    const s2 = await runOf(em, routes.textToSound, routes.textToSoundStatus, sound);
    const t1 = await runOf(em, routes.tts, routes.ttsStatus, speech);
    const t2 = await runOf(em, routes.tts, routes.ttsStatus, speech);
    expect422(await call(em, 'POST', routes.textToSoundResults, { run_ids: [s1] }), ['body', 'run_ids']);
    expect422(await call(em, 'POST', routes.textToSoundResults, { run_ids: [1, 2, 3, 4, 5, 6] }), ['body', 'run_ids']);
    expect422(await call(em, 'POST', routes.textToSoundResults, { run_ids: [s1, s1] }), ['body', 'run_ids']);
    expect422(await call(em, 'POST', routes.textToSoundResults, { run_ids: [s1, t1] }), ['body', 'run_ids']);
    expect422(await call(em, 'POST', routes.textToSoundResults, { run_ids: [t1, t2] }), ['body', 'run_ids']);
    expect422(await call(em, 'POST', routes.fetchTtsResults, { run_ids: [s1, s2] }), ['body', 'run_ids']);
    expect422(await call(em, 'POST', routes.textToSoundResults, { run_ids: [s1, 999] }), ['body', 'run_ids', 1]);
    const tts = await call(em, 'POST', routes.fetchTtsResults, { run_ids: [t1, t2] });
    expect(tts.status, tts.text).toBe(200);
    const url = BulkResultsSchema.parse(tts.json)[String(t2)]?.output_url as string;
    expect(parseWavHeader((await bytesOf(url)).bytes)?.sampleRate).toBe(RATE);
  });
});

describe('speech task (deprecated) and voices', () => {
  it('refuses a /tts task for a voice it does not have: 422 at voice_id, no task (control: a listed voice is 200)', async () => {
    const em = await start();
    expect((await call(em, 'POST', routes.tts, speech)).status).toBe(200);
    expect422(await call(em, 'POST', routes.tts, { ...speech, voice_id: 987_654 }), ['body', 'voice_id']);
    expect(em.context.tasks.size).toBe(1);
  });

  it('serves tts-result as WAV readable by wavefile', async () => {
    const em = await start();
    const runId = await runOf(em, routes.tts, routes.ttsStatus, speech);
    const res = await fetch(em.baseUrl + routes.ttsResult(runId), { headers: { 'x-api-key': em.apiKey } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('audio/wav');
    const wav = new WaveFile(new Uint8Array(await res.arrayBuffer()));
    expect((wav.fmt as { sampleRate: number }).sampleRate).toBe(RATE);
    const samples = (wav.getSamples(false, Int16Array) as unknown as Int16Array).length;
    expect(samples).toBe(6 * WORD * RATE); // six words of the tone synth
    expect((await call(em, 'GET', routes.ttsResult(424242))).status).toBe(404);
    expect422(await call(em, 'GET', '/tts-result/abc'), ['path', 'run_id']);
  });

  it('lists voices and creates custom voices (new version per call)', async () => {
    const em = await start();
    const list = VoiceListSchema.parse((await call(em, 'GET', routes.listVoices)).json);
    expect(list.map((v) => v.id)).toContain(DEFAULT_VOICE_ID);
    expect(new Set(list.map((v) => v.language))).toEqual(new Set(['en-us', 'en-gb', 'fr-fr', 'de-de', 'es-es']));
    const form = (over: Record<string, string> = {}, fileName = 'sample.wav'): FormData => {
      const f = new FormData();
      const fields = { voice_name: 'Narrator Nell', gender: '2', age: '41', enhance_audio: 'true', language: 'en-gb', ...over };
      for (const [k, v] of Object.entries(fields)) f.set(k, v);
      f.set('file', file(fileName), fileName);
      return f;
    };
    const made = await call(em, 'POST', routes.createCustomVoice, form());
    expect(made.status, made.text).toBe(200);
    const { voice_id } = CreateCustomVoiceResponseSchema.parse(made.json);
    const again = CreateCustomVoiceResponseSchema.parse((await call(em, 'POST', routes.createCustomVoice, form())).json);
    expect(again.voice_id).not.toBe(voice_id);
    const after = VoiceListSchema.parse((await call(em, 'GET', routes.listVoices)).json);
    expect(after.find((v) => v.id === voice_id)).toMatchObject({ voice_name: 'Narrator Nell', gender: 2, age: 41, language: 'en-gb' });
    expect(em.context.voice(voice_id)?.voice_name).toBe('Narrator Nell');
    // a deprecated numeric language id is listed as its locale tag
    const numeric = CreateCustomVoiceResponseSchema.parse((await call(em, 'POST', routes.createCustomVoice, form({ language: '3' }))).json);
    expect(em.context.voice(numeric.voice_id)?.language).toBe('fr-fr');
    expect422(await call(em, 'POST', routes.createCustomVoice, form({ age: '0' })), ['body', 'age']);
    expect422(await call(em, 'POST', routes.createCustomVoice, form({ gender: '3' })), ['body', 'gender']);
    expect422(await call(em, 'POST', routes.createCustomVoice, form({}, 'sample.ogg')), ['body', 'file']);
    const noFile = new FormData();
    noFile.set('voice_name', 'x');
    noFile.set('gender', '1');
    expect422(await call(em, 'POST', routes.createCustomVoice, noFile), ['body', 'file']);
  });
});

describe('translation, transcription, subtitles, dubbing', () => {
  const translation = { texts: ['Hello, world.', 'Good night!'], source_language: 'en-us', target_language: 'fr-fr' };

  it('translates by pseudo-localization; numeric ids accepted; bad tags and enums rejected', async () => {
    const em = await start();
    const runId = await runOf(em, routes.translation, routes.translationStatus, translation);
    const result = TranslationResultSchema.parse((await call(em, 'GET', routes.translationResult(runId))).json);
    expect(result.texts).toEqual(['[fr-fr] Ĥéĺĺö, ŵöŕĺď.', '[fr-fr] Ĝööď ñíĝĥŧ!']);
    await runOf(em, routes.translation, routes.translationStatus, { ...translation, source_language: 1, target_language: '3' });
    expect422(await call(em, 'POST', routes.translation, { ...translation, source_language: 'EN-US' }), ['body', 'source_language']);
    expect422(await call(em, 'POST', routes.translation, { ...translation, formality: 3 }), ['body', 'formality']);
    expect422(await call(em, 'POST', routes.translation, { ...translation, gender: 3 }), ['body', 'gender']);
    expect422(await call(em, 'POST', routes.translation, { ...translation, chosen_dictionaries: [] }), ['body', 'chosen_dictionaries']);
  });

  it('transcribes and subtitles multipart uploads', async () => {
    const em = await start();
    const form = new FormData();
    form.set('language', 'en-us');
    form.set('media_file', file('talk.mp3'), 'talk.mp3');
    const runId = await runOf(em, routes.transcription, routes.transcriptionStatus, form);
    const transcript = TranscriptionResultSchema.parse((await call(em, 'GET', routes.transcriptionResult(runId))).json);
    expect(transcript.transcript.length).toBeGreaterThan(0);

    const sub = new FormData();
    sub.set('language', 'en-us');
    sub.set('media_url', 'https://example.com/talk.mp4');
    sub.set('subtitle_format', 'vtt');
    const subRun = await runOf(em, routes.sub, routes.subStatus, sub);
    const subs = SubtitlesResultSchema.parse((await call(em, 'GET', routes.subResult(subRun))).json);
    expect(subs.subtitles.startsWith('WEBVTT')).toBe(true);

    const missing = new FormData();
    missing.set('language', 'en-us');
    expect422(await call(em, 'POST', routes.transcription, missing), ['body', 'media_file']);
  });

  it('dubs end to end and sets up dubbing projects with their limits', async () => {
    const em = await start();
    const dubRun = await runOf(em, routes.endToEndDubbing, routes.endToEndDubbingStatus, {
      video_url: 'https://example.com/v.mp4',
      source_language: 'en-us',
      target_languages: ['de-de'],
    });
    const info = DubbedRunInfoSchema.parse((await call(em, 'GET', routes.dubbedRunInfo(dubRun))).json);
    expect(info.transcript[0]?.text.startsWith('[de-de] ')).toBe(true);
    expect(parseWavHeader((await bytesOf(info.audio_url)).bytes)).toBeDefined();

    const setup = { media_url: 'https://example.com/v.mxf', source_language: 'en-us', target_languages: ['es-es'], project_name: 'Demo', folder_id: 7 };
    const runId = await runOf(em, routes.projectSetup, routes.projectSetupStatus, setup);
    const result = ProjectSetupResultSchema.parse((await call(em, 'GET', routes.projectSetupResult(runId))).json);
    expect(result.run_id).toBe(runId);
    expect(result.project_details).toMatchObject({ project_name: 'Demo', folder_id: 7, target_languages: ['es-es'] });
    expect422(await call(em, 'POST', routes.projectSetup, { ...setup, selected_audio_tracks: [] }), ['body', 'selected_audio_tracks']);
    expect422(await call(em, 'POST', routes.projectSetup, { ...setup, selected_audio_tracks: [0, 1, 2] }), ['body', 'selected_audio_tracks']);
    expect422(await call(em, 'POST', routes.projectSetup, { ...setup, chosen_dictionaries: [] }), ['body', 'chosen_dictionaries']);
    expect422(await call(em, 'POST', routes.projectSetup, { ...setup, folder_id: 0 }), ['body', 'folder_id']);
    expect422(await call(em, 'POST', routes.projectSetup, { ...setup, project_name: 'ab' }), ['body', 'project_name']);
    expect((await call(em, 'POST', routes.projectSetup, { ...setup, selected_audio_tracks: [0, 1], chosen_dictionaries: [4] })).status).toBe(200);
  });
});

describe('stories and audio separation', () => {
  it('creates a story from .txt and serves story-run and translated results', async () => {
    const em = await start();
    const form = new FormData();
    form.set('source_language', 'en-us');
    form.set('title', 'Sea');
    form.set('file', new Blob(['The sea was calm. Mara: Is the lamp lit?\nTom: It is.']), 'story.txt');
    const runId = await runOf(em, routes.createStory, routes.storyStatus, form);
    const story = StoryRunSchema.parse((await call(em, 'GET', routes.storyRun(runId))).json);
    expect(story.transcript.map((t) => t.speaker)).toContain('Tom');
    expect(parseWavHeader((await bytesOf(story.audio_url)).bytes)?.sampleRate).toBe(RATE);
    const withT = TranslatedStoryResultSchema.parse((await call(em, 'GET', `${routes.translatedStoryResult(runId, 'fr-fr')}?include_transcript=true`)).json);
    expect(withT.transcript?.[0]?.text.startsWith('[fr-fr] ')).toBe(true);
    const without = TranslatedStoryResultSchema.parse((await call(em, 'GET', `${routes.translatedStoryResult(runId, 'fr-fr')}?include_transcript=false`)).json);
    expect(without.transcript).toBeUndefined();
    // the boolean query also reads 1 and 0
    const one = TranslatedStoryResultSchema.parse((await call(em, 'GET', `${routes.translatedStoryResult(runId, 'fr-fr')}?include_transcript=1`)).json);
    expect(one.transcript).toEqual(withT.transcript);
    const zero = TranslatedStoryResultSchema.parse((await call(em, 'GET', `${routes.translatedStoryResult(runId, 'fr-fr')}?include_transcript=0`)).json);
    expect(zero.transcript).toBeUndefined();
    expect422(await call(em, 'GET', routes.translatedStoryResult(runId, 'EN-US')), ['path', 'target_language']);
    expect422(await call(em, 'GET', `/translated-story-result/abc/fr-fr`), ['path', 'run_id']);
    expect422(await call(em, 'GET', `${routes.translatedStoryResult(runId, 'fr-fr')}?include_transcript=maybe`), ['query', 'include_transcript']);
    const storyForm = (fields: Record<string, string | string[]>): FormData => {
      const f = new FormData();
      f.set('source_language', 'en-us');
      for (const [k, v] of Object.entries(fields)) for (const one of [v].flat()) f.append(k, one);
      f.set('file', new Blob(['Short story.']), 'short.txt');
      return f;
    };
    expect422(await call(em, 'POST', routes.createStory, storyForm({ chosen_dictionaries: '[]' })), ['body', 'chosen_dictionaries']);
    expect422(await call(em, 'POST', routes.createStory, storyForm({ folder_id: '0' })), ['body', 'folder_id']);
    expect422(await call(em, 'POST', routes.createStory, storyForm({ narrator_voice_id: '4242' })), ['body', 'narrator_voice_id']);
    for (const dictionaries of ['[1, 2]', '1,2', ['1', '2']]) {
      expect((await call(em, 'POST', routes.createStory, storyForm({ chosen_dictionaries: dictionaries, folder_id: '3', narrator_voice_id: '2' }))).status).toBe(200);
    }
    const wrong = new FormData();
    wrong.set('source_language', 'en-us');
    wrong.set('file', new Blob(['x']), 'story.pdf');
    expect422(await call(em, 'POST', routes.createStory, wrong), ['body', 'file']);
  });

  it('separates audio', async () => {
    const em = await start();
    const form = new FormData();
    form.set('media_file', file('mix.flac', 'fLaC-bytes'), 'mix.flac');
    const runId = await runOf(em, routes.audioSeparation, routes.audioSeparationStatus, form);
    const result = AudioSeparationResultSchema.parse((await call(em, 'GET', routes.audioSeparationResult(runId))).json);
    expect(new TextDecoder().decode((await bytesOf(result.foreground_audio_url)).bytes)).toBe('fLaC-bytes');
    expect(parseWavHeader((await bytesOf(result.background_audio_url)).bytes)).toBeDefined();
    const ogg = new FormData();
    ogg.set('media_file', file('mix.ogg'), 'mix.ogg');
    expect422(await call(em, 'POST', routes.audioSeparation, ogg), ['body', 'media_file']);
  });
});

describe('task outcomes', () => {
  it('ends in ERROR with a message, TIMEOUT and PAYMENT_REQUIRED per faults', async () => {
    const em = await start({ faults: { taskOutcome: { translation: 'ERROR', 'text-to-sound': 'TIMEOUT', story: 'PAYMENT_REQUIRED' } } });
    const t = await createTask(em, routes.translation, { texts: ['a'], source_language: 'en-us', target_language: 'de-de' });
    const error = await waitTask(em, routes.translationStatus(t));
    expect(error.status).toBe('ERROR');
    expect(error.message).toEqual(expect.any(String));
    expect(error.run_id).toBeNull();
    const s = await createTask(em, routes.textToSound, sound);
    expect((await waitTask(em, routes.textToSoundStatus(s))).status).toBe('TIMEOUT');
    const form = new FormData();
    form.set('source_language', 'en-us');
    form.set('file', new Blob(['Once.']), 'a.txt');
    const st = await createTask(em, routes.createStory, form);
    expect((await waitTask(em, routes.storyStatus(st))).status).toBe('PAYMENT_REQUIRED');
    const tts = await createTask(em, routes.tts, speech);
    expect((await waitTask(em, routes.ttsStatus(tts))).status).toBe('SUCCESS');
  });

  it("applies '*' and per-key faults, and ends in PAYMENT_REQUIRED when credits run out", async () => {
    const em = await start({ apiKeys: ['key-a', 'key-b'], credits: { 'key-a': 1, 'key-b': 100 }, faultsByKey: { 'key-b': { taskOutcome: { '*': 'TIMEOUT' } } } });
    const a1 = await createTask(em, routes.textToSound, sound);
    expect((await waitTask(em, routes.textToSoundStatus(a1))).status).toBe('SUCCESS');
    const a2 = await createTask(em, routes.textToSound, sound);
    expect((await waitTask(em, routes.textToSoundStatus(a2))).status).toBe('PAYMENT_REQUIRED');
    const b = await call(em, 'POST', routes.textToSound, sound, { 'x-api-key': 'key-b' });
    const bId = TaskCreatedSchema.parse(b.json).task_id;
    const bStatus = await call(em, 'GET', routes.textToSoundStatus(bId), undefined, { 'x-api-key': 'key-b' });
    expect(TaskStatusSchema.parse(bStatus.json).status).toMatch(/PENDING|TIMEOUT/);
    // Another key cannot see the task; unknown ids are 404.
    expect((await call(em, 'GET', routes.textToSoundStatus(bId))).status).toBe(404);
    const unknown = await call(em, 'GET', routes.ttsStatus('no-such-task'));
    expect(unknown.status).toBe(404);
    expect(ErrorBodySchema.parse(unknown.json).status).toBe(404);
  });
});

describe('credit prices', () => {
  it('charges the configured prices: tasks per creation, speech per segment (X-Credits-Required)', async () => {
    const em = await start({ credits: 12, prices: { task: 5, speechSegment: 2, translationStream: 1 } });
    const a = await createTask(em, routes.textToSound, sound);
    const b = await createTask(em, routes.textToSound, sound);
    const c = await createTask(em, routes.textToSound, sound);
    expect((await waitTask(em, routes.textToSoundStatus(a))).status).toBe('SUCCESS');
    expect((await waitTask(em, routes.textToSoundStatus(b))).status).toBe('SUCCESS');
    // 12 - 5 - 5 = 2 left: the third task cannot be paid.
    expect((await waitTask(em, routes.textToSoundStatus(c))).status).toBe('PAYMENT_REQUIRED');
    expect(em.context.credits.balance(em.apiKey)).toBe(2);
  });

  it('tts-stream requires price x sentences and refuses 402 when the balance is short', async () => {
    const em = await start({ credits: 7, prices: { task: 1, speechSegment: 2, translationStream: 1 } });
    const body = { text: 'One. Two. Three.', voice_id: DEFAULT_VOICE_ID, language: 'en-us', output_configuration: { format: 'pcm_s16le' } };
    const ok = await call(em, 'POST', routes.ttsStream, body);
    expect(ok.status).toBe(200);
    expect(ok.headers.get('x-credits-required')).toBe('6');
    expect(em.context.credits.balance(em.apiKey)).toBe(1);
    expect((await call(em, 'POST', routes.ttsStream, body)).status).toBe(402);
    // a balance of exactly price x sentences pays
    em.context.credits.set(em.apiKey, 6);
    expect((await call(em, 'POST', routes.ttsStream, body)).status).toBe(200);
    expect(em.context.credits.balance(em.apiKey)).toBe(0);
  });

  it('translation/stream charges its price, and refuses 402 once the balance cannot pay it', async () => {
    const em = await start({ credits: 3, prices: { task: 1, speechSegment: 1, translationStream: 2 } });
    const body = { text: 'Hello.', source_language: 'en-us', target_language: 'de-de' };
    const ok = await call(em, 'POST', routes.translationStream, body);
    expect(ok.status).toBe(200);
    expect(ok.headers.get('x-credits-required')).toBe('2');
    expect(em.context.credits.balance(em.apiKey)).toBe(1);
    const refused = await call(em, 'POST', routes.translationStream, body);
    expect(refused.status).toBe(402);
    expect(ErrorBodySchema.parse(refused.json)).toMatchObject({ status: 402 });
    expect(em.context.credits.balance(em.apiKey)).toBe(1);
  });
});

describe('faults on HTTP', () => {
  it('answers the next N requests with the injected status and Retry-After', async () => {
    const em = await start({ faults: { httpErrors: { status: 429, count: 2, retryAfter: 1 } } });
    const first = await call(em, 'GET', routes.listVoices);
    expect(first.status).toBe(429);
    expect(first.headers.get('retry-after')).toBe('1');
    expect((await call(em, 'GET', routes.listVoices)).status).toBe(429);
    expect((await call(em, 'GET', routes.listVoices)).status).toBe(200);
  });

  it('counts per-key injected errors apart from the emulator-wide ones', async () => {
    const em = await start({ apiKeys: ['key-a', 'key-b'], faultsByKey: { 'key-b': { httpErrors: { status: 503, count: 1 } } } });
    const b = { 'x-api-key': 'key-b' };
    expect((await call(em, 'GET', routes.listVoices)).status).toBe(200);
    expect((await call(em, 'GET', routes.listVoices, undefined, b)).status).toBe(503);
    expect((await call(em, 'GET', routes.listVoices, undefined, b)).status).toBe(200);
    em.context.options.faults.httpErrors = { status: 500, count: 1 };
    expect((await call(em, 'GET', routes.listVoices)).status).toBe(500);
    expect((await call(em, 'GET', routes.listVoices)).status).toBe(200);
  });

  it('delays answers by httpLatencyMs', async () => {
    const em = await start({ faults: { httpLatencyMs: 80 } });
    const t0 = Date.now();
    await call(em, 'GET', routes.listVoices);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(75);
  });
});

describe('POST /tts-stream', () => {
  /** Bytes of 16-bit tone-synth audio for sentences of these word counts. */
  const pcmBytes = (words: number[], rate: number): number => words.reduce((n, w) => n + Math.round(w * WORD * rate) * 2, 0);
  const text = 'One two three. Four five! Six seven eight nine?';

  it('streams pcm_s16le sentence by sentence with the exact byte count and credits header', async () => {
    const em = await start({ streamDelayMs: 15 });
    const res = await fetch(em.baseUrl + routes.ttsStream, {
      method: 'POST',
      headers: { 'x-api-key': em.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ text, voice_id: DEFAULT_VOICE_ID, language: 'en-us', output_configuration: { format: 'pcm_s16le', sample_rate: 16000 } }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-credits-required')).toBe('3');
    expect(res.headers.get('transfer-encoding')).toBe('chunked');
    expect(res.headers.get('content-type')).toContain('audio/pcm');
    const chunks: Uint8Array[] = [];
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) chunks.push(chunk);
    expect(chunks.length).toBeGreaterThanOrEqual(2);
    const total = chunks.reduce((n, c) => n + c.byteLength, 0);
    expect(total).toBe(pcmBytes([3, 2, 4], 16000));
    expect(em.context.credits.balance(em.apiKey)).toBe(1_000_000 - 3);
  });

  it('streams WAV with a streaming header', async () => {
    const em = await start();
    const res = await fetch(em.baseUrl + routes.ttsStream, {
      method: 'POST',
      headers: { 'x-api-key': em.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ text, voice_id: DEFAULT_VOICE_ID, language: 'en-us' }),
    });
    expect(res.headers.get('content-type')).toBe('audio/wav');
    const bytes = new Uint8Array(await res.arrayBuffer());
    const info = parseWavHeader(bytes);
    expect(info).toMatchObject({ sampleRate: RATE, bitsPerSample: 16, channels: 1, dataBytes: 0xffffffff });
    expect(bytes.byteLength - (info?.dataOffset ?? 0)).toBe(pcmBytes([3, 2, 4], RATE));
  });

  it('speaks with espeak-ng (the default synthesizer) and rejects languages it does not speak', async () => {
    const em = await start({ synth: 'espeak' });
    const res = await fetch(em.baseUrl + routes.ttsStream, {
      method: 'POST',
      headers: { 'x-api-key': em.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'Hello world. This is real speech.', voice_id: DEFAULT_VOICE_ID, language: 'en-us' }),
    });
    expect(res.status).toBe(200);
    const bytes = new Uint8Array(await res.arrayBuffer());
    const info = parseWavHeader(bytes);
    expect(info?.bitsPerSample).toBe(16);
    const pcm = new Int16Array(bytes.buffer.slice(info?.dataOffset ?? 44));
    const seconds = pcm.length / (info?.sampleRate ?? 1);
    expect(seconds).toBeGreaterThan(1);
    expect(seconds).toBeLessThan(6);
    expect(pcm.some((s) => Math.abs(s) > 1000)).toBe(true);
    const unsupported = await call(em, 'POST', routes.ttsStream, { text: 'Bonjour.', voice_id: DEFAULT_VOICE_ID, language: 'xx-yy' });
    expect422(unsupported, ['body', 'language']);
  });

  it('streams mp3 and refuses (402) what the credits cannot pay', async () => {
    const em = await start({ apiKeys: ['rich', 'poor'], credits: { rich: 10, poor: 2 } });
    const body = JSON.stringify({ text, voice_id: DEFAULT_VOICE_ID, language: 'en-us', output_configuration: { format: 'mp3' } });
    const res = await fetch(em.baseUrl + routes.ttsStream, { method: 'POST', headers: { 'x-api-key': 'rich', 'content-type': 'application/json' }, body });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('audio/mpeg');
    const bytes = new Uint8Array(await res.arrayBuffer());
    const id3 = bytes[0] === 0x49 && bytes[1] === 0x44 && bytes[2] === 0x33;
    expect(id3 || (bytes[0] === 0xff && ((bytes[1] ?? 0) & 0xe0) === 0xe0)).toBe(true);
    expect(em.context.credits.balance('rich')).toBe(7);
    const poor = await call(em, 'POST', routes.ttsStream, JSON.parse(body), { 'x-api-key': 'poor' });
    expect(poor.status).toBe(402);
    expect(em.context.credits.balance('poor')).toBe(2);
  });

  it('validates text length, voice and format', async () => {
    const em = await start();
    const body = { text, voice_id: DEFAULT_VOICE_ID, language: 'en-us' };
    expect422(await call(em, 'POST', routes.ttsStream, { ...body, text: 'ab' }), ['body', 'text']);
    expect422(await call(em, 'POST', routes.ttsStream, { ...body, text: 'a'.repeat(3001) }), ['body', 'text']);
    expect422(await call(em, 'POST', routes.ttsStream, { ...body, voice_id: 9999 }), ['body', 'voice_id']);
    expect422(await call(em, 'POST', routes.ttsStream, { ...body, output_configuration: { format: 'flac' } }), ['body', 'output_configuration', 'format']);
    expect422(await call(em, 'POST', routes.ttsStream, { ...body, output_configuration: { format: 'ogg' } }), ['body', 'output_configuration', 'format']);
    expect((await call(em, 'POST', routes.ttsStream, { ...body, text: 'abc' })).status).toBe(200);
  });
});

describe('POST /translation/stream', () => {
  async function events(em: Emulator, body: unknown): Promise<{ res: Response; events: EventSourceMessage[] }> {
    const res = await fetch(em.baseUrl + routes.translationStream, {
      method: 'POST',
      headers: { 'x-api-key': em.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const out: EventSourceMessage[] = [];
    const parser = createParser({ onEvent: (e) => out.push(e) });
    const decoder = new TextDecoder();
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) parser.feed(decoder.decode(chunk, { stream: true }));
    return { res, events: out };
  }

  it('streams the pseudo-localized text piece by piece', async () => {
    const em = await start();
    const text = 'Hello there, friend.\nSecond line here!';
    const { res, events: got } = await events(em, { text, source_language: 'en-us', target_language: 'de-de' });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    expect(res.headers.get('x-credits-required')).toBe('1');
    expect(got.length).toBeGreaterThan(3);
    expect(got.every((e) => e.event === undefined)).toBe(true);
    expect(got.map((e) => e.data).join('')).toBe(pseudoLocalize(text, 'de-de'));
    expect(got.some((e) => e.data.includes('\n'))).toBe(true);
  });

  it('ends with an error event on the trigger and on a fault', async () => {
    const em = await start();
    const { events: got } = await events(em, { text: 'Fine so far. [[fail]] never sent', source_language: 'en-us', target_language: 'de-de' });
    const last = got.at(-1);
    expect(last?.event).toBe('error');
    expect(last?.data.length).toBeGreaterThan(0);
    expect(got.slice(0, -1).map((e) => e.data).join('')).toBe(pseudoLocalize('Fine so far. ', 'de-de'));
    em.context.options.faults.taskOutcome = { translation: 'ERROR' };
    const faulted = await events(em, { text: 'Hello.', source_language: 'en-us', target_language: 'de-de' });
    expect(faulted.events.map((e) => e.event)).toEqual(['error']);
    expect422(await call(em, 'POST', routes.translationStream, { text: 'x', source_language: 'en-us', target_language: 'de-de', formality: 3 }), ['body', 'formality']);
  });
});

describe('server', () => {
  it('rejects other upgrade paths with 404 and live upgrades without a key with 4401', async () => {
    const em = await start();
    const wrongPath = await new Promise<number>((resolve) => {
      const ws = new WebSocket(`${em.baseUrl.replace('http', 'ws')}/elsewhere`, { headers: { 'x-api-key': em.apiKey } });
      ws.on('unexpected-response', (_req, res) => {
        resolve(res.statusCode ?? 0);
        ws.terminate();
      });
      ws.on('error', () => resolve(-1));
    });
    expect(wrongPath).toBe(404);
    const code = await new Promise<number>((resolve) => {
      const ws = new WebSocket(em.wsUrl);
      ws.on('close', (c) => resolve(c));
      ws.on('error', () => undefined);
    });
    expect(code).toBe(4401);
  });

  it('logs to stderr without ever printing the key', async () => {
    const em = await start({ log: true });
    const lines: string[] = [];
    const original = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    }) as typeof process.stderr.write;
    try {
      await call(em, 'GET', `${routes.listVoices}?api_key=${em.apiKey}`);
      await call(em, 'GET', routes.listVoices, undefined, { 'x-api-key': 'wrong-secret-key' });
    } finally {
      process.stderr.write = original;
    }
    const log = lines.join('');
    expect(log).toContain(`GET ${routes.listVoices} 200`);
    expect(log).toContain(`GET ${routes.listVoices} 401`);
    expect(log).not.toContain(em.apiKey);
    expect(log).not.toContain('wrong-secret-key');
  });

  it('close() cuts streams in progress and resolves promptly', async () => {
    const em = await start({ streamDelayMs: 10_000 });
    const res = await fetch(em.baseUrl + routes.translationStream, {
      method: 'POST',
      headers: { 'x-api-key': em.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'one two three four', source_language: 'en-us', target_language: 'de-de' }),
    });
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const first = await reader.read();
    expect(first.done).toBe(false);
    const t0 = Date.now();
    await em.close();
    expect(Date.now() - t0).toBeLessThan(1000);
    // The rest of the stream never comes: it ends or fails, at once.
    const rest = await reader.read().then(
      (r) => r.done,
      () => true,
    );
    expect(rest).toBe(true);
  });

  it('close() ends keep-alive connections and resolves', async () => {
    const em = await start();
    const port = Number(new URL(em.baseUrl).port);
    const socket = connect(port, '127.0.0.1');
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    const answered = new Promise<string>((resolve) => socket.once('data', (d) => resolve(d.toString())));
    socket.write(`GET ${routes.listVoices} HTTP/1.1\r\nHost: x\r\nx-api-key: ${em.apiKey}\r\nConnection: keep-alive\r\n\r\n`);
    expect(await answered).toMatch(/^HTTP\/1\.1 200/);
    const ws = new WebSocket(em.wsUrl, { headers: { 'x-api-key': em.apiKey } });
    await new Promise<void>((resolve) => ws.on('open', () => resolve()));
    const wsClosed = new Promise<void>((resolve) => ws.on('close', () => resolve()));
    await em.close();
    await closed;
    await wsClosed;
    expect(socket.destroyed).toBe(true);
  });
});
