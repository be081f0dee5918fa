/**
 * rxvoice/web in virtual time: a fake AudioContext whose clock is the TestScheduler's,
 * speech events from marbles. What is checked: gapless in-order scheduling as the audio
 * arrives, words on the audio clock, barge-in silence, the error cases, and the
 * incremental WAV decoder against whole-file decoding under random splits.
 */
import { describe, expect, it, vi } from 'vitest';
import fc from 'fast-check';
import { Observable, Subject, VirtualTimeScheduler, lastValueFrom, map, toArray } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { encodeWav16, wavHeader } from '../../src/audio/wav.js';
import { createWavStreamDecoder } from '../../src/audio/wavStream.js';
import type { LiveSpeechEvent } from '../../src/live/events.js';
import {
  playbackState,
  toWebAudio,
  wordsAsHeard,
  WebAudioError,
  type AudioBufferLike,
  type AudioBufferSourceNodeLike,
  type AudioContextLike,
  type AudioNodeLike,
  type GainNodeLike,
  type PlaybackEvent,
} from '../../src/web/index.js';

// A browser's AudioContext fits the interface the player uses (type-level check).
const fitsBrowser = (context: AudioContext): AudioContextLike => context;
void fitsBrowser;

class FakeNode implements AudioNodeLike {
  connectedTo: AudioNodeLike | undefined;
  connect(destination: AudioNodeLike): unknown {
    this.connectedTo = destination;
    return destination;
  }
  disconnect(): void {
    this.connectedTo = undefined;
  }
}
class FakeBuffer implements AudioBufferLike {
  readonly data: Float32Array[];
  constructor(channels: number, readonly length: number, readonly sampleRate: number) {
    this.data = Array.from({ length: channels }, () => new Float32Array(length));
  }
  get duration(): number {
    return this.length / this.sampleRate;
  }
  copyToChannel(source: Float32Array, channel: number): void {
    this.data[channel]!.set(source);
  }
}
class FakeSource extends FakeNode implements AudioBufferSourceNodeLike {
  buffer: AudioBufferLike | null = null;
  onended: ((event: Event) => void) | null = null;
  startedAt: number | undefined;
  stoppedAt: number | undefined;
  constructor(private readonly context: FakeContext) {
    super();
  }
  start(when = 0): void {
    this.startedAt = when;
  }
  stop(): void {
    this.stoppedAt = this.context.currentTime;
  }
}
class FakeGain extends FakeNode implements GainNodeLike {
  readonly gain = { value: 1 };
}
class FakeContext implements AudioContextLike {
  state = 'running';
  readonly destination = new FakeNode();
  readonly sources: FakeSource[] = [];
  readonly gains: FakeGain[] = [];
  readonly decoded: Uint8Array[] = [];
  resumes = 0;
  constructor(private readonly clock: () => number) {}
  get currentTime(): number {
    return this.clock();
  }
  resume(): Promise<void> {
    this.resumes++;
    return new Promise(() => undefined); // an autoplay policy that waits for a gesture
  }
  close(): Promise<void> {
    this.state = 'closed';
    return Promise.resolve();
  }
  createBuffer(channels: number, length: number, sampleRate: number): FakeBuffer {
    return new FakeBuffer(channels, length, sampleRate);
  }
  createBufferSource(): FakeSource {
    const source = new FakeSource(this);
    this.sources.push(source);
    return source;
  }
  createGain(): FakeGain {
    const gain = new FakeGain();
    this.gains.push(gain);
    return gain;
  }
  decodeAudioData(data: ArrayBuffer): Promise<AudioBufferLike> {
    this.decoded.push(new Uint8Array(data));
    // the fake "mp3" is 8000 bytes for one second
    return Promise.resolve(new FakeBuffer(1, data.byteLength, 8000));
  }
}

const RATE = 8000;
/** A segment's WAV: `seconds` of a ramp, 16-bit mono at 8 kHz. */
function wav(seconds: number, seed = 0): { bytes: Uint8Array; samples: Int16Array } {
  const samples = new Int16Array(Math.round(seconds * RATE));
  for (let i = 0; i < samples.length; i++) samples[i] = ((i * 37 + seed * 101) % 2000) - 1000;
  return { bytes: encodeWav16(samples, RATE), samples };
}
const words = (...starts: number[]) => starts.map((start, i) => ({ word: `w${i}`, start, end: start + 0.05 }));

function testScheduler(): TestScheduler {
  return new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
}

describe('toWebAudio in virtual time', () => {
  it('schedules each frame as it arrives, gapless and in order, and emits words when heard', () => {
    const ts = testScheduler();
    ts.run(({ cold }) => {
      const context = new FakeContext(() => ts.now() / 1000);
      const a = wav(0.4, 1).bytes;
      const b = wav(0.2, 2).bytes;
      // segment 0 arrives in two pieces 100 ms apart, split inside a sample frame;
      // segment 1 arrives while segment 0 still plays
      const speech = cold<LiveSpeechEvent>('r s 98ms a 99ms c d e 97ms f g h |', {
        r: { type: 'ready', session_id: 's', run_id: 1, config: { output_format: 'wav' } },
        s: { type: 'segmentStart', segment_id: 0, text: 'One two three.', word_timestamps: words(0, 0.1, 0.3) },
        a: { type: 'audio', segment_id: 0, bytes: a.subarray(0, 44 + 1601) },
        c: { type: 'audio', segment_id: 0, bytes: a.subarray(44 + 1601) },
        d: { type: 'segmentDone', segment_id: 0 },
        e: { type: 'segmentStart', segment_id: 1, text: 'Four.', word_timestamps: words(0.1) },
        f: { type: 'audio', segment_id: 1, bytes: b },
        g: { type: 'segmentDone', segment_id: 1 },
        h: { type: 'done' },
      });
      const log: string[] = [];
      speech.pipe(toWebAudio({ context, scheduler: ts })).subscribe({ next: (e) => log.push(`${ts.now()} ${label(e)}`), complete: () => log.push(`${ts.now()} |`) });
      ts.flush();
      // a at 100 ms: 0.1 s of segment 0 (the odd byte waits) scheduled at 150 ms; c at 200 ms:
      // the rest right after it (250 ms); segment 1 at 300 ms goes right after segment 0 (550 ms)
      expect(log).toEqual([
        '100 scheduled 0 @0.15',
        '150 playing 0 @0.15',
        '150 word w0 @0.15',
        '250 word w1 @0.25',
        '300 scheduled 1 @0.55',
        '450 word w2 @0.45',
        '550 played 0 @0.55',
        '550 playing 1 @0.55',
        '650 word w0 @0.65',
        '750 played 1 @0.75',
        '750 ended @0.75',
        '750 |',
      ]);
      expect(context.sources.map((source) => round(source.startedAt!))).toEqual([0.15, 0.25, 0.55]);
      // gapless: each source starts where the previous one ends
      for (let i = 1; i < context.sources.length; i++) {
        const previous = context.sources[i - 1]!;
        expect(previous.startedAt! + previous.buffer!.duration).toBeCloseTo(context.sources[i]!.startedAt!, 9);
      }
      // every sample played exactly once, in order
      const played = context.sources.slice(0, 2).flatMap((source) => [...(source.buffer as FakeBuffer).data[0]!]);
      expect(played).toEqual([...wav(0.4, 1).samples].map((x) => x / 32768));
    });
  });

  it('words follow their audio: a late frame moves the words in it, not those already scheduled', () => {
    const ts = testScheduler();
    ts.run(({ cold, expectObservable }) => {
      const context = new FakeContext(() => ts.now() / 1000);
      const { bytes } = wav(0.3);
      const speech = cold<LiveSpeechEvent>('s a 498ms b c |', {
        s: { type: 'segmentStart', segment_id: 0, text: 'a b c', word_timestamps: words(0, 0.05, 0.2) },
        a: { type: 'audio', segment_id: 0, bytes: bytes.subarray(0, 44 + 1600) }, // 0.1 s
        b: { type: 'audio', segment_id: 0, bytes: bytes.subarray(44 + 1600) }, // 0.2 s, 500 ms later: an underrun
        c: { type: 'segmentDone', segment_id: 0 },
      });
      const heard = speech.pipe(toWebAudio({ context, scheduler: ts }), wordsAsHeard(), map((w) => `${w.word}@${w.time.toFixed(3)}`));
      // first piece at 1 ms -> 51 ms; the second arrives at 500 ms, after the first ended: at 550 ms,
      // so the word 0.2 s in (0.1 s into the second piece) is heard at 650 ms
      expectObservable(heard).toBe('51ms a 49ms b 548ms c 99ms |', { a: 'w0@0.051', b: 'w1@0.101', c: 'w2@0.650' });
    });
  });

  it('a word that starts exactly where the audio so far ends waits for its own audio (a late frame moves it)', () => {
    const ts = testScheduler();
    ts.run(({ cold, expectObservable }) => {
      const context = new FakeContext(() => ts.now() / 1000);
      const { bytes } = wav(0.3);
      const speech = cold<LiveSpeechEvent>('s a 498ms b c |', {
        s: { type: 'segmentStart', segment_id: 0, text: 'a b c', word_timestamps: words(0, 0.1, 0.2) },
        a: { type: 'audio', segment_id: 0, bytes: bytes.subarray(0, 44 + 1600) }, // 0.1 s: ends where w1 starts
        b: { type: 'audio', segment_id: 0, bytes: bytes.subarray(44 + 1600) }, // 500 ms later: an underrun
        c: { type: 'segmentDone', segment_id: 0 },
      });
      const heard = speech.pipe(toWebAudio({ context, scheduler: ts }), wordsAsHeard(), map((w) => `${w.word}@${w.time.toFixed(3)}`));
      // w1's first sample is the second piece's first: heard at 550 ms, not at the end of the
      // first piece (151 ms), when nothing plays
      expectObservable(heard).toBe('51ms a 498ms b 99ms c 99ms |', { a: 'w0@0.051', b: 'w1@0.550', c: 'w2@0.650' });
    });
  });

  it('barge-in: unsubscribing stops every source at once, disconnects the output and closes the session', () => {
    const ts = testScheduler();
    ts.run(({ cold, expectObservable, expectSubscriptions }) => {
      const context = new FakeContext(() => ts.now() / 1000);
      const { bytes } = wav(1);
      const speech = cold<LiveSpeechEvent>('s a b', {
        s: { type: 'segmentStart', segment_id: 0, text: 'long', word_timestamps: words(0, 0.5, 0.9) },
        a: { type: 'audio', segment_id: 0, bytes: bytes.subarray(0, 8044) },
        b: { type: 'audio', segment_id: 0, bytes: bytes.subarray(8044) },
      });
      const heard = speech.pipe(toWebAudio({ context, scheduler: ts }), wordsAsHeard(), map((w) => w.word));
      expectObservable(heard, '^ 300ms !').toBe('51ms a', { a: 'w0' });
      expectSubscriptions(speech.subscriptions).toBe('^ 300ms !');
      ts.flush();
      expect(context.sources).toHaveLength(2);
      for (const source of context.sources) expect(source.stoppedAt).toBe(0.301); // the moment of the unsubscription
      expect(context.gains[0]!.connectedTo).toBeUndefined();
    });
  });

  it('plays on after the session completes, and ends after the last sample', () => {
    const ts = testScheduler();
    ts.run(({ cold, expectObservable }) => {
      const context = new FakeContext(() => ts.now() / 1000);
      const speech = cold<LiveSpeechEvent>('(sad|)', {
        s: { type: 'segmentStart', segment_id: 3, text: 'x' },
        a: { type: 'audio', segment_id: 3, bytes: wav(0.5).bytes },
        d: { type: 'segmentDone', segment_id: 3 },
      });
      expectObservable(speech.pipe(toWebAudio({ context, scheduler: ts }), map(label))).toBe('S 49ms P 499ms (YE|)', {
        S: 'scheduled 3 @0.05',
        P: 'playing 3 @0.05',
        Y: 'played 3 @0.55',
        E: 'ended @0.55',
      });
    });
  });

  it('a session error stops the sound and is passed on', () => {
    const ts = testScheduler();
    ts.run(({ cold, expectObservable }) => {
      const context = new FakeContext(() => ts.now() / 1000);
      const failure = new Error('4402');
      const speech = cold<LiveSpeechEvent>('s a 100ms #', { s: { type: 'segmentStart', segment_id: 0, text: 'x' }, a: { type: 'audio', segment_id: 0, bytes: wav(1).bytes } }, failure);
      expectObservable(speech.pipe(toWebAudio({ context, scheduler: ts }), map(label))).toBe('-S 49ms P 50ms #', { S: 'scheduled 0 @0.051', P: 'playing 0 @0.051' }, failure);
      ts.flush();
      expect(context.sources[0]!.stoppedAt).toBe(0.102);
    });
  });

  it('a suspended AudioContext that never starts: WebAudioError, not silence; one that starts plays', () => {
    const ts = testScheduler();
    ts.run(({ cold, expectObservable }) => {
      // a suspended context's clock stands still
      const suspended: FakeContext = new FakeContext(() => (suspended.state === 'running' ? ts.now() / 1000 : 0));
      suspended.state = 'suspended';
      const speech = cold<LiveSpeechEvent>('(sad)', {
        s: { type: 'segmentStart', segment_id: 0, text: 'x' },
        a: { type: 'audio', segment_id: 0, bytes: wav(5).bytes },
        d: { type: 'segmentDone', segment_id: 0 },
      });
      const events = speech.pipe(toWebAudio({ context: suspended, scheduler: ts, resumeTimeoutMs: 1000 }), map(label));
      expectObservable(events).toBe('S 999ms #', { S: 'scheduled 0 @0.05' }, expect.objectContaining({ name: 'WebAudioError', reason: 'suspended' }));
      ts.flush();
      expect(suspended.resumes).toBe(1);
      expect(suspended.sources[0]!.stoppedAt).toBe(0);
    });
    const ts2 = testScheduler();
    ts2.run(({ cold, expectObservable }) => {
      // the control: a context that starts running within the timeout is not an error
      const late: FakeContext = new FakeContext(() => (late.state === 'running' ? (ts2.now() - 500) / 1000 : 0));
      late.state = 'suspended';
      ts2.schedule(() => (late.state = 'running'), 500);
      const played = cold<LiveSpeechEvent>('(sad|)', {
        s: { type: 'segmentStart', segment_id: 0, text: 'x' },
        a: { type: 'audio', segment_id: 0, bytes: wav(0.1).bytes },
        d: { type: 'segmentDone', segment_id: 0 },
      });
      expectObservable(played.pipe(toWebAudio({ context: late, scheduler: ts2, resumeTimeoutMs: 1000 }), map((e) => e.type))).toBe(
        'S 549ms P 99ms (YE|)',
        { S: 'segmentScheduled', P: 'segmentPlaying', Y: 'segmentPlayed', E: 'ended' },
      );
    });
  });

  it('no Web Audio in the page: WebAudioError before the session is even started', async () => {
    expect('AudioContext' in globalThis).toBe(false); // Node has no Web Audio
    const subscribed: number[] = [];
    const tracked = new Observable<LiveSpeechEvent>(() => {
      subscribed.push(1);
    });
    const error = await lastValueFrom(tracked.pipe(toWebAudio())).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WebAudioError);
    expect((error as WebAudioError).reason).toBe('no_web_audio');
    expect((error as WebAudioError).code).toBe('sink');
    expect(subscribed).toEqual([]);
  });

  it('formats other than WAV are decoded whole at the segment end, in order', async () => {
    const context = new FakeContext(() => performance.now() / 1000);
    const speech = new Subject<LiveSpeechEvent>();
    const done = lastValueFrom(speech.pipe(toWebAudio({ context, bufferSeconds: 0 }), toArray()));
    speech.next({ type: 'ready', session_id: 's', run_id: 1, config: { output_format: 'mp3' } });
    speech.next({ type: 'segmentStart', segment_id: 0, text: 'x' });
    speech.next({ type: 'audio', segment_id: 0, bytes: new Uint8Array([1, 2, 3]) });
    speech.next({ type: 'audio', segment_id: 0, bytes: new Uint8Array([4, 5]) });
    expect(context.decoded).toEqual([]); // nothing decoded before the segment's end
    speech.next({ type: 'segmentDone', segment_id: 0 });
    speech.next({ type: 'segmentStart', segment_id: 1, text: 'y' });
    speech.next({ type: 'audio', segment_id: 1, bytes: new Uint8Array([6]) });
    speech.next({ type: 'segmentDone', segment_id: 1 });
    speech.complete();
    const events = await done;
    expect(context.decoded).toEqual([new Uint8Array([1, 2, 3, 4, 5]), new Uint8Array([6])]);
    expect(events.filter((e) => e.type === 'segmentScheduled').map((e) => e.segment_id)).toEqual([0, 1]);
    expect(events.at(-1)?.type).toBe('ended');
  });

  it('barge-in while a segment is being decoded: its audio never starts when the decode lands (control: not interrupted, it plays)', async () => {
    for (const bargeIn of [false, true]) {
      const context = new FakeContext(() => 0);
      const landings: Array<() => void> = [];
      context.decodeAudioData = (data) => new Promise((resolve) => landings.push(() => resolve(new FakeBuffer(1, data.byteLength, 8000))));
      const speech = new Subject<LiveSpeechEvent>();
      const playback = speech.pipe(toWebAudio({ context, bufferSeconds: 0, scheduler: new VirtualTimeScheduler() })).subscribe();
      speech.next({ type: 'ready', session_id: 's', run_id: 1, config: { output_format: 'mp3' } });
      speech.next({ type: 'segmentStart', segment_id: 0, text: 'x' });
      speech.next({ type: 'audio', segment_id: 0, bytes: new Uint8Array([1, 2, 3]) });
      speech.next({ type: 'segmentDone', segment_id: 0 });
      await vi.waitFor(() => expect(landings).toHaveLength(1)); // the decode is under way
      if (bargeIn) playback.unsubscribe();
      landings[0]!();
      await new Promise((resolve) => setImmediate(resolve)); // what the landing does runs in promise callbacks
      expect(context.sources.filter((source) => source.startedAt !== undefined)).toHaveLength(bargeIn ? 0 : 1);
      playback.unsubscribe();
    }
  });

  it('speech that completes while its last segment is being decoded: that segment plays, then ended (not ended at once)', async () => {
    const clock = new VirtualTimeScheduler();
    const context = new FakeContext(() => clock.now() / 1000);
    const landings: Array<() => void> = [];
    context.decodeAudioData = (data) => new Promise((resolve) => landings.push(() => resolve(new FakeBuffer(1, data.byteLength, 8000))));
    const speech = new Subject<LiveSpeechEvent>();
    const events: string[] = [];
    let completed = false;
    speech.pipe(toWebAudio({ context, bufferSeconds: 0, scheduler: clock })).subscribe({ next: (e) => events.push(label(e)), complete: () => (completed = true) });
    speech.next({ type: 'ready', session_id: 's', run_id: 1, config: { output_format: 'mp3' } });
    speech.next({ type: 'segmentStart', segment_id: 0, text: 'x' });
    speech.next({ type: 'audio', segment_id: 0, bytes: new Uint8Array(800) }); // 0.1 s of the fake "mp3"
    speech.next({ type: 'segmentDone', segment_id: 0 });
    speech.complete(); // with the decode still under way
    await vi.waitFor(() => expect(landings).toHaveLength(1));
    clock.flush();
    expect(events).toEqual([]); // nothing to end yet
    landings[0]!();
    await new Promise((resolve) => setImmediate(resolve));
    clock.flush();
    expect(events).toEqual(['scheduled 0 @0', 'playing 0 @0', 'played 0 @0.1', 'ended @0.1']);
    expect(completed).toBe(true);
  });

  it('passes on a sentence the service skipped', () => {
    const ts = testScheduler();
    ts.run(({ cold, expectObservable }) => {
      const context = new FakeContext(() => ts.now() / 1000);
      const speech = cold<LiveSpeechEvent>('k|', { k: { type: 'segmentSkipped', segment_id: 3, text: 'Skipped.' } });
      expectObservable(speech.pipe(toWebAudio({ context, scheduler: ts }), map(label))).toBe('k(e|)', { k: 'skipped 3', e: 'ended @0.001' });
    });
  });

  it('is browser code: bundles for the browser with no Node built-in and no WebSocket library', async () => {
    const esbuild = await import('esbuild');
    const result = await esbuild.build({ entryPoints: ['src/web/index.ts'], bundle: true, platform: 'browser', format: 'esm', write: false, metafile: true, logLevel: 'silent' });
    const inputs = Object.keys(result.metafile.inputs);
    expect(inputs).toContain('src/web/toWebAudio.ts');
    expect(inputs.filter((input) => input.startsWith('node:') || input.includes('node_modules/ws/'))).toEqual([]);
  });

  it('a suspended AudioContext errors after 3 s by default; unsubscribing before that leaves no timer running', () => {
    const outcome = (unsubscribeAt: number | undefined) => {
      const ts = testScheduler();
      return ts.run(({ cold }) => {
        const context = new FakeContext(() => 0);
        context.state = 'suspended';
        let failedAt: number | undefined;
        const playing = cold<LiveSpeechEvent>('s', { s: { type: 'segmentStart', segment_id: 0, text: 'x' } })
          .pipe(toWebAudio({ context, scheduler: ts }))
          .subscribe({ error: () => (failedAt = ts.now()) });
        if (unsubscribeAt !== undefined) ts.schedule(() => playing.unsubscribe(), unsubscribeAt);
        ts.flush();
        return { failedAt, idleAt: ts.now() };
      });
    };
    expect(outcome(undefined)).toEqual({ failedAt: 3000, idleAt: 3000 });
    expect(outcome(100)).toEqual({ failedAt: undefined, idleAt: 100 });
  });

  it('an AudioContext it created itself is closed when the subscription ends; one it was given is not', () => {
    const ts = testScheduler();
    const created: FakeContext[] = [];
    vi.stubGlobal(
      'AudioContext',
      class extends FakeContext {
        constructor() {
          super(() => ts.now() / 1000);
          created.push(this);
        }
      },
    );
    try {
      const given = new FakeContext(() => ts.now() / 1000);
      const speech = new Subject<LiveSpeechEvent>();
      speech.pipe(toWebAudio({ scheduler: ts })).subscribe().unsubscribe();
      speech.pipe(toWebAudio({ context: given, scheduler: ts })).subscribe().unsubscribe();
      expect(created.map((c) => c.state)).toEqual(['closed']);
      expect(given.state).toBe('running');
    } finally {
      vi.unstubAllGlobals();
    }
  });

  it('an empty audio message before the WAV does not make the segment an encoded one: the WAV still streams', () => {
    const ts = testScheduler();
    ts.run(({ cold, expectObservable }) => {
      const context = new FakeContext(() => ts.now() / 1000);
      const speech = cold<LiveSpeechEvent>('s e a 100ms d|', {
        s: { type: 'segmentStart', segment_id: 0, text: 'x' },
        e: { type: 'audio', segment_id: 0, bytes: new Uint8Array(0) },
        a: { type: 'audio', segment_id: 0, bytes: wav(0.5).bytes },
        d: { type: 'segmentDone', segment_id: 0 },
      });
      // scheduled as it arrives (2 ms), not when the segment ends
      expectObservable(speech.pipe(toWebAudio({ context, scheduler: ts }), map(label))).toBe('--S 49ms P 499ms (YE|)', {
        S: 'scheduled 0 @0.052',
        P: 'playing 0 @0.052',
        Y: 'played 0 @0.552',
        E: 'ended @0.552',
      });
      ts.flush();
      expect(context.decoded).toEqual([]);
    });
  });

  it('a reconnect ends the segment that was arriving: what came of it plays, then it is played', () => {
    const ts = testScheduler();
    ts.run(({ cold, expectObservable }) => {
      const context = new FakeContext(() => ts.now() / 1000);
      const speech = cold<LiveSpeechEvent>('(sar)', {
        s: { type: 'segmentStart', segment_id: 0, text: 'x' },
        a: { type: 'audio', segment_id: 0, bytes: wav(0.1).bytes },
        r: { type: 'reconnected', attempt: 1, session_id: 's2', run_id: 2, resent: 'x' },
      });
      expectObservable(speech.pipe(toWebAudio({ context, scheduler: ts }), map(label)), '^ 1000ms !').toBe('S 49ms P 99ms Y', {
        S: 'scheduled 0 @0.05',
        P: 'playing 0 @0.05',
        Y: 'played 0 @0.15',
      });
    });
  });

  it('a segment is played before the next one plays, whatever rounding its length gives (gapless WAV at 22,050 Hz, three frames a segment)', () => {
    const rate = 22_050;
    // lengths whose end, added up frame by frame, differs from the next start by a rounding (found at random); and others
    for (const sizes of [[6147, 14_862], [2049, 4954], [22_050, 11_025, 7], [1, 3, 5, 7, 11, 13, 17, 19]]) {
      const scheduler = new VirtualTimeScheduler();
      const context = new FakeContext(() => scheduler.now() / 1000);
      const speech = new Subject<LiveSpeechEvent>();
      const events: PlaybackEvent[] = [];
      const statuses: string[] = [];
      speech.pipe(toWebAudio({ context, scheduler })).subscribe((event) => events.push(event));
      speech.pipe(toWebAudio({ context: new FakeContext(() => scheduler.now() / 1000), scheduler }), playbackState()).subscribe((state) => statuses.push(state.status));
      speech.next({ type: 'ready', session_id: 's', run_id: 1, config: { output_format: 'wav' } });
      sizes.forEach((size, id) => {
        const bytes = encodeWav16(new Int16Array(size * 3), rate);
        const third = Math.floor((bytes.length - 44) / 6) * 2;
        speech.next({ type: 'segmentStart', segment_id: id, text: `S${id}.` });
        for (const [from, to] of [[0, 44 + third], [44 + third, 44 + 2 * third], [44 + 2 * third, bytes.length]] as const) speech.next({ type: 'audio', segment_id: id, bytes: bytes.subarray(from, to) });
        speech.next({ type: 'segmentDone', segment_id: id });
      });
      speech.complete();
      scheduler.flush();
      const order = events.filter((e) => e.type === 'segmentPlaying' || e.type === 'segmentPlayed').map((e) => `${e.type === 'segmentPlaying' ? 'P' : 'Y'}${e.segment_id}`);
      expect(order).toEqual(sizes.flatMap((_, id) => [`P${id}`, `Y${id}`]));
      // so the state a UI shows is 'playing' to the end of the last segment ('waiting' only for the instant between two)
      expect(statuses.slice(statuses.indexOf('playing'), statuses.lastIndexOf('playing') + 1).filter((status, i, all) => status !== 'playing' && all[i + 1] !== 'playing')).toEqual([]);
      expect(statuses.at(-1)).toBe('ended');
    }
  });

  it('a reconnect after a decoded format\'s segmentDone, its decode still running: the segment is played once, after its audio (control: a reconnect while it arrives ends it at once)', async () => {
    for (const whileArriving of [false, true]) {
      const context = new FakeContext(() => performance.now() / 1000);
      const speech = new Subject<LiveSpeechEvent>();
      const done = lastValueFrom(speech.pipe(toWebAudio({ context, bufferSeconds: 0 }), toArray()));
      speech.next({ type: 'ready', session_id: 's', run_id: 1, config: { output_format: 'mp3' } });
      speech.next({ type: 'segmentStart', segment_id: 0, text: 'One two.' });
      speech.next({ type: 'audio', segment_id: 0, bytes: new Uint8Array(800) });
      if (!whileArriving) speech.next({ type: 'segmentDone', segment_id: 0 });
      speech.next({ type: 'reconnected', attempt: 1, session_id: 's2', run_id: 2, resent: '' });
      speech.complete();
      const kinds = (await done).filter((e) => 'segment_id' in e && e.segment_id === 0).map((e) => e.type);
      // arriving, its encoded audio is dropped (the text is spoken again): played at once, never scheduled
      expect(kinds).toEqual(whileArriving ? ['segmentPlayed'] : ['segmentScheduled', 'segmentPlaying', 'segmentPlayed']);
    }
  });

  it('bad options throw at once', () => {
    expect(() => toWebAudio({ bufferSeconds: -1 })).toThrow(/bufferSeconds/);
    expect(() => toWebAudio({ resumeTimeoutMs: 0 })).toThrow(/resumeTimeoutMs/);
    expect(() => playbackState({ maxWords: 0 })).toThrow(/maxWords/);
  });
});

describe('playbackState', () => {
  it('folds playback into what a UI shows: status, current word, words heard, segments', () => {
    const ts = testScheduler();
    ts.run(({ cold, expectObservable }) => {
      const w = (index: number, time: number): PlaybackEvent => ({ type: 'word', segment_id: 0, index, word: `w${index}`, start: time, end: time, time });
      const events = cold<PlaybackEvent>('--s-p-a-b-y-e|', {
        s: { type: 'segmentScheduled', segment_id: 0, text: 'w0 w1', words: [], startTime: 1, receivedTime: 0.9 },
        p: { type: 'segmentPlaying', segment_id: 0, text: 'w0 w1', time: 1 },
        a: w(0, 1),
        b: w(1, 1.2),
        y: { type: 'segmentPlayed', segment_id: 0, time: 1.5 },
        e: { type: 'ended', time: 1.5 },
      });
      const view = events.pipe(
        playbackState({ maxWords: 1 }),
        map((s) => `${s.status}:${s.currentWord?.word ?? '-'}:${s.wordsHeard.map((x) => x.word).join(',')}:${s.segments.map((x) => x.status).join(',')}`),
      );
      expectObservable(view).toBe('i-s-p-a-b-y-e|', {
        i: 'waiting:-::',
        s: 'waiting:-::scheduled',
        p: 'playing:-::playing',
        a: 'playing:w0:w0:playing',
        b: 'playing:w1:w1:playing',
        y: 'waiting:w1:w1:played',
        e: 'ended:-:w1:played',
      });
    });
  });

  it('keeps the last maxSegments skipped texts, as it keeps segments (a long session stays bounded)', () => {
    const ts = testScheduler();
    ts.run(({ cold, expectObservable }) => {
      const skip = (text: string): PlaybackEvent => ({ type: 'segmentSkipped', segment_id: 0, text });
      const events = cold<PlaybackEvent>('-a-b-c|', { a: skip('one'), b: skip('two'), c: skip('three') });
      // control: with room for all three, every skipped text is kept
      expectObservable(events.pipe(playbackState({ maxSegments: 3 }), map((s) => s.skipped.join(',')))).toBe('ia-b-c|', {
        i: '',
        a: 'one',
        b: 'one,two',
        c: 'one,two,three',
      });
      expectObservable(events.pipe(playbackState({ maxSegments: 2 }), map((s) => s.skipped.join(',')))).toBe('ia-b-c|', {
        i: '',
        a: 'one',
        b: 'one,two',
        c: 'two,three',
      });
    });
  });
});

describe('the incremental WAV decoder', () => {
  const formats = [
    { bitsPerSample: 8, audioFormat: 1 as const },
    { bitsPerSample: 16, audioFormat: 1 as const },
    { bitsPerSample: 24, audioFormat: 1 as const },
    { bitsPerSample: 32, audioFormat: 1 as const },
    { bitsPerSample: 32, audioFormat: 3 as const },
  ];

  it('gives the same samples, split anywhere, as decoding the whole file', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...formats),
        fc.integer({ min: 1, max: 3 }),
        fc.uint8Array({ minLength: 0, maxLength: 600 }),
        fc.array(fc.integer({ min: 1, max: 700 }), { maxLength: 20 }),
        (format, channels, body, cuts) => {
          const align = channels * (format.bitsPerSample / 8);
          const pcm = body.subarray(0, body.length - (body.length % align));
          const header = wavHeader({ ...format, channels, sampleRate: 16000 }, pcm.length); // 44 bytes, 58 for float
          const file = new Uint8Array(header.length + pcm.length);
          file.set(header, 0);
          file.set(pcm, header.length);
          const whole = createWavStreamDecoder().feed(file);
          const decoder = createWavStreamDecoder();
          const pieces: Float32Array[][] = [];
          let at = 0;
          for (const cut of [...cuts, file.length]) {
            const end = Math.min(file.length, at + cut);
            const out = decoder.feed(file.subarray(at, end));
            if (out) pieces.push(out.channels);
            at = end;
            if (at >= file.length) break;
          }
          for (let channel = 0; channel < channels; channel++) {
            const joined = pieces.flatMap((p) => [...p[channel]!]);
            expect(joined).toEqual(whole ? [...whole.channels[channel]!] : []);
          }
        },
      ),
    );
  });

  it('16-bit samples come out as value / 32768; garbage and compressed formats are refused', () => {
    const { bytes, samples } = wav(0.01);
    const out = createWavStreamDecoder().feed(bytes)!;
    expect([...out.channels[0]!]).toEqual([...samples].map((s) => s / 32768));
    expect(() => createWavStreamDecoder().feed(new TextEncoder().encode('ID3 this is an mp3'))).toThrow(/not a WAV/);
    const adpcm = wavHeader({ sampleRate: 8000, channels: 1, bitsPerSample: 4, audioFormat: 1 }, 0);
    expect(() => createWavStreamDecoder().feed(adpcm)).toThrow(/unsupported WAV format/);
    const noChannels = wavHeader({ sampleRate: 8000, channels: 0, bitsPerSample: 16, audioFormat: 1 }, 0);
    expect(() => createWavStreamDecoder().feed(noChannels)).toThrow('invalid WAV header: 0 channels at 8000 Hz');
    const noRate = wavHeader({ sampleRate: 0, channels: 1, bitsPerSample: 16, audioFormat: 1 }, 0);
    expect(() => createWavStreamDecoder().feed(noRate)).toThrow('invalid WAV header: 1 channels at 0 Hz');
    expect(() => createWavStreamDecoder(100).feed(new Uint8Array([...new TextEncoder().encode('RIFF....WAVE'), ...new Uint8Array(200)]))).toThrow(/no WAV data/);
  });
});

describe('the incremental WAV decoder: reference values and chunk layouts', () => {
  /** A file of `format` whose data chunk holds `data` (bytes as the RIFF/WAVE spec lays them out). */
  const file = (format: { bitsPerSample: number; audioFormat: 1 | 3; channels?: number }, data: number[]): Uint8Array =>
    Uint8Array.from([...wavHeader({ sampleRate: 8000, channels: 1, ...format }, data.length), ...data]);
  const decoded = (bytes: Uint8Array): number[][] => createWavStreamDecoder().feed(bytes)!.channels.map((c) => [...c]);

  it('decodes each sample type to the value the WAVE format gives it', () => {
    // Microsoft/IBM RIFF spec (Multimedia Programming Interface and Data Specifications 1.0):
    // 8-bit samples are unsigned with 128 as zero; wider ones are signed two's complement, little-endian
    expect(decoded(file({ bitsPerSample: 8, audioFormat: 1 }, [0x00, 0x80, 0xff, 0x01]))).toEqual([[-1, 0, 127 / 128, -127 / 128]]);
    // 24-bit: 0x800000 = -8388608, 0x7FFFFF = 8388607, 0x000001 = 1, 0xFFFFFF = -1 (full scale 2^23)
    expect(decoded(file({ bitsPerSample: 24, audioFormat: 1 }, [0x00, 0x00, 0x80, 0xff, 0xff, 0x7f, 0x01, 0x00, 0x00, 0xff, 0xff, 0xff]))).toEqual([
      [-1, 8388607 / 8388608, 1 / 8388608, -1 / 8388608],
    ]);
    // 32-bit: 0x80000000 = -2^31, 0x40000000 = 2^30, 0xFFFFFFFF = -1, 0x00000001 = 1 (full scale 2^31)
    expect(decoded(file({ bitsPerSample: 32, audioFormat: 1 }, [0, 0, 0, 0x80, 0, 0, 0, 0x40, 0xff, 0xff, 0xff, 0xff, 1, 0, 0, 0]))).toEqual([
      [-1, 0.5, -(2 ** -31), 2 ** -31],
    ]);
    // IEEE float (format 3), little-endian: 0x3E800000 = 0.25, 0xBF000000 = -0.5
    expect(decoded(file({ bitsPerSample: 32, audioFormat: 3 }, [0, 0, 0x80, 0x3e, 0, 0, 0, 0xbf]))).toEqual([[0.25, -0.5]]);
    // interleaved stereo, 16-bit: L = 0x0100 = 256, R = 0xFF00 = -256, then L = 0x8000 = -32768, R = 0x7FFF = 32767
    expect(decoded(file({ bitsPerSample: 16, audioFormat: 1, channels: 2 }, [0x00, 0x01, 0x00, 0xff, 0x00, 0x80, 0xff, 0x7f]))).toEqual([
      [256 / 32768, -1],
      [-256 / 32768, 32767 / 32768],
    ]);
  });

  it('skips an odd-sized chunk before the data and its pad byte, split anywhere', () => {
    const header = wavHeader({ sampleRate: 8000, channels: 1, bitsPerSample: 16, audioFormat: 1 }, 6);
    const ascii = (text: string) => [...text].map((c) => c.charCodeAt(0));
    // RIFF, WAVE, fmt (16 bytes), then LIST of 5 bytes + 1 pad byte (RIFF chunks are word-aligned), then data
    const list = [...ascii('LIST'), 5, 0, 0, 0, ...ascii('INFOx'), 0xaa];
    const data = [0xe8, 0x03, 0x18, 0xfc, 0xff, 0x7f]; // 1000, -1000, 32767
    const bytes = Uint8Array.from([...header.subarray(0, 36), ...list, ...header.subarray(36), ...data]);
    new DataView(bytes.buffer).setUint32(4, bytes.length - 8, true);
    const expected = [1000 / 32768, -1000 / 32768, 32767 / 32768];
    expect(decoded(bytes)).toEqual([expected]);
    // control: the same file with the pad byte dropped from the walk is not read (the walk lands on "\xaaLIS"...)
    const unpadded = Uint8Array.from([...bytes.subarray(0, 36 + 13), ...bytes.subarray(36 + 14)]);
    expect(createWavStreamDecoder().feed(unpadded)).toBeUndefined();
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 12 }), { maxLength: 40 }), (cuts) => {
        const decoder = createWavStreamDecoder();
        const samples: number[] = [];
        let at = 0;
        for (const cut of [...cuts, bytes.length]) {
          const end = Math.min(bytes.length, at + cut);
          const out = decoder.feed(bytes.subarray(at, end));
          if (out) samples.push(...out.channels[0]!);
          at = end;
          if (at >= bytes.length) break;
        }
        expect(samples).toEqual(expected);
      }),
    );
  });
});

function label(event: PlaybackEvent): string {
  switch (event.type) {
    case 'segmentScheduled':
      return `scheduled ${event.segment_id} @${round(event.startTime)}`;
    case 'segmentPlaying':
      return `playing ${event.segment_id} @${round(event.time)}`;
    case 'word':
      return `word ${event.word} @${round(event.time)}`;
    case 'segmentPlayed':
      return `played ${event.segment_id} @${round(event.time)}`;
    case 'segmentSkipped':
      return `skipped ${event.segment_id}`;
    case 'ended':
      return `ended @${round(event.time)}`;
  }
}
const round = (t: number): number => Math.round(t * 1e6) / 1e6;

describe('toWebAudio reports what was heard (onHeard)', () => {
  const speech = (ts: TestScheduler) =>
    ts.createColdObservable<LiveSpeechEvent>('s a d e f g h |', {
      s: { type: 'segmentStart', segment_id: 0, text: 'One two three.', word_timestamps: words(0, 0.1, 0.3) },
      a: { type: 'audio', segment_id: 0, bytes: wav(0.4, 1).bytes },
      d: { type: 'segmentDone', segment_id: 0 },
      e: { type: 'segmentStart', segment_id: 1, text: ' Four.', word_timestamps: words(0.1) },
      f: { type: 'audio', segment_id: 1, bytes: wav(0.2, 2).bytes },
      g: { type: 'segmentDone', segment_id: 1 },
      h: { type: 'done' },
    });

  it('on barge-in: the words whose audio had played on the audio clock', () => {
    const ts = testScheduler();
    ts.run(() => {
      const context = new FakeContext(() => ts.now() / 1000);
      const reports: unknown[] = [];
      const playing = speech(ts).pipe(toWebAudio({ context, scheduler: ts, onHeard: (r) => reports.push(r) })).subscribe();
      // audio from 51 ms; at 301 ms, 0.25 s has played: w0 (ends 0.05) and w1 (ends 0.15), not w2 (ends 0.35)
      ts.schedule(() => playing.unsubscribe(), 301);
      ts.flush();
      expect(reports).toEqual([{ heard: 'One two', unheard: ' three. Four.', playedSeconds: expect.closeTo(0.25, 9), complete: false, method: 'timestamps' }]);
    });
  });

  it('on barge-in in a later sentence: each earlier buffer counts its own length only, not the time since it started', () => {
    const ts = testScheduler();
    ts.run(() => {
      const context = new FakeContext(() => ts.now() / 1000);
      const reports: unknown[] = [];
      const playing = speech(ts).pipe(toWebAudio({ context, scheduler: ts, onHeard: (r) => reports.push(r) })).subscribe();
      // the first sentence (0.4 s) from 51 ms, the second right after it: at 501 ms, 0.4 + 0.05 s have played
      ts.schedule(() => playing.unsubscribe(), 501);
      ts.flush();
      expect(reports).toEqual([{ heard: 'One two three. ', unheard: 'Four.', playedSeconds: expect.closeTo(0.45, 9), complete: false, method: 'timestamps' }]);
    });
  });

  it('barge-in between sentences, all that arrived played but the speech not over: not complete (control: over, complete)', () => {
    const run = (marbles: string): Array<{ complete: boolean; heard: string; unheard: string }> => {
      const ts = testScheduler();
      const reports: Array<{ complete: boolean; heard: string; unheard: string }> = [];
      ts.run(({ cold }) => {
        const context = new FakeContext(() => ts.now() / 1000);
        const speech = cold<LiveSpeechEvent>(marbles, {
          s: { type: 'segmentStart', segment_id: 0, text: 'One.', word_timestamps: words(0) },
          a: { type: 'audio', segment_id: 0, bytes: wav(0.2).bytes },
          d: { type: 'segmentDone', segment_id: 0 },
        });
        const playing = speech.pipe(toWebAudio({ context, scheduler: ts, onHeard: (r) => reports.push(r) })).subscribe();
        // the segment plays from 51 ms to 251 ms; at 400 ms the listener interrupts (if still playing)
        ts.schedule(() => playing.unsubscribe(), 400);
        ts.flush();
      });
      return reports;
    };
    // the session is still open (more text may come): everything so far heard, yet not complete
    expect(run('s a d')).toEqual([expect.objectContaining({ heard: 'One.', unheard: '', complete: false })]);
    // control: the same audio with the speech over is complete
    expect(run('s a d |')).toEqual([expect.objectContaining({ heard: 'One.', unheard: '', complete: true })]);
  });

  it('barge-in after the speech is over, its words all spoken but its audio still playing: not complete (control: played out, complete)', () => {
    const run = (at: number) => {
      const ts = testScheduler();
      const reports: Array<{ complete: boolean; heard: string }> = [];
      ts.run(({ cold }) => {
        const context = new FakeContext(() => ts.now() / 1000);
        // the word ends at 0.05 s; the audio goes on to 0.4 s
        const speech = cold<LiveSpeechEvent>('s a d |', {
          s: { type: 'segmentStart', segment_id: 0, text: 'One.', word_timestamps: words(0) },
          a: { type: 'audio', segment_id: 0, bytes: wav(0.4).bytes },
          d: { type: 'segmentDone', segment_id: 0 },
        });
        const playing = speech.pipe(toWebAudio({ context, scheduler: ts, onHeard: (r) => reports.push(r) })).subscribe();
        ts.schedule(() => playing.unsubscribe(), at);
        ts.flush();
      });
      return reports;
    };
    expect(run(250)).toEqual([expect.objectContaining({ heard: 'One.', unheard: '', complete: false })]);
    expect(run(1000)).toEqual([expect.objectContaining({ heard: 'One.', unheard: '', complete: true })]);
  });

  it('at the end: everything heard, reported once; a bad onHeard throws at once', () => {
    const ts = testScheduler();
    ts.run(() => {
      const context = new FakeContext(() => ts.now() / 1000);
      const reports: Array<{ complete: boolean; heard: string }> = [];
      speech(ts).pipe(toWebAudio({ context, scheduler: ts, onHeard: (r) => reports.push(r) })).subscribe();
      ts.flush();
      expect(reports).toEqual([expect.objectContaining({ heard: 'One two three. Four.', unheard: '', complete: true })]);
    });
    expect(() => toWebAudio({ onHeard: 'no' as never })).toThrow(/onHeard/);
  });
});
