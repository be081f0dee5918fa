/**
 * Long streams: one hour of 22.05 kHz 16-bit mono audio as live-session events (3,600
 * segments of 1 s WAV, generated on the fly, in 16 KiB audio frames), through
 * `concatSegments()` into `toWavFile(path)` in a temporary directory. Measures the
 * resident memory growth (target under 20 MB) and the throughput; the peer is a plain
 * `fs.createWriteStream` writer of the same bytes (header + PCM, honouring `drain`,
 * fsync'd at the end like `toWavFile`).
 *
 * The source is paced by the sink (at most 4 segments ahead of the last written one),
 * as a live session is: the service is never faster than the file for long. Each run
 * removes its file. Run alone: `npx tsx bench/long-stream.ts`.
 */
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { mkdtemp, open, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BehaviorSubject, Observable, lastValueFrom, tap } from 'rxjs';
import { wavHeader, type PcmFormat } from '../src/audio/wav.js';
import type { LiveSpeechEvent } from '../src/live/events.js';
import { concatSegments } from '../src/operators/concatSegments.js';
import { toWavFile } from '../src/sinks/toWavFile.js';
import type { BenchRow } from './types.js';
import { MB, QUICK, gc, median, memory, now, row } from './util.js';

const FORMAT: PcmFormat = { sampleRate: 22050, channels: 1, bitsPerSample: 16, audioFormat: 1 };
const SEGMENT_PCM_BYTES = FORMAT.sampleRate * 2; // 1 s
const FRAME_BYTES = 16 * 1024;
/** Segments the source may run ahead of the sink. */
const WINDOW = 4;

/** One second of a 440 Hz tone, the PCM copied into every generated segment. */
const TEMPLATE = (() => {
  const pcm = new Int16Array(FORMAT.sampleRate);
  for (let n = 0; n < pcm.length; n++) pcm[n] = Math.round(Math.sin((2 * Math.PI * 440 * n) / FORMAT.sampleRate) * 8000);
  return new Uint8Array(pcm.buffer);
})();

/** A fresh 1 s WAV file (header + PCM), as the service would send for segment `i`. */
function segmentWav(i: number): Uint8Array {
  const out = new Uint8Array(44 + SEGMENT_PCM_BYTES);
  out.set(wavHeader(FORMAT, SEGMENT_PCM_BYTES), 0);
  out.set(TEMPLATE, 44);
  out[44] = i & 0xff; // not all identical
  return out;
}

/**
 * Sample RSS and heap every 50 ms. `mark()` (called a tenth into the stream) starts the
 * second measure: growth over the rest of the stream, once V8's young generation has
 * grown to its working size. `stop()` returns the peaks.
 */
function sampler(): { mark(): void; stop(): { rss: number; heap: number; rssAtMark: number; rssAfterMark: number } } {
  let rss = 0;
  let heap = 0;
  let rssAtMark = Number.NaN;
  let rssAfterMark = 0;
  const sample = (): void => {
    const m = memory();
    rss = Math.max(rss, m.rss);
    heap = Math.max(heap, m.heap);
    if (!Number.isNaN(rssAtMark)) rssAfterMark = Math.max(rssAfterMark, m.rss);
  };
  sample();
  const timer = setInterval(sample, 50);
  return {
    mark() {
      if (Number.isNaN(rssAtMark)) rssAtMark = memory().rss;
    },
    stop() {
      clearInterval(timer);
      sample();
      return { rss, heap, rssAtMark, rssAfterMark };
    },
  };
}

interface RunResult {
  ms: number;
  /** CPU time (user + system) of the run, ms. */
  cpuMs: number;
  fileBytes: number;
  /** Peak RSS above the RSS before the run (after a forced GC). */
  rssGrowth: number;
  /** Peak RSS after the first tenth above the RSS at the first tenth. */
  rssGrowthAfterTenth: number;
  heapGrowth: number;
}

export async function ours(path: string, segments: number, checkpoints?: { every: number; rss: number[]; heap: number[] }): Promise<RunResult> {
  const written = new BehaviorSubject(0);
  const source = new Observable<LiveSpeechEvent>((subscriber) => {
    let emitted = 0;
    subscriber.next({ type: 'ready', session_id: 'bench', run_id: 1, config: { output_format: 'wav', sample_rate: FORMAT.sampleRate } });
    const pump = (done: number): void => {
      while (emitted < segments && emitted - done < WINDOW && !subscriber.closed) {
        const id = emitted++;
        subscriber.next({ type: 'segmentStart', segment_id: id, text: `second ${id}` });
        const wav = segmentWav(id);
        for (let offset = 0; offset < wav.byteLength; offset += FRAME_BYTES) {
          subscriber.next({ type: 'audio', segment_id: id, bytes: wav.subarray(offset, offset + FRAME_BYTES) });
        }
        subscriber.next({ type: 'segmentDone', segment_id: id });
      }
      if (emitted === segments) subscriber.complete();
    };
    const subscription = written.subscribe(pump);
    return () => subscription.unsubscribe();
  });
  gc();
  const before = memory();
  const peaks = sampler();
  const c0 = process.cpuUsage();
  const t0 = now();
  const tenth = Math.max(1, Math.floor(segments / 10));
  let nextCheckpoint = checkpoints?.every ?? Number.POSITIVE_INFINITY;
  const done = await lastValueFrom(
    source.pipe(
      concatSegments(),
      toWavFile(path),
      tap((p) => {
        if (p.type !== 'progress') return;
        if (p.segments >= tenth) peaks.mark();
        if (checkpoints && p.segments >= nextCheckpoint) {
          nextCheckpoint += checkpoints.every;
          gc();
          const m = memory();
          checkpoints.rss.push(m.rss - before.rss);
          checkpoints.heap.push(m.heap - before.heap);
        }
        written.next(p.segments);
      }),
    ),
  );
  const ms = now() - t0;
  const cpu = process.cpuUsage(c0);
  const peak = peaks.stop();
  if (done.type !== 'done' || done.bytes !== segments * SEGMENT_PCM_BYTES) throw new Error(`long-stream: wrote ${done.bytes} PCM bytes`);
  return {
    ms,
    cpuMs: (cpu.user + cpu.system) / 1000,
    fileBytes: done.fileBytes,
    rssGrowth: peak.rss - before.rss,
    rssGrowthAfterTenth: peak.rssAfterMark - peak.rssAtMark,
    heapGrowth: peak.heap - before.heap,
  };
}

export async function peer(path: string, segments: number): Promise<RunResult> {
  gc();
  const before = memory();
  const peaks = sampler();
  const c0 = process.cpuUsage();
  const t0 = now();
  const tenth = Math.max(1, Math.floor(segments / 10));
  const handle = await open(path, 'w');
  const out = createWriteStream('', { fd: handle.fd, autoClose: false });
  const dataBytes = segments * SEGMENT_PCM_BYTES;
  out.write(wavHeader(FORMAT, dataBytes));
  for (let i = 0; i < segments; i++) {
    if (i === tenth) peaks.mark();
    const wav = segmentWav(i);
    if (!out.write(wav.subarray(44))) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  await handle.sync();
  await handle.close();
  const ms = now() - t0;
  const cpu = process.cpuUsage(c0);
  const peak = peaks.stop();
  const size = (await stat(path)).size;
  if (size !== 44 + dataBytes) throw new Error(`long-stream peer: file of ${size} bytes`);
  return {
    ms,
    cpuMs: (cpu.user + cpu.system) / 1000,
    fileBytes: size,
    rssGrowth: peak.rss - before.rss,
    rssGrowthAfterTenth: peak.rssAfterMark - peak.rssAtMark,
    heapGrowth: peak.heap - before.heap,
  };
}

export interface LongStreamOptions {
  /** Seconds of audio (segments of 1 s). Default 3600 (one hour). */
  seconds?: number;
  /** Runs of each (alternating). */
  runs?: number;
}

export async function run(options: LongStreamOptions = {}): Promise<BenchRow[]> {
  const seconds = options.seconds ?? (QUICK ? 600 : 3600);
  const runs = options.runs ?? (QUICK ? 3 : 7);
  const dir = await mkdtemp(join(tmpdir(), 'rxvoice-bench-'));
  const results = { ours: [] as RunResult[], peer: [] as RunResult[] };
  const probe = { every: Math.max(1, Math.floor(seconds / 10)), rss: [] as number[], heap: [] as number[] };
  try {
    // Warm-up (JIT, first allocations of the sink's code paths): not measured.
    for (const who of ['ours', 'peer'] as const) {
      const path = join(dir, `warm-${who}.wav`);
      await (who === 'ours' ? ours : peer)(path, 120);
      await rm(path, { force: true });
    }
    for (let i = 0; i < runs; i++) {
      const order: ('ours' | 'peer')[] = i % 2 === 0 ? ['ours', 'peer'] : ['peer', 'ours'];
      for (const who of order) {
        const path = join(dir, `${who}-${i}.wav`);
        results[who].push(await (who === 'ours' ? ours : peer)(path, seconds));
        await rm(path, { force: true });
      }
    }
    // Retention probe: a forced GC every tenth of the stream; what stays is retained.
    const path = join(dir, 'probe.wav');
    await ours(path, seconds, probe);
    await rm(path, { force: true });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  const mbps = (r: RunResult): number => r.fileBytes / MB / (r.ms / 1000);
  const realtime = (r: RunResult): number => seconds / (r.ms / 1000);
  const list = (values: number[]): string => values.map((v) => v.toFixed(1)).join('/');
  const rss = (runs: RunResult[]): number[] => runs.map((r) => r.rssGrowth / MB);
  const rssLate = (runs: RunResult[]): number[] => runs.map((r) => r.rssGrowthAfterTenth / MB);
  const heap = (runs: RunResult[]): number[] => runs.map((r) => r.heapGrowth / MB);
  const cpuMs = (runs: RunResult[]): number => median(runs.map((r) => r.cpuMs));
  const hours = seconds >= 3600 ? `${seconds / 3600} h` : `${seconds / 60} min`;
  const size = ((results.ours[0]?.fileBytes ?? 0) / MB).toFixed(0);
  const worstLate = Math.max(...rssLate(results.ours));
  const worst = Math.max(...rss(results.ours));
  const mb = (v: number | undefined): string => ((v ?? 0) / MB).toFixed(1);
  const retained = `after a forced GC at each tenth, RSS vs start: ${probe.rss.map((v) => mb(v)).join(', ')} MB; heap ${mb(probe.heap[0])} -> ${mb(probe.heap.at(-1))} MB`;
  return [
    row(
      `long stream: throughput (${hours} 22.05 kHz mono)`,
      median(results.ours.map(mbps)),
      median(results.peer.map(mbps)),
      'MB/s',
      `median of ${runs}; ${size} MB file, fsync'd; ours x${median(results.ours.map(realtime)).toFixed(0)} realtime, peer x${median(results.peer.map(realtime)).toFixed(0)}; CPU ${cpuMs(results.ours).toFixed(0)} vs ${cpuMs(results.peer).toFixed(0)} ms per run`,
      'higher',
    ),
    row(
      'long stream: RSS growth after the first tenth',
      median(rssLate(results.ours)),
      median(rssLate(results.peer)),
      'MB',
      `median of ${runs} (ours ${list(rssLate(results.ours))}, peer ${list(rssLate(results.peer))} MB); target < 20 MB: ${worstLate < 20 ? 'met' : 'MISSED'} (worst ${worstLate.toFixed(1)} MB); ours ${retained}`,
      'lower',
    ),
    row(
      'long stream: peak RSS above the start',
      median(rss(results.ours)),
      median(rss(results.peer)),
      'MB',
      `median of ${runs} (ours ${list(rss(results.ours))}, peer ${list(rss(results.peer))} MB; worst ours ${worst.toFixed(1)} MB), from a post-GC start: mostly V8's young generation growing back plus unreclaimed garbage; peak heap growth ours ${median(heap(results.ours)).toFixed(1)}, peer ${median(heap(results.peer)).toFixed(1)} MB`,
      'lower',
    ),
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  run().then((rows) => console.table(rows), (error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
