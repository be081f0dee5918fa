/** speak(): its timers (response timeout, close grace, reconnect backoff) in virtual time with a fake WebSocket. */
import { describe, expect, it } from 'vitest';
import { TestScheduler } from 'rxjs/testing';
import { map, NEVER, of, type Observable } from 'rxjs';
import { speak } from '../../src/live/session.js';
import { liveError } from './helpers.js';
import { FakeSocket, fakeSocketClass, readyPeers } from './fake-socket.js';

describe('speak: timers in virtual time (fake WebSocket)', () => {
  it('reconnects with exponential backoff capped at maxDelayMs, then gives up', () => {
    const scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
    scheduler.run(({ cold, expectObservable }) => {
      const opened: number[] = [];
      const Ctor = fakeSocketClass(scheduler, (socket) => socket.peerClose(1006, ''), opened);
      const result$ = cold('a', { a: 'Hello.' }).pipe(
        speak(
          { wsUrl: 'ws://fake', apiKey: 'k', WebSocket: Ctor, headersSupported: false },
          { voice_id: 1, scheduler, reconnect: { maxAttempts: 3, baseDelayMs: 10, maxDelayMs: 25, random: () => 1 } },
        ),
      );
      expectObservable(result$).toBe('59ms #', undefined, liveError('connection'));
      scheduler.flush();
      // closes at +1 after each open; delays 10, 20, 25 (capped)
      expect(opened).toEqual([0, 11, 32, 58]);
    });
  });

  it('reconnect delays are jittered: drawn from the upper half of the exponential delay', () => {
    const scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
    scheduler.run(({ cold, expectObservable }) => {
      const opened: number[] = [];
      const Ctor = fakeSocketClass(scheduler, (socket) => socket.peerClose(1006, ''), opened);
      const draws = [0, 0.5, 0];
      const result$ = cold('a', { a: 'Hello.' }).pipe(
        speak(
          { wsUrl: 'ws://fake', apiKey: 'k', WebSocket: Ctor, headersSupported: false },
          { voice_id: 1, scheduler, reconnect: { maxAttempts: 3, baseDelayMs: 20, maxDelayMs: 60, random: () => draws.shift()! } },
        ),
      );
      expectObservable(result$).toBe('74ms #', undefined, liveError('connection'));
      scheduler.flush();
      // full delays 20, 40, 60; jittered 10 (draw 0), 30 (draw 0.5), 30 (draw 0)
      expect(opened).toEqual([0, 11, 42, 73]);
      expect(draws).toEqual([]);
    });
  });

  it('unsubscribing clears the timers: no reconnect after a pending backoff, no ready timeout', () => {
    const scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
    scheduler.run(({ cold, expectObservable }) => {
      const opened: number[] = [];
      // first socket: dropped at +1; the reconnect would open at 1 + 100
      const Ctor = fakeSocketClass(scheduler, (socket) => socket.peerClose(1006, ''), opened);
      const result$ = cold('a', { a: 'Hello.' }).pipe(
        speak(
          { wsUrl: 'ws://fake', apiKey: 'k', WebSocket: Ctor, headersSupported: false },
          { voice_id: 1, scheduler, readyTimeoutMs: 20, reconnect: { maxAttempts: 3, baseDelayMs: 100, random: () => 1 } },
        ),
      );
      expectObservable(result$, '^ 50ms !').toBe('-');
      // at 60, after the unsubscribe at 51, nothing may still be scheduled (the backoff
      // timer would fire at 101)
      let pendingAt60 = -1;
      scheduler.schedule(() => (pendingAt60 = scheduler.actions.length), 60);
      scheduler.flush();
      expect(pendingAt60).toBe(0);
      expect(opened).toEqual([0]);
    });
  });

  it('a ready timeout is retried like a drop, and reported as TimeoutError at the end', () => {
    const scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
    scheduler.run(({ cold, expectObservable }) => {
      const opened: number[] = [];
      const Ctor = fakeSocketClass(scheduler, (socket) => socket.peerOpen(), opened);
      const result$ = cold('a', { a: 'Hello.' }).pipe(
        speak(
          { wsUrl: 'ws://fake', apiKey: 'k', WebSocket: Ctor, headersSupported: false },
          { voice_id: 1, scheduler, readyTimeoutMs: 100, reconnect: { maxAttempts: 1, baseDelayMs: 5, random: () => 1 } },
        ),
      );
      const sockets: FakeSocket[] = [];
      FakeSocket.created = sockets;
      expectObservable(result$).toBe('205ms #', undefined, liveError('timeout'));
      scheduler.flush();
      expect(opened).toEqual([0, 105]);
      // each socket closed at its timeout (the first is not left open when the second replaces it)
      expect(sockets.map((s) => s.closedWith)).toEqual([1000, 1000]);
    });
  });

  it('events, in virtual time, with a scripted peer; ids keep increasing across a reconnect', () => {
    const scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
    scheduler.run(({ cold, expectObservable }) => {
      const opened: number[] = [];
      const Ctor = fakeSocketClass(
        scheduler,
        (socket, index) => {
          socket.peerOpen();
          socket.peerSend({ type: 'session.ready', session_id: `s${index}`, run_id: index + 1 });
          if (index === 0) {
            socket.peerSend({ type: 'segment.start', segment_id: 0, text: 'One.' });
            socket.peerSend(new Uint8Array([1]));
            socket.peerSend({ type: 'segment.done', segment_id: 0 });
            socket.peerSend({ type: 'segment.start', segment_id: 1, text: 'Two.' });
            socket.peerSend(new Uint8Array([2]));
            socket.peerClose(1006, '');
          } else {
            socket.peerSend({ type: 'segment.start', segment_id: 0, text: ' Two.' });
            socket.peerSend(new Uint8Array([3]));
            socket.peerSend({ type: 'segment.done', segment_id: 0 });
            socket.peerSend({ type: 'session.done' });
            socket.peerClose(1000, '');
          }
        },
        opened,
      );
      const sockets: FakeSocket[] = [];
      FakeSocket.created = sockets;
      const result$ = cold('(ab|)', { a: 'One. ', b: 'Two.' }).pipe(
        speak(
          { wsUrl: 'ws://fake', apiKey: 'k y', WebSocket: Ctor, headersSupported: false },
          // already segmented text: each string is one text.chunk
          { voice_id: 1, scheduler, clientBoundaries: false, reconnect: { maxAttempts: 2, baseDelayMs: 10, random: () => 1 } },
        ),
      );
      expectObservable(result$).toBe('-(rsadtb)---(xSAEo|)', {
        r: { type: 'ready', session_id: 's0', run_id: 1, config: expect.objectContaining({ output_format: 'wav', voice_id: 1 }) },
        s: { type: 'segmentStart', segment_id: 0, text: 'One.' },
        a: { type: 'audio', segment_id: 0, bytes: new Uint8Array([1]) },
        d: { type: 'segmentDone', segment_id: 0 },
        t: { type: 'segmentStart', segment_id: 1, text: 'Two.' },
        b: { type: 'audio', segment_id: 1, bytes: new Uint8Array([2]) },
        // the new session's segment 0 is seen as 2: ids keep increasing
        x: { type: 'reconnected', attempt: 1, session_id: 's1', run_id: 2, resent: 'Two.' },
        S: { type: 'segmentStart', segment_id: 2, text: ' Two.' },
        A: { type: 'audio', segment_id: 2, bytes: new Uint8Array([3]) },
        E: { type: 'segmentDone', segment_id: 2 },
        o: { type: 'done' },
      });
      scheduler.flush();
      expect(opened).toEqual([0, 11]);
      expect(sockets.map((x) => x.url)).toEqual(['ws://fake/live-tts/ws?api_key=k+y', 'ws://fake/live-tts/ws?api_key=k+y']);
      expect(sockets[0]!.binaryType).toBe('arraybuffer');
      const frames = sockets.map((x) => x.sent.map((f) => (JSON.parse(f) as { type: string; text?: string })));
      expect(frames[0]!.map((f) => f.type)).toEqual(['session.start', 'text.chunk', 'text.chunk', 'text.done']);
      expect(frames[1]!.map((f) => [f.type, f.text])).toEqual([
        ['session.start', undefined],
        ['text.chunk', 'Two.'],
        ['text.done', undefined],
      ]);
    });
  });

  it('a session ready again after a reconnect, silent with the text sent again: its silence is timed too (responseTimeoutMs)', () => {
    const scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
    scheduler.run(({ cold, expectObservable }) => {
      const opened: number[] = [];
      const Ctor = fakeSocketClass(
        scheduler,
        (socket, index) => {
          socket.peerOpen();
          socket.peerSend({ type: 'session.ready', session_id: `s${index}`, run_id: index + 1 });
          // the first drops with the text unspoken; the second takes it and says nothing
          if (index === 0) socket.peerClose(1006, '');
        },
        opened,
      );
      const result$ = cold('(a|)', { a: 'One.' }).pipe(
        speak(
          { wsUrl: 'ws://fake', apiKey: 'k', WebSocket: Ctor, headersSupported: false },
          { voice_id: 1, scheduler, responseTimeoutMs: 90, reconnect: { maxAttempts: 1, baseDelayMs: 10, random: () => 1 } },
        ),
        map((e) => e.type),
      );
      // checked every 30 ms from the reconnect at 12: silent for 90 at 102
      expectObservable(result$).toBe('-r 10ms c 89ms #', { r: 'ready', c: 'reconnected' }, expect.objectContaining({ code: 'timeout', unspoken: 'One.' }));
      scheduler.flush();
      expect(opened).toEqual([0, 11]);
    });
  });

  it('unsubscribing while connecting leaves no timer behind (the ready timeout)', () => {
    const scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
    scheduler.run(({ cold, expectObservable }) => {
      const opened: number[] = [];
      const Ctor = fakeSocketClass(scheduler, () => undefined, opened);
      const result$ = cold('a', { a: 'One.' }).pipe(speak({ wsUrl: 'ws://fake', apiKey: 'k', WebSocket: Ctor, headersSupported: false }, { voice_id: 1, scheduler, readyTimeoutMs: 100 }));
      expectObservable(result$, '^ 4ms !').toBe('-');
      let pendingAt10 = -1;
      scheduler.schedule(() => (pendingAt10 = scheduler.actions.length), 10);
      scheduler.flush();
      expect(opened).toEqual([0]);
      expect(pendingAt10).toBe(0);
    });
  });

  it('the ready timer ends at session.ready, and with a drop while connecting: no timer left behind', () => {
    /** Scheduled actions left at 10, with a peer playing `script` (a session not unsubscribed: its timers are its own). */
    const pendingAt10 = (script: (socket: FakeSocket) => void, text$: Observable<string>, marble: string, values?: Record<string, unknown>, error?: unknown): number => {
      const scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
      let pending = -1;
      scheduler.run(({ expectObservable }) => {
        const Ctor = fakeSocketClass(scheduler, script, []);
        expectObservable(text$.pipe(speak({ wsUrl: 'ws://fake', apiKey: 'k', WebSocket: Ctor, headersSupported: false }, { voice_id: 1, scheduler, readyTimeoutMs: 100 }))).toBe(marble, values, error);
        scheduler.schedule(() => (pending = scheduler.actions.length), 10);
      });
      return pending;
    };
    // ready, nothing to speak yet (no response watch): nothing scheduled
    expect(pendingAt10((socket) => (socket.peerOpen(), socket.peerSend({ type: 'session.ready', session_id: 's', run_id: 1 })), NEVER, '-r', { r: expect.objectContaining({ type: 'ready' }) })).toBe(0);
    // dropped before session.ready: the session ends, its ready timer with it
    expect(pendingAt10((socket) => socket.peerClose(1006, ''), of('One.'), '-#', undefined, expect.objectContaining({ code: 'connection' }))).toBe(0);
  });

  it('text that comes after session.ready, to a silent service: its silence is timed from the text (responseTimeoutMs)', () => {
    const scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
    scheduler.run(({ cold, expectObservable }) => {
      const Ctor = fakeSocketClass(scheduler, (socket) => (socket.peerOpen(), socket.peerSend({ type: 'session.ready', session_id: 's', run_id: 1 })), []);
      const result$ = cold('10ms a', { a: 'One.' }).pipe(
        speak({ wsUrl: 'ws://fake', apiKey: 'k', WebSocket: Ctor, headersSupported: false }, { voice_id: 1, scheduler, clientBoundaries: false, responseTimeoutMs: 90 }),
        map((e) => e.type),
      );
      // nothing waited at session.ready (no watch then); checked every 30 ms from the text at 10: silent for 90 at 100
      expectObservable(result$).toBe('-r 98ms #', { r: 'ready' }, expect.objectContaining({ code: 'timeout', unspoken: 'One.' }));
    });
  });

  it('unsubscribing (barge-in) closes with 1000, unsubscribes the text, and emits nothing more', () => {
    const scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
    scheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const opened: number[] = [];
      const { sockets, Ctor } = readyPeers(
        scheduler,
        (socket) => {
          socket.peerSend({ type: 'segment.start', segment_id: 0, text: 'One.' });
          socket.peerSend(new Uint8Array([1]));
          // audio still arriving after the unsubscribe must not leak out
          scheduler.schedule(() => socket.peerSend(new Uint8Array([2]), true), 8);
        },
        opened,
      );
      const text = cold('a-b-c-d-e|', { a: 'One. ', b: 'Two. ', c: 'x', d: 'y', e: 'z' });
      const result$ = text.pipe(
        // one text.chunk per string, so the frames sent count the strings taken
        speak({ wsUrl: 'ws://fake', apiKey: 'k', WebSocket: Ctor, headersSupported: false }, { voice_id: 1, scheduler, clientBoundaries: false }),
      );
      expectObservable(result$, '^----!').toBe('-(rsa)', {
        r: { type: 'ready', session_id: 's', run_id: 1, config: expect.objectContaining({ voice_id: 1 }) },
        s: { type: 'segmentStart', segment_id: 0, text: 'One.' },
        a: { type: 'audio', segment_id: 0, bytes: new Uint8Array([1]) },
      });
      expectSubscriptions(text.subscriptions).toBe('^----!');
      scheduler.flush();
      expect(sockets[0]!.closedWith).toBe(1000);
      expect(sockets[0]!.sent.map((f) => JSON.parse(f).type)).toEqual(['session.start', 'text.chunk', 'text.chunk', 'text.chunk']);
    });
  });


  it('client-side boundaries: an undecided stop waits for the next token, at most boundaryHoldMs', () => {
    const scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
    scheduler.run(({ cold, expectObservable }) => {
      const { sockets, Ctor } = readyPeers(scheduler);
      // "Dr." then, 100 ms later, " Smith." (decides it); then "Bye." and 400 ms of silence
      const text = cold('-a 99ms b 99ms c', { a: 'See Dr.', b: ' Smith.', c: ' Bye.' });
      const chunksAt: Record<number, string[]> = {};
      for (const at of [2, 102, 202, 450, 452]) {
        scheduler.schedule(() => {
          chunksAt[at] = sockets[0]!.sent.map((f) => JSON.parse(f) as { type: string; text?: string }).filter((f) => f.type === 'text.chunk').map((f) => f.text!);
        }, at);
      }
      const result$ = text.pipe(speak({ wsUrl: 'ws://fake', apiKey: 'k', WebSocket: Ctor, headersSupported: false }, { voice_id: 1, scheduler }));
      expectObservable(result$, '^ 500ms !').toBe('-r', { r: expect.objectContaining({ type: 'ready' }) });
      scheduler.flush();
      // the stop after "Dr" is held, and the words of its sentence wait with it (they show up at 202: the control)
      expect(chunksAt[2]).toEqual([]);
      expect(chunksAt[102]).toEqual([]); // the next token decided "Dr." (no end); "Smith." is undecided: still held
      expect(chunksAt[202]).toEqual(['See Dr. Smith.']); // " Bye" decided "Smith." ended: the sentence is one chunk
      expect(chunksAt[450]).toEqual(['See Dr. Smith.']); // " Bye." is held...
      expect(chunksAt[452]).toEqual(['See Dr. Smith.', ' Bye.']); // ...until boundaryHoldMs (250)
    });
  });

  it('client-side boundaries of two sessions on one scheduler: a hold due within boundaryHoldMs/16 of another ends with it, never later', () => {
    const scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
    scheduler.run(({ cold, expectObservable }) => {
      const { sockets, Ctor } = readyPeers(scheduler);
      const chunks = (i: number) => sockets[i]!.sent.map((f) => JSON.parse(f) as { type: string; text?: string }).filter((f) => f.type === 'text.chunk').map((f) => f.text!);
      const seen: Record<number, string[][]> = {};
      for (const at of [252, 253, 272, 273]) scheduler.schedule(() => (seen[at] = [0, 1, 2].map(chunks)), at);
      const options = { wsUrl: 'ws://fake', apiKey: 'k', WebSocket: Ctor, headersSupported: false };
      // each session's stop is undecided and waits 250 ms: due at 252, 262 (within 15.6 of 252) and 272 (not)
      for (const [lead, text] of [['--', 'Hi.'], ['-- 9ms -', 'Yes.'], ['-- 19ms -', 'No.']] as const) {
        expectObservable(cold(`${lead}a`, { a: text }).pipe(speak(options, { voice_id: 1, scheduler })), '^ 400ms !').toBe('-r', { r: expect.objectContaining({ type: 'ready' }) });
      }
      scheduler.flush();
      expect(seen[252]).toEqual([[], [], []]);
      expect(seen[253]).toEqual([['Hi.'], ['Yes.'], []]); // the second 10 ms before its time, with the first
      expect(seen[272]).toEqual([['Hi.'], ['Yes.'], []]); // the third: not within the slack, so not sooner...
      expect(seen[273]).toEqual([['Hi.'], ['Yes.'], ['No.']]); // ...and exactly on time
    });
  });

  it('a connection lost after every text was delivered completes (nothing missing)', () => {
    const scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
    scheduler.run(({ cold, expectObservable }) => {
      const Ctor = fakeSocketClass(
        scheduler,
        (socket) => {
          socket.peerOpen();
          socket.peerSend({ type: 'session.ready', session_id: 's', run_id: 1 });
          socket.peerSend({ type: 'segment.start', segment_id: 0, text: 'One.' });
          socket.peerSend({ type: 'segment.done', segment_id: 0 });
          socket.peerClose(1006, '');
        },
        [],
      );
      const result$ = cold('(a|)', { a: 'One.' }).pipe(
        speak({ wsUrl: 'ws://fake', apiKey: 'k', WebSocket: Ctor, headersSupported: false }, { voice_id: 1, scheduler }),
        map((e) => e.type),
      );
      expectObservable(result$).toBe('-(rsd|)', { r: 'ready', s: 'segmentStart', d: 'segmentDone' });
    });
  });
});
