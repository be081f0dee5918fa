/**
 * Emulator capacity: how the emulator's answer time grows with the number of open live
 * sessions. Each session speaks like a talker: one word every 333 ms (3 words/s), six-word
 * sentences whose last word carries the stop, 16 kHz WAV, tone synth (0.25 s a word).
 * Talkers are independent: each starts at its own phase of the 333 ms beat and at its own
 * word of a sentence, so sentence ends arrive spread over the six beats of a sentence (until
 * 2026-11-26 every session ended its sentences in the same beat: 1,000 sentence ends in 333 ms,
 * synthesized one after another, which made a queue of ~100 ms at 1,000 sessions on an
 * otherwise idle machine; real talkers are not in step). The figure is the time from the sentence's last `text.chunk` to its `segment.start`:
 *
 * - seen by the client (the `text.chunk` sent -> `segment.start` received), the row;
 * - inside the emulator (the `text.chunk` frame emitted by its socket -> `segment.start`
 *   handed to `ws.send`), measured by a probe on the `ws` class of the emulator's process,
 *   with the socket's `bufferedAmount` at that moment;
 * - the two legs between: up (the talker's send -> the emulator's socket emits it) and down
 *   (the emulator's send -> the talker's socket emits it), joined by session and segment id
 *   on the machine's monotonic clock (`process.hrtime`, shared by every process).
 *
 * Processes: this one (the table), the emulator, and the talkers (bare `ws` clients, the
 * load generator, not the library), spread over `talkerProcesses` processes (2 by
 * default). Each level reports, for every process over the talking time, its CPU (fraction
 * of a core), the share of the time its main thread was runnable (running, or waiting for
 * a CPU: Linux `/proc/self/schedstat`), its event-loop utilization and delay, and the
 * whole machine's busy cores and load average. "A core busy" (the goal of issue 33 holds
 * "up to 1,000 sessions, or until a core is busy"): one of our processes used more than
 * {@link BUSY_CORE} of a core, or its main thread was runnable more than that share of the
 * time, or the emulator used more than that share of what one thread gets on this machine
 * (cores / load average: on a shared machine, a thread at its fair share waits for a CPU in
 * long stretches, and the frames it has not read yet wait with it).
 *
 * The control: at the top level, the same talkers against a bare `ws` server that answers
 * each sentence's last word at once with the same frames (`segment.start`, precomputed audio
 * of the same size, `segment.done`): whatever the client sees there is the machine's and the
 * sockets', not the emulator's. Its row compares the emulator with it at that level.
 *
 * Levels: 10, 100, 200, 400, 1000 sessions (quick: 10, 100, 400); each level opens its
 * sessions over about a second, lets them talk for `seconds`, and drops the first sentence
 * of each session (connection warm-up; a sentence takes 2 s, so a level needs at least
 * 6 s of talking to measure any). The peer of every row is the same figure at 10
 * sessions; target ratio <= 2.
 *
 * Run alone: `npx tsx bench/emulator-capacity.ts [levels...]` (`--talkers N` for N
 * talkers' processes, `--rate HZ` for another sample rate).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg } from 'node:os';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { WebSocket, WebSocketServer } from 'ws';
import { startEmulator } from '../src/emulator/index.js';
import type { BenchRow } from './types.js';
import { QUICK, median, nextMessage, percentile, round, row, runAlone } from './util.js';

export interface EmulatorCapacityOptions {
  /** Session counts to measure. */
  levels?: number[];
  /** Talking time of each level after every session is open, s. */
  seconds?: number;
  /** Output sample rate, Hz. */
  sampleRate?: number;
  /** Processes the talkers are spread over (default 2). */
  talkerProcesses?: number;
}

/**
 * A process using more than this fraction of a core, or whose main thread was runnable
 * (running or waiting for a CPU) more than this share of the time, or the emulator using
 * more than this share of what one thread gets on the machine (cores / load average),
 * counts as a busy core.
 */
export const BUSY_CORE = 0.9;
const WORD_MS = 1000 / 3;
const WORDS_PER_SENTENCE = 6;
const WORDS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet'];

/** The machine's monotonic clock, ms: the same in every process (unlike `performance.now()`). */
const clock = (): number => Number(process.hrtime.bigint()) / 1e6;

interface Latencies {
  p50: number;
  p99: number;
  count: number;
}

function summary(values: number[]): Latencies {
  return { p50: median(values), p99: percentile(values, 99), count: values.length };
}

// ---------------------------------------------------------------------------
// What a process costs over the talking time
// ---------------------------------------------------------------------------

/** One process over the talking time. */
interface ProcessLoad {
  /** CPU, fraction of a core. */
  cpu: number;
  /** Event-loop delay p99, ms. */
  loopDelayP99: number;
  /** Event-loop utilization: share of the time the loop was not waiting for I/O (preempted time counts as busy). */
  loopBusy: number;
  /** Time the main thread waited for a CPU while runnable, ms per s (NaN off Linux). */
  runQueueWait: number;
  /**
   * Share of the time the main thread was runnable, running or waiting for a CPU (NaN off
   * Linux): near 1, its event loop always had work: it would have kept a core busy.
   */
  runnable: number;
}

/** Nanoseconds the main thread ran and waited runnable so far (Linux), or undefined. */
function schedstat(): { run: number; wait: number } | undefined {
  try {
    const [run, wait] = readFileSync('/proc/self/schedstat', 'utf8').split(' ').map(Number);
    return run === undefined || wait === undefined ? undefined : { run, wait };
  } catch {
    return undefined;
  }
}

/** Start measuring this process; the function returned stops and reports. */
function meterProcess(): () => ProcessLoad {
  const loopDelay = monitorEventLoopDelay({ resolution: 5 });
  loopDelay.enable();
  const cpuStart = process.cpuUsage();
  const eluStart = performance.eventLoopUtilization();
  const schedStart = schedstat();
  const wallStart = clock();
  return () => {
    const wall = clock() - wallStart;
    const cpu = process.cpuUsage(cpuStart);
    const schedEnd = schedstat();
    loopDelay.disable();
    const sched = schedStart && schedEnd ? { run: schedEnd.run - schedStart.run, wait: schedEnd.wait - schedStart.wait } : undefined;
    return {
      cpu: (cpu.user + cpu.system) / 1000 / wall,
      loopDelayP99: loopDelay.percentile(99) / 1e6,
      loopBusy: performance.eventLoopUtilization(eluStart).utilization,
      runQueueWait: sched ? sched.wait / 1e6 / (wall / 1000) : Number.NaN,
      runnable: sched ? (sched.run + sched.wait) / 1e6 / wall : Number.NaN,
    };
  };
}

/** Idle and total CPU time of the machine so far, ms. */
function machineTimes(): { idle: number; total: number } {
  let idle = 0;
  let total = 0;
  for (const cpu of cpus()) {
    idle += cpu.times.idle;
    total += cpu.times.user + cpu.times.nice + cpu.times.sys + cpu.times.irq + cpu.times.idle;
  }
  return { idle, total };
}

// ---------------------------------------------------------------------------
// A level: the emulator and the talkers in their processes, the results joined
// ---------------------------------------------------------------------------

/** A sentence as the talkers saw it: session, segment id, last word sent, `segment.start` read (clock ms). */
type TalkedSentence = [session: string, segment: number, sentAt: number, receivedAt: number];
/** A sentence as the emulator saw it: session, segment id, last word read, `segment.start` sent (clock ms). */
type ServedSentence = [session: string, segment: number, inAt: number, outAt: number];

/** What one talkers' process reports. */
interface TalkResult {
  sentences: TalkedSentence[];
  failures: number;
  /** Audio received, bytes. */
  audioBytes: number;
  load: ProcessLoad;
}

/** What the emulator's probe reports. */
interface ProbeResult {
  sentences: ServedSentence[];
  bufferedMax: number;
  load: ProcessLoad;
}

interface LevelResult {
  sessions: number;
  /** Talker's send -> talker's read. */
  client: Latencies;
  /** Emulator's read -> emulator's send. */
  emulator: Latencies;
  /** Talker's send -> emulator's read. */
  up: Latencies;
  /** Emulator's send -> talker's read. */
  down: Latencies;
  /** Largest socket `bufferedAmount` at a `segment.start`, bytes. */
  bufferedMax: number;
  emulatorLoad: ProcessLoad;
  /** Each talkers' process. */
  talkers: ProcessLoad[];
  /** Cores busy on the whole machine over the talking time (every process, ours or not). */
  machineBusy: number;
  /** One-minute load average at the end of the talking time. */
  load: number;
  /** Audio the talkers received, MB/s. */
  audioMBps: number;
  failures: number;
}

const here = fileURLToPath(import.meta.url);
const child = (args: string[]): ChildProcess => fork(here, args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });

/** What serves the talkers: the emulator, or a bare `ws` server sending the same frames (the control). */
type Server = 'emulator' | 'bare';

async function measureLevel(sessions: number, seconds: number, sampleRate: number, talkerProcesses: number, server: Server = 'emulator'): Promise<LevelResult> {
  const emulator = child(['--serve', JSON.stringify({ server, sampleRate })]);
  const talkers: ChildProcess[] = [];
  try {
    const { wsUrl, apiKey } = await nextMessage<{ wsUrl: string; apiKey: string }>(emulator, 'addresses');
    // process p talks sessions p, p + n, p + 2n, ... (each at its own phase of the beat)
    for (let first = 0; first < Math.min(talkerProcesses, sessions); first++) {
      talkers.push(child(['--talk', JSON.stringify({ wsUrl, apiKey, sessions, first, step: talkerProcesses, seconds, sampleRate })]));
    }
    await Promise.all(talkers.map((t) => nextMessage<boolean>(t, 'open')));
    emulator.send({ probe: 'start' });
    await nextMessage<boolean>(emulator, 'probing');
    const machineStart = machineTimes();
    for (const t of talkers) t.send({ talk: true });
    const talked = await Promise.all(talkers.map((t) => nextMessage<TalkResult>(t, 'result')));
    const machineEnd = machineTimes();
    emulator.send({ probe: 'stop' });
    const probe = await nextMessage<ProbeResult>(emulator, 'probe');
    return { sessions, ...legs(talked.flatMap((t) => t.sentences), probe.sentences),
      bufferedMax: probe.bufferedMax,
      emulatorLoad: probe.load,
      talkers: talked.map((t) => t.load),
      machineBusy: (1 - (machineEnd.idle - machineStart.idle) / (machineEnd.total - machineStart.total)) * cpus().length,
      load: loadavg()[0] ?? Number.NaN,
      audioMBps: talked.reduce((sum, t) => sum + t.audioBytes, 0) / 1e6 / seconds,
      failures: talked.reduce((sum, t) => sum + t.failures, 0),
    };
  } finally {
    for (const t of talkers) t.kill();
    emulator.kill();
  }
}

/** The client-side figure and its three legs, sentences joined by session and segment id. */
function legs(talked: TalkedSentence[], served: ServedSentence[]): Pick<LevelResult, 'client' | 'emulator' | 'up' | 'down'> {
  const byId = new Map(served.map(([session, segment, inAt, outAt]) => [`${session}/${segment}`, { inAt, outAt }]));
  const up: number[] = [];
  const down: number[] = [];
  for (const [session, segment, sentAt, receivedAt] of talked) {
    const seen = byId.get(`${session}/${segment}`);
    if (!seen) continue;
    up.push(seen.inAt - sentAt);
    down.push(receivedAt - seen.outAt);
  }
  return {
    client: summary(talked.map(([, , sentAt, receivedAt]) => receivedAt - sentAt)),
    emulator: summary(served.filter(([, segment]) => segment > 0).map(([, , inAt, outAt]) => outAt - inAt)),
    up: summary(up),
    down: summary(down),
  };
}

// ---------------------------------------------------------------------------
// The rows
// ---------------------------------------------------------------------------

/**
 * The emulator's CPU as a share of what one thread can expect on this machine: the cores over
 * the load average (with more runnable threads than cores, the scheduler gives each about
 * that). Near 1 and above, its main thread waits for a CPU in long stretches: on a busy
 * machine, its core is busy.
 */
const fairShareUsed = (r: LevelResult): number => r.emulatorLoad.cpu / (cpus().length / Math.max(r.load, cpus().length));

/** Whether a process kept a core busy (see {@link BUSY_CORE}). */
const busy = (l: ProcessLoad): boolean => l.cpu > BUSY_CORE || l.runnable > BUSY_CORE;

/** Our process that kept a core busy at this level, if any. */
function busyProcess(r: LevelResult): string | undefined {
  if (fairShareUsed(r) > BUSY_CORE) {
    return `the emulator (${round(r.emulatorLoad.cpu)} core: ${round(fairShareUsed(r))} of a thread's fair share at load ${round(r.load)})`;
  }
  const all = [['the emulator', r.emulatorLoad] as const, ...r.talkers.map((t, i) => [`talkers' process ${i + 1}`, t] as const)];
  const found = all.find(([, load]) => busy(load));
  return found && `${found[0]} (${round(found[1].cpu)} core, main thread runnable ${round(found[1].runnable)} of the time)`;
}

/** A process's load in words. */
const loadNote = (l: ProcessLoad): string =>
  `${round(l.cpu)} core, main thread runnable ${round(l.runnable)} of the time (waited for a CPU ${round(l.runQueueWait)} ms/s), event loop busy ${round(l.loopBusy)}, loop delay p99 ${round(l.loopDelayP99)} ms`;

/** Where the time went and what each process cost at a level, in words (`full`: every figure, for the console). */
function levelNote(r: LevelResult, full = false): string {
  const busyOne = busyProcess(r);
  const cost = (l: ProcessLoad): string => (full ? loadNote(l) : `${round(l.cpu)} (${round(l.runnable)})`);
  return (
    `legs p50: up ${round(r.up.p50)}, inside the emulator ${round(r.emulator.p50)} (p99 ${round(r.emulator.p99)}), down ${round(r.down.p50)} ms; ` +
    `socket bufferedAmount max ${r.bufferedMax} B; audio ${round(r.audioMBps)} MB/s; ` +
    (full
      ? `emulator ${cost(r.emulatorLoad)}; ${r.talkers.map((t, i) => `talkers ${i + 1} ${cost(t)}`).join('; ')}; `
      : `CPU, core (main thread runnable share): emulator ${cost(r.emulatorLoad)}, talkers ${r.talkers.map(cost).join(' + ')}; `) +
    `machine ${round(r.machineBusy)} of ${cpus().length} cores busy, load ${round(r.load)}: the emulator used ${round(fairShareUsed(r))} of a thread's fair share (cores / load); ` +
    (busyOne ? `a core busy: ${busyOne}` : `no process of ours kept a core busy`)
  );
}

export async function run(options: EmulatorCapacityOptions = {}): Promise<BenchRow[]> {
  const levels = options.levels ?? (QUICK ? [10, 100, 400] : [10, 100, 200, 400, 1000]);
  const seconds = options.seconds ?? (QUICK ? 7 : 8);
  const sampleRate = options.sampleRate ?? 16_000;
  const talkerProcesses = options.talkerProcesses ?? 2;
  const results: LevelResult[] = [];
  for (const sessions of levels) {
    const r = await measureLevel(sessions, seconds, sampleRate, talkerProcesses);
    console.error(`  ${sessions} sessions: client p50 ${round(r.client.p50)} p99 ${round(r.client.p99)} ms; ${levelNote(r, true)}; failures ${r.failures}`);
    results.push(r);
  }
  const base = results[0] as LevelResult;
  const top = results[results.length - 1] as LevelResult;
  // The control: the same talkers against a bare `ws` server that sends the same frames at once.
  const bare = await measureLevel(top.sessions, seconds, sampleRate, talkerProcesses, 'bare');
  console.error(`  ${top.sessions} sessions, bare ws server: client p50 ${round(bare.client.p50)} p99 ${round(bare.client.p99)} ms; ${levelNote(bare, true)}; failures ${bare.failures}`);
  const firstBusy = results.find((r) => busyProcess(r) !== undefined);
  const flatUpTo = results.filter((r, i) => results.slice(0, i + 1).every((q) => q.client.p50 <= 2 * base.client.p50)).at(-1);
  const inside = row(
    `emulator-capacity: inside the emulator (text.chunk in -> segment.start out) p99, ${top.sessions} live sessions`,
    top.emulator.p99,
    base.emulator.p99,
    'ms',
    `peer: the same at ${base.sessions} sessions; p50 ${round(top.emulator.p50)} ms (at ${base.sessions}: ${round(base.emulator.p50)}); by level p50: ${results.map((r) => `${r.sessions}: ${round(r.emulator.p50)}`).join(', ')} ms; ` +
      `emulator CPU by level: ${results.map((r) => `${r.sessions}: ${round(r.emulatorLoad.cpu)}`).join(', ')} core; ` +
      `client-side p50 within 2x of ${base.sessions} sessions up to ${flatUpTo?.sessions ?? 'no level'}; ` +
      (firstBusy ? `first level with a busy core: ${firstBusy.sessions} (${busyProcess(firstBusy)})` : 'no process of ours kept a core busy at any level') +
      `; the emulator's share of a thread's fair share (cores / load) by level: ${results.map((r) => `${r.sessions}: ${round(fairShareUsed(r))}`).join(', ')}`,
    'lower',
  );
  return [
    ...results.map((r) =>
      row(
        `emulator-capacity: last text.chunk -> segment.start p50, ${r.sessions} live sessions (3 words/s each, ${sampleRate / 1000} kHz WAV)`,
        r.client.p50,
        base.client.p50,
        'ms',
        `peer: the same at ${base.sessions} sessions; p99 ${round(r.client.p99)} ms (at ${base.sessions}: ${round(base.client.p99)}); ${levelNote(r)}; ` +
          `${r.client.count} sentences, ${r.failures} failed sessions; talkers in ${r.talkers.length} processes; target ratio <= 2`,
        'lower',
      ),
    ),
    inside,
    row(
      `emulator-capacity: last text.chunk -> segment.start p50, ${top.sessions} live sessions, emulator vs a bare ws server sending the same frames`,
      top.client.p50,
      bare.client.p50,
      'ms',
      `peer: the same talkers against a bare \`ws\` server (no segmenter, no synthesis: segment.start, the audio and segment.done at the last word); ` +
        `bare: p99 ${round(bare.client.p99)} ms; ${levelNote(bare)}; the part of the client-side time that is the emulator's own is the ratio's excess over 1`,
      'lower',
    ),
  ];
}

// ---------------------------------------------------------------------------
// The server's process (the emulator, or the bare control), with a probe on its sockets
// ---------------------------------------------------------------------------

const SEGMENT_START = /^\{"type":"segment\.start","segment_id":(\d+)/;
const SESSION_READY = /^\{"type":"session\.ready","session_id":"([^"]+)"/;

/**
 * A bare `ws` server for this bench's talkers: `session.ready` after the first frame, then at
 * each sentence's last word `segment.start`, the audio the emulator would send (a WAV header and
 * 0.25 s of 16-bit samples a word, precomputed) and `segment.done`. No segmenter, no synthesis.
 */
async function startBareServer(sampleRate: number): Promise<{ wsUrl: string; apiKey: string; close(): Promise<void> }> {
  const audio = new Uint8Array(44 + Math.round(WORDS_PER_SENTENCE * 0.25 * sampleRate) * 2);
  const server = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await once(server, 'listening');
  server.on('connection', (ws) => {
    let segment = -1;
    ws.on('message', (data, isBinary) => {
      if (isBinary) return;
      if (segment < 0) {
        segment = 0;
        ws.send(JSON.stringify({ type: 'session.ready', session_id: randomUUID() }));
      } else if (String(data).endsWith('."}')) {
        const id = segment++;
        ws.send(JSON.stringify({ type: 'segment.start', segment_id: id, text: '' }));
        ws.send(audio);
        ws.send(JSON.stringify({ type: 'segment.done', segment_id: id }));
      }
    });
  });
  const { port } = server.address() as AddressInfo;
  return { wsUrl: `ws://127.0.0.1:${port}/`, apiKey: 'bare', close: () => new Promise((resolve) => server.close(() => resolve())) };
}

async function serverChild({ server, sampleRate }: { server: Server; sampleRate: number }): Promise<void> {
  const emulator = server === 'bare' ? await startBareServer(sampleRate) : await startEmulator({ synth: 'tone', liveSessionsPerKey: 100_000, log: false });
  let probing = false;
  let sentences: ServedSentence[] = [];
  let bufferedMax = 0;
  let stop: (() => ProcessLoad) | undefined;
  /** Per socket: its session id, and when each sentence's last word was read. */
  const sockets = new WeakMap<WebSocket, { session: string; lastWords: number[] }>();
  const proto = WebSocket.prototype as unknown as {
    emit(event: string, ...args: unknown[]): boolean;
    send(data: unknown, ...rest: unknown[]): void;
  };
  const emit = proto.emit;
  proto.emit = function probedEmit(this: WebSocket, event: string, ...args: unknown[]): boolean {
    if (probing && event === 'message' && args[1] === false) {
      const text = String(args[0]);
      if (text.includes('"text.chunk"') && text.endsWith('."}')) sockets.get(this)?.lastWords.push(clock());
    }
    return emit.call(this, event, ...args);
  };
  const send = proto.send;
  proto.send = function probedSend(this: WebSocket, data: unknown, ...rest: unknown[]): void {
    if (typeof data === 'string') {
      const ready = SESSION_READY.exec(data);
      if (ready) sockets.set(this, { session: ready[1]!, lastWords: [] });
      const start = probing ? SEGMENT_START.exec(data) : null;
      const socket = sockets.get(this);
      const inAt = start ? socket?.lastWords.shift() : undefined;
      if (start && socket && inAt !== undefined) {
        sentences.push([socket.session, Number(start[1]), inAt, clock()]);
        bufferedMax = Math.max(bufferedMax, this.bufferedAmount);
      }
    }
    send.call(this, data, ...rest);
  };
  process.on('message', (message: Record<string, unknown>) => {
    if (message['probe'] === 'start') {
      probing = true;
      sentences = [];
      bufferedMax = 0;
      stop = meterProcess();
      process.send?.({ probing: true });
    } else if (message['probe'] === 'stop') {
      probing = false;
      const result: ProbeResult = { sentences, bufferedMax, load: stop!() };
      process.send?.({ probe: result });
    }
  });
  process.on('disconnect', () => void emulator.close().then(() => process.exit(0)));
  process.send?.({ addresses: { wsUrl: emulator.wsUrl, apiKey: emulator.apiKey } });
}

// ---------------------------------------------------------------------------
// A talkers' process: bare `ws` sessions, one word every 333 ms each
// ---------------------------------------------------------------------------

interface TalkArgs {
  wsUrl: string;
  apiKey: string;
  /** Sessions of the whole level (the beat's phases are spread over all of them). */
  sessions: number;
  /** This process talks sessions first, first + step, first + 2 step, ... */
  first: number;
  step: number;
  seconds: number;
  sampleRate: number;
}

function talkersChild(args: TalkArgs): void {
  const sentences: TalkedSentence[] = [];
  let failures = 0;
  let audioBytes = 0;
  let opened = 0;
  let talking = false;
  const sockets: WebSocket[] = [];
  const timers: NodeJS.Timeout[] = [];
  const starts: (() => void)[] = [];
  const mine = Math.ceil((args.sessions - args.first) / args.step);

  function session(index: number): void {
    // no compression offered (the emulator does not negotiate it); text frames are ASCII JSON
    const ws = new WebSocket(args.wsUrl, { headers: { 'x-api-key': args.apiKey }, perMessageDeflate: false, skipUTF8Validation: true });
    sockets.push(ws);
    /** When each sentence's last word went out, by segment id. */
    const lastWordAt: number[] = [];
    let sessionId = '';
    // Talkers are independent: each is somewhere else in its sentence when the level starts
    // (sentence ends spread over the six beats of a sentence, not all in the same beat; the
    // first, shorter, sentence is the warm-up and not measured).
    let word = index % WORDS_PER_SENTENCE;
    ws.on('error', () => undefined);
    ws.on('close', (code) => {
      if (talking && code !== 1000) failures++;
    });
    ws.on('open', () =>
      ws.send(JSON.stringify({ type: 'session.start', voice_id: 1, language: 'en-us', output_format: 'wav', sample_rate: args.sampleRate })),
    );
    ws.on('message', (data, isBinary) => {
      if (isBinary) {
        audioBytes += (data as Buffer).length;
        return;
      }
      const receivedAt = clock();
      const text = String(data);
      const start = SEGMENT_START.exec(text);
      if (start) {
        const id = Number(start[1]);
        const sentAt = lastWordAt[id];
        // the first sentence of a session is its warm-up
        if (sentAt !== undefined && id > 0) sentences.push([sessionId, id, sentAt, receivedAt]);
        return;
      }
      const ready = SESSION_READY.exec(text);
      if (ready) {
        sessionId = ready[1]!;
        if (++opened === mine) process.send?.({ open: true });
      }
    });
    const speak = (): void => {
      if (!talking || ws.readyState !== WebSocket.OPEN) return;
      const inSentence = word % WORDS_PER_SENTENCE;
      const last = inSentence === WORDS_PER_SENTENCE - 1;
      const text = `${inSentence === 0 ? '' : ' '}${WORDS[(word + index) % WORDS.length]}${last ? '.' : ''}`;
      ws.send(JSON.stringify({ type: 'text.chunk', text }));
      if (last) lastWordAt[Math.floor(word / WORDS_PER_SENTENCE)] = clock();
      word++;
    };
    // every session starts at its own phase of the 333 ms beat
    starts.push(() => timers.push(setTimeout(() => timers.push(setInterval(speak, WORD_MS)), (index * WORD_MS) / args.sessions)));
  }

  // open in steps (the emulator's accept queue is never overrun)
  let next = args.first;
  const openSome = (): void => {
    for (let i = 0; i < 100 && next < args.sessions; i++, next += args.step) session(next);
    if (next < args.sessions) setTimeout(openSome, 50);
  };
  openSome();
  process.once('message', (message: Record<string, unknown>) => {
    if (!message['talk']) return;
    talking = true;
    const stop = meterProcess();
    for (const start of starts) start();
    setTimeout(() => {
      talking = false;
      const load = stop();
      for (const timer of timers) clearInterval(timer);
      for (const ws of sockets) ws.terminate();
      const result: TalkResult = { sentences, failures, audioBytes, load };
      process.send?.({ result });
    }, args.seconds * 1000);
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [mode, json] = process.argv.slice(2);
  if (mode === '--serve') await serverChild(JSON.parse(json ?? '{}') as { server: Server; sampleRate: number });
  else if (mode === '--talk') talkersChild(JSON.parse(json ?? '{}') as TalkArgs);
  else {
    const argv = process.argv.slice(2);
    const talkersAt = argv.indexOf('--talkers');
    const talkerProcesses = talkersAt >= 0 ? Number(argv.splice(talkersAt, 2)[1]) : undefined;
    const rateAt = argv.indexOf('--rate');
    const sampleRate = rateAt >= 0 ? Number(argv.splice(rateAt, 2)[1]) : undefined;
    const levels = argv.map(Number).filter((n) => n > 0);
    runAlone(() => run({ ...(levels.length > 0 ? { levels } : {}), ...(talkerProcesses ? { talkerProcesses } : {}), ...(sampleRate ? { sampleRate } : {}) }));
  }
}
