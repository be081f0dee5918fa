import { describe, expect, it } from 'vitest';
import { from, lastValueFrom, toArray } from 'rxjs';
import fc from 'fast-check';
import { TestScheduler } from 'rxjs/testing';
import { segmentSentences } from '../../src/operators/segmentSentences.js';

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

  it('"Hello world." and "Why?" wait for the next non-space character', () => {
    newScheduler().run(({ cold, expectObservable }) => {
      const dot = cold('a-b-c-|', { a: 'Hello world.', b: ' ', c: 'This' });
      expectObservable(dot.pipe(segmentSentences())).toBe('----x-(y|)', { x: 'Hello world.', y: ' This' });
      const question = cold('a-b-c-|', { a: 'Why?', b: ' ', c: 'Because' });
      expectObservable(question.pipe(segmentSentences())).toBe('----x-(y|)', { x: 'Why?', y: ' Because' });
    });
  });

  it('"?" ends at the first character after the stop run, so "Why?" + "!" stays one sentence', () => {
    newScheduler().run(({ cold, expectObservable }) => {
      // frame 0: "Why?" may still grow; frame 2: "!" grows it; frame 4: " Be" ends it
      const grown = cold('a-b-c-d|', { a: 'Why?', b: '!', c: ' Be', d: 'cause.' });
      expectObservable(grown.pipe(segmentSentences())).toBe('----x--(y|)', { x: 'Why?!', y: ' Because.' });
      // "?" followed by a character in the same token: emitted in that token's frame
      const glued = cold('a-b|', { a: 'Why? Be', b: 'cause.' });
      expectObservable(glued.pipe(segmentSentences())).toBe('x--(y|)', { x: 'Why?', y: ' Because.' });
      // CJK: "。" ends with the next character, no space needed
      const cjk = cold('a-b-|', { a: '你好。', b: '再见。' });
      expectObservable(cjk.pipe(segmentSentences({ locale: 'zh-cn' }))).toBe('--x-(y|)', { x: '你好。', y: '再见。' });
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

  it('properties through RxJS: same sentences however the text is tokenized, lossless, never throws', () => {
    const pieces = ['Hello', ' world', '.', ' ', 'Dr', '. ', 'Why', '?', '!', '"', '\n\n', '3.5', '\u3002', '\u4f60', '\u0964', ' Then', 'e.g.', '\ud83d\ude00'];
    const text = fc.oneof(
      fc.array(fc.constantFrom(...pieces), { maxLength: 30 }).map((a) => a.join('')),
      fc.string({ unit: 'grapheme', maxLength: 60 }),
    );
    const run = (tokens: string[], locale: string): string[] => {
      const out: string[] = [];
      let failed: unknown;
      from(tokens).pipe(segmentSentences({ locale })).subscribe({ next: (s) => out.push(s), error: (e: unknown) => (failed = e) });
      expect(failed).toBeUndefined();
      return out;
    };
    fc.assert(
      fc.property(text, fc.array(fc.nat({ max: 60 }), { maxLength: 10 }), fc.constantFrom('en-us', 'de-de', 'fr-fr', 'zh-cn', 'hi-in'), (input, cuts, locale) => {
        const points = [...new Set(cuts.filter((c) => c <= input.length))].sort((a, b) => a - b);
        const tokens = [0, ...points].map((start, i) => input.slice(start, [...points, input.length][i]));
        const whole = run([input], locale);
        const split = run(tokens, locale);
        expect(split).toEqual(whole);
        expect(split.join('')).toBe(input);
        for (const piece of split) expect(piece.length).toBeGreaterThan(0);
      }),
      { numRuns: 500 },
    );
  });
});
