import { describe, expect, it } from 'vitest';
import { Observable, type SchedulerLike } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { encodeWav16 } from '../../src/audio/wav.js';
import { streamingWavHeader } from '../../src/audio/pcm.js';
import type { HeardInput, HeardReport, SpokenSegment } from '../../src/live/index.js';
import { twilioMediaStream, type CallPlaybackEvent, type CallSocketLike } from '../../src/telephony/index.js';

type Listener = (event: unknown) => void;

/** A socket in virtual time: what the adapter sends, with the virtual time it was sent at. */
function fakeSocket(now: () => number) {
  const listeners = new Map<string, Set<Listener>>();
  const sent: Array<{ at: number; event: string; streamSid?: string | undefined; bytes?: number; name?: string; payload?: Uint8Array }> = [];
  const closes: Array<{ at: number; code: number | undefined }> = [];
  const socket: CallSocketLike & { receive(message: unknown): void; readyState: number; listeners(): number } = {
    readyState: 1,
    send(data) {
      const message = JSON.parse(data) as { event: string; streamSid?: string; media?: { payload: string }; mark?: { name: string } };
      sent.push({
        at: now(),
        event: message.event,
        streamSid: message.streamSid,
        ...(message.media ? { bytes: Buffer.from(message.media.payload, 'base64').length, payload: new Uint8Array(Buffer.from(message.media.payload, 'base64')) } : {}),
        ...(message.mark ? { name: message.mark.name } : {}),
      });
    },
    close(code) {
      closes.push({ at: now(), code });
    },
    addEventListener(type, listener) {
      (listeners.get(type) ?? listeners.set(type, new Set()).get(type)!).add(listener);
    },
    removeEventListener(type, listener) {
      listeners.get(type)?.delete(listener);
    },
    receive(message) {
      for (const listener of listeners.get('message') ?? []) listener({ data: message instanceof Uint8Array ? message : JSON.stringify(message) });
    },
    listeners() {
      return [...listeners.values()].reduce((n, set) => n + set.size, 0);
    },
  };
  return { socket, sent, closes };
}

const START = { event: 'start', streamSid: 'MZ1', start: { mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 } } };

function segment(segment_id: number, text: string, samples: number, rate = 8000): SpokenSegment {
  return { segment_id, text, word_timestamps: [], audio: encodeWav16(new Int16Array(samples).fill(1000), rate), format: 'wav' };
}

/** A segment's events as the live session streams them: start, its WAV (`samples` of 1000 at 8 kHz), its end. */
function streamed(samples: number): Record<string, HeardInput> {
  return {
    s: { type: 'segmentStart', segment_id: 0, text: 'One.' },
    a: { type: 'audio', segment_id: 0, bytes: encodeWav16(new Int16Array(samples).fill(1000), 8000) },
    d: { type: 'segmentDone', segment_id: 0 },
  };
}

/** The start of a WAV stream of unknown length (data size 0xFFFFFFFF): `samples` at 8 kHz, more may follow as raw data. */
function openWav(samples: number): Uint8Array {
  const pcm = new Int16Array(samples).fill(1000);
  return Uint8Array.from([...streamingWavHeader({ sampleRate: 8000, channels: 1, bitsPerSample: 16, audioFormat: 1 }), ...new Uint8Array(pcm.buffer)]);
}

const newScheduler = () => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

describe('twilioMediaStream pacing (virtual time)', () => {
  it('sends one 160-byte frame every 20 ms, the last padded, and a mark right after each sentence', () => {
    const scheduler = newScheduler();
    scheduler.run(({ cold, flush }) => {
      const { socket, sent } = fakeSocket(() => scheduler.now());
      const call = twilioMediaStream(socket, { scheduler });
      socket.receive(START);
      // 50 ms then 40 ms of audio: 3 frames (the last padded) and 2 frames
      call.say(cold('a-b|', { a: segment(0, 'One.', 400), b: segment(1, ' Two.', 320) })).subscribe();
      flush();
      expect(sent.map(({ at, event, bytes }) => [at, event, bytes])).toEqual([
        [0, 'media', 160],
        [20, 'media', 160],
        [40, 'media', 160],
        [40, 'mark', undefined],
        [60, 'media', 160],
        [80, 'media', 160],
        [80, 'mark', undefined],
      ]);
    });
  });

  it('waits for the start message, resamples other rates to 8 kHz, and ends when the marks come back', () => {
    const scheduler = newScheduler();
    scheduler.run(({ cold, flush }) => {
      const { socket, sent } = fakeSocket(() => scheduler.now());
      const call = twilioMediaStream(socket, { scheduler });
      const events: CallPlaybackEvent[] = [];
      // 100 ms at 22.05 kHz: 800 samples at 8 kHz, 5 frames
      call.say(cold('a|', { a: segment(0, 'Hello there.', 2205, 22050) })).subscribe((e) => events.push(e));
      scheduler.schedule(() => socket.receive(START), 30);
      scheduler.schedule(() => socket.receive({ event: 'mark', streamSid: 'MZ1', mark: { name: sent.find((s) => s.event === 'mark')!.name } }), 200);
      flush();
      expect(sent.filter((s) => s.event === 'media').map((s) => s.at)).toEqual([30, 50, 70, 90, 110]);
      expect(events.map((e) => e.type)).toEqual(['segmentSent', 'segmentPlayed', 'heard']);
      expect(events.at(-1)).toMatchObject({ reason: 'ended', report: { heard: 'Hello there.', complete: true, playedSeconds: 0.1 } });
    });
  });

  it('speech that fails after a sentence arrived (credits gone): the sentence plays to its end, its mark comes back, then the error (control: completed, ended)', () => {
    for (const fails of [true, false]) {
      const scheduler = newScheduler();
      scheduler.run(({ cold, flush }) => {
        const { socket, sent } = fakeSocket(() => scheduler.now());
        const events: CallPlaybackEvent[] = [];
        let failure: unknown;
        const out = new Error('credits exhausted');
        const call = twilioMediaStream(socket, { scheduler });
        socket.receive(START);
        // 100 ms at 8 kHz: 5 frames, then the speech fails (or completes) at 40 ms
        call.say(cold(fails ? 'a-#' : 'a-|', { a: segment(0, 'Hello there.', 800) }, out)).subscribe({ next: (e) => events.push(e), error: (e: unknown) => (failure = e) });
        scheduler.schedule(() => socket.receive({ event: 'mark', streamSid: 'MZ1', mark: { name: sent.find((s) => s.event === 'mark')!.name } }), 200);
        flush();
        expect(sent.filter((s) => s.event === 'media').map((s) => s.at)).toEqual([0, 20, 40, 60, 80]);
        expect(sent.filter((s) => s.event === 'clear')).toEqual([]);
        expect(events.map((e) => e.type)).toEqual(['segmentSent', 'segmentPlayed', 'heard']);
        expect(events.at(-1)).toMatchObject({ reason: fails ? 'error' : 'ended', report: { heard: 'Hello there.', complete: !fails } });
        expect(failure).toBe(fails ? out : undefined);
      });
    }
  });

  it('interrupt: clear at once, no frame after it, the report cut where the frames stopped', () => {
    const scheduler = newScheduler();
    scheduler.run(({ cold, flush }) => {
      const { socket, sent } = fakeSocket(() => scheduler.now());
      const reports: unknown[] = [];
      const call = twilioMediaStream(socket, { scheduler, onHeard: (r) => reports.push(r) });
      socket.receive(START);
      const seg: SpokenSegment = { ...segment(0, 'aa bb cc dd', 800), word_timestamps: [
        { word: 'aa', start: 0, end: 0.02 },
        { word: 'bb', start: 0.02, end: 0.045 },
        { word: 'cc', start: 0.05, end: 0.07 },
        { word: 'dd', start: 0.07, end: 0.1 },
      ] };
      call.say(cold('a|', { a: seg })).subscribe();
      scheduler.schedule(() => call.interrupt(), 50); // frames at 0, 20, 40 sent: 60 ms
      flush();
      expect(sent.map((s) => [s.at, s.event])).toEqual([
        [0, 'media'],
        [20, 'media'],
        [40, 'media'],
        [50, 'clear'],
      ]);
      expect(reports).toEqual([{ heard: 'aa bb', unheard: ' cc dd', playedSeconds: 0.06, complete: false, method: 'timestamps' }]);
    });
  });

  it("interrupt before the call's start: nothing sent (no clear naming no stream), the report says nothing was heard; after a start (control) the clear names the stream", () => {
    for (const started of [false, true]) {
      const scheduler = newScheduler();
      scheduler.run(({ cold, flush }) => {
        const { socket, sent } = fakeSocket(() => scheduler.now());
        const reports: Array<{ heard: string; playedSeconds: number }> = [];
        const call = twilioMediaStream(socket, { scheduler, onHeard: (r) => reports.push(r) });
        call.say(cold('a|', { a: segment(0, 'aa bb', 800) })).subscribe();
        if (started) scheduler.schedule(() => socket.receive(START), 10);
        scheduler.schedule(() => call.interrupt(), 15);
        flush();
        expect(sent.map((s) => [s.at, s.event, s.streamSid])).toEqual(started ? [[10, 'media', 'MZ1'], [15, 'clear', 'MZ1']] : []);
        expect(reports).toMatchObject([{ heard: '', playedSeconds: started ? 0.02 : 0 }]);
      });
    }
  });

  it('timers that fire late do not slow the speech down: frames stay on the 20 ms grid on average (control: timers on time)', () => {
    for (const lateMs of [3, 0]) {
      const scheduler = newScheduler();
      scheduler.run(({ cold, flush }) => {
        // every timer of the adapter fires `lateMs` after it was due, as on a busy event loop
        const late: SchedulerLike = { now: () => scheduler.now(), schedule: (work, delay, state) => scheduler.schedule(work as never, (delay ?? 0) + lateMs, state) };
        const { socket, sent } = fakeSocket(() => scheduler.now());
        const call = twilioMediaStream(socket, { scheduler: late });
        socket.receive(START);
        call.say(cold('a|', { a: segment(0, 'One two three.', 1600) })).subscribe(); // 10 frames
        flush();
        const times = sent.filter((s) => s.event === 'media').map((s) => s.at);
        expect(times).toHaveLength(10);
        // the first at once, each next one `lateMs` after its place on the grid, none later
        expect(times).toEqual(times.map((_, i) => (i === 0 ? 0 : i * 20 + lateMs)));
      });
    }
  });

  it('unsubscribing is an interruption too (clear and the report), and leaves no timer', () => {
    const scheduler = newScheduler();
    scheduler.run(({ cold, flush }) => {
      const { socket, sent } = fakeSocket(() => scheduler.now());
      const reports: unknown[] = [];
      const call = twilioMediaStream(socket, { scheduler, onHeard: (r) => reports.push(r) });
      socket.receive(START);
      const playing = call.say(cold('a|', { a: segment(0, 'One two.', 800) })).subscribe();
      scheduler.schedule(() => playing.unsubscribe(), 30);
      flush();
      expect(sent.map((s) => s.event)).toEqual(['media', 'media', 'clear']);
      expect(reports).toHaveLength(1);
      call.close();
    });
  });

  it('after a pause in the speech, frames start again at real time from when it resumed (no burst to catch up)', () => {
    const scheduler = newScheduler();
    scheduler.run(({ cold, flush }) => {
      const { socket, sent } = fakeSocket(() => scheduler.now());
      const call = twilioMediaStream(socket, { scheduler });
      socket.receive(START);
      // 40 ms of audio, then the next sentence 200 ms later
      call.say(cold('a 199ms b|', { a: segment(0, 'One.', 320), b: segment(1, ' Two.', 480) })).subscribe();
      flush();
      expect(sent.filter((s) => s.event === 'media').map((s) => s.at)).toEqual([0, 20, 200, 220, 240]);
    });
  });

  it('the frames carry the mu-law of the speech, and the last one is padded with mu-law silence (0xFF)', () => {
    const scheduler = newScheduler();
    scheduler.run(({ cold, flush }) => {
      const { socket, sent } = fakeSocket(() => scheduler.now());
      const call = twilioMediaStream(socket, { scheduler });
      socket.receive(START);
      // 200 samples of 1000: one whole frame and 40 samples
      call.say(cold('a|', { a: segment(0, 'One.', 200) })).subscribe();
      flush();
      // G.711 mu-law of 1000 (ITU-T G.711): 1000 + bias 132 = 1132, segment 3 (1024-2047),
      // step (1132 >> 6) & 15 = 1: 0b0_011_0001 = 0x31, sent inverted: 0xCE. Zero is 0xFF.
      const frames = sent.filter((s) => s.event === 'media').map((s) => [...s.payload!]);
      expect(frames).toEqual([new Array(160).fill(0xce), [...new Array(40).fill(0xce), ...new Array(120).fill(0xff)]]);
    });
  });

  it('a mark echoed twice counts once, and the speech ends when its mark comes back, not at markTimeoutMs', () => {
    const scheduler = newScheduler();
    scheduler.run(({ cold, flush }) => {
      const { socket, sent } = fakeSocket(() => scheduler.now());
      const call = twilioMediaStream(socket, { scheduler, markTimeoutMs: 5000 });
      const events: Array<[number, string]> = [];
      socket.receive(START);
      call.say(cold('a|', { a: segment(0, 'One.', 320) })).subscribe((e) => events.push([scheduler.now(), e.type]));
      const echo = () => socket.receive({ event: 'mark', streamSid: 'MZ1', mark: { name: sent.find((s) => s.event === 'mark')!.name } });
      scheduler.schedule(echo, 100);
      scheduler.schedule(echo, 100);
      flush();
      expect(events).toEqual([
        [20, 'segmentSent'],
        [100, 'segmentPlayed'],
        [100, 'heard'],
      ]);
    });
    // control: with no echo the same speech ends markTimeoutMs after its last frame, so the time above is seen
    const control = newScheduler();
    control.run(({ cold, flush }) => {
      const { socket } = fakeSocket(() => control.now());
      const call = twilioMediaStream(socket, { scheduler: control, markTimeoutMs: 5000 });
      const events: Array<[number, string]> = [];
      socket.receive(START);
      call.say(cold('a|', { a: segment(0, 'One.', 320) })).subscribe((e) => events.push([control.now(), e.type]));
      flush();
      expect(events).toEqual([
        [20, 'segmentSent'],
        [5020, 'heard'],
      ]);
    });
  });

  it('speech that is not WAV halfway through: clear for the frames already sent, then the error', () => {
    const scheduler = newScheduler();
    scheduler.run(({ cold, flush }) => {
      const { socket, sent } = fakeSocket(() => scheduler.now());
      const call = twilioMediaStream(socket, { scheduler });
      socket.receive(START);
      const notWav: SpokenSegment = { ...segment(1, ' Two.', 0), audio: new TextEncoder().encode('ID3 this is an mp3') };
      let error: unknown;
      call.say(cold('a-b|', { a: segment(0, 'One.', 800), b: notWav })).subscribe({ error: (e: unknown) => (error = e) });
      flush();
      expect(error).toMatchObject({ reason: 'unsupported_audio' });
      expect(sent.map((s) => [s.at, s.event])).toEqual([
        [0, 'media'],
        [2, 'clear'],
      ]);
    });
  });

  it('a call that is not mono mu-law at 8 kHz: say() errors with media_format, before or after the start message', () => {
    for (const mediaFormat of [
      { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 2 },
      { encoding: 'audio/x-mulaw', sampleRate: 16000, channels: 1 },
      { encoding: 'audio/x-alaw', sampleRate: 8000, channels: 1 },
    ]) {
      const scheduler = newScheduler();
      scheduler.run(({ cold, flush }) => {
        const { socket, sent } = fakeSocket(() => scheduler.now());
        const call = twilioMediaStream(socket, { scheduler });
        const errors: unknown[] = [];
        // said before the start message: errors when it comes
        call.say(cold('a|', { a: segment(0, 'One.', 320) })).subscribe({ error: (e: unknown) => errors.push(e) });
        socket.receive({ ...START, start: { mediaFormat } });
        // said after it: errors at once
        call.say(cold('a|', { a: segment(0, 'One.', 320) })).subscribe({ error: (e: unknown) => errors.push(e) });
        flush();
        expect(errors).toMatchObject([{ reason: 'media_format' }, { reason: 'media_format' }]);
        expect(sent).toEqual([]);
      });
    }
    // control: the same call in mono mu-law at 8 kHz plays
    const scheduler = newScheduler();
    scheduler.run(({ cold, flush }) => {
      const { socket, sent } = fakeSocket(() => scheduler.now());
      const call = twilioMediaStream(socket, { scheduler });
      socket.receive({ ...START, start: { mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 } } });
      call.say(cold('a|', { a: segment(0, 'One.', 320) })).subscribe({ error: () => undefined });
      flush();
      expect(sent.filter((s) => s.event === 'media')).toHaveLength(2);
    });
  });

  it('audio of a segment other than the open one is not played', () => {
    const events: Record<string, HeardInput> = {
      s: { type: 'segmentStart', segment_id: 0, text: 'One.' },
      a: { type: 'audio', segment_id: 0, bytes: encodeWav16(new Int16Array(320).fill(1000), 8000) }, // 2 frames
      x: { type: 'audio', segment_id: 7, bytes: new Uint8Array(1600).fill(0x10) }, // 800 samples: 5 frames if played
      d: { type: 'segmentDone', segment_id: 0 },
    };
    const sentFor = (marbles: string) => {
      const scheduler = newScheduler();
      return scheduler.run(({ cold, flush }) => {
        const { socket, sent } = fakeSocket(() => scheduler.now());
        const call = twilioMediaStream(socket, { scheduler });
        socket.receive(START);
        call.say(cold(marbles, events)).subscribe();
        flush();
        return sent.map((s) => s.event);
      });
    };
    expect(sentFor('saxd|')).toEqual(['media', 'media', 'mark']);
    // control: the same bytes as audio of the open segment (a WAV stream that goes on) are played (5 frames more)
    events['a'] = { type: 'audio', segment_id: 0, bytes: openWav(320) };
    expect(sentFor('sad|')).toEqual(['media', 'media', 'mark']);
    events['x'] = { type: 'audio', segment_id: 0, bytes: new Uint8Array(1600).fill(0x10) };
    expect(sentFor('saxd|')).toEqual(['media', 'media', 'media', 'media', 'media', 'media', 'media', 'mark']);
  });

  it('a socket that is no longer open: the frame is not counted as sent, and say() errors with closed', () => {
    const scheduler = newScheduler();
    scheduler.run(({ cold, flush }) => {
      const { socket, sent } = fakeSocket(() => scheduler.now());
      const reports: HeardReport[] = [];
      const call = twilioMediaStream(socket, { scheduler, onHeard: (r) => reports.push(r) });
      socket.receive(START);
      let error: unknown;
      call.say(cold('a|', { a: segment(0, 'One two.', 800) })).subscribe({ error: (e: unknown) => (error = e) });
      scheduler.schedule(() => (socket.readyState = 2), 30); // closing, its close event not yet come
      flush();
      expect(sent.map((s) => s.at)).toEqual([0, 20]); // control: frames went while it was open
      expect(error).toMatchObject({ reason: 'closed' });
      expect(reports).toMatchObject([{ playedSeconds: 0.04, complete: false }]);
    });
  });

  it('a whole frame goes as soon as its audio arrives, not at the segment end', () => {
    const scheduler = newScheduler();
    scheduler.run(({ cold, flush }) => {
      const { socket, sent } = fakeSocket(() => scheduler.now());
      const call = twilioMediaStream(socket, { scheduler });
      socket.receive(START);
      // exactly 2 frames of audio, the segment's end 200 ms later
      call.say(cold('s a 200ms d|', streamed(320))).subscribe();
      flush();
      expect(sent.map((s) => [s.at, s.event])).toEqual([
        [1, 'media'],
        [21, 'media'],
        [202, 'mark'],
      ]);
    });
  });

  it('the end of another segment does not end the open one: its later audio still plays, one mark', () => {
    const events = { ...streamed(160), a: { type: 'audio', segment_id: 0, bytes: openWav(160) } as HeardInput, x: { type: 'segmentDone', segment_id: 7 } as HeardInput };
    const scheduler = newScheduler();
    scheduler.run(({ cold, flush }) => {
      const { socket, sent } = fakeSocket(() => scheduler.now());
      const call = twilioMediaStream(socket, { scheduler });
      socket.receive(START);
      call.say(cold('s a x b d|', { ...events, b: { type: 'audio', segment_id: 0, bytes: new Uint8Array(320).fill(0x10) } })).subscribe();
      flush();
      // 160 samples, then 160 more as raw data of the same WAV stream: 2 frames
      expect(sent.map((s) => s.event)).toEqual(['media', 'media', 'mark']);
    });
  });

  it('a reconnect ends the segment that was arriving: its last frame padded and its mark sent at once, not when the next segment starts', () => {
    const scheduler = newScheduler();
    scheduler.run(({ cold, flush }) => {
      const { socket, sent } = fakeSocket(() => scheduler.now());
      const call = twilioMediaStream(socket, { scheduler });
      socket.receive(START);
      const events = {
        ...streamed(250), // 31.25 ms: 2 frames, the second padded
        r: { type: 'reconnected', attempt: 1, session_id: 's2', run_id: 2, resent: 'One.' } as HeardInput,
        t: { type: 'segmentStart', segment_id: 0, text: 'One.' } as HeardInput,
      };
      call.say(cold('s a r 300ms t', events)).subscribe();
      flush();
      expect(sent.map((s) => [s.at, s.event])).toEqual([
        [1, 'media'],
        [21, 'media'],
        [21, 'mark'],
      ]);
    });
  });

  it('a speech stream that completes with its segment still open (no segmentDone) plays that segment to its last sample, then its mark (control: with segmentDone, the same)', () => {
    const play = (marbles: string, rate: number, samples: number) => {
      const scheduler = newScheduler();
      return scheduler.run(({ cold, flush }) => {
        const { socket, sent } = fakeSocket(() => scheduler.now());
        const events: CallPlaybackEvent[] = [];
        const call = twilioMediaStream(socket, { scheduler });
        socket.receive(START);
        const speech = {
          s: { type: 'segmentStart', segment_id: 0, text: 'One.' } as HeardInput,
          a: { type: 'audio', segment_id: 0, bytes: encodeWav16(new Int16Array(samples).fill(1000), rate) } as HeardInput,
          d: { type: 'segmentDone', segment_id: 0 } as HeardInput,
        };
        call.say(cold(marbles, speech)).subscribe((e) => events.push(e));
        scheduler.schedule(() => socket.receive({ event: 'mark', streamSid: 'MZ1', mark: { name: sent.find((x) => x.event === 'mark')?.name ?? '' } }), 500);
        flush();
        return { sent: sent.map((x) => [x.at, x.event, x.bytes]), events: events.map((e) => e.type), report: events.at(-1) };
      });
    };
    // 8 kHz, 31.25 ms: one whole frame at once, the partial one padded at the completion
    const cut = play('s a 50ms |', 8000, 250);
    expect(cut.sent).toEqual([
      [1, 'media', 160],
      [52, 'media', 160],
      [52, 'mark', undefined],
    ]);
    expect(cut.events).toEqual(['segmentSent', 'segmentPlayed', 'heard']);
    expect(cut.report).toMatchObject({ reason: 'ended', report: { heard: 'One.', complete: true } });
    expect(play('s a 50ms d|', 8000, 250).sent).toEqual([
      [1, 'media', 160],
      [52, 'media', 160],
      [52, 'mark', undefined],
    ]);
    // 16 kHz audio is held to be resampled at the segment's end: 50 ms, 3 frames, all at the completion
    const resampled = play('s a 50ms |', 16000, 800);
    expect(resampled.sent.map(([, event]) => event)).toEqual(['media', 'media', 'media', 'mark']);
    expect(resampled.sent[0]![0]).toBe(52);
    expect(resampled.report).toMatchObject({ reason: 'ended', report: { heard: 'One.', complete: true } });
  });

  it('a session ready event without output_format is played as WAV (rxvoice asks for wav); another format is refused', () => {
    const play = (config: Record<string, unknown>) => {
      const scheduler = newScheduler();
      return scheduler.run(({ cold, flush }) => {
        const { socket, sent } = fakeSocket(() => scheduler.now());
        const call = twilioMediaStream(socket, { scheduler });
        socket.receive(START);
        let error: unknown;
        const ready = { type: 'ready', session_id: 's', run_id: 1, config } as HeardInput;
        call.say(cold('r s a d|', { ...streamed(160), r: ready })).subscribe({ error: (e: unknown) => (error = e) });
        flush();
        return { events: sent.map((s) => s.event), error };
      });
    };
    expect(play({})).toEqual({ events: ['media', 'mark'], error: undefined });
    expect(play({ output_format: 'wav' })).toEqual({ events: ['media', 'mark'], error: undefined });
    expect(play({ output_format: 'mp3' })).toMatchObject({ events: ['clear'], error: { reason: 'unsupported_audio' } });
  });

  it('every message to Twilio names the stream of the start message (media, mark, clear)', () => {
    const scheduler = newScheduler();
    scheduler.run(({ cold, flush }) => {
      const { socket, sent } = fakeSocket(() => scheduler.now());
      const call = twilioMediaStream(socket, { scheduler });
      socket.receive({ ...START, streamSid: 'MZ42' });
      call.say(cold('a|', { a: segment(0, 'One.', 160) })).subscribe();
      scheduler.schedule(() => call.interrupt(), 10);
      flush();
      expect(sent.map((s) => [s.event, s.streamSid])).toEqual([
        ['media', 'MZ42'],
        ['mark', 'MZ42'],
        ['clear', 'MZ42'],
      ]);
    });
  });

  it('reads a message given as bytes (a binary frame of the same JSON)', () => {
    const scheduler = newScheduler();
    scheduler.run(() => {
      const { socket } = fakeSocket(() => scheduler.now());
      const call = twilioMediaStream(socket, { scheduler });
      socket.receive(new TextEncoder().encode(JSON.stringify(START)));
      expect(call.streamSid).toBe('MZ1');
    });
  });

  it('no start within startTimeoutMs (default 10 s): the call ends no_start and the socket is closed; a start in time cancels that', async () => {
    const scheduler = newScheduler();
    const call = scheduler.run(({ flush }) => {
      const { socket, closes } = fakeSocket(() => scheduler.now());
      const call = twilioMediaStream(socket, { scheduler });
      flush();
      expect(scheduler.now()).toBe(10_000);
      expect(closes).toEqual([{ at: 10_000, code: 1000 }]);
      expect(socket.listeners()).toBe(0); // the adapter let go of the socket
      return call;
    });
    expect(await call.ended).toEqual({ reason: 'no_start' });
    const started = newScheduler();
    started.run(({ flush }) => {
      const { socket, closes } = fakeSocket(() => started.now());
      const call = twilioMediaStream(socket, { scheduler: started });
      started.schedule(() => socket.receive(START), 9_999);
      started.schedule(() => undefined, 30_000); // the clock goes well past the timeout
      flush();
      expect(call.streamSid).toBe('MZ1');
      expect(closes).toEqual([]);
      expect(socket.listeners()).toBe(3); // still listening: the call goes on
    });
  });

  it('a socket already closed when handed over ends the call at once (closed), without waiting for a start', async () => {
    const scheduler = new TestScheduler(() => undefined);
    const { socket } = fakeSocket(() => scheduler.now());
    socket.readyState = 3;
    const call = twilioMediaStream(socket, { scheduler });
    scheduler.flush(); // control: without the check, the start timeout would end it as no_start
    expect(await call.ended).toEqual({ reason: 'closed' });
    await expect(call.started).rejects.toMatchObject({ reason: 'closed' });
  });

  it('the speech ends markTimeoutMs (default 5 s) after its last frame when no mark comes back', () => {
    const scheduler = newScheduler();
    scheduler.run(({ cold, flush }) => {
      const { socket } = fakeSocket(() => scheduler.now());
      const call = twilioMediaStream(socket, { scheduler });
      socket.receive(START);
      const events: Array<[number, string]> = [];
      call.say(cold('a|', { a: segment(0, 'One.', 320) })).subscribe((e) => events.push([scheduler.now(), e.type]));
      flush();
      expect(events).toEqual([
        [20, 'segmentSent'],
        [5020, 'heard'],
      ]);
    });
  });
});

describe('twilioMediaStream: what an interruption leaves behind', () => {
  it('nothing scheduled (no frame timer, no wait for marks) and the speech unsubscribed at once', () => {
    /** Interrupts at `at` ms (or not at all); returns the virtual time when everything had run, and when the speech was unsubscribed. */
    const run = (marbles: string, at: number | undefined) => {
      const scheduler = newScheduler();
      return scheduler.run(({ cold, flush }) => {
        const { socket } = fakeSocket(() => scheduler.now());
        const call = twilioMediaStream(socket, { scheduler });
        socket.receive(START);
        const speech = cold(marbles, { a: segment(0, 'One.', 800), b: segment(1, ' Two.', 320) });
        call.say(speech).subscribe();
        if (at !== undefined) scheduler.schedule(() => call.interrupt(), at);
        flush();
        return { idleAt: scheduler.now(), unsubscribedAt: speech.subscriptions[0]!.unsubscribedFrame };
      });
    };
    // mid-frames, a second sentence having come while a frame waited
    expect(run('a 9ms b', 50)).toEqual({ idleAt: 50, unsubscribedAt: 50 });
    // control: not interrupted, the frames run on (7 of them) and then the wait for the marks
    expect(run('a 9ms b|', undefined).idleAt).toBe(120 + 5000);
    // all frames sent, waiting for the mark: the wait is cancelled too
    expect(run('a|', 200)).toEqual({ idleAt: 200, unsubscribedAt: 1 });
  });

  it('speech that fails while being subscribed (not WAV at once) is unsubscribed, not left running', () => {
    const scheduler = newScheduler();
    scheduler.run(({ flush }) => {
      const { socket } = fakeSocket(() => scheduler.now());
      const call = twilioMediaStream(socket, { scheduler });
      socket.receive(START);
      let open = false;
      const speech = new Observable<HeardInput>((subscriber) => {
        open = true;
        subscriber.next({ ...segment(0, 'One.', 0), audio: new TextEncoder().encode('ID3 not a wav') });
        return () => (open = false);
      });
      let error: unknown;
      call.say(speech).subscribe({ error: (e: unknown) => (error = e) });
      flush();
      expect(error).toMatchObject({ reason: 'unsupported_audio' });
      expect(open).toBe(false);
    });
  });

  it('interrupted with all of the speech so far played but the speech not over: not complete (control: over, complete)', () => {
    const report = (marbles: string) => {
      const scheduler = newScheduler();
      return scheduler.run(({ cold, flush }) => {
        const { socket, sent } = fakeSocket(() => scheduler.now());
        const reports: HeardReport[] = [];
        const call = twilioMediaStream(socket, { scheduler, onHeard: (r) => reports.push(r) });
        socket.receive(START);
        call.say(cold(marbles, { a: segment(0, 'One.', 320) })).subscribe();
        scheduler.schedule(() => socket.receive({ event: 'mark', streamSid: 'MZ1', mark: { name: sent.find((s) => s.event === 'mark')!.name } }), 100);
        scheduler.schedule(() => call.interrupt(), 200);
        flush();
        return reports;
      });
    };
    expect(report('a')).toEqual([expect.objectContaining({ heard: 'One.', unheard: '', complete: false })]);
    expect(report('a|')).toEqual([expect.objectContaining({ heard: 'One.', unheard: '', complete: true })]);
  });

  it('the words of a later sentence are timed from the end of the frames before it (the padded last frame counts)', () => {
    const scheduler = newScheduler();
    scheduler.run(({ cold, flush }) => {
      const { socket } = fakeSocket(() => scheduler.now());
      const reports: HeardReport[] = [];
      const call = twilioMediaStream(socket, { scheduler, onHeard: (r) => reports.push(r) });
      socket.receive(START);
      // 50 ms of audio: 3 frames, 60 ms on the call
      const first = segment(0, 'One.', 400);
      const second: SpokenSegment = { ...segment(1, ' aa bb cc', 800), word_timestamps: [
        { word: 'aa', start: 0, end: 0.015 },
        { word: 'bb', start: 0.015, end: 0.025 },
        { word: 'cc', start: 0.025, end: 0.1 },
      ] };
      call.say(cold('(ab|)', { a: first, b: second })).subscribe();
      // frames at 0, 20, 40 (One.), 60 (the second's first): 80 ms sent, 20 ms of the second
      scheduler.schedule(() => call.interrupt(), 70);
      flush();
      // with the second sentence timed from 50 ms (the WAV's length), 'bb' would count as heard
      expect(reports).toMatchObject([{ heard: 'One. aa', playedSeconds: 0.08 }]);
    });
  });
});
