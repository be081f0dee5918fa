import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { lastValueFrom, take, toArray } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProtocolError, createPcmAligner, type TtsStreamChunk } from '../../src/index.js';
import type { Emulator } from '../../src/emulator/index.js';
import { clientFor, emulator } from './helpers.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A stand-in answering POST /tts-stream with `payload` written in the given odd chunk sizes. */
let server: Server;
let baseUrl: string;
let plan: { payload: Uint8Array; sizes: number[]; forever?: boolean } = { payload: new Uint8Array(0), sizes: [] };
let lastClosed: Promise<void> = Promise.resolve();

async function answer(_req: IncomingMessage, res: ServerResponse): Promise<void> {
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'x-credits-required': '3', 'x-sample-rate': '22050' });
  const { payload, sizes, forever } = plan;
  let offset = 0;
  for (let i = 0; forever || offset < payload.byteLength; i += 1) {
    if (res.destroyed) return;
    const size = sizes[i % sizes.length]!;
    res.write(payload.subarray(offset % payload.byteLength, (offset % payload.byteLength) + size));
    offset += size;
    await sleep(3);
  }
  res.end();
}

beforeAll(async () => {
  server = createServer((req, res) => {
    lastClosed = new Promise((resolve) => res.on('close', () => resolve()));
    req.resume();
    req.on('end', () => void answer(req, res));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});

const bytes = (n: number): Uint8Array => Uint8Array.from({ length: n }, (_, i) => (i * 7 + 3) % 256);
const concat = (chunks: TtsStreamChunk[]): Uint8Array => new Uint8Array(Buffer.concat(chunks.map((c) => c.bytes)));

describe('tts-stream PCM alignment', () => {
  it('pure aligner: any split gives whole samples and the same bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.array(fc.nat(40), { maxLength: 30 }), fc.constantFrom(2, 4), (data, cuts, width) => {
        const aligner = createPcmAligner(width);
        const out: number[] = [];
        let offset = 0;
        for (const cut of [...cuts, data.length]) {
          const piece = data.subarray(offset, Math.min(data.length, offset + cut));
          offset += piece.length;
          const whole = aligner.feed(piece);
          expect(whole.byteLength % width).toBe(0);
          out.push(...whole);
          if (offset >= data.length) break;
        }
        const rest = data.subarray(offset);
        out.push(...aligner.feed(rest));
        expect(aligner.pending()).toBe(data.length % width);
        expect(out).toEqual([...data.subarray(0, data.length - (data.length % width))]);
      }),
    );
  });

  it('pcm_s16le from odd chunks (1, 3, 5, 7 bytes): whole samples, bytes intact', async () => {
    plan = { payload: bytes(200), sizes: [1, 3, 5, 7] };
    const client = clientFor({ baseUrl, apiKey: 'k' });
    const chunks = await lastValueFrom(
      client.ttsStream({ text: 'Hello there.', voice_id: 1, language: 'en-us', output_configuration: { format: 'pcm_s16le' } }).pipe(toArray()),
    );
    expect(chunks.length).toBeGreaterThan(5);
    for (const c of chunks) {
      expect(c.bytes.byteLength % 2).toBe(0);
      expect(c).toMatchObject({ format: 'pcm_s16le', sampleRate: 22050, creditsRequired: 3 });
    }
    expect(chunks.map((c) => c.index)).toEqual(chunks.map((_, i) => i));
    expect(concat(chunks)).toEqual(plan.payload);
    await client.close();
  });

  it('pcm_f32be from 3-byte chunks: 4-byte samples', async () => {
    plan = { payload: bytes(96), sizes: [3, 5, 3] };
    const client = clientFor({ baseUrl, apiKey: 'k' });
    const chunks = await lastValueFrom(
      client.ttsStream({ text: 'Hello there.', voice_id: 1, language: 'en-us', output_configuration: { format: 'pcm_f32be' } }).pipe(toArray()),
    );
    for (const c of chunks) expect(c.bytes.byteLength % 4).toBe(0);
    expect(concat(chunks)).toEqual(plan.payload);
    await client.close();
  });

  it('a dangling partial sample at the end: whole samples first, then a ProtocolError', async () => {
    plan = { payload: bytes(101), sizes: [3] };
    const client = clientFor({ baseUrl, apiKey: 'k' });
    const received: TtsStreamChunk[] = [];
    const error = await new Promise<unknown>((resolve) => {
      client
        .ttsStream({ text: 'Hello there.', voice_id: 1, language: 'en-us', output_configuration: { format: 'pcm_s16be' } })
        .subscribe({ next: (c) => received.push(c), error: resolve, complete: () => resolve(undefined) });
    });
    expect(error).toBeInstanceOf(ProtocolError);
    expect(concat(received)).toEqual(plan.payload.subarray(0, 100));
    await client.close();
  });

  it('less than one sample in all: no chunk at all (never an empty one), then a ProtocolError', async () => {
    plan = { payload: bytes(1), sizes: [1] };
    const client = clientFor({ baseUrl, apiKey: 'k' });
    const received: TtsStreamChunk[] = [];
    const error = await new Promise<unknown>((resolve) => {
      client
        .ttsStream({ text: 'Hello there.', voice_id: 1, language: 'en-us', output_configuration: { format: 'pcm_s16le' } })
        .subscribe({ next: (c) => received.push(c), error: resolve, complete: () => resolve(undefined) });
    });
    expect(error).toBeInstanceOf(ProtocolError);
    expect((error as Error).message).toContain('(1 bytes left over)');
    expect(received).toEqual([]);
    await client.close();
  });

  it('container formats pass chunks through unchanged', async () => {
    plan = { payload: bytes(33), sizes: [5] };
    const client = clientFor({ baseUrl, apiKey: 'k' });
    const chunks = await lastValueFrom(client.ttsStream({ text: 'Hello there.', voice_id: 1, language: 'en-us', output_configuration: { format: 'mp3' } }).pipe(toArray()));
    expect(concat(chunks)).toEqual(plan.payload);
    await client.close();
  });

  it('unsubscribing aborts the streaming request', async () => {
    plan = { payload: bytes(64), sizes: [7], forever: true };
    const client = clientFor({ baseUrl, apiKey: 'k' });
    const first = await lastValueFrom(
      client.ttsStream({ text: 'Hello there.', voice_id: 1, language: 'en-us', output_configuration: { format: 'pcm_s16le' } }).pipe(take(3), toArray()),
    );
    expect(first).toHaveLength(3);
    await Promise.race([lastClosed, sleep(2000).then(() => Promise.reject(new Error('the server never saw the close')))]);
    await client.close();
  });
});

describe('tts-stream against the emulator', () => {
  let emu: Emulator;
  beforeAll(async () => {
    emu = await emulator();
  });
  afterAll(async () => {
    await emu.close();
  });

  it('wav: a RIFF header first, sample rate and credits known', async () => {
    const client = clientFor(emu);
    const chunks = await lastValueFrom(
      client.ttsStream({ text: 'One sentence. And another one.', voice_id: 1, language: 'en-us', output_configuration: { format: 'wav', sample_rate: 16000 } }).pipe(toArray()),
    );
    expect(Buffer.from(chunks[0]!.bytes.subarray(0, 4)).toString()).toBe('RIFF');
    expect(chunks[0]!.sampleRate).toBe(16000);
    expect(chunks[0]!.creditsRequired).toBe(2);
    await client.close();
  });
});
