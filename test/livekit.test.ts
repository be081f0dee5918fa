/**
 * rxvoice/livekit driven as LiveKit Agents drives a TTS: a real `voice.AgentSession` with
 * LiveKit's own fake LLM (its reply streamed in 3-character tokens) and an audio output
 * that records what it is given, so the text goes through LiveKit's `ttsNode` (which calls
 * `stream()`, feeds it with `updateInputStream` and reads it until `END_OF_STREAM`), its
 * interruption (`session.interrupt()` closes the stream), and its `StreamAdapter` (a
 * sentence tokenizer over `synthesize()`). The service is the emulator (tone voice) on
 * port 0.
 */
import { AudioOutput, USERDATA_TIMED_TRANSCRIPT, initializeLogger, tokenize, tts as lk, voice, type TimedString, type metrics } from '@livekit/agents';
import type { AudioFrame } from '@livekit/rtc-node';
import { lastValueFrom, toArray } from 'rxjs';
import { WebSocket as NodeWebSocket } from 'ws';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../src/index.js';
import { startEmulator, type Emulator } from '../src/emulator/index.js';
import type { EmulatorOptions } from '../src/emulator/options.js';
import { ValidationError } from '../src/live/index.js';
import type { WebSocketConstructorLike } from '../src/live/index.js';
import { TTS, type TTSOptions } from '../src/livekit/index.js';

beforeAll(() => initializeLogger({ pretty: false, level: 'silent' }));

const REPLY = 'Hello there, I am Dr. Smith from the U.S. office. The team scored 3.5 points today! How can I help you? Tell me more.';

const SENTENCES = ['Hello there, I am Dr. Smith from the U.S. office.', 'The team scored 3.5 points today!', 'How can I help you?', 'Tell me more.'];

/** Texts of the segments the emulator delivered in its live sessions, session by session. */
function delivered(emu: Emulator): string[] {
  return [...emu.context.runs.values()]
    .map((run) => run.data as { source?: string; segments?: Array<{ text: string; status: string }> })
    .filter((data) => data.source === 'live')
    .flatMap((data) => (data.segments ?? []).filter((s) => s.status === 'delivered').map((s) => s.text.trim()));
}

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const thing of open.splice(0).reverse()) await thing.close();
});

async function emulator(options: EmulatorOptions = {}): Promise<Emulator> {
  const emu = await startEmulator({ synth: 'tone', toneWordSeconds: 0.02, ...options });
  open.push(emu);
  return emu;
}

/** A `ws` WebSocket that records every socket made and the frames sent on it. */
function recordingWebSocket(): { sockets: Array<{ socket: NodeWebSocket; sent: string[] }>; WebSocket: WebSocketConstructorLike } {
  const sockets: Array<{ socket: NodeWebSocket; sent: string[] }> = [];
  class Recording extends NodeWebSocket {
    readonly #sent: string[] = [];
    constructor(url: string, protocols?: string | string[], options?: { headers?: Record<string, string> }) {
      super(url, protocols, options);
      sockets.push({ socket: this, sent: this.#sent });
    }
    override send(data: string): void {
      this.#sent.push(data);
      super.send(data);
    }
  }
  return { sockets, WebSocket: Recording as unknown as WebSocketConstructorLike };
}

function plugin(emu: Emulator, options: Partial<TTSOptions> = {}, WebSocket?: WebSocketConstructorLike): TTS {
  const client = createClient({ apiKey: emu.apiKey, baseUrl: emu.baseUrl, ...(WebSocket ? { WebSocket } : {}) });
  open.push(client);
  const tts = new TTS({ client, voice_id: 1, reconnect: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 5 }, ...options });
  open.push(tts);
  return tts;
}

async function waitFor(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** An audio output as a room's would be: it records the frames it is given and reports playout. */
class RecordingOutput extends AudioOutput {
  readonly frames: AudioFrame[] = [];
  onFrame: ((frame: AudioFrame) => void) | undefined;
  #position = 0;
  #playing = false;
  constructor() {
    super(24000);
  }
  override async captureFrame(frame: AudioFrame): Promise<void> {
    await super.captureFrame(frame);
    this.frames.push(frame);
    this.#position += frame.samplesPerChannel / frame.sampleRate;
    if (!this.#playing) {
      this.#playing = true;
      this.onPlaybackStarted(Date.now());
    }
    this.onFrame?.(frame);
  }
  override flush(): void {
    super.flush();
    if (!this.#playing) return;
    this.#playing = false;
    this.onPlaybackFinished({ playbackPosition: this.#position, interrupted: false });
  }
  clearBuffer(): void {
    if (!this.#playing) return;
    this.#playing = false;
    this.onPlaybackFinished({ playbackPosition: this.#position, interrupted: true });
  }
}

interface AgentRun {
  session: voice.AgentSession;
  output: RecordingOutput;
  metrics: metrics.TTSMetrics[];
  errors: Error[];
}

/** An agent session with LiveKit's fake LLM answering `reply` to "hello", and the TTS under test. */
async function agentSession(tts: lk.TTS, reply = REPLY): Promise<AgentRun> {
  const session = new voice.AgentSession({ llm: new voice.testing.FakeLLM([{ input: 'hello', content: reply }]), tts });
  const output = new RecordingOutput();
  session.output.audio = output;
  const run: AgentRun = { session, output, metrics: [], errors: [] };
  tts.on('metrics_collected', (m) => run.metrics.push(m));
  tts.on('error', (e) => run.errors.push(e.error));
  await session.start({ agent: new voice.Agent({ instructions: 'test' }) });
  open.push({ close: () => session.close() });
  return run;
}

/** The aligned transcript LiveKit received with the frames, in order. */
function transcript(frames: readonly AudioFrame[]): TimedString[] {
  return frames.flatMap((frame) => (frame.userdata[USERDATA_TIMED_TRANSCRIPT] as TimedString[] | undefined) ?? []);
}

const words = (text: string): string[] => text.split(/\s+/u).filter((w) => w !== '');
const seconds = (frames: readonly AudioFrame[]): number => frames.reduce((sum, f) => sum + f.samplesPerChannel / f.sampleRate, 0);

describe('rxvoice/livekit TTS in a LiveKit agent session', () => {
  it('speaks the LLM token stream through stream(), in order, with word alignment and LiveKit metrics', async () => {
    const emu = await emulator();
    const tts = plugin(emu);
    expect(tts.capabilities).toEqual({ streaming: true, alignedTranscript: true });
    const run = await agentSession(tts);
    await run.session.generateReply({ userInput: 'hello' }).waitForPlayout();

    const { frames } = run.output;
    expect(frames.length).toBeGreaterThan(5);
    for (const frame of frames) expect([frame.sampleRate, frame.channels]).toEqual([24000, 1]);
    // the aligned transcript is the reply, word for word, in order
    const timed = transcript(frames);
    expect(words(timed.map((t) => t.text).join(''))).toEqual(words(REPLY));
    // one TimedString per word (the tone voice times every word), times increasing
    expect(timed.length).toBe(words(REPLY).length);
    const starts = timed.map((t) => t.startTime ?? NaN);
    expect(starts).toEqual([...starts].sort((a, b) => a - b));
    // each sentence's first word starts where its audio starts in the stream
    let position = 0;
    for (const frame of frames) {
      const first = (frame.userdata[USERDATA_TIMED_TRANSCRIPT] as TimedString[] | undefined)?.[0];
      if (first) expect(first.startTime).toBeCloseTo(position, 6);
      position += frame.samplesPerChannel / frame.sampleRate;
    }
    expect(timed.at(-1)?.endTime).toBeLessThanOrEqual(position + 1e-6);
    // the service's segments are the sentences, whatever the 3-character split ("Dr." and
    // "U.S." did not end one): rxvoice's client-side boundaries
    expect(delivered(emu)).toEqual(SENTENCES);

    // LiveKit's metrics, from rxvoice's session report
    await waitFor(() => run.metrics.length > 0, 'metrics');
    const [m] = run.metrics;
    expect(m).toMatchObject({ type: 'tts_metrics', label: 'rxvoice.TTS', streamed: true, cancelled: false, metadata: { modelProvider: 'camb' } });
    expect(m!.charactersCount).toBe(REPLY.length);
    expect(m!.ttfbMs).toBeGreaterThanOrEqual(0);
    expect(m!.durationMs).toBeGreaterThanOrEqual(m!.ttfbMs);
    expect(m!.audioDurationMs).toBe(Math.round(seconds(frames) * 1000));
    expect(run.errors).toEqual([]);
  });
});
