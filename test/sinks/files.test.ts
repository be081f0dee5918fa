import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { concat, from, lastValueFrom, Observable, Subject, tap, throwError, toArray, type OperatorFunction } from 'rxjs';
import wavefile from 'wavefile';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { streamingWavHeader, type PcmChunk } from '../../src/audio/pcm.js';
import type { PcmFormat } from '../../src/audio/wav.js';
import { encodeWav16 } from '../../src/audio/wav.js';
import type { SpokenSegment } from '../../src/live/events.js';
import { SinkError, toFile, toWavFile, type WavFileDone, type WavFileProgress } from '../../src/sinks/index.js';
import { bytesOf, catchError, concatBytes, makeTempDir, removeDir, samples16, waitFor, wavSegment } from '../fixtures/sinkFixtures.js';

let dir: string;
beforeEach(async () => {
  dir = await makeTempDir();
});
afterEach(async () => {
  await removeDir(dir);
});

const mono16: PcmFormat = { sampleRate: 22050, channels: 1, bitsPerSample: 16, audioFormat: 1 };

function readWav(bytes: Uint8Array): { sampleRate: number; channels: number; bitDepth: string; pcm: Uint8Array; sampleCount: number } {
  const wav = new wavefile.WaveFile(bytes);
  const fmt = wav.fmt as { sampleRate: number; numChannels: number };
  const data = wav.data as { samples: Uint8Array };
  return {
    sampleRate: fmt.sampleRate,
    channels: fmt.numChannels,
    bitDepth: wav.bitDepth,
    pcm: new Uint8Array(data.samples),
    sampleCount: wav.getSamples(false, Int16Array).length,
  };
}

function view(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

describe('toWavFile', () => {
  it('unwraps every segment into one WAV with exact PCM, patched sizes, and no temp file left', async () => {
    const parts = [samples16(1000, 1), samples16(2205, 2), samples16(17, 3)];
    const path = join(dir, 'out.wav');
    const events = await lastValueFrom(from(parts.map((s, i) => wavSegment(i, s))).pipe(toWavFile(path), toArray()));

    // The first segment is written alone; the two that queued meanwhile go in one writev.
    expect(events.map((e) => e.type)).toEqual(['progress', 'progress', 'done']);
    expect(events[0]).toMatchObject({ type: 'progress', segments: 1, bytes: 2000 });
    expect(events[1]).toMatchObject({ type: 'progress', segments: 3, bytes: 2 * 3222 });
    const done = events.at(-1) as WavFileDone;
    const pcm = concatBytes(parts.map(bytesOf));
    expect(done).toMatchObject({
      type: 'done',
      path,
      segments: 3,
      bytes: pcm.byteLength,
      fileBytes: 44 + pcm.byteLength,
      sampleRate: 22050,
      channels: 1,
      bitsPerSample: 16,
      droppedBytes: 0,
    });
    expect(done.seconds).toBeCloseTo(3222 / 22050, 6);

    const file = new Uint8Array(await readFile(path));
    expect(file.byteLength).toBe(44 + pcm.byteLength);
    expect(view(file).getUint32(4, true)).toBe(file.byteLength - 8);
    expect(view(file).getUint32(40, true)).toBe(pcm.byteLength);
    // Exactly one RIFF header: the segments' own headers are not in the data.
    expect(Buffer.from(file).indexOf('RIFF', 1)).toBe(-1);
    const read = readWav(file);
    expect(read).toMatchObject({ sampleRate: 22050, channels: 1, bitDepth: '16', sampleCount: 3222 });
    expect(Buffer.from(read.pcm).equals(Buffer.from(pcm))).toBe(true);
    expect(await readdir(dir)).toEqual(['out.wav']);
  });

  it('uses the bytes present for a streaming-placeholder data size, and drops a trailing odd byte', async () => {
    const a = samples16(300, 4);
    const b = samples16(200, 5);
    const streamed = concatBytes([streamingWavHeader(mono16), bytesOf(a), new Uint8Array([0x7f])]); // 0xFFFFFFFF sizes + odd byte
    const segments: SpokenSegment[] = [
      { segment_id: 0, text: 'a', word_timestamps: [], audio: streamed, format: 'wav' },
      { segment_id: 1, text: 'b', word_timestamps: [], audio: wavSegment(1, b).audio, format: undefined }, // sniffed as WAV
    ];
    const path = join(dir, 'placeholder.wav');
    const done = (await lastValueFrom(from(segments).pipe(toWavFile(path)))) as WavFileDone;
    expect(done.droppedBytes).toBe(1);
    expect(done.bytes).toBe(1000);
    const file = new Uint8Array(await readFile(path));
    expect(view(file).getUint32(4, true)).toBe(36 + 1000);
    expect(view(file).getUint32(40, true)).toBe(1000);
    expect(view(file).getUint32(4, true)).not.toBe(0xffffffff);
    const read = readWav(file);
    expect(read.sampleCount).toBe(500);
    expect(Buffer.from(read.pcm).equals(Buffer.from(concatBytes([bytesOf(a), bytesOf(b)])))).toBe(true);
  });

  it('takes raw PCM chunks split mid-sample (partial frames carried over)', async () => {
    const pcm = bytesOf(samples16(999, 6));
    const cuts = [0, 1, 2, 333, 334, 1001, 1998];
    const chunks: PcmChunk[] = cuts.map((at, i) => ({ pcm: pcm.subarray(at, cuts[i + 1] ?? pcm.byteLength), format: mono16 }));
    const path = join(dir, 'chunks.wav');
    const done = (await lastValueFrom(from(chunks).pipe(toWavFile(path)))) as WavFileDone;
    expect(done).toMatchObject({ bytes: pcm.byteLength, droppedBytes: 0, segments: chunks.length });
    const read = readWav(new Uint8Array(await readFile(path)));
    expect(Buffer.from(read.pcm).equals(Buffer.from(pcm))).toBe(true);
  });

  it('writes 24-bit mono with a RIFF pad byte for an odd data size', async () => {
    const format: PcmFormat = { sampleRate: 16000, channels: 1, bitsPerSample: 24, audioFormat: 1 };
    const pcm = new Uint8Array(3 * 5).map((_, i) => i * 7);
    const path = join(dir, 'odd.wav');
    const done = (await lastValueFrom(from([{ pcm, format }]).pipe(toWavFile(path)))) as WavFileDone;
    expect(done.fileBytes).toBe(44 + 15 + 1);
    const file = new Uint8Array(await readFile(path));
    expect(file.byteLength).toBe(60);
    expect(view(file).getUint32(4, true)).toBe(52);
    expect(view(file).getUint32(40, true)).toBe(15);
    const wav = new wavefile.WaveFile(file);
    expect(wav.bitDepth).toBe('24');
    const data = wav.data as { samples: Uint8Array; chunkSize: number };
    expect(data.chunkSize).toBe(15);
    // wavefile keeps the RIFF pad byte in its sample buffer; the data chunk says 15.
    expect([...data.samples.subarray(0, 15)]).toEqual([...pcm]);
    expect(wav.getSamples(false, Int32Array)).toHaveLength(5);
  });

  it('carries partial 24-bit frames across 1- and 2-byte chunks', async () => {
    const format: PcmFormat = { sampleRate: 8000, channels: 2, bitsPerSample: 24, audioFormat: 1 };
    const pcm = new Uint8Array(6 * 7).map((_, i) => (i * 13) & 0xff);
    const sizes = [1, 2, 1, 5, 6, 1, 1, 1, 24];
    let at = 0;
    const chunks = sizes.map((size) => ({ pcm: pcm.subarray(at, (at += size)), format }));
    const path = join(dir, 'tiny.wav');
    const done = (await lastValueFrom(from(chunks).pipe(toWavFile(path)))) as WavFileDone;
    expect(done).toMatchObject({ bytes: 42, droppedBytes: 0, channels: 2, bitsPerSample: 24 });
    const file = new Uint8Array(await readFile(path));
    expect([...file.subarray(44)]).toEqual([...pcm]);
  });

  it('errors with invalid_audio on a wav segment that is not a readable WAV', async () => {
    const broken: SpokenSegment = { segment_id: 7, text: '', word_timestamps: [], audio: new Uint8Array([1, 2, 3]), format: 'wav' };
    const error = await catchError(lastValueFrom(from([broken]).pipe(toWavFile(join(dir, 'b.wav')))));
    expect(error).toMatchObject({ name: 'SinkError', reason: 'invalid_audio' });
    expect((error as Error).message).toContain('segment 7');
    expect(await readdir(dir)).toEqual([]);
  });

  it('errors with invalid_audio naming the format on a WAV segment whose samples are not PCM (mu-law), leaving no file', async () => {
    const wav = encodeWav16(new Int16Array(80), 8000);
    new DataView(wav.buffer, wav.byteOffset).setUint16(20, 7, true); // format tag 7: mu-law
    const mulaw: SpokenSegment = { segment_id: 3, text: '', word_timestamps: [], audio: wav, format: 'wav' };
    const error = await catchError(lastValueFrom(from([mulaw]).pipe(toWavFile(join(dir, 'm.wav')))));
    expect(error).toMatchObject({ name: 'SinkError', reason: 'invalid_audio' });
    expect((error as Error).message).toContain('segment 3 is a WAV file whose samples are not PCM (format tag 7');
    expect(await readdir(dir)).toEqual([]);
  });

  it('writes a valid empty WAV for an empty stream', async () => {
    const path = join(dir, 'empty.wav');
    const done = (await lastValueFrom(from([] as SpokenSegment[]).pipe(toWavFile(path)))) as WavFileDone;
    expect(done).toMatchObject({ bytes: 0, segments: 0, sampleRate: 22050 });
    const file = new Uint8Array(await readFile(path));
    expect(file.byteLength).toBe(44);
    expect(readWav(file)).toMatchObject({ sampleRate: 22050, sampleCount: 0 });
  });

  it('errors with SinkError format_mismatch on a segment in another format, leaving no file', async () => {
    const path = join(dir, 'mixed.wav');
    const source = from([wavSegment(0, samples16(10), 22050), wavSegment(1, samples16(10), 24000)]);
    const error = await catchError(lastValueFrom(source.pipe(toWavFile(path))));
    expect(error).toBeInstanceOf(SinkError);
    expect(error).toMatchObject({ code: 'sink', reason: 'format_mismatch' });
    expect((error as Error).message).toContain('24000 Hz');
    expect((error as Error).message).toContain('22050 Hz');
    expect(existsSync(path)).toBe(false);
    expect(await readdir(dir)).toEqual([]);
  });

  it('PCM chunks differing from the first only in channels, or in sample type, are a format_mismatch', async () => {
    const int32: PcmFormat = { ...mono16, bitsPerSample: 32 };
    for (const [first, other] of [
      [mono16, { ...mono16, channels: 2 }],
      [int32, { ...int32, audioFormat: 3 }],
    ] as const) {
      const source = from([{ pcm: new Uint8Array(8), format: first }, { pcm: new Uint8Array(8), format: other }]);
      const error = await catchError(lastValueFrom(source.pipe(toWavFile(join(dir, 'mixed.wav')))));
      expect(error).toMatchObject({ name: 'SinkError', reason: 'format_mismatch' });
      expect(await readdir(dir)).toEqual([]);
    }
    // control: the same chunks in one format are written
    const same = from([{ pcm: new Uint8Array(8), format: int32 }, { pcm: new Uint8Array(8), format: int32 }]);
    expect(await lastValueFrom(same.pipe(toWavFile(join(dir, 'same.wav'))))).toMatchObject({ type: 'done', bytes: 16 });
  });

  it('a PCM chunk whose samples are not whole bytes is invalid_audio', async () => {
    const source = from([{ pcm: new Uint8Array(8), format: { ...mono16, bitsPerSample: 12 } }]);
    const error = await catchError(lastValueFrom(source.pipe(toWavFile(join(dir, 'odd.wav')))));
    expect(error).toMatchObject({ name: 'SinkError', reason: 'invalid_audio' });
    expect(await readdir(dir)).toEqual([]);
  });

  it('errors on a compressed segment, pointing to toFile', async () => {
    const mp3: SpokenSegment = { segment_id: 3, text: 'x', word_timestamps: [], audio: new Uint8Array([0xff, 0xfb, 0x90, 0]), format: 'mp3' };
    const error = await catchError(lastValueFrom(from([mp3]).pipe(toWavFile(join(dir, 'x.wav')))));
    expect(error).toMatchObject({ name: 'SinkError', reason: 'unsupported_format' });
    expect((error as Error).message).toContain('toFile');
    expect(await readdir(dir)).toEqual([]);
  });

  it('on a source error mid-way: removes the temp file, then forwards the same error', async () => {
    const path = join(dir, 'broken.wav');
    const boom = new Error('upstream failed');
    const source = concat(from([wavSegment(0, samples16(5000)), wavSegment(1, samples16(5000))]), throwError(() => boom));
    const seen: WavFileProgress[] = [];
    const error = await catchError(lastValueFrom(source.pipe(toWavFile(path))).then((v) => seen.push(v)));
    expect(error).toBe(boom);
    // Cleaned up before the error was delivered.
    expect(existsSync(path)).toBe(false);
    expect(await readdir(dir)).toEqual([]);
  });

  it('on unsubscribe mid-way: removes the temp file and never creates the final file', async () => {
    const path = join(dir, 'cut.wav');
    const segments = new Subject<SpokenSegment>();
    const events: WavFileProgress[] = [];
    const subscription = segments.pipe(toWavFile(path)).subscribe((e) => events.push(e));
    segments.next(wavSegment(0, samples16(4000)));
    await waitFor(() => events.length === 1, 5000, 'first write');
    expect((await readdir(dir)).filter((name) => name.startsWith('.cut.wav.') && name.endsWith('.tmp'))).toHaveLength(1);
    segments.next(wavSegment(1, samples16(4000)));
    subscription.unsubscribe();
    await waitFor(async () => (await readdir(dir)).length === 0, 5000, 'temp file removal');
    expect(existsSync(path)).toBe(false);
  });

  it('errors with SinkError io when the directory does not exist', async () => {
    const error = await catchError(lastValueFrom(from([wavSegment(0, samples16(4))]).pipe(toWavFile(join(dir, 'no', 'such.wav')))));
    expect(error).toMatchObject({ name: 'SinkError', reason: 'io', code: 'sink' });
  });

  it('keeps memory flat on a long stream (2,000 segments of 0.5 s at 22.05 kHz, ~44 MB of PCM)', async () => {
    const count = 2000;
    const perSegment = 11025; // 0.5 s
    const path = join(dir, 'long.wav');
    let emitted = 0;
    let written = 0;
    const lookahead = 8;
    // A paced source, like a live session (which runs at synthesis speed, slower than a
    // disk): one fresh WAV segment per turn of the event loop, at most `lookahead` ahead
    // of what the sink has written. (A source faster than the disk for long makes the
    // queue grow: Observables push; that is the source's pace, not the sink's memory.)
    const source = new Observable<SpokenSegment>((subscriber) => {
      let stopped = false;
      const step = (): void => {
        if (stopped) return;
        if (emitted === count) return subscriber.complete();
        if (emitted - written < lookahead) {
          subscriber.next(wavSegment(emitted, samples16(perSegment, emitted)));
          emitted++;
        }
        setImmediate(step);
      };
      setImmediate(step);
      return () => {
        stopped = true;
      };
    });
    const gc = collectGarbage();
    const live = (): number => {
      gc();
      const usage = process.memoryUsage();
      return usage.heapUsed + usage.arrayBuffers;
    };
    const before = live();
    let peak = before;
    let maxQueued = 0;
    const done = (await lastValueFrom(
      source.pipe(
        toWavFile(path, { fsync: false }) as OperatorFunction<SpokenSegment, WavFileProgress>,
        tap((value: WavFileProgress) => {
          if (value.type !== 'progress') return;
          written = value.segments;
          maxQueued = Math.max(maxQueued, emitted - value.segments);
          if (value.segments % 200 === 0) peak = Math.max(peak, live());
        }),
      ),
    )) as WavFileDone;
    expect(done.bytes).toBe(count * perSegment * 2);
    expect(done.seconds).toBeCloseTo(1000, 6);
    const growthMb = (peak - before) / 1024 / 1024;
    // Audio is written as it comes, never accumulated: a few segments (22 KB each) at most.
    expect(growthMb).toBeLessThan(40);
    expect(maxQueued).toBeLessThanOrEqual(lookahead);
    // Measured the same way, the whole stream held in memory would be ~44 MB (PCM) + ~44 MB (WAVs).
    const file = await readFile(path);
    expect(file.byteLength).toBe(44 + count * perSegment * 2);
    expect(file.readUInt32LE(40)).toBe(count * perSegment * 2);
    // Last sample of the last segment is where it should be.
    const last = samples16(perSegment, count - 1);
    expect(file.readInt16LE(file.byteLength - 2)).toBe(last[perSegment - 1]);
    console.log(`long stream: ${(done.bytes / 1e6).toFixed(1)} MB PCM, live memory growth ${growthMb.toFixed(1)} MB, max queued ${maxQueued}`);
  });
});

/** `gc()` exposed at run time (no --expose-gc flag needed). */
function collectGarbage(): () => void {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  return () => gc();
}

function id3v2(payload: number): Uint8Array {
  const tag = new Uint8Array(10 + payload);
  tag.set([0x49, 0x44, 0x33, 4, 0, 0, 0, 0, 0, payload & 0x7f], 0);
  tag.fill(0x41, 10);
  return tag;
}

function mp3Segment(id: number, frames: Uint8Array, tag = true): SpokenSegment {
  return { segment_id: id, text: '', word_timestamps: [], audio: tag ? concatBytes([id3v2(20), frames]) : frames, format: 'mp3' };
}

function flacFile(totalSamples: number, frames: Uint8Array, withPadding = false): Uint8Array {
  const info = new Uint8Array(34);
  const v = new DataView(info.buffer);
  v.setUint16(0, 4096);
  v.setUint16(2, 4096);
  info.set([0, 0, 14, 0, 0x20, 0], 4); // min/max frame size
  // 22050 Hz (20 bits), 1 channel (0), 16 bits (15): 0x05622 << 12 ...
  info[10] = (22050 >> 12) & 0xff;
  info[11] = (22050 >> 4) & 0xff;
  info[12] = ((22050 & 0x0f) << 4) | (0 << 1) | (15 >> 4);
  info[13] = ((15 & 0x0f) << 4) | 0;
  v.setUint32(14, totalSamples);
  info.fill(0xab, 18); // MD5
  const blocks = withPadding
    ? [new Uint8Array([0x00, 0, 0, 34]), info, new Uint8Array([0x81, 0, 0, 4]), new Uint8Array(4)]
    : [new Uint8Array([0x80, 0, 0, 34]), info];
  return concatBytes([new Uint8Array([0x66, 0x4c, 0x61, 0x43]), ...blocks, frames]);
}

describe('toFile', () => {
  it('joins mp3 segments: ID3v2 of later segments dropped, frames in order, atomically', async () => {
    const f1 = new Uint8Array([0xff, 0xfb, 1, 2, 3]);
    const f2 = new Uint8Array([0xff, 0xfb, 4, 5]);
    const f3 = new Uint8Array([0xff, 0xfb, 6]);
    const path = join(dir, 'out.mp3');
    const events = await lastValueFrom(from([mp3Segment(0, f1), mp3Segment(1, f2), mp3Segment(2, f3, false)]).pipe(toFile(path), toArray()));
    const expected = concatBytes([id3v2(20), f1, f2, f3]);
    expect(events.at(-1)).toEqual({ type: 'done', path, segments: 3, bytes: expected.byteLength, format: 'mp3' });
    expect(Buffer.from(await readFile(path)).equals(Buffer.from(expected))).toBe(true);
    expect(await readdir(dir)).toEqual(['out.mp3']);
  });

  it('writes segments byte for byte with join: false', async () => {
    const path = join(dir, 'asis.mp3');
    const a = mp3Segment(0, new Uint8Array([0xff, 0xfb, 1]));
    const b = mp3Segment(1, new Uint8Array([0xff, 0xfb, 2]));
    await lastValueFrom(from([a, b]).pipe(toFile(path, { join: false })));
    expect(Buffer.from(await readFile(path)).equals(Buffer.from(concatBytes([a.audio, b.audio])))).toBe(true);
  });

  it('drops a trailing ID3v1 tag of mp3 segments', async () => {
    const path = join(dir, 'v1.mp3');
    const tag = new Uint8Array(128);
    tag.set([0x54, 0x41, 0x47]);
    const frames = new Uint8Array([0xff, 0xfb, 9]);
    await lastValueFrom(from([mp3Segment(0, concatBytes([frames, tag]), false), mp3Segment(1, frames, false)]).pipe(toFile(path)));
    expect([...(await readFile(path))]).toEqual([...frames, ...frames]);
  });

  it('a path it cannot write errors with SinkError io before the source is subscribed (nothing upstream starts); control: a good path subscribes it', async () => {
    let subscribed = 0;
    const source = new Observable<Uint8Array>((subscriber) => {
      subscribed++;
      subscriber.next(new Uint8Array([1]));
      subscriber.complete();
    });
    const error = await catchError(lastValueFrom(source.pipe(toFile(join(dir, 'no', 'such.mp3')))));
    expect(error).toMatchObject({ name: 'SinkError', reason: 'io', code: 'sink' });
    expect(subscribed).toBe(0);
    await lastValueFrom(source.pipe(toFile(join(dir, 'ok.bin'))));
    expect(subscribed).toBe(1);
  });

  it('writes raw Uint8Array chunks exactly', async () => {
    const chunks = [new Uint8Array([1, 2, 3]), new Uint8Array(0), new Uint8Array([4])];
    const path = join(dir, 'raw.bin');
    await lastValueFrom(from(chunks).pipe(toFile(path)));
    expect([...(await readFile(path))]).toEqual([1, 2, 3, 4]);
  });

  it('joins flac segments: later headers dropped, STREAMINFO total summed, MD5 unknown', async () => {
    const a = flacFile(1000, new Uint8Array([0xff, 0xf8, 1, 1]));
    const b = flacFile(500, new Uint8Array([0xff, 0xf8, 2, 2]), true);
    const segs: SpokenSegment[] = [a, b].map((audio, i) => ({ segment_id: i, text: '', word_timestamps: [], audio, format: 'flac' }));
    const path = join(dir, 'out.flac');
    await lastValueFrom(from(segs).pipe(toFile(path)));
    const file = new Uint8Array(await readFile(path));
    expect(file.byteLength).toBe(a.byteLength + 4);
    expect([...file.subarray(file.byteLength - 8)]).toEqual([0xff, 0xf8, 1, 1, 0xff, 0xf8, 2, 2]);
    const body = file.subarray(8, 42);
    expect(view(body).getUint32(14)).toBe(1500);
    expect(body[13]! & 0xf0).toBe(0xf0); // bits per sample kept
    expect([...body.subarray(18)]).toEqual(new Array(16).fill(0));
    expect([...body.subarray(4, 10)]).toEqual([0, 0, 0, 0, 0, 0]);
  });

  it('refuses WAV segments (pointing to toWavFile) and mixed formats, leaving no file', async () => {
    const wavError = await catchError(lastValueFrom(from([wavSegment(0, samples16(4))]).pipe(toFile(join(dir, 'a.mp3')))));
    expect(wavError).toMatchObject({ name: 'SinkError', reason: 'unsupported_format' });
    expect((wavError as Error).message).toContain('toWavFile');
    const aac: SpokenSegment = { segment_id: 1, text: '', word_timestamps: [], audio: new Uint8Array([0xff, 0xf1]), format: 'aac' };
    const mixed = await catchError(lastValueFrom(from([mp3Segment(0, new Uint8Array([0xff, 0xfb])), aac]).pipe(toFile(join(dir, 'b.mp3')))));
    expect(mixed).toMatchObject({ reason: 'format_mismatch' });
    expect(await readdir(dir)).toEqual([]);
  });

  it('is atomic: removed on source error and on unsubscribe', async () => {
    const path = join(dir, 'atomic.mp3');
    const boom = new Error('boom');
    const failing = concat(from([new Uint8Array([1, 2])]), throwError(() => boom));
    expect(await catchError(lastValueFrom(failing.pipe(toFile(path))))).toBe(boom);
    expect(await readdir(dir)).toEqual([]);

    const chunks = new Subject<Uint8Array>();
    const seen: unknown[] = [];
    const subscription = chunks.pipe(toFile(path)).subscribe((e) => seen.push(e));
    chunks.next(new Uint8Array([1]));
    await waitFor(() => seen.length === 1);
    expect((await readdir(dir)).some((name) => name.endsWith('.tmp'))).toBe(true);
    subscription.unsubscribe();
    await waitFor(async () => (await readdir(dir)).length === 0, 5000, 'temp removal');
    expect(existsSync(path)).toBe(false);
  });

  it('does not replace an existing file until the new one is complete', async () => {
    const path = join(dir, 'keep.bin');
    await lastValueFrom(from([new Uint8Array([9, 9])]).pipe(toFile(path)));
    const boom = new Error('boom');
    await catchError(lastValueFrom(concat(from([new Uint8Array([1])]), throwError(() => boom)).pipe(toFile(path))));
    expect([...(await readFile(path))]).toEqual([9, 9]);
    await lastValueFrom(from([new Uint8Array([1])]).pipe(toFile(path)));
    expect([...(await readFile(path))]).toEqual([1]);
  });
});



