/**
 * rxvoice/livekit driven as LiveKit Agents drives a TTS: a real `voice.AgentSession` with
 * LiveKit's own fake LLM (its reply streamed in 3-character tokens) and an audio output
 * that records what it is given, so the text goes through LiveKit's `ttsNode` (which calls
 * `stream()`, feeds it with `updateInputStream` and reads it until `END_OF_STREAM`), its
 * interruption (`session.interrupt()` closes the stream), and its `StreamAdapter` (a
 * sentence tokenizer over `synthesize()`). The service is the emulator (tone voice) on
 * port 0.
 */
import { AudioOutput, USERDATA_TIMED_TRANSCRIPT, USERDATA_TTS_STARTED_TIME, initializeLogger, tokenize, tts as lk, voice, type TimedString, type metrics } from '@livekit/agents';
import type { AudioFrame } from '@livekit/rtc-node';
import { lastValueFrom, toArray } from 'rxjs';
import { WebSocket as NodeWebSocket } from 'ws';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/index.js';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import type { EmulatorOptions } from '../../src/emulator/options.js';
import { ValidationError } from '../../src/live/index.js';
import type { WebSocketConstructorLike } from '../../src/live/index.js';
import fc from 'fast-check';
import { AbortError, ApiError, ConnectionError, TimeoutError } from '../../src/index.js';
import { LiveSessionError } from '../../src/live/index.js';
import { TTS, type TTSOptions } from '../../src/livekit/index.js';
import { MAX_REQUEST_CHARS, requestTexts } from '../../src/livekit/chunked.js';
import { isAbort, toLiveKitError } from '../../src/livekit/errors.js';
import { segmentAudio, timedWords } from '../../src/livekit/frames.js';
import { encodeWav16, wavHeader } from '../../src/audio/wav.js';

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

/** The aligned transcript of packets read from a stream directly, in order. */
function packetTranscript(packets: ReadonlyArray<lk.SynthesizedAudio>): string {
  return packets.flatMap((p) => p.timedTranscripts ?? []).map((t) => t.text).join('');
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

describe('rxvoice/livekit TTS: a dropped connection', () => {
  it('reconnects and speaks every word once (control: the same reply without drops)', async () => {
    const control = await emulator();
    const controlRun = await agentSession(plugin(control));
    await controlRun.session.generateReply({ userInput: 'hello' }).waitForPlayout();

    // every connection is dropped (TCP closed, no close frame) after 2 audio frames: the
    // second sentence of each is cut before its segment.done, so it is spoken again
    const emu = await emulator({ faults: { dropAfterFrames: 2 } });
    const recording = recordingWebSocket();
    const run = await agentSession(plugin(emu, {}, recording.WebSocket));
    await run.session.generateReply({ userInput: 'hello' }).waitForPlayout();

    expect(recording.sockets.length).toBeGreaterThan(2);
    const spoken = transcript(run.output.frames).map((t) => t.text).join('');
    const spokenByControl = transcript(controlRun.output.frames).map((t) => t.text).join('');
    expect(words(spoken)).toEqual(words(spokenByControl));
    expect(words(spoken)).toEqual(words(REPLY));
    // the same audio as the control's, sample for sample: no partial sentence was played
    expect(seconds(run.output.frames)).toBeCloseTo(seconds(controlRun.output.frames), 6);
    expect(delivered(emu)).toEqual(SENTENCES);
    expect(run.errors).toEqual([]);
  });

  it('without reconnect, the drop is LiveKit error carrying the unspoken text (not retried by LiveKit)', async () => {
    const emu = await emulator({ faults: { dropAfterFrames: 2 } });
    const recording = recordingWebSocket();
    const tts = plugin(emu, { reconnect: false }, recording.WebSocket);
    const stream = tts.stream();
    const errors: Error[] = [];
    tts.on('error', (e) => errors.push(e.error));
    for (const sentence of SENTENCES) stream.pushText(`${sentence} `);
    stream.endInput();
    const packets: lk.SynthesizedAudio[] = [];
    for await (const audio of stream) if (audio !== lk.SynthesizeStream.END_OF_STREAM) packets.push(audio);
    expect(errors).toHaveLength(1);
    const [error] = errors as [Error & { retryable?: boolean; body?: { code?: string; unspoken?: string } }];
    expect(error.name).toBe('APIConnectionError');
    expect(error.retryable).toBe(false);
    expect(error.body?.code).toBe('connection');
    expect(error.body?.unspoken).toContain(SENTENCES[1]);
    // one connection: LiveKit did not start over (which would speak the first sentence twice)
    expect(recording.sockets).toHaveLength(1);
    expect(packetTranscript(packets).trim()).toBe(SENTENCES[0]);
    // all of the first sentence's audio, its last frame too (the tone voice: 0.02 s a word)
    expect(seconds(packets.map((p) => p.frame))).toBeCloseTo(words(SENTENCES[0]!).length * 0.02, 3);
  });

  it('a failure while the input is still open ends the stream with the error, without endInput() (control: the error is the refused key)', async () => {
    const emu = await emulator();
    const tts = new TTS({ apiKey: 'wrong-key-livekit-0123', baseUrl: emu.baseUrl, voice_id: 1 });
    open.push(tts);
    const errors: Array<Error & { statusCode?: number }> = [];
    tts.on('error', (e) => errors.push(e.error));
    const stream = tts.stream();
    stream.pushText('Hello there. ');
    stream.flush(); // the segment is sent, the input stays open
    for await (const audio of stream) void audio;
    expect(errors.map((e) => [e.name, e.statusCode])).toEqual([['APIStatusError', 401]]);
  });
});

describe('rxvoice/livekit TTS: interruption', () => {
  it('session.interrupt() closes the live session at once: no frame after it (control: the uninterrupted reply has many more)', async () => {
    const control = await emulator({ toneWordSeconds: 0.1 });
    const controlRun = await agentSession(plugin(control));
    await controlRun.session.generateReply({ userInput: 'hello' }).waitForPlayout();

    const emu = await emulator({ toneWordSeconds: 0.1 });
    const run = await agentSession(plugin(emu));
    let interrupted = -1;
    let connectionsAtInterrupt = -1;
    run.output.onFrame = () => {
      if (interrupted >= 0) return;
      interrupted = run.output.frames.length;
      connectionsAtInterrupt = emu.liveConnections;
      void run.session.interrupt({ force: true });
    };
    await run.session.generateReply({ userInput: 'hello' }).waitForPlayout();
    await waitFor(() => emu.liveConnections === 0, 'the live session to close');
    // settle: anything still on its way would arrive now
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(connectionsAtInterrupt).toBe(1);
    expect(run.output.frames.length).toBe(interrupted);
    expect(controlRun.output.frames.length).toBeGreaterThan(interrupted + 5);
  });

  it('close() of the stream mid-speech: the iteration ends, no frame after, the socket is closed (control: frames kept coming)', async () => {
    const emu = await emulator({ toneWordSeconds: 0.1 });
    const recording = recordingWebSocket();
    const tts = plugin(emu, {}, recording.WebSocket);
    const speakAll = async (closeAfter: number | undefined): Promise<{ before: number; after: number }> => {
      const stream = tts.stream();
      for (const sentence of SENTENCES) stream.pushText(`${sentence} `);
      stream.endInput();
      let before = 0;
      let after = 0;
      for await (const audio of stream) {
        if (audio === lk.SynthesizeStream.END_OF_STREAM) continue;
        if (closeAfter !== undefined && before >= closeAfter) after++;
        else before++;
        if (before === closeAfter) stream.close();
      }
      return { before, after };
    };
    const reports: metrics.TTSMetrics[] = [];
    tts.on('metrics_collected', (m) => reports.push(m));
    const uninterrupted = await speakAll(undefined);
    const interrupted = await speakAll(2);
    expect(uninterrupted.before).toBeGreaterThan(10);
    expect(interrupted).toEqual({ before: 2, after: 0 });
    // LiveKit's metrics say which was cut
    await waitFor(() => reports.length === 2, 'the metrics of both streams');
    expect(reports.map((m) => m.cancelled)).toEqual([false, true]);
    await waitFor(() => recording.sockets.every((s) => s.socket.readyState === NodeWebSocket.CLOSED), 'the sockets to close');
    expect(emu.liveConnections).toBe(0);
  });
});

describe('rxvoice/livekit TTS: skipped sentences, segments with nothing to hear', () => {
  it('a sentence skipped for good is a recoverable error event; with no error listener the stream goes on (control: the others spoken)', async () => {
    const emu = await emulator({ faults: { failSynthesisMatching: { text: 'doomed', times: 1000 } } });
    const sentences = ['Hello there.', 'This one is doomed.', 'Tell me more.'];
    const speak = async (tts: TTS): Promise<string> => {
      const stream = tts.stream();
      for (const sentence of sentences) stream.pushText(`${sentence} `);
      stream.endInput();
      const packets: lk.SynthesizedAudio[] = [];
      for await (const audio of stream) if (audio !== lk.SynthesizeStream.END_OF_STREAM) packets.push(audio);
      return packetTranscript(packets);
    };
    const listened = plugin(emu);
    const errors: Array<{ error: Error; recoverable: boolean }> = [];
    listened.on('error', (e) => errors.push(e));
    expect(words(await speak(listened))).toEqual(words('Hello there. Tell me more.'));
    expect(errors.map((e) => [e.recoverable, e.error.message.includes('This one is doomed.')])).toEqual([[true, true]]);
    expect(words(await speak(plugin(emu)))).toEqual(words('Hello there. Tell me more.'));
  });

  it('a segment with nothing to hear (empty, whitespace, only thoughts) gives no audio and no error; the next segment is spoken', async () => {
    const emu = await emulator();
    const tts = plugin(emu);
    const errors: Error[] = [];
    tts.on('error', (e) => errors.push(e.error));
    const reports: metrics.TTSMetrics[] = [];
    tts.on('metrics_collected', (m) => reports.push(m));
    const nothings = ['', '   ', '<think>Only thinking.</think> '];
    for (const nothing of nothings) {
      const stream = tts.stream();
      stream.pushText(nothing);
      stream.flush();
      stream.pushText('Hello there.');
      stream.endInput();
      const packets: lk.SynthesizedAudio[] = [];
      for await (const audio of stream) if (audio !== lk.SynthesizeStream.END_OF_STREAM) packets.push(audio);
      expect(packetTranscript(packets), JSON.stringify(nothing)).toBe('Hello there.');
    }
    expect(errors).toEqual([]);
    // LiveKit's metrics: one per segment that had characters (the empty text has none)
    expect(reports.map((m) => m.charactersCount)).toEqual(nothings.flatMap((nothing) => (nothing === '' ? [12] : [nothing.length, 12])));
  });
});

describe('rxvoice/livekit TTS: synthesize() and the StreamAdapter', () => {
  it('synthesize() returns the PCM of /tts-stream as 100 ms frames, the last one final', async () => {
    const emu = await emulator();
    const tts = plugin(emu);
    const packets = [];
    for await (const audio of tts.synthesize('Hello there, how are you today?')) packets.push(audio);
    expect(packets.length).toBeGreaterThan(1);
    expect(packets.map((p) => p.final)).toEqual([...packets.slice(1).map(() => false), true]);
    for (const { frame } of packets.slice(0, -1)) expect([frame.sampleRate, frame.channels, frame.samplesPerChannel]).toEqual([24000, 1, 2400]);
    // the same samples as the service's own PCM answer
    const client = createClient({ apiKey: emu.apiKey, baseUrl: emu.baseUrl });
    open.push(client);
    const chunks = await lastValueFrom(
      client
        .ttsStream({ text: 'Hello there, how are you today?', voice_id: 1, language: 'en-us', output_configuration: { format: 'pcm_s16le', sample_rate: 24000 } })
        .pipe(toArray()),
    );
    const expected = Buffer.concat(chunks.map((c) => c.bytes));
    const got = Buffer.concat(packets.map((p) => Buffer.from(p.frame.data.buffer, p.frame.data.byteOffset, p.frame.data.byteLength)));
    expect(got.equals(expected)).toBe(true);
  });

  it("LiveKit's StreamAdapter (sentence tokenizer over synthesize()) speaks the reply in an agent session", async () => {
    const emu = await emulator();
    const adapter = new lk.StreamAdapter(plugin(emu), new tokenize.basic.SentenceTokenizer());
    open.push(adapter);
    const run = await agentSession(adapter);
    await run.session.generateReply({ userInput: 'hello' }).waitForPlayout();
    const spoken = transcript(run.output.frames).map((t) => t.text).join(' ');
    expect(words(spoken)).toEqual(words(REPLY));
    expect(run.output.frames.length).toBeGreaterThan(5);
    // each request went over /tts-stream, none over the live session
    expect(emu.requests.filter((r) => r.path === '/tts-stream').length).toBeGreaterThan(0);
    expect(delivered(emu)).toEqual([]);
  });
});

describe('rxvoice/livekit TTS: segments, warm sessions, options', () => {
  it('flush() ends the segment: its last words are spoken at once, each segment has its id and a final frame', async () => {
    const emu = await emulator({ faults: {} });
    const tts = plugin(emu);
    const stream = tts.stream();
    const started = Date.now();
    stream.pushText('Hello there general');
    stream.flush();
    stream.pushText(' Kenobi you are');
    stream.endInput();
    const packets: lk.SynthesizedAudio[] = [];
    for await (const audio of stream) if (audio !== lk.SynthesizeStream.END_OF_STREAM) packets.push(audio);
    // no wait for the service's idle timeout (1 s) on a text without a stop
    expect(Date.now() - started).toBeLessThan(900);
    const ids = [...new Set(packets.map((p) => p.segmentId))];
    expect(ids).toHaveLength(2);
    for (const id of ids) {
      const ofSegment = packets.filter((p) => p.segmentId === id);
      expect(ofSegment.map((p) => p.final)).toEqual([...ofSegment.slice(1).map(() => false), true]);
    }
    expect(words(packetTranscript(packets))).toEqual(['Hello', 'there', 'general', 'Kenobi', 'you', 'are']);
  });

  it('warm: the stream speaks on a session opened before the text (same options), a new one is opened for the next', async () => {
    const emu = await emulator();
    const recording = recordingWebSocket();
    const tts = plugin(emu, { warm: true }, recording.WebSocket);
    await waitFor(() => emu.liveConnections === 1, 'the warm session');
    await new Promise((resolve) => setTimeout(resolve, 50));
    const stream = tts.stream();
    stream.pushText('Hello there.');
    stream.endInput();
    for await (const audio of stream) void audio;
    // the warm socket carried the text; the pool opened its replacement
    expect(recording.sockets).toHaveLength(2);
    expect(recording.sockets[0]!.sent.some((frame) => frame.includes('"text.chunk"'))).toBe(true);
    expect(recording.sockets[1]!.sent.some((frame) => frame.includes('"text.chunk"'))).toBe(false);
    await tts.close();
    await waitFor(() => emu.liveConnections === 0, 'close() to close the warm session');
  });

  it('prewarm() again (LiveKit calls it on each switch to the TTS) keeps the one pool: close() closes every warm session', async () => {
    const emu = await emulator();
    const recording = recordingWebSocket();
    const tts = plugin(emu, { warm: true }, recording.WebSocket);
    await waitFor(() => emu.liveConnections === 1, 'the warm session');
    tts.prewarm();
    tts.prewarm();
    await tts.close();
    // a second pool would be left open by close() (control: the first one's session was open)
    await waitFor(() => emu.liveConnections === 0, 'close() to close the warm sessions');
    expect(recording.sockets).toHaveLength(1);
  });

  it('bad options throw a ValidationError at once; a refused key is a non-retryable 401 error', async () => {
    const emu = await emulator();
    const client = createClient({ apiKey: emu.apiKey, baseUrl: emu.baseUrl });
    open.push(client);
    expect(() => new TTS({ client, voice_id: -1 })).toThrow(ValidationError);
    expect(() => new TTS({ client, voice_id: 1, sampleRate: 100 })).toThrow(ValidationError);
    expect(() => new TTS({ client, voice_id: 1, frameMs: 0 })).toThrow(ValidationError);
    expect(() => new TTS({ client, voice_id: 1, speaking_rate: 9 })).toThrow(ValidationError);

    const key = 'SECRET-canary-livekit-key';
    const tts = new TTS({ apiKey: key, baseUrl: emu.baseUrl, voice_id: 1 });
    open.push(tts);
    const errors: Array<Error & { statusCode?: number; retryable?: boolean }> = [];
    tts.on('error', (e) => errors.push(e.error));
    const stream = tts.stream();
    stream.pushText('Hello there.');
    stream.endInput();
    for await (const audio of stream) void audio;
    for await (const audio of tts.synthesize('Hello there.')) void audio;
    expect(errors.map((e) => [e.name, e.statusCode, e.retryable])).toEqual([
      ['APIStatusError', 401, false],
      ['APIStatusError', 401, false],
    ]);
    for (const error of errors) expect(`${error.message} ${String(error)}`).not.toContain(key);
  });
});

describe('rxvoice/livekit TTS: a forbidden call', () => {
  it('a 403 answer to synthesize() is a non-retryable APIStatusError 403, not 401 (control: the request is served after it)', async () => {
    const emu = await emulator({ faults: { httpErrors: { status: 403, count: 1 } } });
    const tts = plugin(emu);
    const errors: Array<Error & { statusCode?: number; retryable?: boolean; body?: { code?: string } }> = [];
    tts.on('error', (e) => errors.push(e.error));
    for await (const audio of tts.synthesize('Hello there.')) void audio;
    expect(errors.map((e) => [e.name, e.statusCode, e.retryable, e.body?.code])).toEqual([['APIStatusError', 403, false, 'authentication']]);
    const packets = [];
    for await (const audio of tts.synthesize('Hello there.')) packets.push(audio);
    expect(packets.length).toBeGreaterThan(0);
    expect(errors).toHaveLength(1);
  });
});

describe('rxvoice/livekit pieces', () => {
  it('requestTexts: a text over the limit as requests of whole sentences, nothing lost (random texts, random limits)', () => {
    const sentence = fc
      .tuple(fc.array(fc.stringMatching(/^[a-z]{1,12}$/), { minLength: 1, maxLength: 12 }), fc.constantFrom('.', '!', '?'), fc.constantFrom(' ', '  ', '\n'))
      .map(([ws, stop, space]) => `${ws.join(' ')}${stop}${space}`);
    fc.assert(
      fc.property(fc.array(sentence, { minLength: 1, maxLength: 30 }), fc.integer({ min: 20, max: 400 }), (sentences, max) => {
        const text = sentences.join('');
        const pieces = requestTexts(text, 'en-us', max);
        expect(pieces.join('').replace(/\s+/g, ' ').trim()).toBe(text.replace(/\s+/g, ' ').trim());
        for (const piece of pieces) expect(piece.length).toBeLessThanOrEqual(max);
        if (text.length <= max) expect(pieces).toEqual([text]);
      }),
    );
    // the whitespace between two sentences stays with the first, never a piece of its own
    // that would be dropped (seed 755866577 found it: 'a?' and 'aaaa.' ran together)
    expect(requestTexts('a?  aaaa.\naaaaaaaaaaaa a. a. ', 'en-us', 20)).toEqual(['a?  ', 'aaaa.\naaaaaaaaaaaa ', 'a. a. ']);
    // ... also when the piece and the whitespace are exactly the limit
    expect(requestTexts('Go!  Then more.', 'en-us', 5)).toEqual(['Go!  ', 'Then ', 'more.']);
    // a sentence longer than the limit is cut at its last space before it
    expect(requestTexts(`${'a'.repeat(10)} ${'b'.repeat(100)}`, undefined, 40)).toEqual(['aaaaaaaaaa ', 'b'.repeat(40), 'b'.repeat(40), 'b'.repeat(20)]);
    expect(MAX_REQUEST_CHARS).toBe(3000);
  });

  it('synthesize() of a text over 3000 characters: several requests, the audio of the whole text in order', async () => {
    const emu = await emulator({ toneWordSeconds: 0.01 });
    const tts = plugin(emu);
    const text = Array.from({ length: 120 }, (_, i) => `This is sentence number ${i} of the long text.`).join(' ');
    expect(text.length).toBeGreaterThan(3000);
    const packets = [];
    for await (const audio of tts.synthesize(text)) packets.push(audio);
    expect(emu.requests.filter((r) => r.path === '/tts-stream').length).toBe(requestTexts(text, undefined).length);
    expect(requestTexts(text, undefined).length).toBeGreaterThan(1);
    // the tone voice: 0.01 s a word, every word spoken
    expect(seconds(packets.map((p) => p.frame))).toBeCloseTo(words(text).length * 0.01, 3);
    expect(packets.filter((p) => p.final)).toHaveLength(1);
  });

  it('timedWords: words on the stream timeline carrying the text between them; unknown words give the sentence whole', () => {
    const segment = { segment_id: 0, text: 'Hello, big world.', format: 'wav' as const, audio: new Uint8Array(0) };
    const timed = timedWords({ ...segment, word_timestamps: [{ word: 'Hello', start: 0, end: 0.2 }, { word: 'big', start: 0.2, end: 0.3 }, { word: 'world', start: 0.3, end: 0.6 }] }, 2, 0.7, ' ');
    expect(timed.map((t) => [t.text, t.startTime, t.endTime])).toEqual([
      [' Hello, ', 2, 2.2],
      ['big ', 2.2, 2.3],
      ['world.', 2.3, 2.6],
    ]);
    // an empty word is not found in the text either
    const empty = timedWords({ ...segment, word_timestamps: [{ word: 'Hello', start: 0, end: 0.2 }, { word: '', start: 0.2, end: 0.3 }] }, 1, 0.7, '');
    expect(empty.map((t) => [t.text, t.startTime, t.endTime])).toEqual([['Hello, big world.', 1, 1.7]]);
    const reworded = timedWords({ ...segment, word_timestamps: [{ word: 'Hullo', start: 0, end: 0.2 }] }, 1, 0.7, '');
    expect(reworded.map((t) => [t.text, t.startTime, t.endTime])).toEqual([['Hello, big world.', 1, 1.7]]);
  });

  it("toLiveKitError: rxvoice's errors as LiveKit's, never retryable, code and unspoken text in the body, the original as cause", () => {
    const live = (code: 'authentication' | 'session_rejected' | 'credits_exhausted' | 'connection' | 'timeout' | 'protocol') =>
      new LiveSessionError(code, `live ${code}`, { unspoken: 'Not yet said.' });
    const cases: Array<[unknown, string, number | undefined]> = [
      [live('authentication'), 'APIStatusError', 401],
      [live('session_rejected'), 'APIStatusError', 400],
      [live('credits_exhausted'), 'APIStatusError', 402],
      [live('connection'), 'APIConnectionError', undefined],
      [live('timeout'), 'APITimeoutError', undefined],
      [live('protocol'), 'APIError', undefined],
      [new ApiError(503, 'unavailable'), 'APIStatusError', 503],
      [new ValidationError([{ loc: ['body', 'text'], msg: 'too short', type: 'string_too_short' }], { source: 'local' }), 'APIStatusError', 422],
      [new TimeoutError('slow'), 'APITimeoutError', undefined],
      [new ConnectionError('down'), 'APIConnectionError', undefined],
      [new Error('boom'), 'APIError', undefined],
    ];
    for (const [error, name, status] of cases) {
      const mapped = toLiveKitError(error) as Error & { retryable: boolean; statusCode?: number; body: Record<string, unknown> };
      expect([mapped.name, mapped.statusCode, mapped.retryable], String(error)).toEqual([name, status, false]);
      expect(mapped.cause).toBe(error);
      expect(mapped.message).toBe((error as Error).message);
      if (error instanceof LiveSessionError) expect(mapped.body).toEqual({ code: error.code, unspoken: 'Not yet said.' });
    }
    // the service's request id goes along, for the logs
    expect((toLiveKitError(new ApiError(503, 'unavailable', { requestId: 'req-42' })) as Error & { requestId: string | null }).requestId).toBe('req-42');
    expect(isAbort(new AbortError('stop'))).toBe(true);
    expect(isAbort(new Error('no'))).toBe(false);
    // the platform's own abort (fetch, AbortSignal.abort()) is one too
    expect(isAbort(new DOMException('aborted', 'AbortError'))).toBe(true);
  });
});

/** A client whose requests to /tts-stream are recorded (their JSON bodies), for a TTS given it. */
function recordingClient(emu: Emulator): { client: ReturnType<typeof createClient>; bodies: Array<Record<string, unknown>> } {
  const bodies: Array<Record<string, unknown>> = [];
  const recording: typeof fetch = async (input, init) => {
    if (String(input).endsWith('/tts-stream')) bodies.push(JSON.parse(String(init?.body)) as Record<string, unknown>);
    return fetch(input, init);
  };
  const client = createClient({ apiKey: emu.apiKey, baseUrl: emu.baseUrl, fetch: recording });
  open.push(client);
  return { client, bodies };
}

describe('rxvoice/livekit TTS: the options reach the audio', () => {
  it('synthesize() asks /tts-stream for the language, speaking rate and sample rate of the TTS; frames are frameMs long', async () => {
    const emu = await emulator();
    const { client, bodies } = recordingClient(emu);
    const tts = new TTS({ client, voice_id: 1, language: 'de-de', speaking_rate: 1.5, sampleRate: 16000, frameMs: 20 });
    open.push(tts);
    const packets = [];
    for await (const audio of tts.synthesize('Hallo, wie geht es dir heute?')) packets.push(audio);
    expect(bodies).toHaveLength(1);
    expect(bodies[0]).toMatchObject({ voice_id: 1, language: 'de-de', output_configuration: { format: 'pcm_s16le', sample_rate: 16000 }, voice_settings: { speaking_rate: 1.5 } });
    expect(packets.length).toBeGreaterThan(2);
    for (const { frame } of packets.slice(0, -1)) expect([frame.sampleRate, frame.channels, frame.samplesPerChannel]).toEqual([16000, 1, 320]);
    expect(packets.at(-1)!.frame.samplesPerChannel).toBeLessThanOrEqual(320);
  });

  it("synthesize() of a text over 3000 characters splits it by the sentences of the TTS's language (control: English ends one at '3.')", async () => {
    const emu = await emulator({ toneWordSeconds: 0.001 });
    const text = 'Wort '.repeat(598) + 'am 3. Mai kommt er.';
    const requested = async (language: 'de-de' | 'en-us'): Promise<unknown[]> => {
      const { client, bodies } = recordingClient(emu);
      const tts = new TTS({ client, voice_id: 1, language });
      open.push(tts);
      for await (const audio of tts.synthesize(text)) void audio;
      return bodies.map((body) => body['text']);
    };
    // German: '3.' is an ordinal, one sentence cut at its last space before 3000 characters
    expect(await requested('de-de')).toEqual([text.slice(0, 3000), 'kommt er.']);
    expect(await requested('en-us')).toEqual([text.slice(0, 2996), 'Mai kommt er.']);
  });

  it('stream(): frames of frameMs at the sample rate, only the last of each sentence shorter', async () => {
    const emu = await emulator();
    const stream = plugin(emu, { sampleRate: 16000, frameMs: 20 }).stream();
    for (const sentence of SENTENCES) stream.pushText(`${sentence} `);
    stream.endInput();
    const packets: lk.SynthesizedAudio[] = [];
    for await (const audio of stream) if (audio !== lk.SynthesizeStream.END_OF_STREAM) packets.push(audio);
    // every frame tells LiveKit's metrics when its text began to arrive
    for (const { frame } of packets) expect(frame.userdata[USERDATA_TTS_STARTED_TIME]).toBeTypeOf('number');
    // a sentence starts at the packet carrying its text: the packet before it ends the one before
    const lastOfSentence = new Set(packets.flatMap((p, i) => (p.deltaText !== undefined && i > 0 ? [i - 1] : [])).concat(packets.length - 1));
    expect(lastOfSentence.size).toBe(SENTENCES.length);
    packets.forEach(({ frame }, i) => {
      expect([frame.sampleRate, frame.channels]).toEqual([16000, 1]);
      if (lastOfSentence.has(i)) expect(frame.samplesPerChannel).toBeLessThanOrEqual(320);
      else expect(frame.samplesPerChannel, `packet ${i}`).toBe(320);
    });
  });

  it('synthesize(): audio at another rate than asked is an error, not frames played at the wrong speed (control: the rate asked is spoken)', async () => {
    const emu = await emulator();
    let relabel: string | undefined;
    /** The emulator's answers to /tts-stream, their sample rate header relabelled (a service answering another rate). */
    const relabelling: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      if (relabel === undefined || !String(input).endsWith('/tts-stream')) return response;
      const headers = new Headers(response.headers);
      headers.set('x-sample-rate', relabel);
      return new Response(response.body, { status: response.status, headers });
    };
    const client = createClient({ apiKey: emu.apiKey, baseUrl: emu.baseUrl, fetch: relabelling });
    open.push(client);
    const tts = new TTS({ client, voice_id: 1, sampleRate: 24000 });
    open.push(tts);
    const errors: Error[] = [];
    tts.on('error', (e) => errors.push(e.error));
    const packets = [];
    for await (const audio of tts.synthesize('Hello there.')) packets.push(audio);
    expect([packets.length > 0, errors]).toEqual([true, []]);
    relabel = '16000';
    packets.length = 0;
    for await (const audio of tts.synthesize('Hello there.')) packets.push(audio);
    expect(packets).toEqual([]);
    expect(errors.map((e) => e.message)).toEqual(['/tts-stream answered 16000 Hz audio, 24000 Hz was asked for']);
  });

  it('synthesize() of a text with nothing to hear (only thoughts): no request, no frame, no error (control: a text is spoken)', async () => {
    const emu = await emulator();
    const { client, bodies } = recordingClient(emu);
    const tts = new TTS({ client, voice_id: 1 });
    open.push(tts);
    const errors: Error[] = [];
    tts.on('error', (e) => errors.push(e.error));
    const packets = [];
    for await (const audio of tts.synthesize('<think>Nothing to say aloud.</think>')) packets.push(audio);
    expect([packets.length, bodies.length, errors]).toEqual([0, 0, []]);
    for await (const audio of tts.synthesize('Hello there.')) packets.push(audio);
    expect(packets.length).toBeGreaterThan(0);
    expect(bodies).toHaveLength(1);
  });

  it("synthesize()'s abort signal mid-answer: no final frame, the request closed (the emulator stops charging; control: a whole run)", async () => {
    const emu = await emulator({ streamDelayMs: 150 });
    const tts = plugin(emu);
    const text = Array.from({ length: 10 }, (_, i) => `This is sentence number ${i + 1}.`).join(' ');
    const balance = (): number => emu.context.credits.balance(emu.apiKey);
    const start = balance();
    const whole = [];
    for await (const audio of tts.synthesize(text)) whole.push(audio);
    expect(start - balance()).toBe(10); // control
    expect(whole.filter((p) => p.final)).toHaveLength(1);

    const before = balance();
    const controller = new AbortController();
    const cut = [];
    for await (const audio of tts.synthesize(text, undefined, controller.signal)) {
      cut.push(audio);
      if (cut.length === 1) controller.abort();
    }
    expect(cut.filter((p) => p.final)).toEqual([]);
    expect(cut.length).toBeLessThan(whole.length);
    await new Promise((resolve) => setTimeout(resolve, 800)); // time for 5 more sentences
    expect(before - balance()).toBeLessThanOrEqual(3);
  });

  it('close() closes the client the TTS made; a client given is left open (control)', async () => {
    const emu = await emulator();
    const request = { text: 'Hello there.', voice_id: 1, language: 'en-us' as const };
    const own = new TTS({ apiKey: emu.apiKey, baseUrl: emu.baseUrl, voice_id: 1 });
    const given = plugin(emu);
    for await (const audio of own.synthesize('Hello there.')) void audio;
    await own.close();
    await given.close();
    await expect(lastValueFrom(own.client.ttsStream(request))).rejects.toThrow(/client is closed/);
    await expect(lastValueFrom(given.client.ttsStream(request).pipe(toArray()))).resolves.not.toEqual([]);
  });
});

describe('rxvoice/livekit segmentAudio', () => {
  const segment = (audio: Uint8Array) => ({ segment_id: 3, text: 'Hi there.', word_timestamps: [], format: 'wav' as const, audio });

  it('audio at another rate than the frames is resampled: frames of frameSamples at the asked rate, the duration kept', () => {
    const tone = new Int16Array(16000).map((_, i) => Math.round(8000 * Math.sin(i / 5))); // 1 s at 16 kHz
    const { frames, seconds } = segmentAudio(segment(encodeWav16(tone, 16000)), 24000, 2400, 0, '');
    expect(seconds).toBeCloseTo(1, 2);
    expect(frames.reduce((sum, f) => sum + f.samplesPerChannel, 0)).toBeCloseTo(24000, -1);
    for (const frame of frames.slice(0, -1)) expect([frame.sampleRate, frame.channels, frame.samplesPerChannel]).toEqual([24000, 1, 2400]);
    // control: at its own rate, the samples as they are
    const same = segmentAudio(segment(encodeWav16(tone, 16000)), 16000, 1600, 0, '');
    expect(Array.from(same.frames[0]!.data)).toEqual(Array.from(tone.subarray(0, 1600)));
  });

  it('a segment without audio gives no frame and 0 s; audio that is not 16-bit mono WAV is an error', () => {
    expect(segmentAudio(segment(new Uint8Array(0)), 24000, 2400, 1.5, '')).toMatchObject({ frames: [], seconds: 0 });
    const stereo = wavHeader({ sampleRate: 24000, channels: 2, bitsPerSample: 16, audioFormat: 1 }, 0);
    expect(() => segmentAudio(segment(stereo), 24000, 2400, 0, '')).toThrow(/segment 3: expected 16-bit mono PCM WAV/);
  });
});

describe('rxvoice/livekit TTS: speakable text (issue 31)', () => {
  const reply = '<think>The user greets me.</think>Hello **there**, see https://example.com/a?b=1 now.';
  it('stream() speaks only what should be heard by default; speakable: false sends the text as it is (control)', async () => {
    for (const [speakable, expected] of [
      [undefined, ['Hello there, see example.com now.']],
      [false, [reply]],
    ] as const) {
      const emu = await emulator();
      const stream = plugin(emu, speakable === undefined ? {} : { speakable }).stream();
      for (const token of reply.match(/.{1,3}/gs)!) stream.pushText(token);
      stream.endInput();
      for await (const audio of stream) void audio;
      expect(delivered(emu)).toEqual(expected);
    }
  });
  it('synthesize() sends the speakable text over /tts-stream, with the lexicon given', async () => {
    const emu = await emulator();
    const bodies: string[] = [];
    const recording: typeof fetch = async (input, init) => {
      if (String(input).endsWith('/tts-stream')) bodies.push((JSON.parse(String(init?.body)) as { text: string }).text);
      return fetch(input, init);
    };
    const client = createClient({ apiKey: emu.apiKey, baseUrl: emu.baseUrl, fetch: recording });
    open.push(client);
    const tts = new TTS({ client, voice_id: 1, speakable: { lexicon: { words: { Hello: 'Howdy' } } } });
    for await (const audio of tts.synthesize(reply)) void audio;
    expect(bodies).toEqual(['Howdy there, see example.com now.']);
  });
});

describe('rxvoice/livekit TTS: the aligned transcript', () => {
  it('one space between sentences, whichever side of the cut the token split put it (control: the words are all there)', async () => {
    const emu = await emulator();
    for (const tokens of [['Hello there. How are you today?'], ['Hello there.', ' How are you today?'], ['Hello there. ', 'How are you today?']]) {
      const stream = plugin(emu).stream();
      for (const token of tokens) stream.pushText(token);
      stream.endInput();
      const packets: lk.SynthesizedAudio[] = [];
      for await (const audio of stream) if (audio !== lk.SynthesizeStream.END_OF_STREAM) packets.push(audio);
      const text = packetTranscript(packets);
      expect(words(text)).toEqual(words('Hello there. How are you today?'));
      expect(text.trim(), JSON.stringify(tokens)).toBe('Hello there. How are you today?');
    }
  });
});
