/**
 * Timing metrics as data: the recorder in virtual time (exact), the `metrics` option of
 * a live session against the emulator at an emulated latency (measured lower bounds
 * only), and the timing of task results.
 */
import { concat, delay, lastValueFrom, of, Subject, take, toArray, VirtualTimeScheduler } from 'rxjs';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main, type CliIo } from '../../src/cli/main.js';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import { SpeechMetricsRecorder, type SessionMetrics, type SpeechMetrics } from '../../src/live/metrics.js';
import { createClient, type RxVoiceClient } from '../../src/index.js';
import { clientFor, VirtualClock } from '../client/helpers.js';

describe('SpeechMetricsRecorder (virtual time)', () => {
  it('reports each segment from the text that completed it, then the session once', () => {
    const scheduler = new VirtualTimeScheduler();
    const at = (ms: number, work: () => void): void => void scheduler.schedule(work, ms);
    const reports: SpeechMetrics[] = [];
    let completed = 0;
    const recorder = new SpeechMetricsRecorder({ next: (m) => reports.push(m), complete: () => completed++ }, scheduler);
    at(40, () => recorder.opened());
    at(90, () => recorder.ready());
    at(100, () => recorder.textPushed('Hello '));
    at(120, () => recorder.textPushed('there. How'));
    at(300, () => recorder.textPushed(' are you?'));
    // The service's segment 0 ends in the second push, segment 1 in the third.
    at(200, () => recorder.segmentStarted(0, 'Hello there.'));
    at(230, () => recorder.audio(1000));
    at(260, () => recorder.audio(500));
    at(270, () => recorder.segmentDone());
    at(380, () => recorder.segmentSkipped(1, ' How are you?'));
    at(400, () => recorder.end('complete'));
    at(450, () => recorder.end('unsubscribed'));
    scheduler.flush();
    expect(reports).toEqual([
      { type: 'segment', segment_id: 0, textAtMs: 120, firstAudioMs: 110, synthesisMs: 150, audioBytes: 1500, skipped: false },
      { type: 'segment', segment_id: 1, textAtMs: 300, firstAudioMs: undefined, synthesisMs: 80, audioBytes: 0, skipped: true },
      {
        type: 'session',
        connectMs: 40,
        readyMs: 90,
        firstTextMs: 100,
        firstAudioMs: 230,
        textToFirstAudioMs: 130,
        segments: 1,
        skipped: 1,
        audioBytes: 1500,
        reconnects: 0,
        totalMs: 400,
        outcome: 'complete',
      },
    ]);
    expect(completed).toBe(1);
  });

  it('a function works as the observer; a session that never opened reports undefined times', () => {
    const scheduler = new VirtualTimeScheduler();
    const reports: SpeechMetrics[] = [];
    const recorder = new SpeechMetricsRecorder((m) => reports.push(m), scheduler);
    scheduler.schedule(() => recorder.end('error'), 25);
    scheduler.flush();
    expect(reports).toEqual([
      expect.objectContaining({ type: 'session', connectMs: undefined, readyMs: undefined, firstAudioMs: undefined, totalMs: 25, outcome: 'error' }),
    ]);
  });
});

describe('SpeechMetricsRecorder (virtual time): edge cases', () => {
  /** A recorder on a virtual clock: `at(ms, step)` schedules a step, `run()` plays them and answers the reports. */
  function recorderAt() {
    const scheduler = new VirtualTimeScheduler();
    const reports: SpeechMetrics[] = [];
    const recorder = new SpeechMetricsRecorder((m) => reports.push(m), scheduler);
    const at = (ms: number, work: () => void): void => void scheduler.schedule(work, ms);
    const run = (): SpeechMetrics[] => {
      scheduler.flush();
      return reports;
    };
    return { recorder, at, run };
  }
  const segments = (reports: SpeechMetrics[]) => reports.filter((m) => m.type === 'segment');

  it('connect and ready times are the first ones: a reconnect opening a new socket moves neither', () => {
    const { recorder, at, run } = recorderAt();
    at(40, () => recorder.opened());
    at(90, () => recorder.ready());
    at(500, () => recorder.opened());
    at(550, () => recorder.ready());
    at(600, () => recorder.end('complete'));
    expect(run().at(-1)).toMatchObject({ connectMs: 40, readyMs: 90 });
  });

  it('a segment ending exactly where a push ends is timed from that push, not the next one', () => {
    const { recorder, at, run } = recorderAt();
    at(10, () => recorder.textPushed('One. '));
    at(20, () => recorder.textPushed('Two. '));
    at(50, () => recorder.segmentStarted(0, 'One.'));
    at(60, () => recorder.segmentDone());
    at(70, () => recorder.segmentStarted(1, 'Two.'));
    at(80, () => recorder.segmentDone());
    expect(segments(run()).map((m) => m.textAtMs)).toEqual([10, 20]);
  });

  it('after a reconnect the segments cover the text sent again: each is timed from its own push', () => {
    const { recorder, at, run } = recorderAt();
    at(10, () => recorder.textPushed('One. '));
    at(20, () => recorder.textPushed('Two. '));
    at(30, () => recorder.textPushed('Three.'));
    at(40, () => recorder.segmentStarted(0, 'One.'));
    at(45, () => recorder.segmentDone());
    at(50, () => recorder.segmentStarted(1, 'Two.')); // cut off before its end
    at(60, () => recorder.reconnected('Two. Three.'));
    at(70, () => recorder.segmentStarted(0, 'Two.'));
    at(75, () => recorder.segmentDone());
    at(80, () => recorder.segmentStarted(1, 'Three.'));
    at(85, () => recorder.segmentDone());
    at(90, () => recorder.end('complete'));
    const reports = run();
    expect(segments(reports).map((m) => m.textAtMs)).toEqual([10, 20, 30]);
    expect(reports.at(-1)).toMatchObject({ reconnects: 1, segments: 3 });
  });

  it('nothing is reported after the session report (control: the same segment before it is)', () => {
    const late = recorderAt();
    late.at(10, () => late.recorder.textPushed('One.'));
    late.at(20, () => late.recorder.segmentStarted(0, 'One.'));
    late.at(30, () => late.recorder.end('unsubscribed'));
    late.at(40, () => late.recorder.segmentDone());
    late.at(50, () => late.recorder.segmentSkipped(1, 'Two.'));
    expect(late.run().map((m) => m.type)).toEqual(['session']);
    const control = recorderAt();
    control.at(10, () => control.recorder.textPushed('One.'));
    control.at(20, () => control.recorder.segmentStarted(0, 'One.'));
    control.at(40, () => control.recorder.segmentDone());
    control.at(50, () => control.recorder.end('unsubscribed'));
    expect(control.run().map((m) => m.type)).toEqual(['segment', 'session']);
  });
});

describe('the metrics option of a live session (emulator at 30 ms one-way)', () => {
  const ONE_WAY = 30;
  let emulator: Emulator;
  let client: RxVoiceClient;
  beforeAll(async () => {
    emulator = await startEmulator({ synth: 'tone', toneWordSeconds: 0.02, latencyMs: ONE_WAY, faults: { failSynthesisMatching: { text: 'doomed', times: 10 } } });
    client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.baseUrl });
  });
  afterAll(async () => {
    await client.close();
    await emulator.close();
  });

  it('connect, ready, per segment and totals, consistent with the events (lower bounds from the network)', async () => {
    const reports: SpeechMetrics[] = [];
    let completed = false;
    const text$ = concat(of('Hello there. '), of('This one is doomed. ', 'How are you?').pipe(delay(80)));
    const events = await lastValueFrom(
      text$.pipe(client.speak({ voice_id: 1, metrics: { next: (m) => reports.push(m), complete: () => (completed = true) } }), toArray()),
    );
    const session = reports.at(-1) as SessionMetrics;
    expect(session.type).toBe('session');
    expect(completed).toBe(true);
    // A new connection: handshake and upgrade round trips before it opens; then session.start -> ready.
    expect(session.connectMs).toBeGreaterThanOrEqual(4 * ONE_WAY - 2);
    expect(session.readyMs! - session.connectMs!).toBeGreaterThanOrEqual(2 * ONE_WAY - 2);
    expect(session.textToFirstAudioMs).toBeGreaterThanOrEqual(2 * ONE_WAY - 2);
    expect(session.outcome).toBe('complete');
    const audio = events.filter((e) => e.type === 'audio');
    expect(session.audioBytes).toBe(audio.reduce((n, e) => n + (e.type === 'audio' ? e.bytes.byteLength : 0), 0));
    expect(session.segments).toBe(events.filter((e) => e.type === 'segmentDone').length);
    expect(session.skipped).toBe(1);

    const segments = reports.filter((m) => m.type === 'segment');
    expect(segments.map((m) => [m.segment_id, m.skipped])).toEqual([
      [0, false],
      [1, true],
      [2, false],
    ]);
    const [first, skipped, last] = segments;
    // Segment 2's text came 80 ms after segment 0's.
    expect(last!.textAtMs - first!.textAtMs).toBeGreaterThanOrEqual(78);
    for (const m of [first!, last!]) {
      expect(m.firstAudioMs).toBeGreaterThanOrEqual(2 * ONE_WAY - 2);
      expect(m.synthesisMs).toBeGreaterThanOrEqual(m.firstAudioMs!);
      expect(m.audioBytes).toBeGreaterThan(0);
    }
    expect(skipped).toMatchObject({ firstAudioMs: undefined, audioBytes: 0 });
  });

  it('unsubscribing (barge-in) ends the report with outcome unsubscribed', async () => {
    const reports: SpeechMetrics[] = [];
    const text = new Subject<string>();
    const done = lastValueFrom(text.pipe(client.speak({ voice_id: 1, metrics: (m) => reports.push(m) }), take(2), toArray()));
    text.next('Hello there, this is long enough to speak. ');
    await done;
    expect(reports.at(-1)).toMatchObject({ type: 'session', outcome: 'unsubscribed' });
  });
});

describe('task timing', () => {
  let emulator: Emulator;
  beforeAll(async () => {
    emulator = await startEmulator({ synth: 'tone', taskDurationMs: 0 });
  });
  afterAll(() => emulator.close());

  it('the result event carries queue and poll timings (virtual time, real requests)', async () => {
    const clock = new VirtualClock();
    const client = clientFor(emulator, { scheduler: clock, polling: { initialDelayMs: 500, multiplier: 1.5, jitter: 0, adaptive: false } });
    try {
      const events = await lastValueFrom(client.translate({ texts: ['Hi'], source_language: 'en-us', target_language: 'de-de' }).pipe(toArray()));
      const result = events.at(-1);
      expect(result?.type).toBe('result');
      // One status call after 500 ms found it done; the clock moves only on timers.
      expect(result?.type === 'result' && result.timing).toEqual({ createMs: 0, pendingMs: 500, lastPendingMs: 0, polls: 1, resultMs: 0 });
    } finally {
      await client.close();
    }
  });

  it('polls counts the status calls the emulator saw', async () => {
    emulator.context.options.taskDurationMs = 120;
    const client = clientFor(emulator);
    try {
      const events = await lastValueFrom(client.translate({ texts: ['Hi'], source_language: 'en-us', target_language: 'de-de' }).pipe(toArray()));
      const result = events.at(-1)!;
      if (result.type !== 'result') throw new Error('no result');
      const seen = emulator.requests.filter((r) => r.path === `/translation/${result.task_id}`).length;
      expect(result.timing.polls).toBe(seen);
      // The emulator counts the task's 120 ms from its creation, which lies between the create
      // request leaving and its answer arriving (createMs); the client's pendingMs starts at the
      // answer. So createMs + pendingMs, not pendingMs alone, is at least 120 ms, however long the
      // answer took on a loaded machine.
      expect(result.timing.createMs + result.timing.pendingMs).toBeGreaterThanOrEqual(120);
      expect(result.timing.pendingMs).toBeGreaterThanOrEqual(result.timing.lastPendingMs);
    } finally {
      emulator.context.options.taskDurationMs = 0;
      await client.close();
    }
  });
});

describe('the CLI prints timing from the public API (--json)', () => {
  let emulator: Emulator;
  let dir: string;
  beforeAll(async () => {
    emulator = await startEmulator({ synth: 'tone', toneWordSeconds: 0.02, taskDurationMs: 20 });
    dir = mkdtempSync(join(tmpdir(), 'rxvoice-metrics-'));
  });
  afterAll(async () => {
    await emulator.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function cli(argv: string[]): Promise<Array<Record<string, unknown>>> {
    let out = '';
    const sink = (): Writable =>
      new Writable({
        write(chunk: Buffer, _encoding, callback) {
          out += chunk.toString();
          callback();
        },
      });
    const stdout = sink();
    const io: CliIo = {
      stdout,
      stderr: sink(),
      stdin: Readable.from([]),
      env: { RXVOICE_API_KEY: emulator.apiKey, RXVOICE_BASE_URL: emulator.baseUrl },
      cwd: dir,
      onInterrupt: () => () => undefined,
    };
    const code = await main(argv, io);
    expect(code).toBe(0);
    return out
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  }

  it('speak --json: the done line carries the session timing', async () => {
    const lines = await cli(['speak', 'Hello there.', '-o', join(dir, 'hi.wav'), '--json']);
    const done = lines.find((line) => line['type'] === 'done') as { timing?: { connectMs: number; readyMs: number; firstAudioMs: number } };
    expect(done.timing).toBeDefined();
    expect(done.timing!.readyMs).toBeGreaterThanOrEqual(done.timing!.connectMs);
    expect(done.timing!.firstAudioMs).toBeGreaterThanOrEqual(done.timing!.readyMs);
  });

  it('sound --json: the result line carries the task timing', async () => {
    const lines = await cli(['sound', 'rain', '--duration', '1', '-o', join(dir, 'rain.wav'), '--json']);
    const result = lines.find((line) => line['type'] === 'result') as { timing?: { polls: number; pendingMs: number } };
    const pending = lines.filter((line) => line['type'] === 'pending').length;
    expect(result.timing?.polls).toBe(pending + 1);
    expect(result.timing?.pendingMs).toBeGreaterThanOrEqual(20);
  });
});
