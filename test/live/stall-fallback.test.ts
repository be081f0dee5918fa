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
        // what POST /tts-stream accepts: 3 to 3000 characters, each call
        for (const call of calls) {
          expect(call.length).toBeGreaterThanOrEqual(3);
          expect(call.length).toBeLessThanOrEqual(3000);
          expect(call.trim()).not.toBe('');
        }
      }),
    );
  });

  it('a sentence of 3 characters is a call of its own; a last piece under 3 is padded with spaces to 3 (what /tts-stream accepts)', () => {
    const calls: string[] = [];
    const { fallback, events, outcome } = run((text) => {
      calls.push(text);
      return of(new Uint8Array([1]));
    });
    fallback.push('Hi. A! More here. Ok');
    fallback.end();
    // 'A!' (2 characters) joins the next sentence; 'Ok' is the last: sent as 'Ok ' (trimmed, it was refused)
    expect(calls).toEqual(['Hi.', 'A! More here.', 'Ok ']);
    // the events tell the text as it was written
    expect(events.filter((e) => e.type === 'segmentStart').map((e) => (e as { text: string }).text)).toEqual(['Hi.', ' A! More here.', ' Ok']);
    expect(outcome.done).toBe(true);
  });

  it('a sentence over 3000 characters: cut before a word into calls of 3 to 3000, every character once; one of exactly 3000 is one call', () => {
    const spoken = (text: string): string[] => {
      const calls: string[] = [];
      const { fallback, events, outcome } = run((t) => {
        calls.push(t);
        return of(new Uint8Array([1]));
      });
      fallback.push(text);
      fallback.end();
      expect(outcome.done).toBe(true);
      expect(events.filter((e) => e.type === 'segmentStart').map((e) => (e as { text: string }).text).join('')).toBe(text);
      return calls;
    };
    expect(spoken('x'.repeat(2999) + '.')).toEqual(['x'.repeat(2999) + '.']);
    // a word of 3001: the rest is never a piece under 3 (the service refuses one)
    expect(spoken('x'.repeat(3001))).toEqual(['x'.repeat(2998), 'xxx']);
    expect(spoken('x'.repeat(2999) + ' ab')).toEqual(['x'.repeat(2998), 'x ab']);
    // words: cut before the last word that fits (3000 falls inside a word here)
    expect(spoken('Several ' + 'words '.repeat(600) + 'end.')).toEqual([('Several ' + 'words '.repeat(498)).trimEnd(), 'words '.repeat(102) + 'end.']);
    // measured without the spaces around it: 3000 characters and a space before and after are one call
    expect(spoken('First one. ' + 'X'.repeat(2999) + '.  ')).toEqual(['First one.', 'X'.repeat(2999) + '.']);
    // no piece under 3 before a cut either: a word of 2 then a very long one is cut inside the long one
    expect(spoken('Hi ' + 'x'.repeat(3100))).toEqual(['Hi ' + 'x'.repeat(2997), 'x'.repeat(103)]);
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

  it('a failed call: the text not spoken includes a short sentence waiting for the next and the text not yet cut; no call after it', () => {
    const calls: string[] = [];
    const { fallback, outcome } = run((text) => {
      calls.push(text);
      return throwError(() => new Error('503'));
    });
    // 'A!' is too short for a call of its own and waits for the next sentence; ' Then mo' is not a sentence yet
    fallback.push('First one. A! Then mo');
    expect(outcome.failed?.unspoken).toBe('First one. A! Then mo');
    fallback.push('re. And more.');
    fallback.end();
    expect(calls).toEqual(['First one.']);
    expect(outcome.done).toBe(false);
  });

  it('stopped while waiting for text: what comes after is not spoken', () => {
    const calls: string[] = [];
    const { fallback, outcome } = run((text) => {
      calls.push(text);
      return of(new Uint8Array([1]));
    });
    fallback.push('First one. Sec');
    // control: the sentence pushed before the stop is spoken
    expect(calls).toEqual(['First one.']);
    fallback.stop();
    fallback.push('ond one. Third one.');
    fallback.end();
    expect(calls).toEqual(['First one.']);
    expect(outcome.done).toBe(false);
  });

  it('done is told once', () => {
    let done = 0;
    const fallback = new StallFallback(() => of(new Uint8Array([1])), 0, 300, createSentenceSegmenter({ locale: 'en-us' }), {
      emit: () => undefined,
      done: () => done++,
      failed: () => undefined,
    });
    fallback.push('First one.');
    fallback.end();
    expect(done).toBe(1);
    fallback.end();
    fallback.push('More.');
    expect(done).toBe(1);
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
