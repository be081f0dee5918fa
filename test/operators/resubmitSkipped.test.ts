import { describe, expect, it } from 'vitest';
import { Observable, Subject, concat, ignoreElements, of, timer, type OperatorFunction, type Subscription } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { resubmitSkipped } from '../../src/operators/resubmitSkipped.js';
import { LiveSessionError, ValidationError } from '../../src/core/errors.js';
import type { LiveSpeechEvent } from '../../src/live/events.js';
import { createSentenceSegmenter } from '../../src/text/sentences.js';

const newScheduler = () => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

/**
 * A stand-in for `speak` in virtual time: segments its input by sentence like the
 * service, answers each segment at once (start + done, or skipped while `failures` says
 * so), flushes text without a boundary after `idleFrames` (idle_timeout), sends `done`
 * and completes when its input completes (text.done).
 */
function fakeSpeak(failures: Record<string, number>, idleFrames = 1): OperatorFunction<string, LiveSpeechEvent> {
  return (input$) =>
    new Observable<LiveSpeechEvent>((subscriber) => {
      let segmenter = createSentenceSegmenter();
      let id = 0;
      const answer = (text: string) => {
        const key = text.trim();
        if (key === '') return; // whitespace is never a segment (it leads the next one)
        const segment_id = id++;
        if ((failures[key] ?? 0) > 0) {
          failures[key]! -= 1;
          subscriber.next({ type: 'segmentSkipped', segment_id, text });
        } else {
          subscriber.next({ type: 'segmentStart', segment_id, text });
          subscriber.next({ type: 'segmentDone', segment_id });
        }
      };
      let idle: Subscription | undefined;
      const subscription = input$.subscribe({
        next: (text) => {
          for (const sentence of segmenter.feed(text)) answer(sentence);
          idle?.unsubscribe();
          if (segmenter.pending().trim() !== '') {
            // the service's idle_timeout
            idle = timer(idleFrames).subscribe(() => {
              const rest = segmenter.end();
              segmenter = createSentenceSegmenter();
              rest.forEach(answer);
            });
          }
        },
        error: (e: unknown) => subscriber.error(e),
        complete: () => {
          idle?.unsubscribe();
          for (const rest of segmenter.end()) answer(rest);
          subscriber.next({ type: 'done' });
          subscriber.complete();
        },
      });
      return () => {
        idle?.unsubscribe();
        subscription.unsubscribe();
      };
    });
}

const texts = { a: 'One. ', b: 'Two. ', c: 'Three. ', p: 'Four ', q: 'five. ', m: 'One. Four ' };
const start = (segment_id: number, text: string): LiveSpeechEvent => ({ type: 'segmentStart', segment_id, text });
const done = (segment_id: number): LiveSpeechEvent => ({ type: 'segmentDone', segment_id });
const skipped = (segment_id: number, text: string, final: boolean, resubmissions: number): LiveSpeechEvent => ({
  type: 'segmentSkipped',
  segment_id,
  text,
  final,
  resubmissions,
});
const D: LiveSpeechEvent = { type: 'done' };

describe('resubmitSkipped', () => {
  it('never: a silent source keeps the session open', () => {
    newScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold<string>('-');
      expectObservable(source.pipe(resubmitSkipped(fakeSpeak({})))).toBe('-');
      expectSubscriptions(source.subscriptions).toBe('^');
    });
  });

  it('empty: ends the session at once', () => {
    newScheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold<string>('|').pipe(resubmitSkipped(fakeSpeak({})))).toBe('(D|)', { D });
    });
  });

  it('one text, nothing skipped: passes events through', () => {
    newScheduler().run(({ cold, expectObservable }) => {
      const source = cold('a----|', texts);
      expectObservable(source.pipe(resubmitSkipped(fakeSpeak({})))).toBe('-(sd)(D|)', {
        s: start(0, 'One. '),
        d: done(0),
        D,
      });
    });
  });

  it('resubmits a skipped text; it comes back as a later segment', () => {
    newScheduler().run(({ cold, expectObservable }) => {
      const source = cold('a-----b-----c-----|', texts);
      expectObservable(source.pipe(resubmitSkipped(fakeSpeak({ 'Two.': 1 }), { maxAttempts: 2 }))).toBe(
        '-(sd)--(kST)-(uv)-(D|)',
        {
          s: start(0, 'One. '),
          d: done(0),
          k: skipped(1, 'Two. ', false, 0),
          S: start(2, '\n\nTwo.'),
          T: done(2),
          u: start(3, '\n\nThree. '),
          v: done(3),
          D,
        },
      );
    });
  });

  it('reports a text that still fails after maxAttempts with final: true, and completes', () => {
    newScheduler().run(({ cold, expectObservable }) => {
      const source = cold('a-----b-----|', texts);
      expectObservable(source.pipe(resubmitSkipped(fakeSpeak({ 'Two.': 10 }), { maxAttempts: 2 }))).toBe(
        '-(sd)--(klm)(D|)',
        {
          s: start(0, 'One. '),
          d: done(0),
          k: skipped(1, 'Two. ', false, 0),
          l: skipped(2, '\n\nTwo.', false, 1),
          m: skipped(3, '\n\n\n\nTwo.', true, 2),
          D,
        },
      );
    });
  });

  it('maxAttempts 0 reports every skip as final', () => {
    newScheduler().run(({ cold, expectObservable }) => {
      const source = cold('b---|', texts);
      expectObservable(source.pipe(resubmitSkipped(fakeSpeak({ 'Two.': 1 }), { maxAttempts: 0 }))).toBe('-k--(D|)', {
        k: skipped(0, 'Two. ', true, 0),
        D,
      });
    });
  });

  it('holds a resubmission until the text pushed so far reaches a sentence boundary', () => {
    newScheduler().run(({ cold, expectObservable }) => {
      // 'One.' is skipped while 'Four ' (no boundary yet) is pending: resubmitting then
      // would put it inside the sentence 'Four five.'; it waits for 'five. ' and goes in
      // between paragraph breaks, which end its sentence at once (no idle_timeout wait).
      const source = cold('m-----q-----|', texts);
      expectObservable(source.pipe(resubmitSkipped(fakeSpeak({ 'One.': 1 }, 10)))).toBe('k-----(uvST)(D|)', {
        k: skipped(0, 'One.', false, 0),
        u: start(1, ' Four five.'),
        v: done(1),
        S: start(2, ' \n\nOne.'),
        T: done(2),
        D,
      });
    });
  });

  it('sends text.done as soon as the source completes: no added latency when nothing is skipped', () => {
    newScheduler().run(({ cold, expectObservable }) => {
      // 'Four ' has no boundary and the service's idle_timeout is 3 frames: the source
      // completes at 2, text.done goes out at once and the service flushes it then (at
      // 2), exactly as plain speak would; holding text.done back would end at 3.
      const source = cold('p-|', texts);
      const expected = { u: start(0, 'Four '), v: done(0), D };
      expectObservable(source.pipe(resubmitSkipped(fakeSpeak({}, 3)))).toBe('--(uvD|)', expected);
      expectObservable(source.pipe(fakeSpeak({}, 3))).toBe('--(uvD|)', expected);
    });
  });

  it('a skip reported after the source completed is spoken by a continuation session, ids shifted, one done', () => {
    let sessions = 0;
    newScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('(ab|)', texts);
      const counting: OperatorFunction<string, LiveSpeechEvent> = (input$) => {
        sessions++;
        return input$.pipe(fakeSpeak(failures));
      };
      const failures = { 'Two.': 1 };
      expectObservable(source.pipe(resubmitSkipped(counting))).toBe('(sdkSTD|)', {
        s: start(0, 'One.'),
        d: done(0),
        k: skipped(1, ' Two. ', false, 0),
        S: start(2, 'Two. '),
        T: done(2),
        D,
      });
      expectSubscriptions(source.subscriptions).toBe('(^!)');
    });
    expect(sessions).toBe(2);
  });

  it('continuation sessions stop after maxAttempts: the last skip is final', () => {
    newScheduler().run(({ cold, expectObservable }) => {
      const source = cold('(ab|)', texts);
      expectObservable(source.pipe(resubmitSkipped(fakeSpeak({ 'Two.': 10 }), { maxAttempts: 2 }))).toBe('(sdklmD|)', {
        s: start(0, 'One.'),
        d: done(0),
        k: skipped(1, ' Two. ', false, 0),
        l: skipped(2, 'Two. ', false, 1),
        m: skipped(3, 'Two. ', true, 2),
        D,
      });
    });
  });

  it('the default maxAttempts is 2', () => {
    newScheduler().run(({ cold, expectObservable }) => {
      const source = cold('(ab|)', texts);
      expectObservable(source.pipe(resubmitSkipped(fakeSpeak({ 'Two.': 10 })))).toBe('(sdklmD|)', {
        s: start(0, 'One.'),
        d: done(0),
        k: skipped(1, ' Two. ', false, 0),
        l: skipped(2, 'Two. ', false, 1),
        m: skipped(3, 'Two. ', true, 2),
        D,
      });
    });
  });

  it('a skipped segment of whitespace only is final at once: there is nothing to speak again', () => {
    newScheduler().run(({ cold, expectObservable }) => {
      const whitespaceSkipped: OperatorFunction<string, LiveSpeechEvent> = (input$) =>
        concat(of<LiveSpeechEvent>({ type: 'segmentSkipped', segment_id: 0, text: ' \n ' }), input$.pipe(ignoreElements()), of(D));
      expectObservable(cold('-|').pipe(resubmitSkipped(whitespaceSkipped))).toBe('k(D|)', { k: skipped(0, ' \n ', true, 0), D });
    });
  });

  it('the audio of a continuation session carries the shifted segment id of its segment', () => {
    newScheduler().run(({ cold, expectObservable }) => {
      const source = cold('(ab|)', texts);
      const bytes = new Uint8Array([1, 2]);
      const second = cold<LiveSpeechEvent>('5ms (SAT|)', { S: start(0, 'Two. '), A: { type: 'audio', segment_id: 0, bytes }, T: done(0) });
      let sessions = 0;
      const op: OperatorFunction<string, LiveSpeechEvent> = (input$) =>
        ++sessions === 1 ? input$.pipe(fakeSpeak({ 'Two.': 1 })) : second;
      expectObservable(source.pipe(resubmitSkipped(op))).toBe('(sdk) (SAT|)', {
        s: start(0, 'One.'),
        d: done(0),
        k: skipped(1, ' Two. ', false, 0),
        S: start(2, 'Two. '),
        A: { type: 'audio', segment_id: 2, bytes },
        T: done(2),
      });
    });
  });

  it('unsubscribing during a continuation session tears it down', () => {
    newScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('(ab|)', texts);
      const second = cold<LiveSpeechEvent>('----(ST|)', { S: start(0, 'Two. '), T: done(0) });
      let sessions = 0;
      const op: OperatorFunction<string, LiveSpeechEvent> = (input$) =>
        ++sessions === 1 ? input$.pipe(fakeSpeak({ 'Two.': 1 })) : second;
      expectObservable(source.pipe(resubmitSkipped(op)), '^--!').toBe('(sdk)', {
        s: start(0, 'One.'),
        d: done(0),
        k: skipped(1, ' Two. ', false, 0),
      });
      expectSubscriptions(second.subscriptions).toBe('^--!');
    });
  });

  it('an error of a continuation session carries the resubmitted text as unspoken', () => {
    newScheduler().run(({ cold, expectObservable }) => {
      const source = cold('(ab|)', texts);
      let sessions = 0;
      const failing: OperatorFunction<string, LiveSpeechEvent> = (input$) => {
        if (++sessions === 1) return input$.pipe(fakeSpeak({ 'Two.': 1 }));
        return new Observable<LiveSpeechEvent>((subscriber) =>
          input$.subscribe({
            complete: () => subscriber.error(new LiveSessionError('connection', 'dropped', { unspoken: 'Two.' })),
          }),
        );
      };
      expectObservable(source.pipe(resubmitSkipped(failing))).toBe(
        '(sdk#)',
        { s: start(0, 'One.'), d: done(0), k: skipped(1, ' Two. ', false, 0) },
        new LiveSessionError('connection', 'dropped', { unspoken: 'Two.' }),
      );
    });
  });

  describe('a session error while a skipped text is held', () => {
    /** Pushes "One. Four " (no boundary yet), reports "One." skipped (held), then errors the session with `error`. */
    function errorWhileHeld(error: Error): unknown {
      const text$ = new Subject<string>();
      const events$ = new Subject<LiveSpeechEvent>();
      const session: OperatorFunction<string, LiveSpeechEvent> = (input$) =>
        new Observable<LiveSpeechEvent>((subscriber) => {
          const input = input$.subscribe();
          const events = events$.subscribe(subscriber);
          return () => {
            input.unsubscribe();
            events.unsubscribe();
          };
        });
      const seen: LiveSpeechEvent[] = [];
      let failure: unknown;
      text$.pipe(resubmitSkipped(session)).subscribe({ next: (event) => seen.push(event), error: (e: unknown) => (failure = e) });
      text$.next('One. Four ');
      events$.next({ type: 'segmentSkipped', segment_id: 0, text: 'One. ' });
      expect(seen).toEqual([skipped(0, 'One. ', false, 0)]);
      events$.error(error);
      return failure;
    }

    it('the LiveSessionError is the cause of one of the same code whose unspoken ends with the held text', () => {
      const original = new LiveSessionError('connection', 'dropped', { unspoken: 'Four ', closeCode: 1006 });
      const failure = errorWhileHeld(original);
      expect(failure).toBeInstanceOf(LiveSessionError);
      expect(failure).not.toBe(original);
      expect(failure).toMatchObject({ code: 'connection', message: 'dropped', unspoken: 'Four One.', closeCode: 1006, cause: original });
    });

    it('an empty unspoken of the session adds no leading space', () => {
      const failure = errorWhileHeld(new LiveSessionError('timeout', 'no answer', { unspoken: '' }));
      expect(failure).toMatchObject({ code: 'timeout', unspoken: 'One.' });
    });

    it('another error is passed through as it is', () => {
      const other = new Error('not a session error');
      expect(errorWhileHeld(other)).toBe(other);
    });
  });

  it('passes the source error through', () => {
    newScheduler().run(({ cold, expectObservable }) => {
      const source = cold('a----#', texts, new Error('llm failed'));
      expectObservable(source.pipe(resubmitSkipped(fakeSpeak({})))).toBe(
        '-(sd)#',
        { s: start(0, 'One. '), d: done(0) },
        new Error('llm failed'),
      );
    });
  });

  it('unsubscribes early from the source', () => {
    newScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('a-------b|', texts);
      expectObservable(source.pipe(resubmitSkipped(fakeSpeak({}))), '^-----!').toBe('-(sd)', {
        s: start(0, 'One. '),
        d: done(0),
      });
      expectSubscriptions(source.subscriptions).toBe('^-----!');
    });
  });

  it('rejects a bad maxAttempts at once', () => {
    expect(() => resubmitSkipped(fakeSpeak({}), { maxAttempts: -1 })).toThrow(ValidationError);
  });
});
