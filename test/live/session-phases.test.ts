/**
 * speak(): a session's phases in virtual time with a fake WebSocket: what is sent before and
 * after session.ready, reconnects in a row, frames of a socket closed, skipped segments,
 * session.done and closes after every text, socket errors, text that is not a string.
 */
import { describe, expect, it } from 'vitest';
import { TestScheduler } from 'rxjs/testing';
import { map, NEVER, of } from 'rxjs';
import { speak } from '../../src/live/session.js';
import type { LiveSpeechEvent } from '../../src/live/events.js';
import type { SpeechMetrics } from '../../src/live/metrics.js';
import { FakeSocket, fakeSocketClass, readyPeers, scriptedConnection } from './fake-socket.js';

describe('speak: phases, frames and closes in virtual time (fake WebSocket)', () => {
  it('two attempts in a row: `reconnected` counts 2; with everything delivered nothing is sent again (no empty text.chunk)', () => {
    const scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
    scheduler.run(({ cold }) => {
      const opened: number[] = [];
      const sockets: FakeSocket[] = [];
      FakeSocket.created = sockets;
      const Ctor = fakeSocketClass(
        scheduler,
        (socket, index) => {
          // the first session speaks the text it has, then drops; the second drops before opening; the third is ready
          if (index === 1) return socket.peerClose(1006, '');
          socket.peerOpen();
          socket.peerSend({ type: 'session.ready', session_id: `s${index}`, run_id: index + 1 });
          if (index > 0) return;
          socket.peerSend({ type: 'segment.start', segment_id: 0, text: 'One.' });
          socket.peerSend({ type: 'segment.done', segment_id: 0 });
          socket.peerClose(1006, '');
        },
        opened,
      );
      const seen: Array<[number, LiveSpeechEvent]> = [];
      const subscription = cold('a 99ms b', { a: 'One.', b: ' Two.' })
        .pipe(
          speak(
            { wsUrl: 'ws://fake', apiKey: 'k', WebSocket: Ctor, headersSupported: false },
            { voice_id: 1, scheduler, clientBoundaries: false, reconnect: { maxAttempts: 3, baseDelayMs: 10, random: () => 1 } },
          ),
        )
        .subscribe((event) => seen.push([scheduler.now(), event]));
      scheduler.schedule(() => subscription.unsubscribe(), 150);
      scheduler.flush();
      // delays 10 then 20: the count was not reset between the two attempts
      expect(opened).toEqual([0, 11, 32]);
      expect(seen.filter(([, e]) => e.type === 'reconnected')).toEqual([[33, { type: 'reconnected', attempt: 2, session_id: 's2', run_id: 3, resent: '' }]]);
      // the new session gets the text pushed after it (the control), nothing before it
      expect(sockets[2]!.sent.map((f) => JSON.parse(f) as { type: string; text?: string }).map((f) => [f.type, f.text])).toEqual([
        ['session.start', undefined],
        ['text.chunk', ' Two.'],
      ]);
    });
  });

  it('a WebSocket constructor that throws: a retryable connection error without the key in it, retried with reconnect', () => {
    const scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
    scheduler.run(({ expectObservable }) => {
      const opened: number[] = [];
      const Ready = fakeSocketClass(
        scheduler,
        (socket) => {
          socket.peerOpen();
          socket.peerSend({ type: 'session.ready', session_id: 's', run_id: 1 });
          socket.peerSend({ type: 'segment.start', segment_id: 0, text: 'One.' });
          socket.peerSend({ type: 'segment.done', segment_id: 0 });
          socket.peerSend({ type: 'session.done' });
          socket.peerClose(1000, '');
        },
        opened,
      );
      let failures = 0;
      const Failing = class extends Ready {
        constructor(url: string) {
          if (failures-- > 0) throw new Error(`no socket for ${url}`);
          super(url);
        }
      };
      const connection = { wsUrl: 'ws://fake', apiKey: 'key-in-the-address-0123456789', WebSocket: Failing, headersSupported: false };
      failures = 1;
      expectObservable(of('One.').pipe(speak(connection, { voice_id: 1, scheduler }))).toBe(
        '#',
        undefined,
        expect.objectContaining({ code: 'connection', retryable: true, unspoken: 'One.', message: 'Could not open the live session: no socket for ws://fake/live-tts/ws?api_key=***' }),
      );
      scheduler.flush();
      // with reconnect: tried again after the backoff, and spoken
      failures = 1;
      const result$ = of('One.').pipe(
        speak(connection, { voice_id: 1, scheduler, reconnect: { maxAttempts: 1, baseDelayMs: 10, random: () => 1 } }),
        map((e) => e.type),
      );
      expectObservable(result$).toBe('10ms -(rsdD|)', { r: 'ready', s: 'segmentStart', d: 'segmentDone', D: 'done' });
      scheduler.flush();
      expect(opened).toEqual([10]);
    });
  });

  it('frames of a socket the session closed (no session.ready in time) are ignored', () => {
    const scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
    scheduler.run(({ cold, expectObservable }) => {
      const Ctor = fakeSocketClass(
        scheduler,
        (socket, index) => {
          socket.peerOpen();
          if (index === 0) {
            // late: the session closed this socket at 20 and waits to reconnect at 30
            scheduler.schedule(() => {
              socket.peerSend({ type: 'session.ready', session_id: 'late', run_id: 1 }, true);
              socket.peerSend({ type: 'segment.start', segment_id: 0, text: 'One.' }, true);
              socket.peerSend(new Uint8Array([1]), true);
            }, 24);
            return;
          }
          socket.peerSend({ type: 'session.ready', session_id: 's1', run_id: 2 });
        },
        [],
      );
      const result$ = cold('a', { a: 'One.' }).pipe(
        speak(
          { wsUrl: 'ws://fake', apiKey: 'k', WebSocket: Ctor, headersSupported: false },
          { voice_id: 1, scheduler, readyTimeoutMs: 20, reconnect: { maxAttempts: 1, baseDelayMs: 10, random: () => 1 } },
        ),
        map((e) => (e.type === 'ready' ? e.session_id : e.type)),
      );
      expectObservable(result$, '^ 50ms !').toBe('31ms s', { s: 's1' });
    });
  });

  it('without clientBoundaries each non-empty string is one text.chunk, before and after session.ready; empty strings are skipped', () => {
    const scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
    scheduler.run(({ cold, expectObservable }) => {
      const { sockets, Ctor } = readyPeers(scheduler);
      const text = cold('(ab)--c-d', { a: 'One', b: '', c: '', d: ' two' });
      expectObservable(text.pipe(speak({ wsUrl: 'ws://fake', apiKey: 'k', WebSocket: Ctor, headersSupported: false }, { voice_id: 1, scheduler, clientBoundaries: false })), '^ 20ms !').toBe(
        '-r',
        { r: expect.objectContaining({ type: 'ready' }) },
      );
      scheduler.flush();
      expect(sockets[0]!.sent.map((f) => JSON.parse(f) as { type: string; text?: string }).map((f) => [f.type, f.text])).toEqual([
        ['session.start', undefined],
        ['text.chunk', 'One'],
        ['text.chunk', ' two'],
      ]);
    });
  });

  it('a segment skipped with a text other than the one sent: segmentSkipped, then segmentMismatch', () => {
    const scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
    scheduler.run(({ cold, expectObservable }) => {
      const connection = scriptedConnection(
        scheduler,
        [
          { type: 'session.ready', session_id: 's', run_id: 1 },
          { type: 'segment.skipped', segment_id: 0, text: 'Something else.' },
          { type: 'segment.skipped', segment_id: 1, text: ' Two.' },
        ],
      );
      const result$ = cold('a', { a: 'One. Two.' }).pipe(
        speak(connection, { voice_id: 1, scheduler, clientBoundaries: false }),
      );
      expectObservable(result$, '^ 10ms !').toBe('-(rkmK)', {
        r: expect.objectContaining({ type: 'ready' }),
        k: { type: 'segmentSkipped', segment_id: 0, text: 'Something else.' },
        m: { type: 'segmentMismatch', segment_id: 0, sent: 'One.', reported: 'Something else.' },
        // control: a skipped segment worded as sent has no mismatch
        K: { type: 'segmentSkipped', segment_id: 1, text: ' Two.' },
      });
    });
  });

  it('metrics: the first text is the first non-empty string (an empty one is no text)', () => {
    const scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
    scheduler.run(({ cold, expectObservable }) => {
      const { Ctor } = readyPeers(scheduler);
      const reports: SpeechMetrics[] = [];
      const text = cold('a 49ms b', { a: '', b: 'One.' });
      for (const clientBoundaries of [true, false]) {
        expectObservable(
          text.pipe(speak({ wsUrl: 'ws://fake', apiKey: 'k', WebSocket: Ctor, headersSupported: false }, { voice_id: 1, scheduler, clientBoundaries, metrics: (r) => reports.push(r) })),
          '^ 60ms !',
        ).toBe('-r', { r: expect.objectContaining({ type: 'ready' }) });
      }
      scheduler.flush();
      expect(reports).toEqual([
        expect.objectContaining({ type: 'session', firstTextMs: 50, outcome: 'unsubscribed' }),
        expect.objectContaining({ type: 'session', firstTextMs: 50, outcome: 'unsubscribed' }),
      ]);
    });
  });

  it('session.done with a segment still open is a protocol error, even after a segment worded otherwise (when the ledger cannot tell what is missing)', () => {
    const scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
    scheduler.run(({ cold, expectObservable }) => {
      const connection = scriptedConnection(
        scheduler,
        [
          { type: 'session.ready', session_id: 's', run_id: 1 },
          { type: 'segment.start', segment_id: 0, text: 'Something else.' },
          { type: 'segment.done', segment_id: 0 },
          { type: 'segment.start', segment_id: 1, text: ' Two.' },
          { type: 'session.done' },
        ],
      );
      const result$ = cold('(a|)', { a: 'One. Two.' }).pipe(
        speak(connection, { voice_id: 1, scheduler, clientBoundaries: false }),
        map((e) => e.type),
      );
      expectObservable(result$).toBe('-(rsmdt#)', { r: 'ready', s: 'segmentStart', m: 'segmentMismatch', d: 'segmentDone', t: 'segmentStart' }, expect.objectContaining({ code: 'protocol', message: 'The server sent session.done before all text was spoken' }));
    });
  });

  it("the ready event carries the configuration the service echoed, else the one sent", () => {
    const scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
    scheduler.run(({ expectObservable }) => {
      const echoed = { voice_id: 1, output_format: 'mp3', sample_rate: 24000 };
      const Ctor = fakeSocketClass(
        scheduler,
        (socket, index) => (socket.peerOpen(), socket.peerSend(index === 0 ? { type: 'session.ready', session_id: 's', run_id: 1, config: echoed } : { type: 'session.ready', session_id: 's', run_id: 2 })),
        [],
      );
      const connection = { wsUrl: 'ws://fake', apiKey: 'k', WebSocket: Ctor, headersSupported: false };
      expectObservable(NEVER.pipe(speak(connection, { voice_id: 1, scheduler })), '^ 5ms !').toBe('-r', { r: { type: 'ready', session_id: 's', run_id: 1, config: echoed } });
      expectObservable(NEVER.pipe(speak(connection, { voice_id: 1, scheduler })), '^ 5ms !').toBe('-r', {
        r: { type: 'ready', session_id: 's', run_id: 2, config: expect.objectContaining({ voice_id: 1, output_format: 'wav', language: 'en-us' }) },
      });
    });
  });

  it('a drop while the text source is still open is an error, though every text sent was delivered', () => {
    const scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
    scheduler.run(({ cold, expectObservable }) => {
      const connection = scriptedConnection(
        scheduler,
        [
          { type: 'session.ready', session_id: 's', run_id: 1 },
          { type: 'segment.start', segment_id: 0, text: 'One.' },
          { type: 'segment.done', segment_id: 0 },
        ],
        [1006, ''],
      );
      // the control (the same session, its source complete, completes) is 'a connection lost after every text was delivered completes'
      const result$ = cold('a', { a: 'One.' }).pipe(
        speak(connection, { voice_id: 1, scheduler, clientBoundaries: false }),
        map((e) => e.type),
      );
      expectObservable(result$).toBe('-(rsd#)', { r: 'ready', s: 'segmentStart', d: 'segmentDone' }, expect.objectContaining({ code: 'connection', closeCode: 1006, unspoken: '' }));
    });
  });

  it('a drop with a segment under way ends in an error, though the service started it beyond the text sent', () => {
    const scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
    scheduler.run(({ cold, expectObservable }) => {
      const connection = scriptedConnection(
        scheduler,
        [
          { type: 'session.ready', session_id: 's', run_id: 1 },
          { type: 'segment.start', segment_id: 0, text: 'One.' },
          { type: 'segment.done', segment_id: 0 },
          { type: 'segment.start', segment_id: 1, text: 'Extra.' },
        ],
        [1006, ''],
      );
      const result$ = cold('(a|)', { a: 'One.' }).pipe(
        speak(connection, { voice_id: 1, scheduler, clientBoundaries: false }),
        map((e) => e.type),
      );
      expectObservable(result$).toBe('-(rsdtm#)', { r: 'ready', s: 'segmentStart', d: 'segmentDone', t: 'segmentStart', m: 'segmentMismatch' }, expect.objectContaining({ code: 'connection', closeCode: 1006 }));
    });
  });

  it('a refusal (4402) after every text was delivered is an error, with or without session.done before it (control: 1006 completes)', () => {
    const scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
    scheduler.run(({ expectObservable }) => {
      const run = (sessionDone: boolean, code: number) => {
        const Ctor = fakeSocketClass(
          scheduler,
          (socket) => {
            socket.peerOpen();
            socket.peerSend({ type: 'session.ready', session_id: 's', run_id: 1 });
            socket.peerSend({ type: 'segment.start', segment_id: 0, text: 'One.' });
            socket.peerSend({ type: 'segment.done', segment_id: 0 });
            if (sessionDone) socket.peerSend({ type: 'session.done' });
            socket.peerClose(code, '');
          },
          [],
        );
        return of('One.').pipe(
          speak({ wsUrl: 'ws://fake', apiKey: 'k', WebSocket: Ctor, headersSupported: false }, { voice_id: 1, scheduler, reconnect: { maxAttempts: 3 } }),
          map((e) => e.type),
        );
      };
      const values = { r: 'ready', s: 'segmentStart', d: 'segmentDone', D: 'done' };
      const credits = expect.objectContaining({ code: 'credits_exhausted', closeCode: 4402, unspoken: '' });
      expectObservable(run(false, 4402)).toBe('-(rsd#)', values, credits);
      expectObservable(run(true, 4402)).toBe('-(rsdD#)', values, credits);
      expectObservable(run(false, 1006)).toBe('-(rsd|)', values);
      expectObservable(run(true, 1006)).toBe('-(rsdD|)', values);
    });
  });

  it("items that are not strings (a JavaScript caller's mistake) are skipped, with or without clientBoundaries", () => {
    for (const clientBoundaries of [true, false]) {
      const scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
      scheduler.run(({ cold, expectObservable }) => {
        const { sockets, Ctor } = readyPeers(scheduler);
        const text = cold('-(abcd|)', { a: 'Hello ', b: 42 as unknown as string, c: undefined as unknown as string, d: 'there.' });
        expectObservable(text.pipe(speak({ wsUrl: 'ws://fake', apiKey: 'k', WebSocket: Ctor, headersSupported: false }, { voice_id: 1, scheduler, clientBoundaries })), '^ 10ms !').toBe('-r', {
          r: expect.objectContaining({ type: 'ready' }),
        });
        scheduler.flush();
        const frames = sockets[0]!.sent.map((f) => JSON.parse(f) as { type: string; text?: string });
        expect(frames.filter((f) => f.type === 'text.chunk').map((f) => f.text).join('')).toBe('Hello there.');
        expect(frames.at(-1)).toEqual({ type: 'text.done' });
      });
    }
  });

  it("a socket's error event with only an error object (no message, as some WebSockets give it) names the drop, without the key", () => {
    const scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
    scheduler.run(({ expectObservable }) => {
      const key = 'key-of-the-error-event-0123456789';
      const Ctor = fakeSocketClass(
        scheduler,
        (socket) => {
          socket.peerOpen();
          socket.peerError({ error: new Error(`read ECONNRESET (${key})`) });
          socket.peerClose(1006, '');
        },
        [],
      );
      expectObservable(of('One.').pipe(speak({ wsUrl: 'ws://fake', apiKey: key, WebSocket: Ctor, headersSupported: false }, { voice_id: 1, scheduler }))).toBe(
        '-#',
        undefined,
        expect.objectContaining({ code: 'connection', message: 'The live session closed abnormally (code 1006: read ECONNRESET (***))' }),
      );
    });
  });
});
