import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { once } from 'node:events';
import wavefile from 'wavefile';
import { filter, forkJoin, from, lastValueFrom, map, share, Subject, toArray } from 'rxjs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { streamingWavHeader } from '../../src/audio/pcm.js';
import type { PcmFormat } from '../../src/audio/wav.js';
import type { SpokenSegment } from '../../src/live/events.js';
import { SinkError, toAudioDevice, toWavFile, toWritable, type WritableDone, type WritableProgress } from '../../src/sinks/index.js';
import { bytesOf, catchError, concatBytes, makeTempDir, RECORDING_PLAYER, removeDir, samples16, waitFor, wavSegment } from '../fixtures/sinkFixtures.js';

let dir: string;
beforeEach(async () => {
  dir = await makeTempDir('rxvoice-writable-');
});
afterEach(async () => {
  await removeDir(dir);
});

const mono16: PcmFormat = { sampleRate: 22050, channels: 1, bitsPerSample: 16, audioFormat: 1 };

/** A Writable that takes `delayMs` per chunk, with a tiny buffer; records what it got and how it was called. */
class SlowWritable extends Writable {
  readonly received: Buffer[] = [];
  /** write() calls made while the stream had asked for 'drain'. */
  writesWhileFull = 0;
  maxBuffered = 0;
  constructor(
    private readonly delayMs: number,
    private readonly failOnChunk = -1,
  ) {
    super({ highWaterMark: 64 });
  }
  override write(chunk: unknown, ...rest: never[]): boolean {
    if (this.writableNeedDrain) this.writesWhileFull++;
    const ok = (super.write as (chunk: unknown, ...args: unknown[]) => boolean)(chunk, ...rest);
    this.maxBuffered = Math.max(this.maxBuffered, this.writableLength);
    return ok;
  }
  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    setTimeout(() => {
      if (this.received.length === this.failOnChunk) return callback(new Error('disk on fire'));
      this.received.push(chunk);
      callback();
    }, this.delayMs);
  }
}

describe('toWritable', () => {
  it('waits for drain on a slow writable, and everything arrives in order before done', async () => {
    const stream = new SlowWritable(2);
    const chunks = Array.from({ length: 20 }, (_, i) => new Uint8Array(100).fill(i));
    const events = await lastValueFrom(from(chunks).pipe(toWritable(stream), toArray()));
    const done = events.at(-1) as WritableDone;
    expect(done).toMatchObject({ type: 'done', segments: 20, bytes: 2000 });
    expect(done.drainWaits).toBeGreaterThan(0);
    expect(stream.writesWhileFull).toBe(0); // never wrote while the stream asked to wait
    expect(stream.maxBuffered).toBeLessThanOrEqual(100); // one chunk at a time in its buffer
    // Completed only after the last chunk was flushed.
    expect(Buffer.concat(stream.received).equals(Buffer.concat(chunks))).toBe(true);
    expect(stream.writableEnded).toBe(false); // not ended unless asked
    expect(stream.listenerCount('error')).toBe(0); // the sink's listeners are gone with it
    expect(stream.listenerCount('close')).toBe(0); // each drain wait removed its own
    expect(stream.listenerCount('drain')).toBe(0); // ...not one 'drain' listener left per wait
  });

  it('writes segments as one WAV stream with unwrapWav, and ends the stream when asked', async () => {
    const stream = new SlowWritable(0);
    const parts = [samples16(500, 1), samples16(333, 2)];
    const done = (await lastValueFrom(
      from(parts.map((s, i) => wavSegment(i, s))).pipe(toWritable(stream, { unwrapWav: true, end: true })),
    )) as WritableDone;
    expect(stream.writableFinished).toBe(true);
    const written = Buffer.concat(stream.received);
    expect(written.equals(Buffer.from(concatBytes([streamingWavHeader(mono16), ...parts.map(bytesOf)])))).toBe(true);
    expect(done.seconds).toBeCloseTo(833 / 22050, 6);
    // A WAV reader accepts the streaming header.
    const wav = new wavefile.WaveFile(new Uint8Array(written));
    expect((wav.fmt as { sampleRate: number }).sampleRate).toBe(22050);
  });

  it('writes segment audio as it comes without unwrapWav', async () => {
    const stream = new SlowWritable(0);
    const segment = wavSegment(0, samples16(10));
    await lastValueFrom(from([segment, { pcm: new Uint8Array([1, 2]), format: mono16 }]).pipe(toWritable(stream)));
    expect(Buffer.concat(stream.received).equals(Buffer.from(concatBytes([segment.audio, new Uint8Array([1, 2])])))).toBe(true);
  });

  it('errors with SinkError writable when the stream errors', async () => {
    const stream = new SlowWritable(1, 3);
    stream.on('error', () => undefined);
    const chunks = Array.from({ length: 10 }, () => new Uint8Array(100));
    const error = await catchError(lastValueFrom(from(chunks).pipe(toWritable(stream))));
    expect(error).toBeInstanceOf(SinkError);
    expect(error).toMatchObject({ code: 'sink', reason: 'writable' });
    expect((error as Error).message).toContain('disk on fire');
  });

  it('the stream failing between writes errors the output at once, and the sink leaves no listener on it', async () => {
    const stream = new SlowWritable(0);
    const source = new Subject<Uint8Array>();
    const events: WritableProgress[] = [];
    const failed = new Promise<unknown>((resolve) => source.pipe(toWritable(stream)).subscribe({ next: (e) => events.push(e), error: resolve }));
    source.next(new Uint8Array([1, 2, 3]));
    await waitFor(() => events.length === 1);
    let sourceObservedAtError: boolean | undefined;
    // the sink's listener was added first, so it has run when this one does
    stream.on('error', () => (sourceObservedAtError = source.observed));
    expect(source.observed).toBe(true); // control
    stream.destroy(new Error('pipe broke'));
    const error = await failed;
    expect(sourceObservedAtError).toBe(false);
    expect(error).toBeInstanceOf(SinkError);
    expect(error).toMatchObject({ reason: 'writable' });
    expect((error as Error).message).toContain('pipe broke');
    expect(stream.listenerCount('error')).toBe(1); // the test's own
  });

  it('unsubscribing removes the sink\'s listeners from a stream that stays open', async () => {
    const stream = new SlowWritable(0);
    const before = stream.listenerCount('error');
    const source = new Subject<Uint8Array>();
    const events: WritableProgress[] = [];
    const subscription = source.pipe(toWritable(stream)).subscribe((e) => events.push(e));
    expect(stream.listenerCount('error')).toBeGreaterThan(before); // control
    source.next(new Uint8Array([1]));
    await waitFor(() => events.length === 1);
    subscription.unsubscribe();
    // abort (which detaches) runs once the write in flight settled: wait for it
    await waitFor(() => stream.listenerCount('error') === before, 5000, 'listeners removed');
    expect(stream.destroyed).toBe(false);
  });

  it('unsubscribing while a write waits for a drain that never comes (a reader that stopped) leaves no listener, each time (control: the wait was there)', async () => {
    // write callbacks never called: the stream never drains
    const stalled = new Writable({ highWaterMark: 4, write: () => undefined });
    const counts = (): number[] => ['error', 'drain', 'close', 'finish'].map((event) => stalled.listenerCount(event));
    const before = counts();
    for (let round = 0; round < 12; round++) {
      const source = new Subject<Uint8Array>();
      const subscription = source.pipe(toWritable(stalled)).subscribe();
      source.next(new Uint8Array(16));
      await waitFor(() => stalled.listenerCount('drain') > before[1]!, 5000, 'waiting for a drain'); // control
      subscription.unsubscribe();
      await waitFor(() => counts().every((count, i) => count === before[i]), 5000, 'listeners removed');
    }
    expect(stalled.destroyed).toBe(false);
  });

  describe('a stream destroyed without an error fails the output instead of waiting forever', () => {
    async function destroyedAfterOneWrite(options: { end?: boolean }, then: (source: Subject<Uint8Array>) => void): Promise<unknown> {
      // the stream's 'close' has been emitted by then: nothing more will come from it
      const stream = new SlowWritable(0);
      const source = new Subject<Uint8Array>();
      const events: WritableProgress[] = [];
      const outcome = new Promise<unknown>((resolve) =>
        source.pipe(toWritable(stream, options)).subscribe({ next: (e) => events.push(e), error: resolve, complete: () => resolve('complete') }),
      );
      source.next(new Uint8Array([1]));
      await waitFor(() => events.length === 1);
      stream.destroy();
      await once(stream, 'close');
      then(source);
      return outcome;
    }

    it('at the next write', async () => {
      const error = await destroyedAfterOneWrite({}, (source) => source.next(new Uint8Array([2])));
      expect(error).toBeInstanceOf(SinkError);
      expect((error as Error).message).toContain('the stream is closed');
    });

    it('at the end, with end: true', async () => {
      const error = await destroyedAfterOneWrite({ end: true }, (source) => source.complete());
      expect(error).toBeInstanceOf(SinkError);
      expect((error as Error).message).toContain('the stream was closed before it finished');
    });

    it('control: without end, completing after the destroy completes (everything written was flushed)', async () => {
      expect(await destroyedAfterOneWrite({}, (source) => source.complete())).toBe('complete');
    });
  });

  it('end: true on a stream that already finished completes', async () => {
    const stream = new SlowWritable(0);
    await lastValueFrom(from([new Uint8Array([1])]).pipe(toWritable(stream, { end: true })));
    expect(stream.writableFinished).toBe(true);
    const done = await lastValueFrom(from([] as Uint8Array[]).pipe(toWritable(stream, { end: true })));
    expect(done).toMatchObject({ type: 'done', segments: 0, bytes: 0 });
  });

  it('stops writing on unsubscribe, leaving the stream open (or destroying it when asked)', async () => {
    const stream = new SlowWritable(5);
    const source = new Subject<Uint8Array>();
    const events: WritableProgress[] = [];
    const subscription = source.pipe(toWritable(stream)).subscribe((e) => events.push(e));
    for (let i = 0; i < 10; i++) source.next(new Uint8Array(100).fill(i));
    await waitFor(() => events.length >= 1);
    subscription.unsubscribe();
    await new Promise((resolve) => setTimeout(resolve, 100));
    const count = stream.received.length;
    expect(count).toBeLessThan(10);
    expect(stream.destroyed).toBe(false);
    expect(source.observed).toBe(false);

    const other = new SlowWritable(5);
    other.on('error', () => undefined);
    const second = source.pipe(toWritable(other, { destroyOnUnsubscribe: true })).subscribe();
    source.next(new Uint8Array(100));
    second.unsubscribe();
    expect(other.destroyed).toBe(true);
  });
});

describe('fan-out', () => {
  it('one shared source feeds a WAV file, the audio device and captions at once', async () => {
    const segments = new Subject<SpokenSegment>();
    const shared = segments.pipe(share());
    const path = join(dir, 'fan.wav');
    const recorded = join(dir, 'fan.raw');
    const all = lastValueFrom(
      forkJoin({
        file: shared.pipe(toWavFile(path), filter((e) => e.type === 'done')),
        device: shared.pipe(
          toAudioDevice({ player: { command: process.execPath, args: [RECORDING_PLAYER, `--out=${recorded}`] } }),
          filter((e) => e.type === 'done'),
        ),
        captions: shared.pipe(
          map((s) => s.text),
          toArray(),
        ),
      }),
    );
    const parts = [samples16(2000, 1), samples16(3000, 2), samples16(1000, 3)];
    parts.forEach((s, i) => segments.next(wavSegment(i, s)));
    segments.complete();
    const result = await all;
    const pcm = concatBytes(parts.map(bytesOf));
    expect(result.captions).toEqual(['segment 0', 'segment 1', 'segment 2']);
    expect(result.file).toMatchObject({ type: 'done', bytes: pcm.byteLength, segments: 3 });
    expect(result.device).toMatchObject({ type: 'done', bytes: 44 + pcm.byteLength, segments: 3 });
    const file = await readFile(path);
    expect(file.subarray(44).equals(Buffer.from(pcm))).toBe(true);
    const played = await readFile(recorded);
    expect(played.subarray(44).equals(Buffer.from(pcm))).toBe(true);
  });
});
