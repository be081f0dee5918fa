import { describe, expect, it } from 'vitest';
import { TestScheduler } from 'rxjs/testing';
import { encodeWav16 } from '../../src/audio/wav.js';
import type { SpokenSegment } from '../../src/live/index.js';
import { twilioMediaStream, type CallPlaybackEvent, type CallSocketLike } from '../../src/telephony/index.js';

type Listener = (event: unknown) => void;

/** A socket in virtual time: what the adapter sends, with the virtual time it was sent at. */
function fakeSocket(now: () => number) {
  const listeners = new Map<string, Set<Listener>>();
  const sent: Array<{ at: number; event: string; bytes?: number; name?: string }> = [];
  const socket: CallSocketLike & { receive(message: unknown): void } = {
    readyState: 1,
    send(data) {
      const message = JSON.parse(data) as { event: string; media?: { payload: string }; mark?: { name: string } };
      sent.push({
        at: now(),
        event: message.event,
        ...(message.media ? { bytes: Buffer.from(message.media.payload, 'base64').length } : {}),
        ...(message.mark ? { name: message.mark.name } : {}),
      });
    },
    close() {},
    addEventListener(type, listener) {
      (listeners.get(type) ?? listeners.set(type, new Set()).get(type)!).add(listener);
    },
    removeEventListener(type, listener) {
      listeners.get(type)?.delete(listener);
    },
    receive(message) {
      for (const listener of listeners.get('message') ?? []) listener({ data: JSON.stringify(message) });
    },
  };
  return { socket, sent };
}

const START = { event: 'start', streamSid: 'MZ1', start: { mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 } } };

function segment(segment_id: number, text: string, samples: number, rate = 8000): SpokenSegment {
  return { segment_id, text, word_timestamps: [], audio: encodeWav16(new Int16Array(samples).fill(1000), rate), format: 'wav' };
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
});
