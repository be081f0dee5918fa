import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { of, Subject, throwError, type Observable } from 'rxjs';
import { StallFallback, type FallbackHooks } from '../../src/live/stall-fallback.js';
import { createSentenceSegmenter } from '../../src/text/sentences.js';
import type { LiveSpeechEvent } from '../../src/live/index.js';

function run(speech: (text: string) => Observable<Uint8Array>) {
  const events: LiveSpeechEvent[] = [];
  const outcome: { done: boolean; failed?: { error: unknown; unspoken: string } } = { done: false };
  const hooks: FallbackHooks = {
    emit: (event) => events.push(event),
    done: () => (outcome.done = true),
    failed: (error, unspoken) => (outcome.failed = { error, unspoken }),
  };
  return { fallback: new StallFallback(speech, 5, 300, createSentenceSegmenter({ locale: 'en-us' }), hooks), events, outcome };
}

describe('StallFallback', () => {
  it('one call per sentence, in order, ids from the first given; pieces under 3 characters join the next', () => {
    const calls: string[] = [];
    const { fallback, events, outcome } = run((text) => {
      calls.push(text);
      return of(new Uint8Array([1]));
    });
    fallback.push('A! B! The first sentence. The sec');
    fallback.push('ond one.');
    fallback.end();
    expect(calls).toEqual(['A! B!', 'The first sentence.', 'The second one.']);
    expect(events.filter((e) => e.type === 'segmentFallback').map((e) => e.segment_id)).toEqual([5, 6, 7]);
    expect(outcome.done).toBe(true);
  });

  it('whatever the split, every character is spoken once and in order (texts of 3 to 3000 characters)', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom('One. ', 'Two words here. ', 'A', 'b', '! ', '? ', ' ', 'x'.repeat(700) + '. '), { maxLength: 20 }), fc.array(fc.nat(40)), (parts, cuts) => {
        const text = parts.join('');
        const calls: string[] = [];
        const { fallback, events, outcome } = run((t) => {
          calls.push(t);
          return of(new Uint8Array(1));
        });
        let at = 0;
        for (const cut of cuts) {
          fallback.push(text.slice(at, at + cut));
          at += cut;
        }
        fallback.push(text.slice(at));
        fallback.end();
        expect(outcome.done).toBe(true);
        const starts = events.filter((e) => e.type === 'segmentStart').map((e) => (e as { text: string }).text);
        expect(starts.join('').trimEnd()).toBe(text.trimEnd());
        for (const call of calls) {
          expect(call.length).toBeGreaterThanOrEqual(Math.min(3, call.length));
          expect(call.length).toBeLessThanOrEqual(3000);
        }
      }),
    );
  });

  it('waits for each call before the next; a failed call ends it with the text not spoken', () => {
    const first = new Subject<Uint8Array>();
    const { fallback, events, outcome } = run((text) => (text.startsWith('First') ? first : throwError(() => new Error('503'))));
    fallback.push('First one. Second one. Third one.');
    expect(events.map((e) => e.type)).toEqual(['segmentFallback', 'segmentStart']);
    first.next(new Uint8Array(2));
    first.complete();
    expect(outcome.failed?.unspoken).toBe('Second one. Third one.');
    expect(events.filter((e) => e.type === 'segmentDone')).toHaveLength(1);
  });

  it('stop aborts the call in flight', () => {
    const call = new Subject<Uint8Array>();
    const { fallback } = run(() => call);
    fallback.push('First one. Second');
    expect(call.observed).toBe(true);
    fallback.stop();
    expect(call.observed).toBe(false);
  });
});
