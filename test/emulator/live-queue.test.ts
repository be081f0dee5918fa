/**
 * The segment queue of the emulator's live session (src/emulator/live-queue.ts): the
 * concurrency window, delivery strictly in order, the stop where credits ran out, and the
 * unsent-text count the session's read back-pressure uses.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { SegmentQueue } from '../../src/emulator/live-queue.js';
import type { LiveSegment } from '../../src/emulator/live-synthesis.js';

/** Start every segment the window allows; returns them in order. */
function startAll(queue: SegmentQueue, window: number): LiveSegment[] {
  const started: LiveSegment[] = [];
  for (let segment = queue.nextToSynthesize(window); segment; segment = queue.nextToSynthesize(window)) {
    queue.started(segment);
    started.push(segment);
  }
  return started;
}

describe('SegmentQueue', () => {
  it('numbers segments in order; whitespace-only pieces lead the next segment', () => {
    const queue = new SegmentQueue();
    expect(queue.add('Hello.')).toBe(true);
    expect(queue.add(' \n')).toBe(false);
    expect(queue.add('  ')).toBe(false);
    expect(queue.add('World.')).toBe(true);
    expect(queue.size).toBe(2);
    const [first, second] = startAll(queue, 4);
    expect(first).toMatchObject({ id: 0, text: 'Hello.', state: 'synthesizing' });
    expect(second).toMatchObject({ id: 1, text: ' \n  World.', state: 'synthesizing' });
    expect(queue.unsentChars).toBe('Hello.'.length + ' \n  World.'.length);
  });

  it('starts at most `window` segments in flight, and at most `window` ahead of sending', () => {
    const queue = new SegmentQueue();
    for (const text of ['a.', 'b.', 'c.', 'd.', 'e.']) queue.add(text);
    const started = startAll(queue, 2);
    expect(started.map((s) => s.id)).toEqual([0, 1]);
    // Control: a wider window starts more, so the limit above is the window's doing.
    expect(queue.nextToSynthesize(3)?.id).toBe(2);

    // Segment 1 finishes first: still two started and unsent, so nothing more starts.
    started[1]!.state = 'ready';
    queue.finished();
    expect(queue.nextToSynthesize(2)).toBeUndefined();
    expect(queue.nextToDeliver()).toBeUndefined(); // segment 0 is not ready: 1 waits behind it

    started[0]!.state = 'ready';
    queue.finished();
    expect(queue.nextToDeliver()?.id).toBe(0);
    queue.delivered(started[0]!);
    expect(queue.nextToDeliver()?.id).toBe(1);
    expect(queue.nextToSynthesize(2)?.id).toBe(2);
  });

  it('releases a delivered segment\'s audio and counts its text as sent', () => {
    const queue = new SegmentQueue();
    queue.add('One.');
    queue.add('Two!');
    const [one] = startAll(queue, 1);
    one!.state = 'ready';
    one!.audio = new Uint8Array([1, 2, 3]);
    one!.words = [{ word: 'One', start: 0, end: 0.2 }];
    queue.finished();
    expect(queue.unsentChars).toBe(8);
    queue.delivered(one!);
    expect(one!.audio).toBeUndefined();
    expect(one!.words).toBeUndefined();
    expect(queue.unsentChars).toBe(4);
    expect(queue.sent).toBe(1);
    expect(queue.allSent()).toBe(false);
  });

  it('a skipped segment goes out in its turn like a ready one', () => {
    const queue = new SegmentQueue();
    queue.add('Bad.');
    queue.add('Good.');
    const [bad, good] = startAll(queue, 2);
    good!.state = 'ready';
    bad!.state = 'skipped';
    expect(queue.nextToDeliver()).toBe(bad);
    queue.delivered(bad!);
    expect(queue.nextToDeliver()).toBe(good);
    queue.delivered(good!);
    expect(queue.allSent()).toBe(true);
  });

  it('credits running out stops starting there; sending stops when it reaches that segment', () => {
    const queue = new SegmentQueue();
    for (const text of ['a.', 'b.', 'c.']) queue.add(text);
    const first = queue.nextToSynthesize(4)!;
    queue.started(first);
    const second = queue.nextToSynthesize(4)!;
    expect(queue.creditsFailed).toBe(false);
    queue.creditsRanOut(second);
    expect(queue.creditsFailed).toBe(true);
    expect(queue.nextToSynthesize(4)).toBeUndefined();
    // Segment 0 still goes out before the failure is reported.
    expect(queue.sendingReachedCreditsFailure()).toBeUndefined();
    first.state = 'ready';
    queue.finished();
    queue.delivered(queue.nextToDeliver()!);
    expect(queue.sendingReachedCreditsFailure()).toBe(1);
  });

  it('releaseAudio drops the audio of every segment', () => {
    const queue = new SegmentQueue();
    queue.add('x.');
    queue.add('y.');
    const segments = startAll(queue, 2);
    for (const segment of segments) {
      segment.state = 'ready';
      segment.audio = new Uint8Array(4);
    }
    queue.releaseAudio();
    expect(segments.map((s) => s.audio)).toEqual([undefined, undefined]);
  });

  it('any order of finishing: the window holds, every text goes out once, in order', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.constantFrom(' ', '\n', '  '), fc.string({ minLength: 1, maxLength: 6 })), { maxLength: 30 }),
        fc.integer({ min: 1, max: 4 }),
        fc.array(fc.nat(), { maxLength: 60 }),
        (pieces, window, choices) => {
          const queue = new SegmentQueue();
          for (const piece of pieces) queue.add(piece);
          const inFlight: LiveSegment[] = [];
          const out: string[] = [];
          let step = 0;
          const deliver = (): void => {
            for (let next = queue.nextToDeliver(); next; next = queue.nextToDeliver()) {
              out.push(next.text);
              queue.delivered(next);
            }
          };
          while (!queue.allSent()) {
            inFlight.push(...startAll(queue, window));
            expect(inFlight.length).toBeLessThanOrEqual(window);
            expect(inFlight.length).toBeGreaterThan(0);
            const [done] = inFlight.splice((choices[step++] ?? 0) % inFlight.length, 1);
            done!.state = step % 3 === 0 ? 'skipped' : 'ready';
            queue.finished();
            deliver();
          }
          // Every character is in exactly one segment, in order; whitespace after the last
          // segment stays buffered (the session drops it at the very end).
          const joined = out.join('');
          expect(pieces.join('').startsWith(joined)).toBe(true);
          expect(pieces.join('').slice(joined.length).trim()).toBe('');
          expect(out.every((text) => text.trim().length > 0)).toBe(true);
          expect(queue.unsentChars).toBe(0);
        },
      ),
    );
  });
});
