import { describe, expect, it } from 'vitest';
import { TestScheduler } from 'rxjs/testing';
import { segmentDuration, wordTimeline, wordsHeardBy, type TimelineWord } from '../../src/operators/wordTimeline.js';
import type { SpokenSegment } from '../../src/live/events.js';
import { encodeWav16, wavHeader } from '../../src/audio/wav.js';

const newScheduler = () => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

const RATE = 1000;
/** A WAV segment of `seconds` of silence at 1000 Hz, 16-bit mono. */
function wavSegment(segment_id: number, seconds: number, words: [string, number, number][]): SpokenSegment {
  return {
    segment_id,
    text: words.map((w) => w[0]).join(' '),
    word_timestamps: words.map(([word, start, end]) => ({ word, start, end })),
    audio: encodeWav16(new Int16Array(Math.round(seconds * RATE)), RATE),
    format: 'wav',
  };
}

const A = wavSegment(0, 0.5, [
  ['Hello', 0, 0.25],
  ['there', 0.25, 0.5],
]);
const B = wavSegment(1, 0.25, [['friend', 0.05, 0.2]]);
const C = wavSegment(2, 1, []);
const E = wavSegment(3, 0.25, [['again', 0, 0.25]]);

const w = (segment_id: number, word: string, start: number, end: number, index: number): TimelineWord => ({
  segment_id,
  word,
  start,
  end,
  index,
});

describe('segmentDuration', () => {
  it('measures WAV audio from its data size and byte rate', () => {
    expect(segmentDuration(A)).toBeCloseTo(0.5, 9);
    expect(segmentDuration(C)).toBeCloseTo(1, 9);
  });

  it('uses the bytes present when the header holds a streaming placeholder size', () => {
    const header = wavHeader({ sampleRate: RATE, channels: 1, bitsPerSample: 16, audioFormat: 1 }, 0xffffffff);
    const audio = new Uint8Array(header.byteLength + 2 * 300);
    audio.set(header);
    expect(segmentDuration({ ...A, audio })).toBeCloseTo(0.3, 9);
  });

  /** A WAV of 16-bit mono at RATE whose header declares `declared` data bytes, followed by `present` bytes. */
  function wavDeclaring(declared: number, present: number, sampleRate = RATE): Uint8Array {
    const header = wavHeader({ sampleRate, channels: 1, bitsPerSample: 16, audioFormat: 1 }, declared);
    const audio = new Uint8Array(header.byteLength + present);
    audio.set(header);
    return audio;
  }

  it('uses the bytes present when the header declares 0 bytes, or more than are present', () => {
    expect(segmentDuration({ ...A, audio: wavDeclaring(0, 2 * 300) })).toBeCloseTo(0.3, 9);
    // a cut file: 600 bytes declared, 200 present
    expect(segmentDuration({ ...A, audio: wavDeclaring(2 * 300, 2 * 100) })).toBeCloseTo(0.1, 9);
  });

  it('uses the declared size when bytes follow the data chunk (a trailing chunk is no audio)', () => {
    expect(segmentDuration({ ...A, audio: wavDeclaring(2 * 100, 2 * 300) })).toBeCloseTo(0.1, 9);
  });

  it('a WAV header with a zero byte rate falls back to the last word end', () => {
    expect(segmentDuration({ ...A, audio: wavDeclaring(2 * 300, 2 * 300, 0) })).toBe(0.5);
  });

  it('falls back to the last word end for other formats', () => {
    expect(segmentDuration({ ...A, audio: new Uint8Array([0xff, 0xfb, 1, 2]), format: 'mp3' })).toBe(0.5);
    expect(segmentDuration({ ...C, audio: new Uint8Array(0), format: 'mp3' })).toBe(0);
  });
});

describe('wordTimeline', () => {
  it('never emits for a silent source', () => {
    newScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold<SpokenSegment>('-');
      expectObservable(source.pipe(wordTimeline())).toBe('-');
      expectSubscriptions(source.subscriptions).toBe('^');
    });
  });

  it('completes on empty', () => {
    newScheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold<SpokenSegment>('|').pipe(wordTimeline())).toBe('|');
    });
  });

  it('one segment: words at their relative times', () => {
    newScheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('a---|', { a: A }).pipe(wordTimeline())).toBe('(xy)|', {
        x: w(0, 'Hello', 0, 0.25, 0),
        y: w(0, 'there', 0.25, 0.5, 1),
      });
    });
  });

  it('many segments: each shifted by the audio duration of those before it', () => {
    newScheduler().run(({ cold, expectObservable }) => {
      const source = cold('a---b-c-e-|', { a: A, b: B, c: C, e: E });
      expectObservable(source.pipe(wordTimeline())).toBe('(xy)z---q-|', {
        x: w(0, 'Hello', 0, 0.25, 0),
        y: w(0, 'there', 0.25, 0.5, 1),
        z: w(1, 'friend', 0.55, 0.7, 2),
        // A 0.5 + B 0.25 + C 1 (no words, still moves the clock)
        q: w(3, 'again', 1.75, 2, 3),
      });
    });
  });

  it('takes a custom duration', () => {
    newScheduler().run(({ cold, expectObservable }) => {
      const source = cold('a---b|', { a: A, b: B });
      expectObservable(source.pipe(wordTimeline({ durationOf: () => 10 }))).toBe('(xy)z|', {
        x: w(0, 'Hello', 0, 0.25, 0),
        y: w(0, 'there', 0.25, 0.5, 1),
        z: w(1, 'friend', 10 + 0.05, 10 + 0.2, 2),
      });
    });
  });

  it('a durationOf returning undefined falls back to segmentDuration', () => {
    newScheduler().run(({ cold, expectObservable }) => {
      const source = cold('a---b|', { a: A, b: B });
      expectObservable(source.pipe(wordTimeline({ durationOf: () => undefined }))).toBe('(xy)z|', {
        x: w(0, 'Hello', 0, 0.25, 0),
        y: w(0, 'there', 0.25, 0.5, 1),
        z: w(1, 'friend', 0.5 + 0.05, 0.5 + 0.2, 2),
      });
    });
  });

  it('passes errors through', () => {
    newScheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('b-#', { b: B }, new Error('x')).pipe(wordTimeline())).toBe('z-#', { z: w(1, 'friend', 0.05, 0.2, 0) }, new Error('x'));
    });
  });

  it('a throwing durationOf errors the output', () => {
    newScheduler().run(({ cold, expectObservable }) => {
      const source = cold('b-b|', { b: B });
      const op = wordTimeline({
        durationOf: () => {
          throw new Error('bad');
        },
      });
      expectObservable(source.pipe(op)).toBe('#', undefined, new Error('bad'));
    });
  });

  it('unsubscribes early', () => {
    newScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('b---b---b|', { b: B });
      expectObservable(source.pipe(wordTimeline()), '^-----!').toBe('z---y-', {
        z: w(1, 'friend', 0.05, 0.2, 0),
        y: w(1, 'friend', 0.3, 0.45, 1),
      });
      expectSubscriptions(source.subscriptions).toBe('^-----!');
    });
  });

  it('state is per subscription', () => {
    newScheduler().run(({ cold, expectObservable }) => {
      const op = wordTimeline();
      const source = cold('b|', { b: B });
      expectObservable(source.pipe(op)).toBe('z|', { z: w(1, 'friend', 0.05, 0.2, 0) });
      expectObservable(source.pipe(op)).toBe('z|', { z: w(1, 'friend', 0.05, 0.2, 0) });
    });
  });
});

describe('wordsHeardBy', () => {
  const timeline = [w(0, 'Hello', 0, 0.25, 0), w(0, 'there', 0.25, 0.5, 1), w(1, 'friend', 0.55, 0.7, 2)];
  it('returns the words that ended by then', () => {
    expect(wordsHeardBy(timeline, 0).map((x) => x.word)).toEqual([]);
    expect(wordsHeardBy(timeline, 0.5).map((x) => x.word)).toEqual(['Hello', 'there']);
    expect(wordsHeardBy(timeline, 0.6).map((x) => x.word)).toEqual(['Hello', 'there']);
    expect(wordsHeardBy(timeline, 9).map((x) => x.word)).toEqual(['Hello', 'there', 'friend']);
  });
  it('with partial: also the word being spoken', () => {
    expect(wordsHeardBy(timeline, 0.6, { partial: true }).map((x) => x.word)).toEqual(['Hello', 'there', 'friend']);
    // a word starting at that very moment is not being spoken yet
    expect(wordsHeardBy(timeline, 0.55, { partial: true }).map((x) => x.word)).toEqual(['Hello', 'there']);
  });
});
