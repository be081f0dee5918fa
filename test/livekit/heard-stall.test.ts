/**
 * rxvoice/livekit: what was heard of a stream (LiveKit reports playout on the session's audio
 * output, `playbackFinished`'s `playbackPosition`, which `tts.heard()` turns into a HeardReport),
 * and the `stall` option: a live service that accepts and never answers, every sentence of the
 * stream spoken over `POST /tts-stream`.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { initializeLogger, tts as lk } from '@livekit/agents';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { createClient } from '../../src/index.js';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import { ValidationError } from '../../src/live/index.js';
import { TTS } from '../../src/livekit/index.js';

const SENTENCES = ['Hello there, how are you?', 'The weather is fine today.', 'See you soon.'];

let emulator: Emulator;
let http: Server;
let stalled: WebSocketServer;
let stalledUrl: string;

beforeAll(async () => {
  initializeLogger({ pretty: false, level: 'silent' });
  emulator = await startEmulator({ synth: 'tone', toneWordSeconds: 0.05 });
  http = createServer();
  stalled = new WebSocketServer({ server: http });
  stalled.on('connection', (socket) =>
    socket.on('message', (data, binary) => {
      if (!binary && (JSON.parse(String(data)) as { type: string }).type === 'session.start') {
        socket.send(JSON.stringify({ type: 'session.ready', session_id: 'stalled', run_id: 1, config: {} }));
      }
    }),
  );
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  stalledUrl = `ws://127.0.0.1:${(http.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const client of stalled.clients) client.terminate();
  await new Promise((resolve) => stalled.close(resolve));
  await new Promise((resolve) => http.close(resolve));
  await emulator.close();
});

async function speakAll(tts: TTS): Promise<lk.SynthesizedAudio[]> {
  const stream = tts.stream();
  for (const sentence of SENTENCES) stream.pushText(`${sentence} `);
  stream.endInput();
  const packets: lk.SynthesizedAudio[] = [];
  for await (const audio of stream) if (audio !== lk.SynthesizeStream.END_OF_STREAM) packets.push(audio);
  return packets;
}

const seconds = (packets: lk.SynthesizedAudio[]): number => packets.reduce((sum, p) => sum + p.frame.samplesPerChannel / p.frame.sampleRate, 0);

describe('rxvoice/livekit heard()', () => {
  it('cuts the stream text at the playback position LiveKit reports, at a word boundary', async () => {
    const client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.baseUrl });
    const tts = new TTS({ client, voice_id: 1 });
    const packets = await speakAll(tts);
    const total = seconds(packets);
    const text = SENTENCES.join(' ');
    expect(tts.heard(total)).toMatchObject({ complete: true, method: 'timestamps' });
    expect(tts.heard(total).heard.replace(/\s+/g, ' ').trim()).toBe(text);
    const half = tts.heard(total / 2);
    expect(half.complete).toBe(false);
    expect(half.heard.length).toBeGreaterThan(0);
    expect((half.heard + half.unheard).replace(/\s+/g, ' ').trim()).toBe(text);
    expect(tts.heard(0).heard).toBe('');
    await tts.close();
    await client.close();
  });
});

describe('rxvoice/livekit stall', () => {
  it('a live service that accepts and never answers: the stream speaks every sentence over tts-stream', async () => {
    const url = stalledUrl;
    class ToStalled extends WebSocket {
      constructor(_url: string, protocols?: string | string[], options?: ConstructorParameters<typeof WebSocket>[2]) {
        super(url, protocols, options);
      }
    }
    const client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.baseUrl, WebSocket: ToStalled as never });
    const tts = new TTS({ client, voice_id: 1, reconnect: false, stall: { afterMs: 300, fallback: 'tts-stream' } });
    const before = emulator.requests.filter((r) => r.path.endsWith('/tts-stream')).length;
    const packets = await speakAll(tts);
    const transcript = packets.map((p) => p.deltaText ?? '').join('');
    expect(transcript.replace(/\s+/g, ' ').trim()).toBe(SENTENCES.join(' '));
    expect(emulator.requests.filter((r) => r.path.endsWith('/tts-stream')).length - before).toBe(SENTENCES.length);
    await tts.close();
    await client.close();
  });

  it('a bad stall option throws at once', () => {
    const client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.baseUrl });
    expect(() => new TTS({ client, voice_id: 1, stall: { afterMs: 0, fallback: 'tts-stream' } })).toThrow(ValidationError);
  });
});
