import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { createParser } from 'eventsource-parser';
import { from, map, of, take, throwError, concat, NEVER, lastValueFrom, toArray } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { createSseParser, SseError, type SseEvent, type SseParser } from '../../src/text/sse.js';
import { parseSse } from '../../src/operators/index.js';
import { RxVoiceError, ValidationError } from '../../src/core/errors.js';
import { cut } from '../fixtures/cut.js';

const enc = new TextEncoder();

function parseChunks(chunks: Array<string | Uint8Array>, opts: { retries?: number[]; comments?: string[] } = {}): SseEvent[] {
  const events: SseEvent[] = [];
  const p = createSseParser({
    onEvent: (e) => events.push(e),
    onRetry: (r) => opts.retries?.push(r),
    onComment: (c) => opts.comments?.push(c),
  });
  for (const c of chunks) p.feed(c);
  p.end();
  return events;
}

const ev = (data: string, extra: Partial<SseEvent> = {}): SseEvent => ({ event: 'message', data, id: undefined, ...extra });

/** [name, input, expected events] — the event-stream rules case by case. */
const cases: Array<[string, string, SseEvent[]]> = [
  ['simple', 'data: hello\n\n', [ev('hello')]],
  ['no space after colon', 'data:hello\n\n', [ev('hello')]],
  ['only one space removed', 'data:  two\n\n', [ev(' two')]],
  ['multi-line data joined by LF', 'data: a\ndata: b\ndata\n\n', [ev('a\nb\n')]],
  ['empty data line still dispatches', 'data\n\n', [ev('')]],
  ['data: with nothing', 'data:\n\n', [ev('')]],
  ['no data: not dispatched', 'event: x\n\nid: 1\n\n', []],
  ['event type', 'event: add\ndata: 1\n\n', [ev('1', { event: 'add' })]],
  ['empty event type is message', 'event:\ndata: 1\n\n', [ev('1')]],
  ['event type resets after dispatch', 'event: a\ndata: 1\n\ndata: 2\n\n', [ev('1', { event: 'a' }), ev('2')]],
  ['CR line ends', 'data: a\rdata: b\r\r', [ev('a\nb')]],
  ['CRLF line ends', 'data: a\r\ndata: b\r\n\r\n', [ev('a\nb')]],
  ['mixed line ends', 'data: a\r\n\rdata: b\n\r\ndata: c\r\r', [ev('a'), ev('b'), ev('c')]],
  ['comments ignored', ': hi\ndata: x\n:\n\n', [ev('x')]],
  ['leading BOM stripped', '\uFEFFdata: x\n\n', [ev('x')]],
  ['second BOM kept (unknown field)', '\uFEFF\uFEFFdata: x\n\ndata: y\n\n', [ev('y')]],
  ['id given', 'id: 7\ndata: x\n\n', [ev('x', { id: '7' })]],
  ['empty id', 'id\ndata: x\n\n', [ev('x', { id: '' })]],
  ['id with NUL ignored', 'id: a\u0000b\ndata: x\n\n', [ev('x')]],
  ['id not carried to the next event', 'id: 1\ndata: x\n\ndata: y\n\n', [ev('x', { id: '1' }), ev('y')]],
  ['retry digits', 'retry: 1500\ndata: x\n\n', [ev('x', { retry: 1500 })]],
  ['retry non digits ignored', 'retry: 15a\ndata: x\n\nretry: -1\ndata: y\n\nretry:\ndata: z\n\n', [ev('x'), ev('y'), ev('z')]],
  ['unknown field ignored', 'foo: bar\ndata: x\n\n', [ev('x')]],
  ['field name without colon', 'data\ndata\n\n', [ev('\n')]],
  ['colon in value kept', 'data: a: b\n\n', [ev('a: b')]],
  ['space before colon is part of the name', 'data : x\n\n', []],
  ['last event without blank line dropped', 'data: a\n\ndata: b\n', [ev('a')]],
  ['unterminated last line dropped', 'data: a\n\ndata: b', [ev('a')]],
  ['unicode', 'data: héllo 😀 日本\n\n', [ev('héllo 😀 日本')]],
  ['blank lines only', '\n\n\r\n\r', []],
  ['CR at the very end dispatches', 'data: x\n\r', [ev('x')]],
];

describe('createSseParser: spec cases', () => {
  for (const [name, input, expected] of cases) {
    it(name, () => {
      expect(parseChunks([input])).toStrictEqual(expected);
    });
  }

  it('every split position, as text and as bytes', () => {
    for (const [, input, expected] of cases) {
      const bytes = enc.encode(input);
      for (let i = 0; i <= bytes.length; i++) {
        expect(parseChunks([bytes.subarray(0, i), bytes.subarray(i)])).toStrictEqual(expected);
      }
      for (let i = 0; i <= input.length; i++) {
        expect(parseChunks([input.slice(0, i), input.slice(i)])).toStrictEqual(expected);
      }
    }
  });

  it('every byte on its own', () => {
    for (const [, input, expected] of cases) {
      const bytes = enc.encode(input);
      const chunks = Array.from(bytes, (_, i) => bytes.subarray(i, i + 1));
      expect(parseChunks(chunks)).toStrictEqual(expected);
    }
  });

  it('CR ending one chunk and LF starting the next is one line end', () => {
    expect(parseChunks(['data: a\r', '\ndata: b\r', '\n\r', '\n'])).toStrictEqual([ev('a\nb')]);
    // and an empty chunk between them changes nothing
    expect(parseChunks(['data: a\r', '', '\n', '\r', '', '\n'])).toStrictEqual([ev('a')]);
  });

  it('multibyte characters split across byte chunks', () => {
    const text = 'data: 😀é日\n\n';
    const bytes = enc.encode(text);
    // split inside the 4-byte emoji at every offset, then byte by byte
    for (let i = 6; i < 10; i++) {
      expect(parseChunks([bytes.subarray(0, i), bytes.subarray(i)])).toStrictEqual([ev('😀é日')]);
    }
  });

  it('truncated multibyte at end of input becomes U+FFFD only if it was inside a dispatched event', () => {
    const bytes = enc.encode('data: 😀\n\n');
    expect(parseChunks([bytes.subarray(0, 8)])).toStrictEqual([]);
  });

  it('reports retry and comments through callbacks', () => {
    const retries: number[] = [];
    const comments: string[] = [];
    parseChunks([': keep-alive\n:x\nretry: 10\n\nretry: x\n'], { retries, comments });
    expect(retries).toEqual([10]);
    expect(comments).toEqual(['keep-alive', 'x']);
  });

  it('keeps the id of the last event that had one, across events and end()', () => {
    const p = createSseParser({ onEvent: () => undefined });
    p.feed('id: 5\ndata: x\n\ndata: y\n\n');
    expect(p.lastEventId()).toBe('5');
    p.feed('id: 6\ndata: z\n\n');
    p.end();
    expect(p.lastEventId()).toBe('6'); // kept for a reconnection
    p.feed('id\ndata: z\n\n');
    expect(p.lastEventId()).toBe('');
    p.feed('id: 7\ndata: z\n');
    expect(p.lastEventId()).toBe(''); // set when the event is dispatched, not at the id line
    p.feed('\n');
    expect(p.lastEventId()).toBe('7');
    p.feed('id: 8\ndata: w\n');
    p.end(); // an unfinished event's id is dropped
    expect(p.lastEventId()).toBe('7');
    p.reset();
    expect(p.lastEventId()).toBe('');
  });

  it('retry goes on the next event only', () => {
    expect(parseChunks(['retry: 5\ndata: a\n\ndata: b\n\nretry: 7\n\nretry: 9\ndata: c\n\n'])).toStrictEqual([
      ev('a', { retry: 5 }),
      ev('b'),
      ev('c', { retry: 9 }),
    ]);
  });

  it('a CR ending a chunk ends the line at once: the event is not held until more input comes', () => {
    const events: SseEvent[] = [];
    const p = createSseParser({ onEvent: (e) => events.push(e) });
    p.feed('data: a\r');
    p.feed('\r');
    expect(events).toStrictEqual([ev('a')]);
    // control: eventsource-parser alone holds that CR back until the next chunk
    const peer: string[] = [];
    const bare = createParser({ onEvent: (e) => peer.push(e.data) });
    bare.feed('data: a\r');
    bare.feed('\r');
    expect(peer).toEqual([]);
    bare.feed('\n');
    expect(peer).toEqual(['a']);
    // and the LF of a CRLF split after the CR is not a second line end
    p.feed('data: b\r');
    p.feed('\n');
    expect(events).toStrictEqual([ev('a')]);
    p.feed('\r\n');
    expect(events).toStrictEqual([ev('a'), ev('b')]);
  });

  it('text that starts with the characters of a BOM read as Latin-1 stays text', () => {
    expect(parseChunks(['\u00EF\u00BB\u00BFdata: x\n\ndata: y\n\n'])).toStrictEqual([ev('y')]);
    // control: eventsource-parser alone drops those three characters
    const peer: string[] = [];
    createParser({ onEvent: (e) => peer.push(e.data) }).feed('\u00EF\u00BB\u00BFdata: x\n\n');
    expect(peer).toEqual(['x']);
  });

  it('bad options throw a ValidationError naming the function when the parser or operator is created', () => {
    const thrown = (make: () => unknown): ValidationError => {
      try {
        make();
      } catch (error) {
        expect(error).toBeInstanceOf(ValidationError);
        return error as ValidationError;
      }
      throw new Error('nothing thrown');
    };
    for (const bad of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53, '5']) {
      for (const key of ['maxLineLength', 'maxEventSize'] as const) {
        const parser = thrown(() => createSseParser({ onEvent: () => undefined, [key]: bad as number }));
        expect(parser).toMatchObject({ source: 'local', endpoint: 'createSseParser' });
        expect(parser.issues.map((i) => i.loc)).toEqual([['options', key]]);
        const operator = thrown(() => parseSse({ [key]: bad as number }));
        expect(operator).toMatchObject({ source: 'local', endpoint: 'parseSse' });
        expect(operator.issues.map((i) => i.loc)).toEqual([['options', key]]);
        expect(operator.message).toMatch(new RegExp(`^Invalid options for parseSse: options\\.${key}: `));
      }
    }
    expect(thrown(() => parseSse({ onRetry: 5 as never })).issues.map((i) => i.loc)).toEqual([['options', 'onRetry']]);
    expect(thrown(() => parseSse({ onComment: 'x' as never })).issues.map((i) => i.loc)).toEqual([['options', 'onComment']]);
    expect(thrown(() => createSseParser({} as never)).issues.map((i) => i.loc)).toEqual([['options', 'onEvent']]);
    // control: the smallest valid limits and real callbacks pass
    expect(() => parseSse({ maxLineLength: 1, maxEventSize: 1, onRetry: () => undefined, onComment: () => undefined })).not.toThrow();
    expect(() => createSseParser({ onEvent: () => undefined, maxLineLength: 1, maxEventSize: 1 })).not.toThrow();
  });

  it('reset forgets a partial event and the BOM state', () => {
    const events: SseEvent[] = [];
    const p = createSseParser({ onEvent: (e) => events.push(e) });
    p.feed('data: partial');
    p.reset();
    p.feed('\uFEFFdata: fresh\n\n');
    expect(events).toStrictEqual([ev('fresh')]);
  });

  it('fails with SseError past maxLineLength, however the line is chunked', () => {
    const events: SseEvent[] = [];
    const p = createSseParser({ onEvent: (e) => events.push(e), maxLineLength: 10 });
    p.feed('data: 1234\n\n');
    expect(events).toHaveLength(1);
    p.feed('data: ');
    p.feed('12');
    let error: unknown;
    try {
      p.feed('345');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(SseError);
    expect(error).toBeInstanceOf(RxVoiceError);
    expect((error as SseError).code).toBe('sse');
    expect((error as SseError).type).toBe('max-line-length');
    expect(() => createSseParser({ onEvent: () => undefined, maxLineLength: 4 }).feed('data: x\n')).toThrow(SseError);
  });

  it('fails with SseError past maxEventSize', () => {
    const p = createSseParser({ onEvent: () => undefined, maxEventSize: 8 });
    p.feed('data: 1234\ndata: 567\n\n'); // 8 characters: fine
    expect(() => p.feed('data: 1234\ndata: 5678\n')).toThrow(/exceeds 8/);
    // an event dispatched within one chunk is checked too
    const events: SseEvent[] = [];
    const q = createSseParser({ onEvent: (e) => events.push(e), maxEventSize: 8 });
    expect(() => q.feed('data: 12345678\n\ndata: 123456789\n\n')).toThrow(SseError);
    expect(events).toStrictEqual([ev('12345678')]);
    // after the error the parser starts afresh
    q.feed('data: ok\n\n');
    expect(events).toStrictEqual([ev('12345678'), ev('ok')]);
  });
});

describe('createSseParser: random chunkings', () => {
  const fixture =
    '\uFEFF: comment\r\nretry: 3000\nid: 1\nevent: delta\ndata: {"a":"é😀"}\r\n\r\n' +
    'data: first\rdata: second\r\rid: x\u0000y\ndata\n\n:tail\ndata: last\n\ndata: dropped';
  const expected = parseChunks([fixture]);

  it('fixture sanity', () => {
    expect(expected).toStrictEqual([
      { event: 'delta', data: '{"a":"é😀"}', id: '1', retry: 3000 },
      ev('first\nsecond'),
      ev(''),
      ev('last'),
    ]);
  });

  it('same events for any byte chunking', () => {
    const bytes = enc.encode(fixture);
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: bytes.length }), { maxLength: 30 }), (cuts) => {
        expect(parseChunks(cut(bytes, cuts))).toStrictEqual(expected);
      }),
      { numRuns: 300 },
    );
  });
});

/** Adversarial SSE-ish text: line ends of every kind, field names, colons, BOMs, NULs, unicode. */
const sseish = fc
  .array(
    fc.oneof(
      fc.constantFrom('\n', '\r', '\r\n', '\n\n', '\r\r', ':', ': ', ' ', '\uFEFF', '\u0000', 'data', 'data:', 'data: ', 'event:', 'event: ', 'id:', 'id: ', 'retry:', 'retry: ', '12', 'x', 'é', '😀', '日本', '-1', 'foo:'),
      fc.string({ maxLength: 4 }),
    ),
    { maxLength: 60 },
  )
  .map((parts) => parts.join(''));

/**
 * Line-structured SSE: field lines (known and unknown names, every separator form, values
 * with NUL, BOM, digits, unicode), comments and blank lines, with CR, LF or CRLF line ends
 * and sometimes a leading BOM. Unlike `sseish`, most inputs dispatch events.
 */
const sseValue = fc.oneof(
  fc.constantFrom('', 'x', '12', '3000', '-1', '1a', ' lead', 'é', '😀', '日本', '\u0000', 'a\u0000b', '\uFEFF', 'a: b', ':'),
  fc.string({ maxLength: 6 }),
);
const sseLine = fc.oneof(
  { weight: 6, arbitrary: fc.tuple(fc.constantFrom('data', 'data', 'event', 'id', 'retry', 'foo', 'Data', 'data '), fc.constantFrom(':', ': ', ':  ', ''), sseValue).map(([n, sep, v]) => (sep === '' ? n : n + sep + v)) },
  { weight: 1, arbitrary: sseValue.map((v) => ':' + v) },
  { weight: 3, arbitrary: fc.constant('') },
);
const sseStructured = fc
  .tuple(fc.boolean(), fc.array(fc.tuple(sseLine, fc.constantFrom('\n', '\r', '\r\n')), { minLength: 4, maxLength: 30 }))
  .map(([bom, lines]) => (bom ? '\uFEFF' : '') + lines.map(([line, end]) => line + end).join(''));

/** eventsource-parser fed the way its own EventSourceParserStream feeds it: UTF-8 decoded text. */
function peerEvents(chunks: Uint8Array[]): Array<{ event: string; data: string; id: string | undefined }> {
  return peerTrace(chunks).filter((e): e is { event: string; data: string; id: string | undefined } => typeof e === 'object');
}

/** Everything eventsource-parser reports, in order: events, `retry <ms>`, `comment <text>`. */
function peerTrace(chunks: Uint8Array[]): Array<{ event: string; data: string; id: string | undefined } | string> {
  const out: Array<{ event: string; data: string; id: string | undefined } | string> = [];
  const parser = createParser({
    onEvent: (e) => out.push({ event: e.event ?? 'message', data: e.data, id: e.id }),
    onRetry: (ms) => out.push(`retry ${ms}`),
    onComment: (text) => out.push(`comment ${text}`),
  });
  const decoder = new TextDecoder();
  for (const c of chunks) parser.feed(decoder.decode(c, { stream: true }));
  parser.feed(decoder.decode());
  return out;
}

/** The same trace from our parser. */
function ourTrace(chunks: Uint8Array[]): Array<{ event: string; data: string; id: string | undefined } | string> {
  const out: Array<{ event: string; data: string; id: string | undefined } | string> = [];
  const parser = createSseParser({
    onEvent: (e) => out.push({ event: e.event, data: e.data, id: e.id }),
    onRetry: (ms) => out.push(`retry ${ms}`),
    onComment: (text) => out.push(`comment ${text}`),
  });
  for (const c of chunks) parser.feed(c);
  parser.end();
  return out;
}

/** Arbitrary bytes, heavy on line ends, field names, BOM bytes and broken UTF-8 sequences. */
const sseBytes = fc
  .array(
    fc.oneof(
      fc.constantFrom('data: ', 'data:', 'event: e', 'id: 1', 'retry: 5', ':c', '\n', '\r', '\r\n', '\n\n', 'x', ' ').map((t) => [...enc.encode(t)]),
      fc.array(fc.constantFrom(0xef, 0xbb, 0xbf, 0xc0, 0xc2, 0xc3, 0xe0, 0xed, 0xf0, 0xf4, 0xf5, 0x80, 0x9f, 0xa0, 0xa9, 0xff, 0x00), { minLength: 1, maxLength: 4 }),
    ),
    { maxLength: 50 },
  )
  .map((parts) => Uint8Array.from(parts.flat()));

describe('bytes: any chunking equals decoding the whole input first', () => {
  it('random bytes, broken UTF-8 included, random chunkings', () => {
    fc.assert(
      fc.property(sseBytes, fc.array(fc.nat(), { maxLength: 12 }), (bytes, cuts) => {
        const whole = parseChunks([new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes)]);
        expect(parseChunks(cut(bytes, cuts))).toStrictEqual(whole);
      }),
      { numRuns: Number(process.env.SSE_DIFF_RUNS ?? 1500) },
    );
  });

  it('strings and bytes mixed in one stream', () => {
    const bytes = enc.encode('data: é');
    expect(parseChunks([bytes.subarray(0, 7), 'x\n\n'])).toStrictEqual([ev('\uFFFDx')]);
    expect(parseChunks([new Uint8Array([0xef, 0xbb]), 'data: y\n\n'])).toStrictEqual([]);
    expect(parseChunks([new Uint8Array([0xef]), new Uint8Array([0xbb, 0xbf]), enc.encode('data: z\n\n')])).toStrictEqual([ev('z')]);
  });

  it('maxLineLength counts characters, for bytes too', () => {
    const line = 'data: ' + 'é'.repeat(10) + '\n\n'; // 16 characters, 26 bytes
    const ok = createSseParser({ onEvent: () => undefined, maxLineLength: 16 });
    ok.feed(enc.encode(line));
    const tooSmall = createSseParser({ onEvent: () => undefined, maxLineLength: 15 });
    expect(() => tooSmall.feed(enc.encode(line))).toThrow(SseError);
    const split = createSseParser({ onEvent: () => undefined, maxLineLength: 15 });
    const b = enc.encode(line);
    expect(() => {
      split.feed(b.subarray(0, 9));
      split.feed(b.subarray(9));
    }).toThrow(SseError);
  });
});

describe('maxLineLength: exact, however the stream is chunked', () => {
  const lineChars = fc.constantFrom('a', ' ', ':', 'é', '日', '😀');
  const lines = fc.array(
    fc.tuple(fc.array(lineChars, { maxLength: 40 }).map((cs) => cs.join('')), fc.constantFrom('\n', '\r\n', '\r')),
    { minLength: 1, maxLength: 40 },
  );

  it('an SseError exactly when some line is longer than the limit (bytes or text, any chunking)', () => {
    let tooLong = 0;
    fc.assert(
      fc.property(lines, fc.boolean(), fc.integer({ min: 1, max: 60 }), fc.array(fc.nat(), { maxLength: 30 }), fc.boolean(), (ls, unterminated, limit, cuts, asText) => {
        const text = ls.map(([l, end], i) => (unterminated && i === ls.length - 1 ? l : l + end)).join('');
        const longest = Math.max(...ls.map(([l]) => l.length));
        const bytes = enc.encode(text);
        const chunks: Array<string | Uint8Array> = asText ? cut(text, cuts) : cut(bytes, cuts);
        const p = createSseParser({ onEvent: () => undefined, maxLineLength: limit });
        let error: unknown;
        try {
          for (const c of chunks) p.feed(c);
        } catch (caught) {
          error = caught;
        }
        if (longest > limit) {
          tooLong++;
          expect(error).toBeInstanceOf(SseError);
          expect(error).toMatchObject({ type: 'max-line-length', limit });
        } else {
          expect(error).toBeUndefined();
        }
      }),
      { numRuns: 1000 },
    );
    expect(tooLong).toBeGreaterThan(100);
  });

  it('many small chunks of short lines, then a line at the limit and one past it', () => {
    const limit = 40_000; // more than the characters counted between two exact measures
    const short = enc.encode('data: short\n\n'.repeat(3000));
    const feedSmall = (p: SseParser, bytes: Uint8Array): void => {
      for (let i = 0; i < bytes.length; i += 7) p.feed(bytes.subarray(i, i + 7));
    };
    const events: SseEvent[] = [];
    const p = createSseParser({ onEvent: (e) => events.push(e), maxLineLength: limit });
    feedSmall(p, short);
    feedSmall(p, enc.encode('data: ' + 'x'.repeat(limit - 6) + '\n\n'));
    expect(events).toHaveLength(3001);
    feedSmall(p, short);
    expect(() => feedSmall(p, enc.encode('data: ' + 'x'.repeat(limit - 5) + '\n\n'))).toThrow(SseError);
  });
});

describe('differential: eventsource-parser', () => {
  it('same events, retries and comments, in the same order, on random inputs and random chunkings', () => {
    let withEvents = 0;
    let runs = 0;
    fc.assert(
      fc.property(fc.oneof({ weight: 4, arbitrary: sseStructured }, { weight: 1, arbitrary: sseish }), fc.array(fc.nat(), { maxLength: 12 }), (text, cuts) => {
        // eventsource-parser holds a CR that ends a chunk until a later chunk brings a line
        // end, so at the end of input it may still hold whole lines; a trailing LF plus a
        // comment line flushes them without starting or ending an event of its own.
        const bytes = enc.encode(text + '\n:end\n');
        const chunks = cut(bytes, cuts);
        const ours = ourTrace(chunks);
        expect(ours).toStrictEqual(peerTrace(chunks));
        runs++;
        if (ours.some((e) => typeof e === 'object')) withEvents++;
      }),
      { numRuns: Number(process.env.SSE_DIFF_RUNS ?? 1500) },
    );
    // the inputs are not so random that they prove nothing: most of them carry events
    expect(withEvents / runs).toBeGreaterThan(0.5);
  });

  it('same events on a realistic translation stream, split at every byte', () => {
    const text =
      'retry: 3000\n\n: keep-alive\n\n' +
      ['Hallo', ' Welt.', ' Wie', ' geht', ' es', ' dir?', ' Schön 😀', ''].map((piece, i) => `id: ${i}\ndata: ${piece}\n\n`).join('') +
      'event: error\ndata: upstream failed\r\n\r\n';
    const bytes = enc.encode(text);
    const whole = peerTrace([bytes]);
    expect(whole.filter((e) => typeof e === 'object')).toHaveLength(9);
    for (let i = 0; i <= bytes.length; i++) {
      const chunks = [bytes.subarray(0, i), bytes.subarray(i)];
      expect(ourTrace(chunks)).toStrictEqual(whole);
    }
  });
});

describe('parseSse operator', () => {
  const scheduler = () =>
    new TestScheduler((actual, expected) => {
      expect(actual).toStrictEqual(expected);
    });

  it('marbles: many values, split events', () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('-a--b--c-|', { a: 'data: x\n', b: '\ndata: ', c: 'y\n\n' });
      expectObservable(source.pipe(parseSse())).toBe('----X--Y-|', { X: ev('x'), Y: ev('y') });
      expectSubscriptions(source.subscriptions).toBe('^--------!');
    });
  });

  it('marbles: empty, never, one value', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('|').pipe(parseSse())).toBe('|');
      expectObservable(cold('-').pipe(parseSse())).toBe('-');
      expectObservable(cold('--a--|', { a: 'data: 1\n\n' }).pipe(parseSse())).toBe('--A--|', { A: ev('1') });
    });
  });

  it('marbles: an unfinished event is dropped on complete', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('-a-|', { a: 'data: 1\n' }).pipe(parseSse())).toBe('---|');
    });
  });

  it('marbles: source error passes through', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const error = new Error('boom');
      expectObservable(cold('-a-#', { a: 'data: 1\n\n' }, error).pipe(parseSse())).toBe('-A-#', { A: ev('1') }, error);
    });
  });

  it('marbles: never-ending source, early unsubscribe', () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('-a-b-', { a: 'data: 1\n\n', b: 'data: 2\n\n' });
      expectObservable(source.pipe(parseSse()), '^--!').toBe('-A-', { A: ev('1') });
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
  });

  it('marbles: a limit error ends the output with SseError', () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('-a-b-c|', { a: 'data: 1\n\n', b: 'data: 123456789', c: 'x' });
      const error = new SseError('max-line-length', 10, 'SSE line exceeds 10 characters');
      expectObservable(source.pipe(parseSse({ maxLineLength: 10 }))).toBe('-A-#', { A: ev('1') }, error);
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
  });

  it('marbles: a limit crossed only at completion (a cut character decoded as U+FFFD) errors the output instead of completing it', () => {
    scheduler().run(({ cold, expectObservable }) => {
      // 'data: 12345' is 11 code units, the limit; the lone first byte of '€' becomes one more at the end
      const source = cold('-a-|', { a: Uint8Array.of(...enc.encode('data: 12345'), 0xe2) });
      const error = new SseError('max-line-length', 11, 'SSE line exceeds 11 characters');
      expectObservable(source.pipe(parseSse({ maxLineLength: 11 }))).toBe('---#', undefined, error);
      // control: the same line one code unit shorter is dropped unfinished and the output completes
      const shorter = cold('-a-|', { a: Uint8Array.of(...enc.encode('data: 1234'), 0xe2) });
      expectObservable(shorter.pipe(parseSse({ maxLineLength: 11 }))).toBe('---|');
    });
  });

  it('marbles: a throwing callback errors the output', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const error = new Error('bad callback');
      const source = cold('-a-|', { a: 'retry: 5\n' });
      expectObservable(
        source.pipe(
          parseSse({
            onRetry: () => {
              throw error;
            },
          }),
        ),
      ).toBe('-#', undefined, error);
    });
  });

  it('take(1) stops early; bytes with a split emoji decode', async () => {
    const bytes = enc.encode('data: 😀\n\ndata: b\n\n');
    const out = await lastValueFrom(
      from([bytes.subarray(0, 7), bytes.subarray(7)]).pipe(parseSse(), map((e) => e.data), toArray()),
    );
    expect(out).toEqual(['😀', 'b']);
    const first = await lastValueFrom(concat(of('data: a\n\ndata: b\n\n'), NEVER).pipe(parseSse(), take(1)));
    expect(first).toStrictEqual(ev('a'));
    await expect(lastValueFrom(throwError(() => new Error('x')).pipe(parseSse()))).rejects.toThrow('x');
  });
});
