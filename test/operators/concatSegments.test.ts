import { describe, expect, it } from 'vitest';
import { from } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { concatSegments, DEFAULT_MAX_SEGMENT_BYTES } from '../../src/operators/concatSegments.js';
import { LimitExceededError, ValidationError } from '../../src/core/errors.js';
import type { LiveSpeechEvent, SpokenSegment } from '../../src/live/events.js';

const newScheduler = () => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
const bytes = (...values: number[]) => new Uint8Array(values);

const e: Record<string, LiveSpeechEvent> = {
  r: { type: 'ready', session_id: 's', run_id: 1, config: { output_format: 'wav' } },
  s: { type: 'segmentStart', segment_id: 0, text: 'Hello. ', word_timestamps: [{ word: 'Hello', start: 0, end: 0.5 }] },
  a: { type: 'audio', segment_id: 0, bytes: bytes(1, 2) },
  b: { type: 'audio', segment_id: 0, bytes: bytes(3) },
  d: { type: 'segmentDone', segment_id: 0 },
  t: { type: 'segmentStart', segment_id: 1, text: 'World.' },
  c: { type: 'audio', segment_id: 1, bytes: bytes(9, 9) },
  f: { type: 'segmentDone', segment_id: 1 },
  k: { type: 'segmentSkipped', segment_id: 1, text: 'World.' },
  x: { type: 'reconnected', attempt: 1, session_id: 's2', run_id: 2, resent: 'World.' },
  u: { type: 'segmentStart', segment_id: 2, text: 'World.' },
  v: { type: 'audio', segment_id: 2, bytes: bytes(7) },
  w: { type: 'segmentDone', segment_id: 2 },
  D: { type: 'done' },
};

const seg0: SpokenSegment = {
  segment_id: 0,
  text: 'Hello. ',
  word_timestamps: [{ word: 'Hello', start: 0, end: 0.5 }],
  audio: bytes(1, 2, 3),
  format: 'wav',
};
const seg1: SpokenSegment = { segment_id: 1, text: 'World.', word_timestamps: [], audio: bytes(9, 9), format: 'wav' };

describe('concatSegments', () => {
  it('never emits for a never-ending silent source', () => {
    newScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold<LiveSpeechEvent>('-');
      expectObservable(source.pipe(concatSegments())).toBe('-');
      expectSubscriptions(source.subscriptions).toBe('^');
    });
  });

  it('completes on an empty source', () => {
    newScheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold<LiveSpeechEvent>('|').pipe(concatSegments())).toBe('|');
    });
  });

  it('emits one segment at segmentDone with its audio joined once', () => {
    newScheduler().run(({ cold, expectObservable }) => {
      const source = cold('r-s-a-b-d-D|', e);
      expectObservable(source.pipe(concatSegments())).toBe('--------S--|', { S: seg0 });
    });
  });

  it('an output_format the client does not know leaves format undefined (control: a known one is named)', () => {
    newScheduler().run(({ cold, expectObservable }) => {
      const readyWith = (output_format: unknown): LiveSpeechEvent => ({ type: 'ready', session_id: 's', run_id: 1, config: { output_format } });
      const events = (output_format: unknown) => ({ ...e, r: readyWith(output_format) });
      expectObservable(cold('r-s-a-b-d|', events('opus')).pipe(concatSegments())).toBe('--------S|', { S: { ...seg0, format: undefined } });
      expectObservable(cold('r-s-a-b-d|', events('mp3')).pipe(concatSegments())).toBe('--------S|', { S: { ...seg0, format: 'mp3' } });
    });
  });

  it('emits many segments in order, with format from the ready event', () => {
    newScheduler().run(({ cold, expectObservable }) => {
      const source = cold('r-s-a-b-d-t-c-f-D|', e);
      expectObservable(source.pipe(concatSegments())).toBe('--------S-----T--|', { S: seg0, T: seg1 });
    });
  });

  it('format is undefined without a ready event', () => {
    newScheduler().run(({ cold, expectObservable }) => {
      const source = cold('t-c-f|', e);
      expectObservable(source.pipe(concatSegments())).toBe('----T|', { T: { ...seg1, format: undefined } });
    });
  });

  it('skipped segments emit nothing', () => {
    newScheduler().run(({ cold, expectObservable }) => {
      const source = cold('r-s-a-d-k-D|', e);
      expectObservable(source.pipe(concatSegments())).toBe('------S----|', { S: { ...seg0, audio: bytes(1, 2) } });
    });
  });

  it('drops the partial segment abandoned by a reconnect', () => {
    newScheduler().run(({ cold, expectObservable }) => {
      const source = cold('r-t-c-x-u-v-w|', e);
      expectObservable(source.pipe(concatSegments())).toBe('------------U|', {
        U: { segment_id: 2, text: 'World.', word_timestamps: [], audio: bytes(7), format: 'wav' },
      });
    });
  });

  it('audio and segmentDone after a reconnect or a skip, with no new segmentStart, emit nothing', () => {
    newScheduler().run(({ cold, expectObservable }) => {
      // control: the same events without the reconnect (x) or the skip (k) emit segment 1
      expectObservable(cold('r-t-c-c-f|', e).pipe(concatSegments())).toBe('--------T|', { T: { ...seg1, audio: bytes(9, 9, 9, 9) } });
      expectObservable(cold('r-t-c-x-c-f|', e).pipe(concatSegments())).toBe('-----------|');
      expectObservable(cold('r-t-c-k-c-f|', e).pipe(concatSegments())).toBe('-----------|');
    });
  });

  it('audio and segmentDone of another segment than the pending one are not taken', () => {
    newScheduler().run(({ cold, expectObservable }) => {
      // audio of segment 1 (c) while segment 0 is pending is not part of segment 0
      expectObservable(cold('r-s-c-a-d|', e).pipe(concatSegments())).toBe('--------S|', { S: { ...seg0, audio: bytes(1, 2) } });
      // the segmentDone of segment 1 (f) does not end segment 0, and drops it
      expectObservable(cold('r-s-a-f-d|', e).pipe(concatSegments())).toBe('---------|');
    });
  });

  it('drops a partial segment on error and passes the error on', () => {
    newScheduler().run(({ cold, expectObservable }) => {
      const source = cold('r-s-a-d-t-c-#', e, new Error('boom'));
      expectObservable(source.pipe(concatSegments())).toBe('------S-----#', { S: { ...seg0, audio: bytes(1, 2) } }, new Error('boom'));
    });
  });

  it('drops a partial segment on completion', () => {
    newScheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('r-s-a|', e).pipe(concatSegments())).toBe('-----|');
    });
  });

  it('unsubscribes early from the source', () => {
    newScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('r-s-a-b-d-t-c-f-D|', e);
      expectObservable(source.pipe(concatSegments()), '^--------!').toBe('--------S', { S: seg0 });
      expectSubscriptions(source.subscriptions).toBe('^--------!');
    });
  });

  it('state is per subscription', () => {
    newScheduler().run(({ cold, expectObservable }) => {
      const op = concatSegments();
      const source = cold('r-s-a-b-d|', e);
      expectObservable(source.pipe(op)).toBe('--------S|', { S: seg0 });
      expectObservable(source.pipe(op)).toBe('--------S|', { S: seg0 });
    });
  });

  it('joins many chunks into one fresh buffer of the total size', () => {
    const events: LiveSpeechEvent[] = [{ type: 'segmentStart', segment_id: 0, text: 'x' }];
    const chunks: Uint8Array[] = [];
    for (let i = 0; i < 1000; i++) {
      const chunk = new Uint8Array(64).fill(i % 256);
      chunks.push(chunk);
      events.push({ type: 'audio', segment_id: 0, bytes: chunk });
    }
    events.push({ type: 'segmentDone', segment_id: 0 });
    const out: SpokenSegment[] = [];
    from(events).pipe(concatSegments()).subscribe((s) => out.push(s));
    expect(out).toHaveLength(1);
    const audio = out[0]!.audio;
    expect(audio.byteLength).toBe(64_000);
    expect(audio.buffer.byteLength).toBe(64_000);
    expect(audio[64 * 999]).toBe(999 % 256);
  });

  it('a segment growing past maxSegmentBytes ends the stream with LimitExceededError; at the limit it is emitted', () => {
    newScheduler().run(({ cold, expectObservable }) => {
      // a (2 bytes) + b (1 byte) = 3 bytes: fits a cap of 3, not a cap of 2
      expectObservable(cold('r-s-a-b-d|', e).pipe(concatSegments({ maxSegmentBytes: 3 }))).toBe('--------S|', { S: seg0 });
      expectObservable(cold('r-s-a-b-d|', e).pipe(concatSegments({ maxSegmentBytes: 2 }))).toBe(
        '------#',
        undefined,
        new LimitExceededError('maxSegmentBytes', 2, 'concatSegments: segment 0 has more than maxSegmentBytes (2 bytes) of audio'),
      );
    });
  });

  it('the cap is per segment: many segments each under it pass however much audio in total', () => {
    newScheduler().run(({ cold, expectObservable }) => {
      const source = cold('r-s-a-b-d-t-c-f|', e);
      expectObservable(source.pipe(concatSegments({ maxSegmentBytes: 3 }))).toBe('--------S-----T|', { S: seg0, T: seg1 });
    });
  });

  it('bad maxSegmentBytes throws when the operator is created; the default is 64 MiB', () => {
    for (const bad of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => concatSegments({ maxSegmentBytes: bad })).toThrow(ValidationError);
    }
    expect(DEFAULT_MAX_SEGMENT_BYTES).toBe(64 * 1024 * 1024);
    const events: LiveSpeechEvent[] = [{ type: 'segmentStart', segment_id: 0, text: 'x' }];
    const mib = new Uint8Array(1024 * 1024);
    for (let i = 0; i <= 64; i++) events.push({ type: 'audio', segment_id: 0, bytes: mib });
    let error: unknown;
    from(events).pipe(concatSegments()).subscribe({ error: (e: unknown) => (error = e) });
    expect(error).toBeInstanceOf(LimitExceededError);
    expect(error).toMatchObject({ option: 'maxSegmentBytes', limit: DEFAULT_MAX_SEGMENT_BYTES });
  });
});
