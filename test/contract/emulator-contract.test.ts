/**
 * The emulator against the hand-written contract table (test/contract/contract-table.ts),
 * over raw HTTP (fetch) and raw WebSocket (ws), with no client or shared protocol code:
 * every path and method of the task pattern end to end, the answers' field names, auth,
 * 422 shapes, every limit at and past its edge, and the live session's frames and close
 * codes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import {
  AUTH,
  CUSTOM_VOICE_AGE,
  DEFAULT_SOUND_SECONDS,
  DIALOGUE_ITEM_FIELDS,
  ENDPOINTS,
  LIMITS,
  LIVE,
  MAX_BULK_RUN_IDS,
  PROJECT_DETAILS_FIELDS,
  TASK_CREATED_FIELD,
  TASK_FAMILIES,
  TASK_STATUSES,
  TASK_STATUS_FIELDS,
  VALIDATION,
  type Body,
  type TaskFamily,
} from './contract-table.js';
import { fill, json, pause, send, wavSeconds } from './raw.js';

let emu: Emulator;
let key: string;
const POOR_KEY = 'rxv-contract-poor-key';

beforeAll(async () => {
  emu = await startEmulator({
    synth: 'tone',
    toneWordSeconds: 0.01,
    taskDurationMs: 5,
    apiKeys: ['rxv-contract-key', POOR_KEY],
    credits: { 'rxv-contract-key': 1_000_000, [POOR_KEY]: 1 },
  });
  key = 'rxv-contract-key';
});
afterAll(async () => {
  await emu?.close();
});

function expectValidation(answer: { status: number; json(): unknown }, field?: string): void {
  expect(answer.status).toBe(VALIDATION.status);
  const body = answer.json() as Record<string, unknown>;
  const detail = body[VALIDATION.field] as Array<Record<string, unknown>>;
  expect(Array.isArray(detail) && detail.length > 0).toBe(true);
  for (const item of detail) {
    expect(Object.keys(item)).toEqual(expect.arrayContaining([...VALIDATION.itemFields]));
    expect(Array.isArray(item['loc'])).toBe(true);
    for (const part of item['loc'] as unknown[]) expect(['string', 'number']).toContain(typeof part);
    expect(typeof item['msg']).toBe('string');
    expect(typeof item['type']).toBe('string');
  }
  if (field !== undefined) expect(detail.some((item) => (item['loc'] as unknown[]).includes(field))).toBe(true);
}

/** Create a task of `family` and poll its status path until it leaves PENDING; the run id. */
async function runTask(family: TaskFamily): Promise<{ taskId: string; runId: number }> {
  const created = await send(emu.baseUrl, family.create.method, family.create.path, family.create.body, key);
  expect(created.status, Buffer.from(created.bytes).toString()).toBe(200);
  const taskId = (created.json() as Record<string, unknown>)[TASK_CREATED_FIELD];
  expect(typeof taskId).toBe('string');
  for (let attempt = 0; attempt < 400; attempt++) {
    const status = await send(emu.baseUrl, family.status.method, fill(family.status.path, { task_id: taskId as string }), undefined, key);
    expect(status.status).toBe(200);
    const body = status.json() as Record<string, unknown>;
    expect(Object.keys(body)).toEqual(expect.arrayContaining([...TASK_STATUS_FIELDS]));
    expect(TASK_STATUSES).toContain(body['status']);
    if (body['status'] === 'SUCCESS') {
      expect(Number.isInteger(body['run_id'])).toBe(true);
      return { taskId: taskId as string, runId: body['run_id'] as number };
    }
    expect(body['status']).toBe('PENDING');
    expect(body['run_id']).toBeNull();
    await pause(10);
  }
  throw new Error(`${family.name}: task never left PENDING`);
}

describe('contract: HTTP task pattern (emulator, raw fetch)', () => {
  it.each(TASK_FAMILIES.map((f) => [f.name, f] as const))('%s: create, status, result at the contract paths', async (_name, family) => {
    const { runId } = await runTask(family);
    const result = await send(emu.baseUrl, family.result.method, fill(family.result.path, { run_id: runId }), undefined, key);
    expect(result.status).toBe(200);
    if (family.result.answer === 'bytes') {
      expect(Buffer.from(result.bytes.subarray(0, 4)).toString('ascii')).toBe('RIFF');
    } else {
      const body = result.json() as Record<string, unknown>;
      expect(Object.keys(body)).toEqual(expect.arrayContaining([...family.result.answer.fields]));
      if ('transcript' in body && family.result.answer.fields.includes('transcript')) {
        for (const item of body['transcript'] as object[]) expect(Object.keys(item)).toEqual(expect.arrayContaining([...DIALOGUE_ITEM_FIELDS]));
      }
      if (family.name === 'project-setup') {
        expect(Object.keys(body['project_details'] as object)).toEqual(expect.arrayContaining([...PROJECT_DETAILS_FIELDS]));
      }
    }
  });

  it('a path not in the contract is not found (the control: a wrong path would be seen)', async () => {
    for (const family of TASK_FAMILIES) {
      const wrong = await send(emu.baseUrl, 'POST', `${family.create.path}-x`, family.create.body, key);
      expect(wrong.status, family.create.path).toBe(404);
    }
    const ok = await send(emu.baseUrl, ENDPOINTS.listVoices.method, ENDPOINTS.listVoices.path, undefined, key);
    expect(ok.status).toBe(200);
  });

  it.each(TASK_FAMILIES.filter((f) => f.create.body.kind === 'json').map((f) => [f.name, f] as const))(
    '%s: each required field missing is a 422 naming it',
    async (_name, family) => {
      const body = family.create.body as Extract<Body, { kind: 'json' }>;
      for (const field of family.create.required) {
        const { [field]: _dropped, ...rest } = body.value;
        expectValidation(await send(emu.baseUrl, 'POST', family.create.path, json(rest), key), field);
      }
    },
  );

  it('every endpoint answers 401 with { error, status } without a key and with a wrong one', async () => {
    const calls: Array<[string, string, Body | undefined]> = [
      ...TASK_FAMILIES.flatMap((f): Array<[string, string, Body | undefined]> => [
        [f.create.method, f.create.path, f.create.body],
        [f.status.method, fill(f.status.path, { task_id: 'task-1' }), undefined],
        [f.result.method, fill(f.result.path, { run_id: 1 }), undefined],
      ]),
      [ENDPOINTS.listVoices.method, ENDPOINTS.listVoices.path, undefined],
      [ENDPOINTS.textToSoundResults.method, ENDPOINTS.textToSoundResults.path, json({ run_ids: [1, 2] })],
      [ENDPOINTS.fetchTtsResults.method, ENDPOINTS.fetchTtsResults.path, json({ run_ids: [1, 2] })],
      [ENDPOINTS.ttsStream.method, ENDPOINTS.ttsStream.path, json(ENDPOINTS.ttsStream.body)],
      [ENDPOINTS.translationStream.method, ENDPOINTS.translationStream.path, json(ENDPOINTS.translationStream.body)],
      [ENDPOINTS.translatedStoryResult.method, fill(ENDPOINTS.translatedStoryResult.path, { run_id: 1, target_language: 'de-de' }), undefined],
    ];
    for (const [method, path, body] of calls) {
      for (const badKey of [undefined, 'rxv-not-a-key']) {
        const answer = await send(emu.baseUrl, method, path, body, badKey);
        expect(answer.status, `${method} ${path}`).toBe(AUTH.missingOrInvalid.status);
        const parsed = answer.json() as Record<string, unknown>;
        expect(Object.keys(parsed).sort()).toEqual([...AUTH.missingOrInvalid.fields].sort());
        expect(parsed['status']).toBe(AUTH.missingOrInvalid.status);
      }
    }
  });
});

describe('contract: other endpoints (emulator, raw fetch)', () => {
  it('GET /list-voices: records with the DESIGN fields', async () => {
    const answer = await send(emu.baseUrl, ENDPOINTS.listVoices.method, ENDPOINTS.listVoices.path, undefined, key);
    expect(answer.status).toBe(200);
    const voices = answer.json() as object[];
    expect(voices.length).toBeGreaterThan(0);
    for (const voice of voices) expect(Object.keys(voice)).toEqual(expect.arrayContaining([...ENDPOINTS.listVoices.recordFields]));
  });

  it('POST /create-custom-voice (multipart): voice_id, listed at once; age at least 1; required fields', async () => {
    const { method, path, fields, files } = ENDPOINTS.createCustomVoice;
    const created = await send(emu.baseUrl, method, path, { kind: 'multipart', fields: { ...fields, age: CUSTOM_VOICE_AGE.ok }, files }, key);
    expect(created.status, Buffer.from(created.bytes).toString()).toBe(200);
    const voiceId = (created.json() as Record<string, unknown>)[ENDPOINTS.createCustomVoice.answerField];
    expect(Number.isInteger(voiceId)).toBe(true);
    const voices = (await send(emu.baseUrl, 'GET', ENDPOINTS.listVoices.path, undefined, key)).json() as Array<Record<string, unknown>>;
    expect(voices.some((v) => v['id'] === voiceId)).toBe(true);
    expectValidation(await send(emu.baseUrl, method, path, { kind: 'multipart', fields: { ...fields, age: CUSTOM_VOICE_AGE.tooLow }, files }, key), 'age');
    // no age given: the voice is listed with the default age
    const unaged = (await send(emu.baseUrl, method, path, { kind: 'multipart', fields, files }, key)).json() as Record<string, unknown>;
    const listed = ((await send(emu.baseUrl, 'GET', ENDPOINTS.listVoices.path, undefined, key)).json() as Array<Record<string, unknown>>).find(
      (v) => v['id'] === unaged[ENDPOINTS.createCustomVoice.answerField],
    );
    expect(listed?.['age']).toBe(CUSTOM_VOICE_AGE.default);
    for (const field of ENDPOINTS.createCustomVoice.required) {
      const { [field]: _f, ...restFields } = fields as Record<string, string>;
      const { [field]: _g, ...restFiles } = files as Record<string, (typeof files)['file']>;
      expectValidation(await send(emu.baseUrl, method, path, { kind: 'multipart', fields: restFields, files: restFiles }, key), field);
    }
  });

  it.each(
    [ENDPOINTS.textToSoundResults, ENDPOINTS.fetchTtsResults].flatMap((e) => [2, MAX_BULK_RUN_IDS].map((count) => [e.path, count, e] as const)),
  )('POST %s with %i run ids: run id -> { output_url }', async (_path, count, endpoint) => {
    const family = TASK_FAMILIES.find((f) => f.name === endpoint.family)!;
    const runIds: number[] = [];
    for (let i = 0; i < count; i++) runIds.push((await runTask(family)).runId);
    const answer = await send(emu.baseUrl, endpoint.method, endpoint.path, json({ run_ids: runIds }), key);
    expect(answer.status).toBe(200);
    const body = answer.json() as Record<string, Record<string, unknown>>;
    expect(Object.keys(body).sort()).toEqual(runIds.map(String).sort());
    for (const id of runIds) expect(typeof body[String(id)]?.[endpoint.entryField]).toBe('string');
  });

  it('POST /text-to-sound without duration: the default length of sound (control: a duration given is kept)', async () => {
    const family = TASK_FAMILIES.find((f) => f.name === 'text-to-sound')!;
    const secondsOf = async (body: Record<string, unknown>): Promise<number> => {
      const { runId } = await runTask({ ...family, create: { ...family.create, body: json(body) } });
      const result = await send(emu.baseUrl, family.result.method, fill(family.result.path, { run_id: runId }), undefined, key);
      expect(result.status).toBe(200);
      return wavSeconds(result.bytes);
    };
    expect(await secondsOf({ prompt: 'rain on a tin roof' })).toBeCloseTo(DEFAULT_SOUND_SECONDS, 3);
    expect(await secondsOf({ prompt: 'rain on a tin roof', duration: 3 })).toBeCloseTo(3, 3);
  });

  it('POST /tts-stream: audio bytes with X-Credits-Required', async () => {
    const answer = await send(emu.baseUrl, ENDPOINTS.ttsStream.method, ENDPOINTS.ttsStream.path, json(ENDPOINTS.ttsStream.body), key);
    expect(answer.status).toBe(200);
    expect(Buffer.from(answer.bytes.subarray(0, 4)).toString('ascii')).toBe('RIFF');
    expect(Number(answer.headers.get(ENDPOINTS.ttsStream.creditsHeader))).toBeGreaterThan(0);
  });

  it('POST /translation/stream: text/event-stream with X-Credits-Required', async () => {
    const answer = await send(emu.baseUrl, ENDPOINTS.translationStream.method, ENDPOINTS.translationStream.path, json(ENDPOINTS.translationStream.body), key);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toContain(ENDPOINTS.translationStream.contentType);
    expect(answer.headers.get(ENDPOINTS.translationStream.creditsHeader)).not.toBeNull();
    expect(Buffer.from(answer.bytes).toString('utf8')).toMatch(/^data: /m);
  });

  it('GET /translated-story-result/{run_id}/{target_language}: transcript only with include_transcript=true', async () => {
    const { runId } = await runTask(TASK_FAMILIES.find((f) => f.name === 'story')!);
    const path = fill(ENDPOINTS.translatedStoryResult.path, { run_id: runId, target_language: 'de-de' });
    const plain = await send(emu.baseUrl, 'GET', path, undefined, key);
    expect(plain.status).toBe(200);
    const without = plain.json() as Record<string, unknown>;
    expect(Object.keys(without)).toEqual(expect.arrayContaining([...ENDPOINTS.translatedStoryResult.fields]));
    expect(without).not.toHaveProperty(ENDPOINTS.translatedStoryResult.transcriptField);
    const withTranscript = (await send(emu.baseUrl, 'GET', `${path}?${ENDPOINTS.translatedStoryResult.query}=true`, undefined, key)).json() as Record<string, unknown>;
    expect(Array.isArray(withTranscript[ENDPOINTS.translatedStoryResult.transcriptField])).toBe(true);
  });
});

describe('contract: limits (emulator, raw fetch)', () => {
  it.each(LIMITS.map((l) => [l.path, l.name, l] as const))('%s %s', async (_path, _name, limit) => {
    const answer = await send(emu.baseUrl, 'POST', limit.path, json(limit.body), key);
    if (limit.status === 422) expectValidation(answer);
    else expect(answer.status, Buffer.from(answer.bytes).toString().slice(0, 300)).toBe(200);
  });
});

// ---------------------------------------------------------------------------
// Live WebSocket
// ---------------------------------------------------------------------------

interface LiveRun {
  frames: Array<Record<string, unknown>>;
  binary: Buffer[];
  code: number;
}

/**
 * Open the live socket, send `frames` (JSON) once open, collect everything until close, or
 * until a frame of type `stopAt` came (then the client closes; rejects after `withinMs`).
 */
function live(url: string, frames: object[], headers: Record<string, string> = {}, stopAt?: { type: string; withinMs: number }): Promise<LiveRun> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { headers });
    const run: LiveRun = { frames: [], binary: [], code: 0 };
    const timer = stopAt && setTimeout(() => {
      socket.terminate();
      reject(new Error(`no ${stopAt.type} within ${stopAt.withinMs} ms`));
    }, stopAt.withinMs);
    socket.on('open', () => {
      for (const frame of frames) socket.send(JSON.stringify(frame));
    });
    socket.on('message', (data: Buffer, isBinary: boolean) => {
      if (isBinary) run.binary.push(data);
      else run.frames.push(JSON.parse(data.toString('utf8')) as Record<string, unknown>);
      if (stopAt && run.frames.at(-1)?.['type'] === stopAt.type) {
        clearTimeout(timer);
        socket.close();
      }
    });
    socket.on('close', (code) => resolve({ ...run, code }));
    socket.on('error', reject);
  });
}

const wsBase = (): string => emu.baseUrl.replace(/^http/, 'ws');
const start = { type: LIVE.clientFrames.start, voice_id: 1, language: 'en-us', output_format: 'wav', word_timestamps: true };

describe('contract: live session (emulator, raw WebSocket)', () => {
  it('a whole session: ready, segments in order, audio frames, done, close 1000', async () => {
    const run = await live(
      `${wsBase()}${LIVE.path}`,
      [start, { type: LIVE.clientFrames.chunk, [LIVE.chunkTextField]: 'First one here. Second one now.' }, { type: LIVE.clientFrames.done }],
      { [LIVE.authHeader]: key },
    );
    expect(run.code).toBe(LIVE.close.normal);
    const types = run.frames.map((f) => f['type']);
    expect(types[0]).toBe(LIVE.serverFrames.ready.type);
    expect(types.at(-1)).toBe(LIVE.serverFrames.done.type);
    expect(types.filter((t) => t === LIVE.serverFrames.segmentStart.type)).toHaveLength(2);
    expect(types.filter((t) => t === LIVE.serverFrames.segmentDone.type)).toHaveLength(2);
    for (const frame of run.frames) {
      const spec = Object.values(LIVE.serverFrames).find((s) => s.type === frame['type']);
      expect(spec, String(frame['type'])).toBeDefined();
      expect(Object.keys(frame)).toEqual(expect.arrayContaining(['type', ...spec!.fields]));
    }
    const ready = run.frames[0]!;
    expect(typeof ready['session_id']).toBe('string');
    expect(Number.isInteger(ready['run_id'])).toBe(true);
    const starts = run.frames.filter((f) => f['type'] === LIVE.serverFrames.segmentStart.type);
    expect(starts.map((f) => f['segment_id'])).toEqual([0, 1]);
    expect(starts.map((f) => (f['text'] as string).trim())).toEqual(['First one here.', 'Second one now.']);
    for (const f of starts) {
      for (const w of f['word_timestamps'] as object[]) expect(Object.keys(w)).toEqual(expect.arrayContaining([...LIVE.wordTimestampFields]));
    }
    expect(run.binary.length).toBeGreaterThan(0);
    for (const b of run.binary) expect(b.byteLength).toBeLessThanOrEqual(LIVE.maxBinaryFrame);
  });

  // idle_timeout is longer than the wait for segment.start: a segment that came, came from a
  // boundary; an emulator that started an idle timer for these chunks fails the bound.
  const longIdle = { ...start, idle_timeout: LIVE.longIdleTimeout };
  const firstSegment = { type: LIVE.serverFrames.segmentStart.type, withinMs: (LIVE.longIdleTimeout * 1000) / 3 };
  const chunk = (text: string): object => ({ type: LIVE.clientFrames.chunk, [LIVE.chunkTextField]: text });
  const segmentTexts = (run: LiveRun): unknown[] =>
    run.frames.filter((f) => f['type'] === LIVE.serverFrames.segmentStart.type).map((f) => f['text']);

  it('rule 1: a chunk that ends a complete sentence is spoken at once, with no idle_timeout wait', async () => {
    for (const text of LIVE.sentenceEndChunks) {
      const run = await live(`${wsBase()}${LIVE.path}`, [longIdle, chunk(text)], { [LIVE.authHeader]: key }, firstSegment);
      expect(segmentTexts(run), JSON.stringify(text)).toEqual([text.trim()]);
    }
  });

  it('rule 1 controls: a title at a chunk end, or text without a boundary, waits (joins the next chunk)', async () => {
    for (const text of [...LIVE.heldChunks, ...LIVE.trailingChunks]) {
      // were the first chunk spoken on its own, its segment would come first, alone
      const run = await live(`${wsBase()}${LIVE.path}`, [longIdle, chunk(text), chunk(' Smith is here.')], { [LIVE.authHeader]: key }, firstSegment);
      expect(segmentTexts(run), text).toEqual([`${text} Smith is here.`]);
    }
  });

  it('rule 2: idle_timeout flushes trailing text without a boundary', async () => {
    const run = await live(
      `${wsBase()}${LIVE.path}`,
      [{ ...start, idle_timeout: 0.05 }, chunk(LIVE.trailingChunks[0])],
      { [LIVE.authHeader]: key },
      firstSegment,
    );
    expect(segmentTexts(run)).toEqual([LIVE.trailingChunks[0]]);
  });

  it('the key in the api_key query works too', async () => {
    const run = await live(`${wsBase()}${LIVE.path}?${LIVE.authQuery}=${key}`, [start, { type: LIVE.clientFrames.done }]);
    expect(run.frames.map((f) => f['type'])).toEqual([LIVE.serverFrames.ready.type, LIVE.serverFrames.done.type]);
    expect(run.code).toBe(LIVE.close.normal);
  });

  it('a missing or invalid key: close 4401', async () => {
    expect((await live(`${wsBase()}${LIVE.path}`, [start])).code).toBe(LIVE.close.invalidKey);
    expect((await live(`${wsBase()}${LIVE.path}?${LIVE.authQuery}=nope`, [start])).code).toBe(LIVE.close.invalidKey);
    expect((await live(`${wsBase()}${LIVE.path}`, [start], { [LIVE.authHeader]: 'nope' })).code).toBe(LIVE.close.invalidKey);
  });

  it('a malformed first frame (voice_id missing, or not session.start): session.error, then 4400', async () => {
    const { voice_id: _v, ...noVoice } = start;
    for (const first of [noVoice, { type: LIVE.clientFrames.chunk, text: 'Hello.' }]) {
      const run = await live(`${wsBase()}${LIVE.path}`, [first], { [LIVE.authHeader]: key });
      expect(run.frames.map((f) => f['type'])).toEqual([LIVE.serverFrames.error.type]);
      expect(typeof run.frames[0]!['error']).toBe('string');
      expect(run.code).toBe(LIVE.close.rejected);
    }
  });

  it('credits run out mid-session: one session.error, then 4402', async () => {
    const run = await live(
      `${wsBase()}${LIVE.path}`,
      [start, { type: LIVE.clientFrames.chunk, text: 'One sentence here. Another one there. And a third one.' }],
      { [LIVE.authHeader]: POOR_KEY },
    );
    expect(run.frames.filter((f) => f['type'] === LIVE.serverFrames.error.type)).toHaveLength(1);
    expect(run.frames.at(-1)!['type']).toBe(LIVE.serverFrames.error.type);
    expect(run.code).toBe(LIVE.close.creditsExhausted);
  });

  it('a path not in the contract does not reach the live session (the control)', async () => {
    const run = await live(`${wsBase()}/live-tts/wss`, [start], { [LIVE.authHeader]: key }).catch((error: unknown) => error);
    expect(run).toBeInstanceOf(Error);
  });
});

