import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { segmentDone, segmentSkipped, segmentStart, type SegmentOrderState } from '../../src/live/segment-order.js';

const fresh = (): SegmentOrderState => ({ lastServerId: -1, inProgress: undefined });

describe('segment order (segment.start / done / skipped)', () => {
  it('accepts the contract order and records where the socket is', () => {
    const state = fresh();
    expect(segmentStart(state, 0)).toBeUndefined();
    expect(state).toEqual({ lastServerId: 0, inProgress: 0 });
    expect(segmentDone(state, 0)).toBeUndefined();
    expect(state).toEqual({ lastServerId: 0, inProgress: undefined });
    // skipped with nothing in progress stands for the next segment
    expect(segmentSkipped(state, 1)).toBeUndefined();
    expect(state).toEqual({ lastServerId: 1, inProgress: undefined });
    // skipped ends the segment in progress
    expect(segmentStart(state, 2)).toBeUndefined();
    expect(segmentSkipped(state, 2)).toBeUndefined();
    expect(state).toEqual({ lastServerId: 2, inProgress: undefined });
  });

  it('returns the protocol error for each break of the order, and records nothing', () => {
    const cases: Array<[string, (s: SegmentOrderState) => string | undefined, SegmentOrderState, string]> = [
      ['start while one is in progress', (s) => segmentStart(s, 1), { lastServerId: 0, inProgress: 0 }, 'segment.start 1 before segment.done 0'],
      ['start skipping an id', (s) => segmentStart(s, 2), { lastServerId: 0, inProgress: undefined }, 'Segment id 2 does not follow 0 (expected 1)'],
      ['start repeating an id', (s) => segmentStart(s, 0), { lastServerId: 0, inProgress: undefined }, 'Segment id 0 does not follow 0 (expected 1)'],
      ['first start not 0', (s) => segmentStart(s, 1), fresh(), 'Segment id 1 does not follow -1 (expected 0)'],
      ['done for another segment', (s) => segmentDone(s, 1), { lastServerId: 0, inProgress: 0 }, 'segment.done 1 for a segment not started'],
      ['done with none started', (s) => segmentDone(s, 0), { lastServerId: 0, inProgress: undefined }, 'segment.done 0 for a segment not started'],
      ['skipped while another is in progress', (s) => segmentSkipped(s, 1), { lastServerId: 0, inProgress: 0 }, 'segment.skipped 1 while segment 0 is in progress'],
      ['skipped skipping an id', (s) => segmentSkipped(s, 3), { lastServerId: 1, inProgress: undefined }, 'Segment id 3 does not follow 1 (expected 2)'],
    ];
    for (const [name, step, before, message] of cases) {
      const state = { ...before };
      expect(step(state), name).toBe(message);
      expect(state, name).toEqual(before);
    }
  });

  it('agrees with a model of the order on random frame sequences', () => {
    const frame = fc.record({ type: fc.constantFrom('start', 'done', 'skipped'), id: fc.integer({ min: -1, max: 4 }) });
    fc.assert(
      fc.property(fc.array(frame, { maxLength: 12 }), (frames) => {
        const state = fresh();
        let last = -1;
        let open: number | undefined;
        for (const { type, id } of frames) {
          const ok =
            type === 'start' ? open === undefined && id === last + 1 : type === 'done' ? open === id : open === undefined ? id === last + 1 : open === id;
          const step = type === 'start' ? segmentStart : type === 'done' ? segmentDone : segmentSkipped;
          const error = step(state, id);
          expect(error === undefined).toBe(ok);
          if (!ok) return; // the session ends at the first protocol error
          if (type !== 'done') last = id;
          open = type === 'start' ? id : undefined;
          expect(state).toEqual({ lastServerId: last, inProgress: open });
        }
      }),
    );
  });
});
