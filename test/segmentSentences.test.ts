import { describe, expect, it } from 'vitest';
import { from, lastValueFrom, toArray } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { segmentSentences } from '../src/operators/segmentSentences.js';

const newScheduler = () => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

describe('segmentSentences', () => {
  it('never emits for a never-ending silent source', () => {
    newScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold<string>('-');
      expectObservable(source.pipe(segmentSentences())).toBe('-');
      expectSubscriptions(source.subscriptions).toBe('^');
    });
  });

  it('completes on an empty source', () => {
    newScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold<string>('|');
      expectObservable(source.pipe(segmentSentences())).toBe('|');
      expectSubscriptions(source.subscriptions).toBe('(^!)');
    });
  });

  it('emits one token without a boundary on completion', () => {
    newScheduler().run(({ cold, expectObservable }) => {
      const source = cold('a|', { a: 'Hello there' });
      expectObservable(source.pipe(segmentSentences())).toBe('-(x|)', { x: 'Hello there' });
    });
  });

  it('emits many sentences in order, each when its end is certain', () => {
    newScheduler().run(({ cold, expectObservable }) => {
      const source = cold('a-b-c-d-e|', { a: 'Hello wor', b: 'ld. Dr', c: '. Smith is', d: ' here. Why', e: '? Then' });
      expectObservable(source.pipe(segmentSentences())).toBe('--x---y-z(w|)', {
        x: 'Hello world.',
        y: ' Dr. Smith is here.',
        z: ' Why?',
        w: ' Then',
      });
    });
  });

  it('matches the marble diagram of its documentation', () => {
    newScheduler().run(({ cold, expectObservable }) => {
      const source = cold('-a----b---c-------|', { a: 'Hello wor', b: 'ld. Why', c: '? Then' });
      expectObservable(source.pipe(segmentSentences())).toBe('------x---y-------(z|)', {
        x: 'Hello world.',
        y: ' Why?',
        z: ' Then',
      });
    });
  });

  it('"Hello world." waits for the next word; "Why?" goes at the next character', () => {
    newScheduler().run(({ cold, expectObservable }) => {
      const dot = cold('a-b-c-|', { a: 'Hello world.', b: ' ', c: 'This' });
      expectObservable(dot.pipe(segmentSentences())).toBe('----x-(y|)', { x: 'Hello world.', y: ' This' });
      const question = cold('a-b-c-|', { a: 'Why?', b: ' ', c: 'Because' });
      expectObservable(question.pipe(segmentSentences())).toBe('--x---(y|)', { x: 'Why?', y: ' Because' });
    });
  });

  it('does not end a sentence when the next word is lower case', () => {
    newScheduler().run(({ cold, expectObservable }) => {
      const source = cold('a-b|', { a: 'It costs 5 p.m.', b: ' today' });
      expectObservable(source.pipe(segmentSentences())).toBe('---(x|)', { x: 'It costs 5 p.m. today' });
    });
  });

  it('uses the locale', () => {
    newScheduler().run(({ cold, expectObservable }) => {
      const source = cold('a-b|', { a: 'Τι κάνεις;', b: ' Καλά.' });
      expectObservable(source.pipe(segmentSentences({ locale: 'el-gr' }))).toBe('--x(y|)', { x: 'Τι κάνεις;', y: ' Καλά.' });
      const english = cold('a-b|', { a: 'Τι κάνεις;', b: ' Καλά.' });
      expectObservable(english.pipe(segmentSentences({ locale: 'en-us' }))).toBe('---(y|)', { y: 'Τι κάνεις; Καλά.' });
    });
  });

  it('emits the buffered remainder before forwarding an error', () => {
    newScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('a-b-#', { a: 'One. Tw', b: 'o and thr' }, new Error('boom'));
      expectObservable(source.pipe(segmentSentences())).toBe('x---(y#)', { x: 'One.', y: ' Two and thr' }, new Error('boom'));
      expectSubscriptions(source.subscriptions).toBe('^---!');
    });
  });

  it('forwards an error without emitting when nothing is buffered', () => {
    newScheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold<string>('#').pipe(segmentSentences())).toBe('#');
    });
  });

  it('keeps emitting on a never-ending source', () => {
    newScheduler().run(({ cold, expectObservable }) => {
      const source = cold('a-b-c-', { a: 'One. ', b: 'Two. ', c: 'Thr' });
      expectObservable(source.pipe(segmentSentences())).toBe('--x-y-', { x: 'One.', y: ' Two.' });
    });
  });

  it('unsubscribes from the source on early unsubscribe', () => {
    newScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('a-b-c-d|', { a: 'One. ', b: 'Two. ', c: 'Six. ', d: 'Ten. ' });
      expectObservable(source.pipe(segmentSentences()), '^--!').toBe('--x', { x: 'One.' });
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
  });

  it('ignores empty tokens and joins back to the input', async () => {
    const tokens = ['', 'Dr. Smith paid $4', '.99. Wh', 'y? Because.', '', '\n\nNext'];
    const out = await lastValueFrom(from(tokens).pipe(segmentSentences(), toArray()));
    expect(out).toEqual(['Dr. Smith paid $4.99.', ' Why?', ' Because.', '\n\nNext']);
    expect(out.join('')).toBe(tokens.join(''));
  });

  it('force-cuts at maxBufferSize', async () => {
    const text = 'word '.repeat(40);
    const out = await lastValueFrom(from(text.match(/.{1,4}/gs) ?? []).pipe(segmentSentences({ maxBufferSize: 32 }), toArray()));
    expect(out.join('')).toBe(text);
    expect(Math.max(...out.map((p) => p.length))).toBeLessThanOrEqual(32);
  });
});
