/**
 * Emulator capacity: how the emulator's answer time grows with the number of open live
 * sessions. Each session speaks like a talker: one word every 333 ms (3 words/s), six-word
 * sentences whose last word carries the stop, 16 kHz WAV, tone synth (0.25 s a word). The
 * figure is the time from the sentence's last `text.chunk` to its `segment.start`:
 *
 * - seen by the client (the `text.chunk` sent -> `segment.start` received), the row;
 * - inside the emulator (the `text.chunk` frame emitted by its socket -> `segment.start`
 *   handed to `ws.send`), measured by a probe on the `ws` class of the emulator's process,
 *   with the socket's `bufferedAmount` at that moment: the note says where the time is.
 *
 * Three processes: this one (the table), the emulator, and the talkers (bare `ws`
 * clients). Levels: 10, 100, 200, 400, 1000 sessions (quick: 10, 100, 400); each level
 * opens its sessions over about a second, lets them talk for `seconds`, and drops the
 * first sentence of each session (connection warm-up; a sentence takes 2 s, so a level
 * needs at least 6 s of talking to measure any). The peer of every row is the
 * same figure at 10 sessions; target ratio <= 2 up to 1,000 sessions (or until a core
 * is busy: the emulator's CPU share is in the note).
 *
 * Run alone: `npx tsx bench/emulator-capacity.ts [levels...]`.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { WebSocket } from 'ws';
import { startEmulator } from '../src/emulator/index.js';
import type { BenchRow } from './types.js';
import { QUICK, median, nextMessage, now, percentile, round, row, runAlone } from './util.js';

export interface EmulatorCapacityOptions {
  /** Session counts to measure. */
  levels?: number[];
  /** Talking time of each level after every session is open, s. */
  seconds?: number;
  /** Output sample rate, Hz. */
  sampleRate?: number;
}

const WORD_MS = 1000 / 3;
const WORDS_PER_SENTENCE = 6;
const WORDS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet'];

interface Latencies {
  p50: number;
  p99: number;
  count: number;
}

function summary(values: number[]): Latencies {
  return { p50: median(values), p99: percentile(values, 99), count: values.length };
}

interface LevelResult {
  sessions: number;
  client: Latencies;
  emulator: Latencies;
  /** Largest socket `bufferedAmount` at a `segment.start`, bytes. */
  bufferedMax: number;
  /** Emulator process CPU over the talking time, fraction of a core. */
  emulatorCpu: number;
  /** The emulator's event-loop delay p99 over the talking time, ms. */
  loopDelayP99: number;
  failures: number;
}

const here = fileURLToPath(import.meta.url);
const child = (args: string[]): ChildProcess => fork(here, args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], });

async function measureLevel(sessions: number, seconds: number, sampleRate: number): Promise<LevelResult> {
  const emulator = child(['--emulator']);
  try {
    const { wsUrl, apiKey } = await nextMessage<{ wsUrl: string; apiKey: string }>(emulator, 'addresses');
    const talkers = child(['--talk', JSON.stringify({ wsUrl, apiKey, sessions, seconds, sampleRate })]);
    try {
      await nextMessage<boolean>(talkers, 'open');
      emulator.send({ probe: 'start' });
      await nextMessage<boolean>(emulator, 'probing');
      talkers.send({ talk: true });
      const client = await nextMessage<{ latencies: number[]; failures: number }>(talkers, 'result');
      emulator.send({ probe: 'stop' });
      const probe = await nextMessage<{ latencies: number[]; bufferedMax: number; cpu: number; loopDelayP99: number }>(emulator, 'probe');
      return {
        sessions,
        client: summary(client.latencies),
        emulator: summary(probe.latencies),
        bufferedMax: probe.bufferedMax,
        emulatorCpu: probe.cpu,
        loopDelayP99: probe.loopDelayP99,
        failures: client.failures,
      };
    } finally {
      talkers.kill();
    }
  } finally {
    emulator.kill();
  }
}

export async function run(options: EmulatorCapacityOptions = {}): Promise<BenchRow[]> {
  const levels = options.levels ?? (QUICK ? [10, 100, 400] : [10, 100, 200, 400, 1000]);
  const seconds = options.seconds ?? (QUICK ? 7 : 8);
  const sampleRate = options.sampleRate ?? 16_000;
  const results: LevelResult[] = [];
  for (const sessions of levels) {
    const result = await measureLevel(sessions, seconds, sampleRate);
    console.error(
      `  ${sessions} sessions: client p50 ${round(result.client.p50)} p99 ${round(result.client.p99)} ms; emulator p50 ${round(result.emulator.p50)} p99 ${round(result.emulator.p99)} ms; buffered max ${result.bufferedMax} B; emulator CPU ${round(result.emulatorCpu)}, loop delay p99 ${round(result.loopDelayP99)} ms; failures ${result.failures}`,
    );
    results.push(result);
  }
  const base = results[0] as LevelResult;
  const top = results[results.length - 1] as LevelResult;
  const inside = row(
    `emulator-capacity: inside the emulator (text.chunk in -> segment.start out) p99, ${top.sessions} live sessions`,
    top.emulator.p99,
    base.emulator.p99,
    'ms',
    `peer: the same at ${base.sessions} sessions; p50 ${round(top.emulator.p50)} ms (at ${base.sessions}: ${round(base.emulator.p50)}); by level p50: ${results.map((r) => `${r.sessions}: ${round(r.emulator.p50)}`).join(', ')} ms`,
    'lower',
  );
  return [...results.map((r) =>
    row(
      `emulator-capacity: last text.chunk -> segment.start p50, ${r.sessions} live sessions (3 words/s each, ${sampleRate / 1000} kHz WAV)`,
      r.client.p50,
      base.client.p50,
      'ms',
      `peer: the same at ${base.sessions} sessions; p99 ${round(r.client.p99)} ms (at ${base.sessions}: ${round(base.client.p99)}); inside the emulator p50 ${round(r.emulator.p50)} p99 ${round(r.emulator.p99)} ms; socket bufferedAmount max ${r.bufferedMax} B; emulator CPU ${round(r.emulatorCpu)} core, event-loop delay p99 ${round(r.loopDelayP99)} ms; ${r.client.count} sentences, ${r.failures} failed sessions; target ratio <= 2`,
      'lower',
    ),
  ), inside];
}

// ---------------------------------------------------------------------------
// The emulator's process, with a probe on its sockets
// ---------------------------------------------------------------------------

async function emulatorChild(): Promise<void> {
  const emulator = await startEmulator({ synth: 'tone', liveSessionsPerKey: 100_000, log: false });
  let probing = false;
  let latencies: number[] = [];
  let bufferedMax = 0;
  const received = new WeakMap<WebSocket, number[]>();
  const proto = WebSocket.prototype as unknown as {
    emit(event: string, ...args: unknown[]): boolean;
    send(data: unknown, ...rest: unknown[]): void;
  };
  const emit = proto.emit;
  proto.emit = function probedEmit(this: WebSocket, event: string, ...args: unknown[]): boolean {
    if (probing && event === 'message' && args[1] === false) {
      const text = String(args[0]);
      if (text.includes('"text.chunk"') && text.endsWith('."}')) {
        let queue = received.get(this);
        if (!queue) received.set(this, (queue = []));
        queue.push(now());
      }
    }
    return emit.call(this, event, ...args);
  };
  const send = proto.send;
  proto.send = function probedSend(this: WebSocket, data: unknown, ...rest: unknown[]): void {
    if (probing && typeof data === 'string' && data.startsWith('{"type":"segment.start"')) {
      const at = received.get(this)?.shift();
      if (at !== undefined) latencies.push(now() - at);
      bufferedMax = Math.max(bufferedMax, this.bufferedAmount);
    }
    send.call(this, data, ...rest);
  };
  const loopDelay = monitorEventLoopDelay({ resolution: 5 });
  let cpuStart = process.cpuUsage();
  let wallStart = now();
  process.on('message', (message: Record<string, unknown>) => {
    if (message['probe'] === 'start') {
      probing = true;
      loopDelay.reset();
      loopDelay.enable();
      latencies = [];
      bufferedMax = 0;
      cpuStart = process.cpuUsage();
      wallStart = now();
      process.send?.({ probing: true });
    } else if (message['probe'] === 'stop') {
      probing = false;
      loopDelay.disable();
      const cpu = process.cpuUsage(cpuStart);
      process.send?.({ probe: { latencies, bufferedMax, cpu: (cpu.user + cpu.system) / 1000 / (now() - wallStart), loopDelayP99: loopDelay.percentile(99) / 1e6 } });
    }
  });
  process.on('disconnect', () => void emulator.close().then(() => process.exit(0)));
  process.send?.({ addresses: { wsUrl: emulator.wsUrl, apiKey: emulator.apiKey } });
}

// ---------------------------------------------------------------------------
// The talkers' process: bare `ws` sessions, one word every 333 ms each
// ---------------------------------------------------------------------------

interface TalkArgs {
  wsUrl: string;
  apiKey: string;
  sessions: number;
  seconds: number;
  sampleRate: number;
}

function talkersChild(args: TalkArgs): void {
  const latencies: number[] = [];
  let failures = 0;
  let opened = 0;
  let talking = false;
  const sockets: WebSocket[] = [];
  const timers: NodeJS.Timeout[] = [];
  const starts: (() => void)[] = [];

  function session(index: number): void {
    const ws = new WebSocket(args.wsUrl, { headers: { 'x-api-key': args.apiKey } });
    sockets.push(ws);
    /** When each sentence's last word went out, by segment id. */
    const lastWordAt: number[] = [];
    let word = 0;
    ws.on('error', () => undefined);
    ws.on('close', (code) => {
      if (talking && code !== 1000) failures++;
    });
    ws.on('open', () =>
      ws.send(JSON.stringify({ type: 'session.start', voice_id: 1, language: 'en-us', output_format: 'wav', sample_rate: args.sampleRate })),
    );
    ws.on('message', (data, isBinary) => {
      if (isBinary) return;
      const frame = JSON.parse(String(data)) as { type: string; segment_id?: number };
      if (frame.type === 'session.ready') {
        if (++opened === args.sessions) process.send?.({ open: true });
      } else if (frame.type === 'segment.start') {
        const id = frame.segment_id ?? -1;
        const sent = lastWordAt[id];
        // the first sentence of a session is its warm-up
        if (sent !== undefined && id > 0) latencies.push(now() - sent);
      }
    });
    const speak = (): void => {
      if (!talking || ws.readyState !== WebSocket.OPEN) return;
      const inSentence = word % WORDS_PER_SENTENCE;
      const last = inSentence === WORDS_PER_SENTENCE - 1;
      const text = `${inSentence === 0 ? '' : ' '}${WORDS[(word + index) % WORDS.length]}${last ? '.' : ''}`;
      ws.send(JSON.stringify({ type: 'text.chunk', text }));
      if (last) lastWordAt[Math.floor(word / WORDS_PER_SENTENCE)] = now();
      word++;
    };
    // every session starts at its own phase of the 333 ms beat
    starts.push(() => timers.push(setTimeout(() => timers.push(setInterval(speak, WORD_MS)), (index * WORD_MS) / args.sessions)));
  }

  // open in steps (the emulator's accept queue is never overrun)
  let next = 0;
  const openSome = (): void => {
    for (let i = 0; i < 100 && next < args.sessions; i++) session(next++);
    if (next < args.sessions) setTimeout(openSome, 50);
  };
  openSome();
  process.once('message', (message: Record<string, unknown>) => {
    if (!message['talk']) return;
    talking = true;
    for (const start of starts) start();
    setTimeout(() => {
      talking = false;
      for (const timer of timers) clearInterval(timer);
      for (const ws of sockets) ws.terminate();
      process.send?.({ result: { latencies, failures } });
    }, args.seconds * 1000);
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [mode, json] = process.argv.slice(2);
  if (mode === '--emulator') await emulatorChild();
  else if (mode === '--talk') talkersChild(JSON.parse(json ?? '{}') as TalkArgs);
  else {
    const levels = process.argv.slice(2).map(Number).filter((n) => n > 0);
    runAlone(() => run(levels.length > 0 ? { levels } : {}));
  }
}
