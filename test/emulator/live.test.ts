/**
 * The emulator's live speech session over real sockets (port 0), driven with the `ws`
 * package directly as the client.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import { routes } from '../../src/core/routes.js';
import type { EmulatorOptions } from '../../src/emulator/options.js';
import { groupWords } from '../../src/emulator/synth/espeak.js';
import { liveSessionStats } from '../../src/emulator/live.js';
import { until } from '../client/helpers.js';
import { createSynthPool } from '../../src/emulator/synth/pool.js';
import { parseWavHeader, WAV_HEADER_BYTES } from '../../src/audio/wav.js';
import { MAX_AUDIO_FRAME_BYTES, ServerFrameSchema, type ServerFrame, type SessionStartFrame } from '../../src/live/protocol.js';

type Received = { kind: 'json'; frame: ServerFrame } | { kind: 'binary'; data: Buffer };

interface Client {
  ws: WebSocket;
  received: Received[];
  /** Resolves with the close code and reason (1006 for an abnormal drop). */
  closed: Promise<{ code: number; reason: string }>;
  /** Resolves once a JSON frame matching `predicate` has arrived. */
  waitFor(predicate: (frame: ServerFrame) => boolean, timeoutMs?: number): Promise<ServerFrame>;
  send(frame: object): void;
  jsonFrames(): ServerFrame[];
}

const emulators: Emulator[] = [];
const sockets: WebSocket[] = [];

afterEach(async () => {
  for (const ws of sockets.splice(0)) ws.terminate();
  await Promise.all(emulators.splice(0).map((e) => e.close()));
});

async function emulator(options: EmulatorOptions = {}): Promise<Emulator> {
  const started = await startEmulator({ synth: 'tone', retryBaseMs: 2, ...options });
  emulators.push(started);
  return started;
}

function connect(url: string, headers: Record<string, string> = {}): Client {
  const ws = new WebSocket(url, { headers });
  sockets.push(ws);
  const received: Received[] = [];
  const waiters: { predicate: (f: ServerFrame) => boolean; resolve: (f: ServerFrame) => void }[] = [];
  ws.on('message', (data: Buffer, isBinary: boolean) => {
    if (isBinary) {
      received.push({ kind: 'binary', data: Buffer.from(data) });
      return;
    }
    const frame = ServerFrameSchema.parse(JSON.parse(data.toString('utf8')));
    received.push({ kind: 'json', frame });
    for (const waiter of [...waiters]) {
      if (waiter.predicate(frame)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(frame);
      }
    }
  });
  ws.on('error', () => {});
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on('close', (code: number, reason: Buffer) => resolve({ code, reason: reason.toString() })),
  );
  const opened = new Promise<void>((resolve) => ws.once('open', () => resolve()));
  return {
    ws,
    received,
    closed,
    waitFor(predicate, timeoutMs = 5_000) {
      const already = received.find((r) => r.kind === 'json' && predicate(r.frame));
      if (already?.kind === 'json') return Promise.resolve(already.frame);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('timed out waiting for a frame')), timeoutMs);
        waiters.push({
          predicate,
          resolve: (f) => {
            clearTimeout(timer);
            resolve(f);
          },
        });
      });
    },
    send(frame) {
      void opened.then(() => ws.send(JSON.stringify(frame)));
    },
    jsonFrames() {
      return received.flatMap((r) => (r.kind === 'json' ? [r.frame] : []));
    },
  };
}

/** The live address with `api_key` in the query (`null`: no key in the query). */
function liveUrl(e: Emulator, key: string | null = e.apiKey): string {
  return key === null ? e.wsUrl : `${e.wsUrl}?api_key=${encodeURIComponent(key)}`;
}

function start(overrides: Partial<SessionStartFrame> = {}): SessionStartFrame {
  return { type: 'session.start', voice_id: 1, language: 'en-us', output_format: 'wav', ...overrides };
}

interface DeliveredSegment {
  segment_id: number;
  text: string;
  audio: Buffer;
  frames: Buffer[];
  word_timestamps?: { word: string; start: number; end: number }[] | undefined;
}

/**
 * Check the strict per-segment order (start, binaries, done | skipped) and return the
 * delivered segments and the skipped ones.
 */
function segmentsOf(received: Received[]): { delivered: DeliveredSegment[]; skipped: { segment_id: number; text: string }[]; ids: number[] } {
  const delivered: DeliveredSegment[] = [];
  const skipped: { segment_id: number; text: string }[] = [];
  const ids: number[] = [];
  let open: DeliveredSegment | undefined;
  for (const r of received) {
    if (r.kind === 'binary') {
      expect(open, 'binary frame outside a segment').toBeDefined();
      open?.frames.push(r.data);
      continue;
    }
    const f = r.frame;
    if (f.type === 'segment.start') {
      expect(open, 'segment.start while another segment is open').toBeUndefined();
      open = { segment_id: f.segment_id, text: f.text, audio: Buffer.alloc(0), frames: [], word_timestamps: f.word_timestamps };
      ids.push(f.segment_id);
    } else if (f.type === 'segment.done') {
      expect(open?.segment_id).toBe(f.segment_id);
      if (open) {
        open.audio = Buffer.concat(open.frames);
        delivered.push(open);
      }
      open = undefined;
    } else if (f.type === 'segment.skipped') {
      expect(open).toBeUndefined();
      skipped.push({ segment_id: f.segment_id, text: f.text });
      ids.push(f.segment_id);
    } else {
      expect(open, `${f.type} inside a segment`).toBeUndefined();
    }
  }
  expect(ids).toEqual(ids.map((_, i) => ids[0]! + i));
  return { delivered, skipped, ids };
}

/** Samples in a WAV segment (asserting it is one whole 16-bit mono file). */
function wavSamples(audio: Buffer, rate = 22050): number {
  const info = parseWavHeader(audio);
  expect(info).toBeDefined();
  expect(info?.dataOffset).toBe(WAV_HEADER_BYTES);
  expect(info?.sampleRate).toBe(rate);
  expect(info?.channels).toBe(1);
  expect(info?.bitsPerSample).toBe(16);
  expect(info?.dataBytes).toBe(audio.byteLength - WAV_HEADER_BYTES);
  return (audio.byteLength - WAV_HEADER_BYTES) / 2;
}

/**
 * Hold every synthesis of `e` until the test releases it: `releaseUntilSent(n)` lets
 * syntheses through, one at a time, until `n` segments went out (`stats` of the open
 * session); `releaseAll()` lets every synthesis through from then on.
 */
function holdSyntheses(e: Emulator): {
  releaseUntilSent(n: number, stats: () => { sent: number } | undefined): Promise<void>;
  releaseAll(): void;
} {
  const load = e.context.synthesizer.bind(e.context);
  const waiting: Array<() => void> = [];
  let holding = true;
  e.context.synthesizer = async () => {
    const synth = await load();
    return {
      ...synth,
      async synthesize(request) {
        if (holding) await new Promise<void>((resolve) => waiting.push(resolve));
        return synth.synthesize(request);
      },
    };
  };
  return {
    releaseAll() {
      holding = false;
      for (const release of waiting.splice(0)) release();
    },
    async releaseUntilSent(n, stats) {
      while ((stats()?.sent ?? 0) < n) {
        expect(await until(() => waiting.length > 0 || (stats()?.sent ?? 0) >= n)).toBe(true);
        const sent = stats()?.sent ?? 0;
        if (sent >= n) break;
        waiting.shift()?.();
        expect(await until(() => (stats()?.sent ?? 0) > sent)).toBe(true);
      }
    },
  };
}

describe('live session: happy path', () => {
  it('answers session.ready, delivers ordered segments, then session.done and 1000', async () => {
    const e = await emulator();
    const c = connect(liveUrl(e));
    c.send(start());
    const ready = await c.waitFor((f) => f.type === 'session.ready');
    expect(ready.type === 'session.ready' && ready.run_id).toBeGreaterThan(0);
    if (ready.type !== 'session.ready') throw new Error('unreachable');
    expect(ready.session_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(ready.config).toMatchObject({ voice_id: 1, language: 'en-us', output_format: 'wav', sample_rate: 22050, idle_timeout: 1 });
    expect(e.context.runs.get(ready.run_id)?.kind).toBe('text-to-speech');

    c.send({ type: 'text.chunk', text: 'Hello world. How are ' });
    c.send({ type: 'text.chunk', text: 'you? Fine thanks' });
    c.send({ type: 'text.done' });
    expect(await c.closed).toEqual({ code: 1000, reason: 'session done' });

    const { delivered, skipped } = segmentsOf(c.received);
    expect(skipped).toEqual([]);
    expect(delivered.map((s) => [s.segment_id, s.text])).toEqual([
      [0, 'Hello world.'],
      [1, ' How are you?'],
      [2, ' Fine thanks'],
    ]);
    for (const s of delivered) {
      expect(s.word_timestamps).toBeUndefined();
      expect(wavSamples(s.audio)).toBe(Math.round(s.text.trim().split(/\s+/).length * 0.25 * 22050));
    }
    const types = c.jsonFrames().map((f) => f.type);
    expect(types[0]).toBe('session.ready');
    expect(types.at(-1)).toBe('session.done');
    expect(types.filter((t) => t === 'session.done')).toHaveLength(1);
  });

  it('defaults to mp3 output (the service default) at a rate mp3 can carry', async () => {
    const e = await emulator();
    const c = connect(liveUrl(e));
    c.send({ type: 'session.start', voice_id: 2, sample_rate: 23000 });
    const ready = await c.waitFor((f) => f.type === 'session.ready');
    expect(ready.type === 'session.ready' && ready.config).toMatchObject({ output_format: 'mp3', sample_rate: 22050 });
    c.send({ type: 'text.chunk', text: 'An mp3 segment.' });
    c.send({ type: 'text.done' });
    expect((await c.closed).code).toBe(1000);
    const [segment] = segmentsOf(c.received).delivered;
    expect(segment?.audio[0]).toBe(0xff);
    expect((segment?.audio[1] ?? 0) & 0xe0).toBe(0xe0);
    expect(segment?.audio.byteLength).toBeGreaterThan(1000);
  });

  it('honours sample_rate for wav and text.done with no text ends at once', async () => {
    const e = await emulator();
    const c = connect(liveUrl(e));
    c.send(start({ sample_rate: 16000 }));
    c.send({ type: 'text.chunk', text: 'Two words' });
    c.send({ type: 'text.done' });
    expect((await c.closed).code).toBe(1000);
    const [segment] = segmentsOf(c.received).delivered;
    expect(wavSamples(segment!.audio, 16000)).toBe(8000);

    const empty = connect(liveUrl(e));
    empty.send(start());
    empty.send({ type: 'text.chunk', text: '   \n ' });
    empty.send({ type: 'text.done' });
    expect((await empty.closed).code).toBe(1000);
    expect(empty.jsonFrames().map((f) => f.type)).toEqual(['session.ready', 'session.done']);
  });

  it('splits long segments into binary frames of at most 64 KiB that concatenate to one WAV', async () => {
    const e = await emulator();
    const c = connect(liveUrl(e));
    c.send(start());
    const words = Array.from({ length: 40 }, (_, i) => `word${i}`).join(' ');
    c.send({ type: 'text.chunk', text: `${words}.` });
    c.send({ type: 'text.done' });
    expect((await c.closed).code).toBe(1000);
    const [segment] = segmentsOf(c.received).delivered;
    expect(segment!.frames.length).toBeGreaterThanOrEqual(7);
    for (const frame of segment!.frames) expect(frame.byteLength).toBeLessThanOrEqual(MAX_AUDIO_FRAME_BYTES);
    expect(segment!.frames.slice(0, -1).every((f) => f.byteLength === MAX_AUDIO_FRAME_BYTES)).toBe(true);
    expect(wavSamples(segment!.audio)).toBe(Math.round(40 * 0.25 * 22050));
  });

  it('word timestamps on the tone synth are exact', async () => {
    const e = await emulator({ toneWordSeconds: 0.2 });
    const c = connect(liveUrl(e));
    c.send(start({ word_timestamps: true }));
    c.send({ type: 'text.chunk', text: 'One two three. Four five.' });
    c.send({ type: 'text.done' });
    expect((await c.closed).code).toBe(1000);
    const { delivered } = segmentsOf(c.received);
    expect(delivered.map((s) => s.word_timestamps)).toEqual([
      [
        { word: 'One', start: 0, end: 0.2 },
        { word: 'two', start: 0.2, end: 0.4 },
        { word: 'three.', start: 0.4, end: 0.6000000000000001 },
      ],
      [
        { word: 'Four', start: 0, end: 0.2 },
        { word: 'five.', start: 0.2, end: 0.4 },
      ],
    ]);
    expect(wavSamples(delivered[0]!.audio)).toBe(Math.round(0.6 * 22050));
  });
});

describe('live session: rejections', () => {
  const rejected = async (c: Client): Promise<string> => {
    const closed = await c.closed;
    expect(closed.code).toBe(4400);
    const frames = c.jsonFrames();
    expect(frames).toHaveLength(1);
    const [error] = frames;
    expect(error?.type).toBe('session.error');
    return error?.type === 'session.error' ? error.error : '';
  };

  it('closes 4400 after session.error for a bad first frame', async () => {
    const e = await emulator();
    const notJson = connect(liveUrl(e));
    await new Promise((r) => notJson.ws.once('open', r));
    notJson.ws.send('hello');
    expect(await rejected(notJson)).toMatch(/not valid JSON/);

    const binary = connect(liveUrl(e));
    await new Promise((r) => binary.ws.once('open', r));
    binary.ws.send(Buffer.from([1, 2, 3]));
    expect(await rejected(binary)).toMatch(/binary/);

    const wrongType = connect(liveUrl(e));
    wrongType.send({ type: 'text.chunk', text: 'Hello.' });
    expect(await rejected(wrongType)).toMatch(/must be session\.start/);

    const invalid = connect(liveUrl(e));
    invalid.send({ type: 'session.start', language: 'en-us' });
    expect(await rejected(invalid)).toMatch(/voice_id/);

    const badField = connect(liveUrl(e));
    badField.send(start({ idle_timeout: -1 }));
    expect(await rejected(badField)).toMatch(/idle_timeout/);
  });

  it('closes 4400 when no first frame arrives in time', async () => {
    const e = await emulator({ liveStartTimeoutMs: 100 });
    const t0 = Date.now();
    const silent = connect(liveUrl(e));
    expect(await rejected(silent)).toMatch(/no session\.start within 0\.1 s/);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(90);
  });

  it('closes 4400 for an unknown voice and an output format the emulator cannot encode', async () => {
    const e = await emulator();
    const voice = connect(liveUrl(e));
    voice.send(start({ voice_id: 99_999 }));
    expect(await rejected(voice)).toMatch(/voice 99999/);

    const flac = connect(liveUrl(e));
    flac.send(start({ output_format: 'flac' }));
    expect(await rejected(flac)).toMatch(/flac.*not supported.*wav/);
  });

  it('closes 4400 for a language the service does not speak with the tone synth too (control: a spoken one is ready)', async () => {
    const e = await emulator({ synth: 'tone' });
    const c = connect(liveUrl(e));
    c.send(start({ language: 'zz-zz' }));
    expect(await rejected(c)).toMatch(/language "zz-zz" is not supported/);
    const ok = connect(liveUrl(e));
    ok.send(start({ language: 'de-de' }));
    expect((await ok.waitFor((f) => f.type === 'session.ready', 10_000)).type).toBe('session.ready');
  });

  it('closes 4400 for a language the synthesizer does not speak (espeak)', async () => {
    const e = await emulator({ synth: 'espeak' });
    const c = connect(liveUrl(e));
    c.send(start({ language: 'xx-yy' }));
    expect(await rejected(c)).toMatch(/language "xx-yy" is not supported/);
    // The same emulator speaks French, with word timestamps that fit the audio.
    const ok = connect(liveUrl(e));
    ok.send(start({ language: 'fr-fr', voice_id: 4, word_timestamps: true }));
    expect((await ok.waitFor((f) => f.type === 'session.ready', 10_000)).type).toBe('session.ready');
    ok.send({ type: 'text.chunk', text: 'Bonjour tout le monde. Comment allez-vous ?' });
    ok.send({ type: 'text.done' });
    expect((await ok.closed).code).toBe(1000);
    const { delivered } = segmentsOf(ok.received);
    expect(delivered).toHaveLength(2);
    for (const segment of delivered) {
      const samples = wavSamples(segment.audio);
      const pcm = new Int16Array(segment.audio.buffer.slice(segment.audio.byteOffset + WAV_HEADER_BYTES, segment.audio.byteOffset + segment.audio.byteLength));
      expect(segment.word_timestamps?.map((w) => w.word)).toEqual(groupWords(segment.text));
      const last = segment.word_timestamps?.at(-1);
      expect(last?.end).toBeCloseTo(samples / 22050, 2);
      for (const w of segment.word_timestamps ?? []) {
        let sum = 0;
        const a = Math.floor(w.start * 22050);
        const b = Math.ceil(w.end * 22050);
        for (let i = a; i < b; i++) sum += (pcm[i] ?? 0) ** 2;
        expect(Math.sqrt(sum / Math.max(1, b - a))).toBeGreaterThan(500);
      }
    }
  }, 20_000);

  it('closes 4401 without a key or with a bad key (query and header)', async () => {
    const e = await emulator();
    const none = connect(liveUrl(e, null));
    expect((await none.closed).code).toBe(4401);
    const badQuery = connect(liveUrl(e, 'wrong-key'));
    expect((await badQuery.closed).code).toBe(4401);
    const badHeader = connect(liveUrl(e, null), { 'x-api-key': 'wrong-key' });
    expect((await badHeader.closed).code).toBe(4401);
    const goodHeader = connect(liveUrl(e, null), { 'x-api-key': e.apiKey });
    goodHeader.send(start());
    expect((await goodHeader.waitFor((f) => f.type === 'session.ready')).type).toBe('session.ready');
    for (const c of [none, badQuery, badHeader]) expect(c.jsonFrames()).toEqual([]);
  });
});

describe('live session: segmentation and timing', () => {
  it('flushes trailing text after idle_timeout, restarting the timer on each chunk', async () => {
    const e = await emulator();
    const c = connect(liveUrl(e));
    c.send(start({ idle_timeout: 0.3 }));
    await c.waitFor((f) => f.type === 'session.ready');
    // Five chunks 100 ms apart span 400 ms, more than idle_timeout (300 ms): a timer that
    // did not restart on each chunk would flush in between and cut the text in two.
    const pieces = ['Trailing', ' text', ' without', ' a', ' boundary'];
    for (const [i, piece] of pieces.entries()) {
      if (i > 0) await new Promise((r) => setTimeout(r, 100));
      c.send({ type: 'text.chunk', text: piece });
    }
    const segment = await c.waitFor((f) => f.type === 'segment.start');
    expect(segment).toMatchObject({ segment_id: 0, text: 'Trailing text without a boundary' });
    // The session goes on: more text, then the end.
    c.send({ type: 'text.chunk', text: ' and more.' });
    c.send({ type: 'text.done' });
    expect((await c.closed).code).toBe(1000);
    expect(segmentsOf(c.received).delivered.map((s) => s.text)).toEqual(['Trailing text without a boundary', ' and more.']);
  });

  it('flushes with a small idle_timeout (0.05 s) and keeps whitespace-only text for the next segment', async () => {
    const e = await emulator();
    const c = connect(liveUrl(e));
    c.send(start({ idle_timeout: 0.05 }));
    c.send({ type: 'text.chunk', text: 'Quick flush' });
    await c.waitFor((f) => f.type === 'segment.done');
    c.send({ type: 'text.chunk', text: '  ' });
    // Wait until the idle timer has had its chance, on an event: a control session with the
    // same idle_timeout, given trailing text now, flushes it (so would this one, if the
    // whitespace were flushed on its own).
    const control = connect(liveUrl(e));
    control.send(start({ idle_timeout: 0.05 }));
    await control.waitFor((f) => f.type === 'session.ready');
    control.send({ type: 'text.chunk', text: 'Control text' });
    await control.waitFor((f) => f.type === 'segment.start');
    c.send({ type: 'text.chunk', text: 'second part' });
    await c.waitFor((f) => f.type === 'segment.done' && f.segment_id === 1);
    c.send({ type: 'text.done' });
    expect((await c.closed).code).toBe(1000);
    expect(segmentsOf(c.received).delivered.map((s) => s.text)).toEqual(['Quick flush', '  second part']);
  });

  it('flushes complete sentences at once, without waiting for idle_timeout', async () => {
    const e = await emulator();
    const c = connect(liveUrl(e));
    c.send(start({ idle_timeout: 30 }));
    await c.waitFor((f) => f.type === 'session.ready');
    const t0 = Date.now();
    c.send({ type: 'text.chunk', text: 'A whole sentence. And the' });
    const segment = await c.waitFor((f) => f.type === 'segment.done');
    expect(Date.now() - t0).toBeLessThan(2_000);
    expect(segment).toMatchObject({ segment_id: 0 });
    expect(c.jsonFrames().filter((f) => f.type === 'segment.start')).toHaveLength(1);
    c.send({ type: 'text.done' });
    expect((await c.closed).code).toBe(1000);
    expect(segmentsOf(c.received).delivered.map((s) => s.text)).toEqual(['A whole sentence.', ' And the']);
  });

  it('speaks a sentence that ends a chunk at once, decided as if the text ended there; titles and initials wait', async () => {
    const e = await emulator();
    const c = connect(liveUrl(e));
    // idle_timeout 60 s (the most): every segment below that arrives within waitFor's 5 s came from a boundary.
    c.send(start({ idle_timeout: 60 }));
    c.send({ type: 'text.chunk', text: 'Hello there.' });
    expect(await c.waitFor((f) => f.type === 'segment.start' && f.segment_id === 0)).toMatchObject({ text: 'Hello there.' });
    // "Dr." at a chunk's end is no sentence end: it waits and joins what follows.
    c.send({ type: 'text.chunk', text: ' Ask Dr.' });
    c.send({ type: 'text.chunk', text: ' Smith now. ' });
    expect(await c.waitFor((f) => f.type === 'segment.start' && f.segment_id === 1)).toMatchObject({ text: ' Ask Dr. Smith now.' });
    c.send({ type: 'text.chunk', text: 'See J.' });
    c.send({ type: 'text.chunk', text: ' R. R. Tolkien!' });
    expect(await c.waitFor((f) => f.type === 'segment.start' && f.segment_id === 2)).toMatchObject({ text: ' See J. R. R. Tolkien!' });
    // The service guesses: a number and a stop at a chunk's end ends the sentence ("3." then
    // "5 euros." are two segments). rxvoice's client-side boundaries hold such stops back.
    c.send({ type: 'text.chunk', text: ' It costs 3.' });
    expect(await c.waitFor((f) => f.type === 'segment.start' && f.segment_id === 3)).toMatchObject({ text: ' It costs 3.' });
    c.send({ type: 'text.chunk', text: '5 euros.' });
    // "the U.S. The": the stop ends the sentence, the word after it waits as trailing text
    c.send({ type: 'text.chunk', text: ' In the U.S. The' });
    expect(await c.waitFor((f) => f.type === 'segment.start' && f.segment_id === 5)).toMatchObject({ text: ' In the U.S.' });
    c.send({ type: 'text.chunk', text: ' end.' });
    expect(await c.waitFor((f) => f.type === 'segment.start' && f.segment_id === 6)).toMatchObject({ text: ' The end.' });
    c.send({ type: 'text.done' });
    expect((await c.closed).code).toBe(1000);
    expect(segmentsOf(c.received).delivered.map((s) => s.text)).toEqual([
      'Hello there.',
      ' Ask Dr. Smith now.',
      ' See J. R. R. Tolkien!',
      ' It costs 3.',
      '5 euros.',
      ' In the U.S.',
      ' The end.',
    ]);
  });

  it('starts no idle timer for a chunk that ends a sentence; trailing text and titles start one (the control)', async () => {
    const e = await emulator();
    const armed = (): boolean[] => liveSessionStats(e.context).map((s) => s.idleFlushArmed);
    const cases = ['Hello there.', 'How are you? ', 'Great news! ', 'It costs 3.5 dollars. ', '你好。', 'Hello there.\n\n', '"Stop!" '];
    for (const text of cases) {
      const c = connect(liveUrl(e));
      c.send(start({ idle_timeout: 60, language: text === '你好。' ? 'zh-cn' : 'en-us' }));
      c.send({ type: 'text.chunk', text });
      expect(await c.waitFor((f) => f.type === 'segment.start'), JSON.stringify(text)).toMatchObject({ segment_id: 0, text: text.trimEnd() });
      expect(armed(), JSON.stringify(text)).toEqual([false]);
      c.ws.close();
      await c.closed;
    }
    // the control: the same check sees a timer where one runs (text is read in order, so once
    // the second chunk's segment started, the first chunk was handled)
    for (const held of ['See Dr.', 'Trailing text']) {
      const c = connect(liveUrl(e));
      c.send(start({ idle_timeout: 60 }));
      c.send({ type: 'text.chunk', text: held });
      expect(await until(() => armed()[0] === true), held).toBe(true);
      c.send({ type: 'text.chunk', text: ' Smith is here.' });
      expect(await c.waitFor((f) => f.type === 'segment.start')).toMatchObject({ text: `${held} Smith is here.` });
      expect(armed()).toEqual([false]);
      c.ws.close();
      await c.closed;
    }
  });

  it('flushes complete sentences at once in German (ordinals wait) and Japanese', async () => {
    const e = await emulator();
    const de = connect(liveUrl(e));
    de.send(start({ idle_timeout: 30, language: 'de-de' }));
    de.send({ type: 'text.chunk', text: 'Er kommt am 3.' });
    de.send({ type: 'text.chunk', text: ' Oktober.' });
    de.send({ type: 'text.chunk', text: ' Gut' });
    expect(await de.waitFor((f) => f.type === 'segment.start')).toMatchObject({ segment_id: 0, text: 'Er kommt am 3. Oktober.' });
    de.send({ type: 'text.done' });
    expect((await de.closed).code).toBe(1000);
    expect(segmentsOf(de.received).delivered.map((s) => s.text)).toEqual(['Er kommt am 3. Oktober.', ' Gut']);

    const ja = connect(liveUrl(e));
    ja.send(start({ idle_timeout: 30, language: 'ja-jp' }));
    // "。" is certain with the next character, whatever it is
    ja.send({ type: 'text.chunk', text: 'こんにちは。' });
    ja.send({ type: 'text.chunk', text: '元' });
    expect(await ja.waitFor((f) => f.type === 'segment.start')).toMatchObject({ segment_id: 0, text: 'こんにちは。' });
    ja.ws.close();
  });

  it('never interleaves segments with concurrency > 1 and random synthesis latencies', async () => {
    const e = await emulator({ concurrency: 4, faults: { synthesisLatencyMs: [0, 60] } });
    const c = connect(liveUrl(e));
    c.send(start());
    const sentences = Array.from({ length: 16 }, (_, i) => `${i === 0 ? '' : ' '}Sentence number ${i} ${'la '.repeat(i % 5)}here.`);
    for (const s of sentences) c.send({ type: 'text.chunk', text: s });
    c.send({ type: 'text.done' });
    expect((await c.closed).code).toBe(1000);
    const { delivered, ids } = segmentsOf(c.received);
    expect(ids).toEqual(sentences.map((_, i) => i));
    expect(delivered.map((s) => s.text)).toEqual(sentences);
    for (const s of delivered) expect(wavSamples(s.audio)).toBe(Math.round(s.text.trim().split(/\s+/).length * 0.25 * 22050));
  });
});

describe('live session: concurrency', () => {
  /** Run 6 segments, each synthesis held 40 ms; returns the most syntheses seen in flight at once. */
  const maxInFlight = async (concurrency: number): Promise<number> => {
    const e = await emulator({ concurrency });
    const load = e.context.synthesizer.bind(e.context);
    let inFlight = 0;
    let max = 0;
    e.context.synthesizer = async () => {
      const synth = await load();
      return {
        ...synth,
        async synthesize(request) {
          inFlight += 1;
          max = Math.max(max, inFlight);
          try {
            await new Promise((r) => setTimeout(r, 40));
            return await synth.synthesize(request);
          } finally {
            inFlight -= 1;
          }
        },
      };
    };
    const c = connect(liveUrl(e));
    c.send(start());
    c.send({ type: 'text.chunk', text: 'One. Two. Three. Four. Five. Six.' });
    c.send({ type: 'text.done' });
    expect((await c.closed).code).toBe(1000);
    expect(segmentsOf(c.received).ids).toEqual([0, 1, 2, 3, 4, 5]);
    return max;
  };

  it('synthesizes up to `concurrency` segments at once, no more', async () => {
    expect(await maxInFlight(3)).toBe(3);
    expect(await maxInFlight(1)).toBe(1);
    expect(await maxInFlight(8)).toBe(6);
  });
});

describe('live session: synthesis threads', () => {
  it('a synthesis thread that dies fails that segment like any synthesis failure (retried, then skipped); the emulator goes on', async () => {
    const e = await emulator();
    // threads that speak 10 samples, and die on a text with "crash" in it
    const pool = createSynthPool({
      name: 'tone',
      threads: 2,
      supportsLanguage: () => true,
      entry: {
        eval: true,
        script: `
          const { parentPort } = require('node:worker_threads');
          parentPort.on('message', ({ id, request }) => {
            if (request.text.includes('crash')) process.exit(1);
            parentPort.postMessage({ id, result: { pcm: new Int16Array(10), sampleRate: request.sampleRate, words: [] } });
          });`,
      },
    });
    e.context.synthesizer = () => Promise.resolve(pool);
    const c = connect(liveUrl(e));
    c.send(start());
    c.send({ type: 'text.chunk', text: 'Hello there. This one will crash. Bye now.' });
    c.send({ type: 'text.done' });
    expect((await c.closed).code).toBe(1000);
    const { delivered, skipped } = segmentsOf(c.received);
    expect(delivered.map((s) => s.text)).toEqual(['Hello there.', ' Bye now.']);
    expect(skipped).toEqual([{ segment_id: 1, text: ' This one will crash.' }]);
    const voices = await fetch(`${e.baseUrl}${routes.listVoices}`, { headers: { 'x-api-key': e.apiKey } });
    expect(voices.status).toBe(200);
    await pool.close();
    expect(pool.threadCount()).toBe(0);
  });
});

describe('live session: backpressure', () => {
  it('stops synthesizing ahead while the client does not read', async () => {
    const e = await emulator({ concurrency: 2, credits: 1000 });
    const c = connect(liveUrl(e));
    c.send(start());
    await c.waitFor((f) => f.type === 'session.ready');
    // The client stops reading from its TCP socket.
    const tcp = (c.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket;
    tcp.pause();
    const sentence = `${Array.from({ length: 40 }, (_, i) => `Word${i}`).join(' ')}.`;
    const count = 60; // 60 segments of about 441 KB each: 26 MB in all
    c.send({ type: 'text.chunk', text: Array.from({ length: count }, () => sentence).join(' ') });
    c.send({ type: 'text.done' });
    await new Promise((r) => setTimeout(r, 400));
    const charged = 1000 - e.context.credits.balance(e.apiKey);
    expect(charged).toBeGreaterThan(0);
    // Bounded by what the TCP buffers absorb, plus the high-water mark and the window.
    expect(charged).toBeLessThan(count - 20);
    console.info(`backpressure: ${charged} of ${count} segments started while the client was paused`);
    tcp.resume();
    expect((await c.closed).code).toBe(1000);
    expect(segmentsOf(c.received).delivered).toHaveLength(count);
    expect(1000 - e.context.credits.balance(e.apiKey)).toBe(count);
  });

  it('stops reading once more than livePendingTextChars wait to be spoken, and reads again at half of it', async () => {
    // Ten segments of 10 characters: exactly the limit, which is not more than it.
    const limit = 100;
    const sentence = (i: number): string => ` Line ${String.fromCharCode(97 + i)}xx.`;
    expect(sentence(0)).toHaveLength(10);
    const e = await emulator({ livePendingTextChars: limit, concurrency: 1 });
    const held = holdSyntheses(e);
    const stats = () => liveSessionStats(e.context)[0];
    const c = connect(liveUrl(e));
    c.send(start({ idle_timeout: 60 }));
    c.send({ type: 'text.chunk', text: Array.from({ length: 10 }, (_, i) => sentence(i)).join('') });
    expect(await until(() => stats()?.segments === 10)).toBe(true);
    expect(stats()).toMatchObject({ pendingTextChars: limit, readingPaused: false });
    // one more segment: more than the limit waits (the control: a pause is seen)
    c.send({ type: 'text.chunk', text: sentence(10) });
    expect(await until(() => stats()?.segments === 11)).toBe(true);
    expect(stats()).toMatchObject({ pendingTextChars: 110, readingPaused: true });
    // five segments out: 60 characters wait, more than half the limit: still paused
    await held.releaseUntilSent(5, stats);
    expect(stats()).toMatchObject({ pendingTextChars: 60, readingPaused: true });
    // the sixth: 50 wait, half the limit: reading again
    await held.releaseUntilSent(6, stats);
    expect(stats()).toMatchObject({ pendingTextChars: 50, readingPaused: false });
    c.send({ type: 'text.done' });
    held.releaseAll();
    expect((await c.closed).code).toBe(1000);
    expect(segmentsOf(c.received).delivered).toHaveLength(11);
  });
});

describe('live session: frames the session does not read', () => {
  it('ignores binary frames and frames of other types mid-session; the text frames around them are spoken', async () => {
    const e = await emulator();
    const c = connect(liveUrl(e));
    c.send(start({ idle_timeout: 60 }));
    await c.waitFor((f) => f.type === 'session.ready');
    // A binary frame carrying a text.chunk is not text; the same frame as text is (the control).
    c.ws.send(Buffer.from(JSON.stringify({ type: 'text.chunk', text: 'Sent as binary.' })));
    c.send({ type: 'text.chunk', text: 'Sent as text.' });
    // Unknown types and a second session.start neither end the input nor change the session.
    c.send({ type: 'ping' });
    c.send(start({ voice_id: 2 }));
    c.send({ type: 'text.chunk', text: ' After them.' });
    c.send({ type: 'text.done' });
    expect((await c.closed).code).toBe(1000);
    expect(segmentsOf(c.received).delivered.map((s) => s.text)).toEqual(['Sent as text.', ' After them.']);
    expect(c.jsonFrames().filter((f) => f.type === 'session.ready')).toHaveLength(1);
  });
});

describe('live session: faults', () => {
  it('retries a failing synthesis and succeeds at the last retry (times 3: 1 try + 3 retries)', async () => {
    const e = await emulator({ faults: { failSynthesis: { segments: [1], times: 3 } } });
    const c = connect(liveUrl(e));
    c.send(start());
    c.send({ type: 'text.chunk', text: 'First one. Second one. Third one.' });
    c.send({ type: 'text.done' });
    expect((await c.closed).code).toBe(1000);
    const { delivered, skipped } = segmentsOf(c.received);
    expect(skipped).toEqual([]);
    expect(delivered.map((s) => s.segment_id)).toEqual([0, 1, 2]);
  });

  it('skips a segment after 3 retries with exponential backoff (times 4), carrying its text', async () => {
    const e = await emulator({ retryBaseMs: 20, faults: { failSynthesis: { segments: [1], times: 4 } } });
    const c = connect(liveUrl(e));
    c.send(start());
    await c.waitFor((f) => f.type === 'session.ready');
    const t0 = Date.now();
    c.send({ type: 'text.chunk', text: 'First one. Second one. Third one.' });
    c.send({ type: 'text.done' });
    const skippedFrame = await c.waitFor((f) => f.type === 'segment.skipped');
    // Backoff 20 + 40 + 80 ms before giving up.
    expect(Date.now() - t0).toBeGreaterThanOrEqual(135);
    expect(skippedFrame).toEqual({ type: 'segment.skipped', segment_id: 1, text: ' Second one.' });
    expect((await c.closed).code).toBe(1000);
    const { delivered, skipped, ids } = segmentsOf(c.received);
    expect(ids).toEqual([0, 1, 2]);
    expect(delivered.map((s) => s.segment_id)).toEqual([0, 2]);
    expect(skipped).toEqual([{ segment_id: 1, text: ' Second one.' }]);
  });

  it('waits retryBaseMs before the first retry, then twice and four times as long', async () => {
    // The waits are read where the session arms them (its timers), not measured: a slow
    // machine stretches a wait, it cannot shorten one, so measuring could not tell 2x from 4x.
    const base = 37;
    const e = await emulator({ retryBaseMs: base, faults: { failSynthesis: { segments: [0], times: 4 } } });
    const armed = vi.spyOn(globalThis, 'setTimeout');
    try {
      const c = connect(liveUrl(e));
      c.send(start());
      c.send({ type: 'text.chunk', text: 'Always failing.' });
      c.send({ type: 'text.done' });
      expect((await c.closed).code).toBe(1000);
      expect(segmentsOf(c.received).skipped).toEqual([{ segment_id: 0, text: 'Always failing.' }]);
      const backoffs = armed.mock.calls.map(([, ms]) => ms).filter((ms) => typeof ms === 'number' && ms > 0 && ms % base === 0);
      expect(backoffs).toEqual([base, 2 * base, 4 * base]);
    } finally {
      armed.mockRestore();
    }
  });

  it('fails by text (failSynthesisMatching): times 3 succeeds, times 4 skips', async () => {
    const ok = await emulator({ faults: { failSynthesisMatching: { text: 'flaky', times: 3 } } });
    const a = connect(liveUrl(ok));
    a.send(start());
    a.send({ type: 'text.chunk', text: 'Fine. A flaky one. Fine again.' });
    a.send({ type: 'text.done' });
    expect((await a.closed).code).toBe(1000);
    expect(segmentsOf(a.received).skipped).toEqual([]);

    const bad = await emulator({ faults: { failSynthesisMatching: { text: 'flaky', times: 4 } } });
    const b = connect(liveUrl(bad));
    b.send(start());
    b.send({ type: 'text.chunk', text: 'Fine. A flaky one. Fine again.' });
    b.send({ type: 'text.done' });
    expect((await b.closed).code).toBe(1000);
    expect(segmentsOf(b.received).skipped).toEqual([{ segment_id: 1, text: ' A flaky one.' }]);
  });

  it('closes 4402 after one session.error when the credits run out (credits option)', async () => {
    const e = await emulator({ credits: 2, concurrency: 3 });
    const c = connect(liveUrl(e));
    c.send(start());
    c.send({ type: 'text.chunk', text: 'One. Two. Three. Four.' });
    const closed = await c.closed;
    expect(closed.code).toBe(4402);
    const { delivered } = segmentsOf(c.received);
    expect(delivered.map((s) => s.text)).toEqual(['One.', ' Two.']);
    const errors = c.jsonFrames().filter((f) => f.type === 'session.error');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ error: expect.stringMatching(/^insufficient credits/) });
    expect(c.jsonFrames().at(-1)?.type).toBe('session.error');
    expect(e.context.credits.balance(e.apiKey)).toBe(0);
  });

  it('closes 4402 after one session.error via creditsAfterSegments', async () => {
    const e = await emulator({ faults: { creditsAfterSegments: 1 } });
    const c = connect(liveUrl(e));
    c.send(start());
    c.send({ type: 'text.chunk', text: 'One. Two. Three.' });
    expect((await c.closed).code).toBe(4402);
    expect(segmentsOf(c.received).delivered.map((s) => s.text)).toEqual(['One.']);
    expect(c.jsonFrames().filter((f) => f.type === 'session.error')).toHaveLength(1);
  });

  it('drops the connection without a close frame after dropAfterFrames binary frames (1006)', async () => {
    const e = await emulator({ faults: { dropAfterFrames: 2 } });
    const c = connect(liveUrl(e));
    c.send(start());
    c.send({ type: 'text.chunk', text: `${'word '.repeat(30)}end. Second sentence. Third sentence.` });
    const closed = await c.closed;
    expect(closed.code).toBe(1006);
    expect(c.received.filter((r) => r.kind === 'binary').length).toBeLessThanOrEqual(2);
    expect(c.jsonFrames().some((f) => f.type === 'session.done')).toBe(false);
  });

  it('applies faults per API key (faultsByKey): only that key\'s sessions fail', async () => {
    const e = await emulator({
      apiKeys: ['key-calm', 'key-flaky'],
      faultsByKey: { 'key-flaky': { failSynthesis: { segments: 'all', times: 4 }, creditsAfterSegments: 5 } },
    });
    const calm = connect(liveUrl(e, 'key-calm'));
    const flaky = connect(liveUrl(e, 'key-flaky'));
    for (const c of [calm, flaky]) {
      c.send(start());
      c.send({ type: 'text.chunk', text: 'One. Two.' });
      c.send({ type: 'text.done' });
    }
    expect((await calm.closed).code).toBe(1000);
    expect((await flaky.closed).code).toBe(1000);
    expect(segmentsOf(calm.received)).toMatchObject({ skipped: [], ids: [0, 1] });
    expect(segmentsOf(flaky.received)).toMatchObject({ delivered: [], ids: [0, 1] });
  });

  it("a key's own faults (faultsByKey) override the emulator-wide ones", async () => {
    const e = await emulator({
      apiKeys: ['key-plain', 'key-spared'],
      faults: { failSynthesis: { segments: 'all', times: 4 } },
      faultsByKey: { 'key-spared': { failSynthesis: { segments: 'all', times: 0 } } },
    });
    const plain = connect(liveUrl(e, 'key-plain'));
    const spared = connect(liveUrl(e, 'key-spared'));
    for (const c of [plain, spared]) {
      c.send(start());
      c.send({ type: 'text.chunk', text: 'One. Two.' });
      c.send({ type: 'text.done' });
    }
    expect((await plain.closed).code).toBe(1000);
    expect((await spared.closed).code).toBe(1000);
    expect(segmentsOf(plain.received)).toMatchObject({ delivered: [], ids: [0, 1] });
    expect(segmentsOf(spared.received)).toMatchObject({ skipped: [], ids: [0, 1] });
  });

  it('a custom voice created over HTTP is usable in a live session at once', async () => {
    const e = await emulator();
    const form = new FormData();
    form.set('voice_name', 'Fresh Voice');
    form.set('gender', '2');
    form.set('file', new Blob([new Uint8Array(64)]), 'sample.wav');
    const res = await fetch(`${e.baseUrl}${routes.createCustomVoice}`, { method: 'POST', headers: { 'x-api-key': e.apiKey }, body: form });
    expect(res.status).toBe(200);
    const { voice_id } = (await res.json()) as { voice_id: number };
    const c = connect(liveUrl(e));
    c.send(start({ voice_id }));
    c.send({ type: 'text.chunk', text: 'Hello from a new voice.' });
    c.send({ type: 'text.done' });
    expect((await c.closed).code).toBe(1000);
    expect(c.jsonFrames()[0]).toMatchObject({ type: 'session.ready', config: { voice_id } });
    expect(segmentsOf(c.received).delivered.map((s) => s.text)).toEqual(['Hello from a new voice.']);
  });

  it('stops cleanly when the client goes away mid-session, and the emulator closes the others', async () => {
    const e = await emulator({ faults: { synthesisLatencyMs: 50 } });
    const c = connect(liveUrl(e));
    c.send(start());
    c.send({ type: 'text.chunk', text: 'One. Two. Three. Four. Five.' });
    await c.waitFor((f) => f.type === 'segment.start');
    c.ws.close();
    expect((await c.closed).code).toBe(1005);
    const other = connect(liveUrl(e));
    other.send(start());
    await other.waitFor((f) => f.type === 'session.ready');
    await e.close();
    expect([1001, 1006]).toContain((await other.closed).code);
  });
});
