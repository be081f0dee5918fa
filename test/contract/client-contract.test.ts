/**
 * The client against the hand-written contract table (test/contract/contract-table.ts):
 * what it sends, captured by a raw loopback server written here (node:http and a ws
 * server), and what it makes of answers shaped as the contract says (hand-written
 * literals, not the project's schemas). A path, a field name or a close code changed in
 * the shared code (routes, schemas, protocol) fails here.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lastValueFrom, of, toArray, type Observable } from 'rxjs';
import { WebSocketServer, type WebSocket as WsSocket } from 'ws';
import { createClient, type RxVoiceClient } from '../../src/index.js';
import { RxVoiceError } from '../../src/core/errors.js';
import { AUTH, ENDPOINTS, LIVE, TASK_CREATED_FIELD, TASK_FAMILIES, type TaskFamily } from './contract-table.js';
import { fill, wavBytes } from './raw.js';

const KEY = 'rxv-contract-client-key';
const TASK_ID = 'TaskID-7';
const RUN_ID = 7;
const dialogue = [{ start: 0, end: 1.5, text: 'Hello.', speaker: 'A' }];

/** Answers of the raw server, by family: shapes written from the contract and DESIGN. */
const RESULT_ANSWERS: Record<string, unknown> = {
  translation: { texts: ['Guten Morgen.'] },
  transcription: { transcript: dialogue },
  // The contract leaves /sub open; DESIGN lets the code pick the sibling's shape plus subtitles.
  sub: { subtitle_format: 'srt', subtitles: '1\n00:00:00,000 --> 00:00:01,500\nHello.\n', transcript: dialogue },
  'end-to-end-dubbing': { video_url: 'https://files.example/v.mp4', audio_url: 'https://files.example/a.wav', transcript: dialogue },
  'project-setup': {
    run_id: RUN_ID,
    project_details: {
      project_name: 'Film',
      project_description: null,
      created_at: '2026-01-01T00:00:00Z',
      source_language: 'en-us',
      target_languages: ['de-de'],
      folder_id: null,
      studio_url: 'https://studio.example/p/7',
    },
  },
  'audio-separation': { foreground_audio_url: 'https://files.example/fg.wav', background_audio_url: 'https://files.example/bg.wav' },
  story: { audio_url: 'https://files.example/s.wav', dialogue_url: 'https://files.example/d.wav', transcript: dialogue },
};

interface Captured {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

let server: Server;
let baseUrl: string;
const captured: Captured[] = [];

/** A table path with `{param}` placeholders as a regex (each placeholder one path segment). */
const pattern = (path: string): RegExp =>
  new RegExp(`^${path.split(/\{\w+\}/).map((part) => part.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&')).join('[^/]+')}$`);

function answerFor(method: string, path: string): { status: number; type: string; body: string | Uint8Array; headers?: Record<string, string> } {
  const ok = (value: unknown) => ({ status: 200, type: 'application/json', body: JSON.stringify(value) });
  for (const family of TASK_FAMILIES) {
    if (method === family.create.method && path === family.create.path) return ok({ [TASK_CREATED_FIELD]: TASK_ID });
    if (method === family.status.method && pattern(family.status.path).test(path)) return ok({ status: 'SUCCESS', run_id: RUN_ID });
    if (method === family.result.method && pattern(family.result.path).test(path)) {
      return family.result.answer === 'bytes' ? { status: 200, type: 'audio/wav', body: wavBytes() } : ok(RESULT_ANSWERS[family.name]);
    }
  }
  if (method === ENDPOINTS.listVoices.method && path === ENDPOINTS.listVoices.path) {
    return ok([{ id: 1, voice_name: 'Ava', gender: 2, age: 30, description: null, language: 'en-us', is_published: true }]);
  }
  if (method === ENDPOINTS.createCustomVoice.method && path === ENDPOINTS.createCustomVoice.path) return ok({ [ENDPOINTS.createCustomVoice.answerField]: 99 });
  for (const bulk of [ENDPOINTS.textToSoundResults, ENDPOINTS.fetchTtsResults]) {
    if (method === bulk.method && path === bulk.path) return ok({ '7': { [bulk.entryField]: 'https://files.example/7.wav' }, '8': { [bulk.entryField]: 'https://files.example/8.wav' } });
  }
  if (method === ENDPOINTS.ttsStream.method && path === ENDPOINTS.ttsStream.path) {
    return { status: 200, type: 'audio/wav', body: wavBytes(), headers: { [ENDPOINTS.ttsStream.creditsHeader]: '3' } };
  }
  if (method === ENDPOINTS.translationStream.method && path === ENDPOINTS.translationStream.path) {
    return { status: 200, type: ENDPOINTS.translationStream.contentType, body: 'data: Guten \n\ndata: Morgen.\n\n', headers: { [ENDPOINTS.translationStream.creditsHeader]: '2' } };
  }
  if (method === ENDPOINTS.translatedStoryResult.method && pattern(ENDPOINTS.translatedStoryResult.path).test(path)) {
    return ok({ audio_url: 'https://files.example/t.wav', dialogue_url: 'https://files.example/td.wav', transcript: dialogue });
  }
  return { status: 404, type: 'application/json', body: JSON.stringify({ error: `no such path ${method} ${path}`, status: 404 }) };
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      captured.push({ method: req.method ?? '', path: url.pathname + url.search, headers: req.headers, body: Buffer.concat(chunks) });
      const answer = answerFor(req.method ?? '', url.pathname);
      res.writeHead(answer.status, { 'content-type': answer.type, ...answer.headers }).end(answer.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function client(): RxVoiceClient {
  return createClient({ apiKey: KEY, baseUrl, maxRetries: 0, warn: () => undefined });
}

/** Run `call` and return its value and the requests it sent. */
async function capture<T>(call: Observable<T>): Promise<{ value: T; sent: Captured[] }> {
  const from = captured.length;
  const value = await lastValueFrom(call);
  return { value, sent: captured.slice(from) };
}

/** The names of the body's fields: JSON keys, or multipart part names. */
async function fieldsOf(request: Captured): Promise<string[]> {
  const type = String(request.headers['content-type'] ?? '');
  if (type.startsWith('application/json')) return Object.keys(JSON.parse(request.body.toString('utf8')) as object);
  expect(type).toMatch(/^multipart\/form-data/);
  const form = await new Response(new Uint8Array(request.body), { headers: { 'content-type': type } }).formData();
  return [...new Set(form.keys())];
}

const wavFile = (): File => new File([wavBytes()], 'sample.wav', { type: 'audio/wav' });

/** The client's calls for each family of the table: create, status, result. */
const CALLS: Record<string, { create(c: RxVoiceClient): Observable<unknown>; status(c: RxVoiceClient): Observable<unknown>; result(c: RxVoiceClient): Observable<unknown> }> = {
  'text-to-sound': { create: (c) => c.sound.create({ prompt: 'rain on a tin roof', duration: 2 }), status: (c) => c.sound.status(TASK_ID), result: (c) => c.sound.result(RUN_ID) },
  tts: {
    create: (c) => c.speech.create({ text: 'Hello there.', voice_id: 1, language: 'en-us' }),
    status: (c) => c.speech.status(TASK_ID),
    result: (c) => c.speech.result(RUN_ID),
  },
  translation: {
    create: (c) => c.translation.create({ texts: ['Good morning.'], source_language: 'en-us', target_language: 'de-de' }),
    status: (c) => c.translation.status(TASK_ID),
    result: (c) => c.translation.result(RUN_ID),
  },
  transcription: {
    create: (c) => c.transcription.create({ language: 'en-us', media_url: 'https://example.com/talk.mp3' }),
    status: (c) => c.transcription.status(TASK_ID),
    result: (c) => c.transcription.result(RUN_ID),
  },
  sub: {
    create: (c) => c.subtitles.create({ language: 'en-us', media_url: 'https://example.com/talk.mp3' }),
    status: (c) => c.subtitles.status(TASK_ID),
    result: (c) => c.subtitles.result(RUN_ID),
  },
  'end-to-end-dubbing': {
    create: (c) => c.dubbing.create({ video_url: 'https://example.com/film.mp4', source_language: 'en-us', target_languages: ['de-de'] }),
    status: (c) => c.dubbing.status(TASK_ID),
    result: (c) => c.dubbing.result(RUN_ID),
  },
  'project-setup': {
    create: (c) => c.dubbing.projectSetup({ media_url: 'https://example.com/film.mp4', source_language: 'en-us', target_languages: ['de-de'] }),
    status: (c) => c.dubbing.projectSetupStatus(TASK_ID),
    result: (c) => c.dubbing.projectSetupResult(RUN_ID),
  },
  'audio-separation': { create: (c) => c.separation.create({ media_file: wavFile() }), status: (c) => c.separation.status(TASK_ID), result: (c) => c.separation.result(RUN_ID) },
  story: {
    create: (c) => c.stories.create({ source_language: 'en-us', file: new File(['Once upon a time.'], 'story.txt', { type: 'text/plain' }) }),
    status: (c) => c.stories.status(TASK_ID),
    result: (c) => c.stories.run(RUN_ID),
  },
};

describe('contract: what the client sends (raw loopback server)', () => {
  it('every family of the table has its client calls (the table and the list agree)', () => {
    expect(Object.keys(CALLS).sort()).toEqual(TASK_FAMILIES.map((f) => f.name).sort());
  });

  it.each(TASK_FAMILIES.map((f) => [f.name, f] as const))('%s: create, status and result at the contract paths, with the key', async (name, family: TaskFamily) => {
    const calls = CALLS[name]!;
    const c = client();
    try {
      const created = await capture(calls.create(c));
      expect(created.sent.map((r) => `${r.method} ${r.path}`)).toEqual([`${family.create.method} ${family.create.path}`]);
      expect(created.sent[0]!.headers[AUTH.header]).toBe(KEY);
      expect(await fieldsOf(created.sent[0]!)).toEqual(expect.arrayContaining([...family.create.required]));
      expect(created.value).toMatchObject({ task_id: TASK_ID });

      const status = await capture(calls.status(c));
      expect(status.sent.map((r) => `${r.method} ${r.path}`)).toEqual([`${family.status.method} ${fill(family.status.path, { task_id: TASK_ID })}`]);
      expect(status.value).toMatchObject({ status: 'SUCCESS', run_id: RUN_ID });

      const result = await capture(calls.result(c));
      expect(result.sent.map((r) => `${r.method} ${r.path}`)).toEqual([`${family.result.method} ${fill(family.result.path, { run_id: RUN_ID })}`]);
      expect(result.sent[0]!.headers[AUTH.header]).toBe(KEY);
      if (family.result.answer === 'bytes') expect(Buffer.from(result.value as Uint8Array).subarray(0, 4).toString('ascii')).toBe('RIFF');
      else expect(result.value).toMatchObject(RESULT_ANSWERS[name] as object);
    } finally {
      await c.close();
    }
  });

  it('voices, custom voice, bulk results, streams and translated story results at the contract paths', async () => {
    const c = client();
    try {
      const voices = await capture(c.voices.list());
      expect(voices.sent.map((r) => `${r.method} ${r.path}`)).toEqual([`${ENDPOINTS.listVoices.method} ${ENDPOINTS.listVoices.path}`]);
      expect(voices.value).toMatchObject([{ id: 1, voice_name: 'Ava' }]);

      const voice = await capture(c.voices.create({ voice_name: 'Contract voice', gender: 2, file: wavFile() }));
      expect(voice.sent.map((r) => `${r.method} ${r.path}`)).toEqual([`${ENDPOINTS.createCustomVoice.method} ${ENDPOINTS.createCustomVoice.path}`]);
      expect(await fieldsOf(voice.sent[0]!)).toEqual(expect.arrayContaining([...ENDPOINTS.createCustomVoice.required]));
      expect(voice.value).toEqual({ voice_id: 99 });

      for (const [call, endpoint] of [
        [c.sound.results([7, 8]), ENDPOINTS.textToSoundResults],
        [c.speech.fetchResults([7, 8]), ENDPOINTS.fetchTtsResults],
      ] as const) {
        const bulk = await capture(call as Observable<unknown>);
        expect(bulk.sent.map((r) => `${r.method} ${r.path}`)).toEqual([`${endpoint.method} ${endpoint.path}`]);
        expect(JSON.parse(bulk.sent[0]!.body.toString('utf8'))).toEqual({ run_ids: [7, 8] });
      }

      const speech = await capture(c.ttsStream({ text: 'Streaming speech, please.', voice_id: 1, language: 'en-us' }).pipe(toArray()));
      expect(speech.sent.map((r) => `${r.method} ${r.path}`)).toEqual([`${ENDPOINTS.ttsStream.method} ${ENDPOINTS.ttsStream.path}`]);
      expect(Object.keys(JSON.parse(speech.sent[0]!.body.toString('utf8')) as object)).toEqual(expect.arrayContaining(['text', 'voice_id', 'language']));

      const translated = await capture(c.translateStream({ text: 'Good morning.', source_language: 'en-us', target_language: 'de-de' }).pipe(toArray()));
      expect(translated.sent.map((r) => `${r.method} ${r.path}`)).toEqual([`${ENDPOINTS.translationStream.method} ${ENDPOINTS.translationStream.path}`]);
      expect(translated.value.join('')).toBe('Guten Morgen.');

      const story = await capture(c.stories.translatedResult(RUN_ID, 'de-de', { includeTranscript: true }));
      expect(story.sent.map((r) => `${r.method} ${r.path}`)).toEqual([
        `GET ${fill(ENDPOINTS.translatedStoryResult.path, { run_id: RUN_ID, target_language: 'de-de' })}?${ENDPOINTS.translatedStoryResult.query}=true`,
      ]);
    } finally {
      await c.close();
    }
  });
});

// ---------------------------------------------------------------------------
// Live WebSocket
// ---------------------------------------------------------------------------

type Script = (socket: WsSocket, received: Array<Record<string, unknown>>) => void;

/** A raw ws server that runs `script` on each message; records the upgrade and the frames. */
async function liveServer(script: Script) {
  const http = createServer();
  const wss = new WebSocketServer({ server: http });
  const upgrades: Array<{ path: string; key: string | undefined }> = [];
  const received: Array<Record<string, unknown>> = [];
  wss.on('connection', (socket, req) => {
    upgrades.push({ path: req.url ?? '', key: req.headers[LIVE.authHeader] as string | undefined });
    socket.on('message', (data: Buffer) => {
      received.push(JSON.parse(data.toString('utf8')) as Record<string, unknown>);
      script(socket, received);
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  return {
    url,
    upgrades,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of wss.clients) s.terminate();
        wss.close(() => http.close(() => resolve()));
      }),
  };
}

const frame = (socket: WsSocket, value: Record<string, unknown>): void => socket.send(JSON.stringify(value));

describe('contract: the client live session (raw ws server)', () => {
  it('connects to the contract path with the key, sends session.start first, text.chunk with text, text.done; reads the server frames', async () => {
    const server = await liveServer((socket, received) => {
      const last = received.at(-1)!;
      if (last['type'] === LIVE.clientFrames.start) frame(socket, { type: LIVE.serverFrames.ready.type, session_id: 's-1', run_id: 5 });
      if (last['type'] === LIVE.clientFrames.done) {
        const text = received.filter((f) => f['type'] === LIVE.clientFrames.chunk).map((f) => f[LIVE.chunkTextField]).join('');
        frame(socket, { type: LIVE.serverFrames.segmentStart.type, segment_id: 0, text });
        socket.send(wavBytes(), { binary: true });
        frame(socket, { type: LIVE.serverFrames.segmentDone.type, segment_id: 0 });
        frame(socket, { type: LIVE.serverFrames.done.type });
        socket.close(LIVE.close.normal);
      }
    });
    const c = createClient({ apiKey: KEY, baseUrl: server.url, warn: () => undefined });
    try {
      const events = await lastValueFrom(of('Hello from the contract.').pipe(c.speak({ voice_id: 3 }), toArray()));
      expect(server.upgrades).toEqual([{ path: LIVE.path, key: KEY }]);
      expect(server.received[0]).toMatchObject({ type: LIVE.clientFrames.start, voice_id: 3 });
      const chunks = server.received.filter((f) => f['type'] === LIVE.clientFrames.chunk);
      expect(chunks.map((f) => f[LIVE.chunkTextField]).join('')).toBe('Hello from the contract.');
      expect(server.received.at(-1)).toEqual({ type: LIVE.clientFrames.done });
      const types = events.map((e) => e.type);
      expect(types).toEqual(expect.arrayContaining(['segmentStart', 'segmentDone']));
      expect(events.find((e) => e.type === 'segmentStart')).toMatchObject({ segment_id: 0, text: 'Hello from the contract.' });
    } finally {
      await c.close();
      await server.close();
    }
  });

  it.each([
    ['4401 (key missing or invalid)', LIVE.close.invalidKey, false, 'authentication'],
    ['4400 (first frame rejected, after session.error)', LIVE.close.rejected, true, 'session_rejected'],
    ['4402 (credits ran out, after session.error)', LIVE.close.creditsExhausted, true, 'credits_exhausted'],
  ] as const)('close %s: the typed error', async (_name, code, withError, errorCode) => {
    const server = await liveServer((socket, received) => {
      if (received.length !== 1) return;
      if (code === LIVE.close.creditsExhausted) frame(socket, { type: LIVE.serverFrames.ready.type, session_id: 's-2', run_id: 6 });
      if (withError) frame(socket, { type: LIVE.serverFrames.error.type, error: 'no' });
      socket.close(code);
    });
    const c = createClient({ apiKey: KEY, baseUrl: server.url, warn: () => undefined });
    try {
      const error = await lastValueFrom(of('Hello there.').pipe(c.speak({ voice_id: 1 }), toArray())).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(RxVoiceError);
      expect(error).toMatchObject({ code: errorCode, closeCode: code, retryable: false });
    } finally {
      await c.close();
      await server.close();
    }
  });
});
