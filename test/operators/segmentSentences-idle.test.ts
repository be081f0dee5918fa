import { describe, expect, it } from 'vitest';
import { Subject, VirtualTimeScheduler } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { segmentSentences } from '../../src/operators/segmentSentences.js';
import { ValidationError } from '../../src/core/errors.js';

const newScheduler = () => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

describe('segmentSentences idle flush', () => {
  it('flushes trailing text without a boundary after the idle timeout, at a word boundary', () => {
    const scheduler = newScheduler();
    scheduler.run(({ cold, expectObservable }) => {
      const source = cold('a 9ms b|', { a: 'Hello wonderful wor', b: 'ld.' });
      expectObservable(source.pipe(segmentSentences({ idleTimeout: 5, scheduler }))).toBe('5ms x 5ms (y|)', {
        x: 'Hello wonderful',
        y: ' world.',
      });
    });
  });

  it('never cuts mid-word: a lone partial word stays buffered', () => {
    const scheduler = newScheduler();
    scheduler.run(({ cold, expectObservable }) => {
      const source = cold('a 20ms b|', { a: 'Supercalifragi', b: 'listic' });
      expectObservable(source.pipe(segmentSentences({ idleTimeout: 5, scheduler }))).toBe('22ms (x|)', {
        x: 'Supercalifragilistic',
      });
    });
  });

  it('keeps a number or a word the next token may continue (3. of 3.5, 1, of 1,000, 10: of 10:30, don\' of don\'t) buffered', () => {
    const cases: Array<[string, string, string]> = [
      ['It costs 3.', '5 euros', ' 3.5 euros'],
      ['It costs $1,', '000 now', ' $1,000 now'],
      ['It is 10:', '30 now', ' 10:30 now'],
      ["I don'", 't know', " don't know"],
      ['Version 2.', '0.1 is out', ' 2.0.1 is out'],
    ];
    for (const [a, b, rest] of cases) {
      const head = a.slice(0, a.lastIndexOf(' '));
      newScheduler().run(({ cold, expectObservable }) => {
        const source = cold('a 9ms b|', { a, b });
        expectObservable(source.pipe(segmentSentences({ idleTimeout: 5 }))).toBe('5ms x 5ms (y|)', { x: head, y: rest });
      });
    }
  });

  it('control: a comma, a stop or a quote after a word is still its end', () => {
    const cases: Array<[string, string, string]> = [
      ['Well,', ' then go', ' then go'],
      ['It is done.', ' Go', ' Go'],
      ["He said 'yes'", ' and left', ' and left'],
      ['Version 2. ', 'Then', 'Then'],
    ];
    for (const [a, b, rest] of cases) {
      newScheduler().run(({ cold, expectObservable }) => {
        const source = cold('a 9ms b|', { a, b });
        expectObservable(source.pipe(segmentSentences({ idleTimeout: 5 }))).toBe('5ms x 5ms (y|)', { x: a.trimEnd(), y: a.slice(a.trimEnd().length) + rest });
      });
    }
  });

  it('flushes a word ended by a space', () => {
    newScheduler().run(({ cold, expectObservable }) => {
      // default asyncScheduler, virtualised by TestScheduler.run
      const source = cold('a 9ms |', { a: 'one two ' });
      expectObservable(source.pipe(segmentSentences({ idleTimeout: 5 }))).toBe('5ms x 4ms (y|)', { x: 'one two', y: ' ' });
    });
  });

  it('resets the timer on each token', () => {
    const scheduler = newScheduler();
    scheduler.run(({ cold, expectObservable }) => {
      const source = cold('a 3ms b 3ms c 3ms d 9ms |', { a: 'one ', b: 'two ', c: 'three ', d: 'four' });
      // last token at 12ms; the flush comes 5ms later, at 17ms
      expectObservable(source.pipe(segmentSentences({ idleTimeout: 5, scheduler }))).toBe('17ms x 4ms (y|)', {
        x: 'one two three',
        y: ' four',
      });
    });
  });

  it('uses the shorter first timeout until the first piece, then the normal one', () => {
    const scheduler = newScheduler();
    scheduler.run(({ cold, expectObservable }) => {
      const source = cold('a 9ms b 19ms |', { a: 'Quick start ', b: 'then slower ' });
      expectObservable(source.pipe(segmentSentences({ idleTimeout: 8, firstIdleTimeout: 2, scheduler }))).toBe(
        '2ms x 7ms 8ms y 11ms (z|)',
        { x: 'Quick start', y: ' then slower', z: ' ' },
      );
    });
  });

  it('does not flush after a sentence boundary already emitted everything', () => {
    const scheduler = newScheduler();
    scheduler.run(({ cold, expectObservable }) => {
      const source = cold('a 9ms |', { a: 'Why? Because' });
      expectObservable(source.pipe(segmentSentences({ idleTimeout: 5, scheduler }))).toBe('x 9ms (y|)', {
        x: 'Why?',
        y: ' Because',
      });
    });
  });

  it('flushes a pending "." sentence on idle, and the rest still joins back', () => {
    const scheduler = newScheduler();
    scheduler.run(({ cold, expectObservable }) => {
      const source = cold('a 9ms b|', { a: 'It ends here.', b: ' More' });
      expectObservable(source.pipe(segmentSentences({ idleTimeout: 5, scheduler }))).toBe('5ms x 5ms (y|)', {
        x: 'It ends here.',
        y: ' More',
      });
    });
  });

  it('clears the idle timer on unsubscribe', () => {
    const scheduler = newScheduler();
    scheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('a 20ms |', { a: 'no flush please' });
      expectObservable(source.pipe(segmentSentences({ idleTimeout: 5, scheduler })), '^ 2ms !').toBe('-');
      expectSubscriptions(source.subscriptions).toBe('^ 2ms !');
    });
  });

  it('unsubscribing removes the pending idle timer from its scheduler', () => {
    const scheduler = new VirtualTimeScheduler();
    const tokens = new Subject<string>();
    const subscription = tokens.pipe(segmentSentences({ idleTimeout: 5, scheduler })).subscribe();
    tokens.next('no flush please');
    // control: the timer is queued while subscribed
    expect(scheduler.actions).toHaveLength(1);
    subscription.unsubscribe();
    expect(scheduler.actions).toHaveLength(0);
  });

  it('clears the idle timer on completion and error', () => {
    const scheduler = newScheduler();
    scheduler.run(({ cold, expectObservable }) => {
      const done = cold('a|', { a: 'one two' });
      expectObservable(done.pipe(segmentSentences({ idleTimeout: 5, scheduler }))).toBe('-(x|)', { x: 'one two' });
      const failed = cold('a#', { a: 'one two' });
      expectObservable(failed.pipe(segmentSentences({ idleTimeout: 5, scheduler }))).toBe('-(x#)', { x: 'one two' });
    });
  });

  it('rejects a negative or non-finite timeout at once', () => {
    expect(() => segmentSentences({ idleTimeout: -1 })).toThrow(ValidationError);
    expect(() => segmentSentences({ firstIdleTimeout: Number.NaN })).toThrow(/firstIdleTimeout/);
  });

  it('with only firstIdleTimeout, flushes the first piece quickly and never again', () => {
    const scheduler = newScheduler();
    scheduler.run(({ cold, expectObservable }) => {
      const source = cold('a 9ms b 9ms |', { a: 'first words ', b: 'later words ' });
      expectObservable(source.pipe(segmentSentences({ firstIdleTimeout: 3, scheduler }))).toBe('3ms x 16ms (y|)', {
        x: 'first words',
        y: ' later words ',
      });
    });
  });
});
