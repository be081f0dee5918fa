/** speak() against the emulator and scripted servers: sessions, close codes as typed errors, teardown, reconnect without loss, client.speak. */
import { describe, expect, it } from 'vitest';
import { NEVER, Subject, concat, from, interval, lastValueFrom, map, of, take, takeUntil, throwError, toArray } from 'rxjs';
import { WebSocket as NodeWebSocket } from 'ws';
import { speak, type WebSocketConstructorLike } from '../../src/live/session.js';
import type { LiveSpeechEvent, SpokenSegment } from '../../src/live/events.js';
import { concatSegments } from '../../src/operators/concatSegments.js';
import { resubmitSkipped } from '../../src/operators/resubmitSkipped.js';
import { wordTimeline } from '../../src/operators/wordTimeline.js';
import { CreditsExhaustedError, SessionRejectedError } from '../../src/core/errors.js';
import { waitFor } from '../fixtures/sinkFixtures.js';
import { emulator, recordingWebSocket, scriptedServer, upgrades, squash, segmentsOf, failure, expectLiveError, TEXT, SENTENCES, tokens } from './helpers.js';

describe('speak: sessions with the emulator', () => {
  it('a slow token stream still gives whole sentences as segments, then completes', async () => {
    const emu = await emulator();
    const parts = tokens(TEXT);
    const text$ = interval(2).pipe(
      take(parts.length),
      map((i) => parts[i]!),
    );
    const events = await lastValueFrom(text$.pipe(speak(emu, { voice_id: 1 }), toArray()));
    expect(segmentsOf(events).map((s) => s.text.trim())).toEqual(SENTENCES);
    expect(events[0]?.type).toBe('ready');
    expect(events.at(-1)).toEqual({ type: 'done' });
  });

  it('keeps segment order with concurrency and random synthesis latency', async () => {
    const emu = await emulator({ concurrency: 4, faults: { synthesisLatencyMs: [0, 25] } });
    const events = await lastValueFrom(of(TEXT).pipe(speak(emu, { voice_id: 1 }), toArray()));
    const segments = segmentsOf(events);
    expect(segments.map((s) => s.segment_id)).toEqual(SENTENCES.map((_, i) => i));
    expect(segments.map((s) => s.text.trim())).toEqual(SENTENCES);
    // every audio frame belongs to the segment most recently started, and each segment is done before the next starts
    let current: number | undefined;
    for (const event of events) {
      if (event.type === 'segmentStart') {
        expect(current).toBeUndefined();
        current = event.segment_id;
      } else if (event.type === 'audio') {
        expect(event.segment_id).toBe(current);
        // a plain Uint8Array view, not ws's Buffer
        expect(Object.getPrototypeOf(event.bytes)).toBe(Uint8Array.prototype);
      }
      else if (event.type === 'segmentDone') {
        expect(event.segment_id).toBe(current);
        current = undefined;
      }
    }
  });

  it('concatSegments gives playable WAV per segment and wordTimeline exact times (tone synth)', async () => {
    const emu = await emulator({ toneWordSeconds: 0.02 });
    const segments = await lastValueFrom(
      of(TEXT).pipe(speak(emu, { voice_id: 1, word_timestamps: true }), concatSegments(), toArray()),
    );
    expect(segments).toHaveLength(SENTENCES.length);
    for (const segment of segments) {
      expect(segment.format).toBe('wav');
      expect(String.fromCharCode(...segment.audio.subarray(0, 4))).toBe('RIFF');
      const words = segment.text.trim().split(/\s+/);
      expect(segment.word_timestamps.map((w) => w.word)).toEqual(words);
      const dataBytes = new DataView(segment.audio.buffer, segment.audio.byteOffset).getUint32(40, true);
      expect(dataBytes / (22050 * 2)).toBeCloseTo(words.length * 0.02, 6);
    }
    const timeline = await lastValueFrom(from(segments as SpokenSegment[]).pipe(wordTimeline(), toArray()));
    const allWords = TEXT.split(/\s+/);
    expect(timeline.map((w) => w.word)).toEqual(allWords);
    timeline.forEach((w, i) => {
      expect(w.index).toBe(i);
      expect(w.start).toBeCloseTo(i * 0.02, 6);
      expect(w.end).toBeCloseTo((i + 1) * 0.02, 6);
    });
  });

  it('reports a skipped segment (failSynthesis 4 times) and goes on', async () => {
    const emu = await emulator({ retryBaseMs: 1, faults: { failSynthesis: { segments: [1], times: 4 } } });
    const events = await lastValueFrom(of(TEXT).pipe(speak(emu, { voice_id: 1 }), toArray()));
    const skipped = events.filter((e) => e.type === 'segmentSkipped');
    expect(skipped).toEqual([{ type: 'segmentSkipped', segment_id: 1, text: expect.stringContaining(SENTENCES[1]!) }]);
    expect(segmentsOf(events).map((s) => s.text.trim())).toEqual(SENTENCES.filter((_, i) => i !== 1));
    expect(events.at(-1)).toEqual({ type: 'done' });
  });

  it('resubmitSkipped: the skipped text comes back as a later segment', async () => {
    const emu = await emulator({ retryBaseMs: 1, faults: { failSynthesis: { segments: [1], times: 4 } } });
    const events = await lastValueFrom(
      of(TEXT).pipe(resubmitSkipped(speak(emu, { voice_id: 1, idle_timeout: 0.05 }), { maxAttempts: 2 }), toArray()),
    );
    const skipped = events.filter((e) => e.type === 'segmentSkipped');
    expect(skipped).toEqual([expect.objectContaining({ segment_id: 1, final: false, resubmissions: 0 })]);
    const spoken = segmentsOf(events).map((s) => s.text.trim());
    expect(spoken).toEqual([...SENTENCES.filter((_, i) => i !== 1), SENTENCES[1]]);
    expect(events.at(-1)).toEqual({ type: 'done' });
  });

  it('resubmitSkipped: a text that keeps failing is reported final after maxAttempts', async () => {
    const emu = await emulator({ retryBaseMs: 1, faults: { failSynthesisMatching: { text: 'zebras', times: 1000 } } });
    const events = await lastValueFrom(
      of(TEXT).pipe(resubmitSkipped(speak(emu, { voice_id: 1, idle_timeout: 0.05 }), { maxAttempts: 2 }), toArray()),
    );
    const skipped = events.filter((e) => e.type === 'segmentSkipped');
    expect(skipped.map((e) => [e.final, e.resubmissions])).toEqual([
      [false, 0],
      [false, 1],
      [true, 2],
    ]);
    for (const e of skipped) expect(e.text.trim()).toBe(SENTENCES[2]);
    expect(segmentsOf(events).map((s) => s.text.trim())).toEqual(SENTENCES.filter((_, i) => i !== 2));
    expect(events.at(-1)).toEqual({ type: 'done' });
  });
});

describe('speak: close codes as typed errors', () => {
  it('4401 bad key: AuthenticationError with everything unspoken', async () => {
    const emu = await emulator();
    const error = await failure(lastValueFrom(of('Hello there. ', 'Bye.').pipe(speak({ ...emu, apiKey: 'wrong-key' }, { voice_id: 1 }))));
    expectLiveError(error, 'authentication');
    expect(error.closeCode).toBe(4401);
    expect(error.unspoken).toBe('Hello there. Bye.');
    expect(error.message).not.toContain('wrong-key');
  });

  it('4401 while the boundary gate holds an undecided stop: the held text (never sent) is unspoken too', async () => {
    const emu = await emulator();
    // the source does not end and the hold outlasts the test: " See Dr." stays in the gate
    // ("Dr." may not end the sentence); "Hello." went to the ledger
    const text$ = concat(of('Hello. See Dr.'), NEVER);
    const error = await failure(lastValueFrom(text$.pipe(speak({ ...emu, apiKey: 'wrong-key' }, { voice_id: 1, boundaryHoldMs: 60_000 }))));
    expectLiveError(error, 'authentication');
    expect(error.unspoken).toBe('Hello. See Dr.');
  });

  it('4400 unknown voice: SessionRejectedError with the server message', async () => {
    const emu = await emulator();
    const error = await failure(lastValueFrom(of('Hello there.').pipe(speak(emu, { voice_id: 999_999 }))));
    expect(error).toBeInstanceOf(SessionRejectedError);
    expect(error.closeCode).toBe(4400);
    expect(error.message).toContain('999999');
    expect(error.unspoken).toBe('Hello there.');
  });

  it('4402 credits: CreditsExhaustedError with the text after the delivered segment', async () => {
    const emu = await emulator({ faults: { creditsAfterSegments: 2 } });
    const events: LiveSpeechEvent[] = [];
    const error = await failure(lastValueFrom(of(TEXT).pipe(speak(emu, { voice_id: 1 }), map((e) => events.push(e)))));
    expect(error).toBeInstanceOf(CreditsExhaustedError);
    expect(error.closeCode).toBe(4402);
    expect(segmentsOf(events).map((s) => s.text.trim())).toEqual(SENTENCES.slice(0, 2));
    expect(squash(error.unspoken)).toBe(squash(SENTENCES.slice(2).join(' ')));
  });
});

describe('speak: session.done', () => {
  it('after a segment worded otherwise than the text sent, session.done ends the session: the ledger cannot tell text was missed', async () => {
    const server = await scriptedServer((socket, _request, received) => {
      socket.on('message', () => {
        if (received.length === 1) socket.send(JSON.stringify({ type: 'session.ready', session_id: 's', run_id: 1 }));
        if (received.some((r) => r.includes('text.done'))) {
          // both sentences as one segment, in other words: the ledger gives it the first sentence only
          socket.send(JSON.stringify({ type: 'segment.start', segment_id: 0, text: 'Uno. Dos.' }));
          socket.send(Buffer.from([1, 2]));
          socket.send(JSON.stringify({ type: 'segment.done', segment_id: 0 }));
          socket.send(JSON.stringify({ type: 'session.done' }));
          socket.close(1000);
        }
      });
    });
    const events = await lastValueFrom(of('One. Two.').pipe(speak({ wsUrl: server.wsUrl, apiKey: 'k' }, { voice_id: 1 }), toArray()));
    // the ledger's doubt is reported: it still counts " Two." unspoken
    expect(events.filter((e) => e.type === 'segmentMismatch')).toEqual([{ type: 'segmentMismatch', segment_id: 0, sent: 'One.', reported: 'Uno. Dos.' }]);
    expect(events.map((e) => e.type)).toEqual(['ready', 'segmentStart', 'segmentMismatch', 'audio', 'segmentDone', 'done']);
  });
});

describe('speak: session.error then another close code', () => {
  /** A peer that answers session.start with ready, then session.error and a close with `code`. */
  const failing = (code: number) =>
    scriptedServer((socket) => {
      socket.once('message', () => {
        socket.send(JSON.stringify({ type: 'session.ready', session_id: 's', run_id: 1 }));
        socket.send(JSON.stringify({ type: 'session.error', error: 'the speech engine is not installed (npm install espeak-ng)' }));
        socket.close(code, 'internal error');
      });
    });

  it("1011: a 'session_error' carrying the service's message and the text, not retried", async () => {
    const server = await failing(1011);
    const reconnect = { maxAttempts: 3, baseDelayMs: 1 };
    const error = await failure(lastValueFrom(of('Hi.').pipe(speak({ wsUrl: server.wsUrl, apiKey: 'session-error-test-key' }, { voice_id: 1, reconnect }))));
    expectLiveError(error, 'session_error');
    expect(error.message).toContain('the speech engine is not installed (npm install espeak-ng)');
    expect(error.closeCode).toBe(1011);
    expect(error.retryable).toBe(false);
    expect(error.unspoken).toBe('Hi.');
    expect(server.connections).toHaveLength(1);
  });

  it('1013 (try again later): retryable, so reconnect tries again (the control)', async () => {
    const server = await failing(1013);
    const reconnect = { maxAttempts: 2, baseDelayMs: 1 };
    const error = await failure(lastValueFrom(of('Hi.').pipe(speak({ wsUrl: server.wsUrl, apiKey: 'session-error-test-key' }, { voice_id: 1, reconnect }))));
    expectLiveError(error, 'session_error');
    expect(error.retryable).toBe(true);
    expect(server.connections).toHaveLength(3);
  });

  it("the emulator's 4429 (too many sessions): its message, retryable", async () => {
    const emu = await emulator({ liveSessionsPerKey: 1 });
    const open = new Subject<string>();
    const first = lastValueFrom(open.pipe(speak(emu, { voice_id: 1 })));
    await waitFor(() => emu.liveConnections === 1, 5000, 'the first session');
    const error = await failure(lastValueFrom(of('Hi.').pipe(speak(emu, { voice_id: 1 }))));
    expectLiveError(error, 'session_error');
    expect(error.closeCode).toBe(4429);
    expect(error.message).toMatch(/too many live sessions/);
    expect(error.retryable).toBe(true);
    open.next('Bye.');
    open.complete();
    await first;
  });
});

describe('speak: teardown', () => {
  it('barge-in: unsubscribing closes the socket at once with 1000 and nothing more is emitted', async () => {
    const emu = await emulator({ toneWordSeconds: 0.05, faults: { synthesisLatencyMs: 10 } });
    const sockets: NodeWebSocket[] = [];
    const closeCalls: (number | undefined)[] = [];
    let stateAfterBargeIn: number | undefined;
    class Recording extends NodeWebSocket {
      constructor(url: string, protocols?: string | string[], options?: { headers?: Record<string, string> }) {
        super(url, protocols, options);
        sockets.push(this);
      }
      override close(code?: number, reason?: string): void {
        closeCalls.push(code);
        super.close(code, reason);
      }
    }
    const bargeIn = new Subject<void>();
    const seen: LiveSpeechEvent[] = [];
    let afterBargeIn = 0;
    let barged = false;
    await new Promise<void>((resolve, reject) => {
      of(TEXT)
        .pipe(speak({ ...emu, WebSocket: Recording }, { voice_id: 1 }), takeUntil(bargeIn))
        .subscribe({
          next: (event) => {
            if (barged) afterBargeIn++;
            seen.push(event);
            if (event.type === 'audio' && !barged) {
              barged = true;
              bargeIn.next();
              stateAfterBargeIn = sockets[0]!.readyState;
            }
          },
          error: reject,
          complete: () => resolve(),
        });
    });
    expect(seen.at(-1)?.type).toBe('audio');
    // Once the socket is closed no frame can arrive; the events before the barge-in (the
    // control) show frames were being seen.
    await waitFor(() => sockets[0]!.readyState === NodeWebSocket.CLOSED, 5000, 'the socket to close');
    expect(seen.filter((e) => e.type === 'audio').length).toBeGreaterThan(0);
    expect(afterBargeIn).toBe(0);
    // closed at once (synchronously in the unsubscribe), with 1000
    expect(stateAfterBargeIn).toBe(NodeWebSocket.CLOSING);
    // (ws itself calls close() again when the server's close frame comes back)
    expect(closeCalls[0]).toBe(1000);
    expect(sockets).toHaveLength(1);
    expect(sockets[0]!.readyState).toBe(NodeWebSocket.CLOSED);
  });

  it('unsubscribing while connecting leaves nothing open', async () => {
    const emu = await emulator();
    const { sockets, WebSocket: Recording } = recordingWebSocket();
    const subscription = of('Hello.').pipe(speak({ ...emu, WebSocket: Recording }, { voice_id: 1 })).subscribe();
    subscription.unsubscribe();
    await waitFor(() => sockets[0]!.readyState === NodeWebSocket.CLOSED, 5000, 'the socket to close');
    expect(sockets).toHaveLength(1);
  });

  it('the text source erroring closes the session: its error, unchanged, is the cause of a text_source error with unspoken', async () => {
    // the text fails once the session is ready (a fixed delay raced the connection on a busy machine)
    const ready = new Subject<void>();
    const server = await scriptedServer((socket) =>
      socket.once('message', () => socket.send(JSON.stringify({ type: 'session.ready', session_id: 's', run_id: 1 }), () => setTimeout(() => ready.next(), 20))),
    );
    const llmError = new Error('LLM stream failed');
    const text$ = concat(
      ready.pipe(take(1), map(() => 'Half a sen')),
      throwError(() => llmError),
    );
    const error = await failure(lastValueFrom(text$.pipe(speak({ wsUrl: server.wsUrl, apiKey: 'k' }, { voice_id: 1 }))));
    expectLiveError(error, 'text_source');
    expect(error.message).toBe('The text source failed: LLM stream failed');
    // the source's own error is the cause, not changed
    expect(error.cause).toBe(llmError);
    expect(Object.keys(llmError)).toEqual([]);
    expect(error.unspoken).toBe('Half a sen');
    await waitFor(() => server.closes.length > 0, 5000, 'the socket to close');
    expect(server.closes).toEqual([1000]);
  });
});

describe('speak: reconnect without loss', () => {
  it('without reconnect, a drop is a ConnectionError (1006) with the undelivered text', async () => {
    const emu = await emulator({ faults: { dropAfterFrames: 2 } });
    const error = await failure(lastValueFrom(of(TEXT).pipe(speak(emu, { voice_id: 1 }))));
    expectLiveError(error, 'connection');
    expect(error.closeCode).toBe(1006);
    expect(error.retryable).toBe(true);
    // segment 0 delivered; segment 1 was mid-audio when the connection dropped
    expect(squash(error.unspoken)).toBe(squash(SENTENCES.slice(1).join(' ')));
  });

  it('reconnects after injected drops: every sentence spoken exactly once, in order, ids increasing', async () => {
    const emu = await emulator({ faults: { dropAfterFrames: 2 } });
    const events = await lastValueFrom(
      of(TEXT).pipe(speak(emu, { voice_id: 1, reconnect: { maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 20 } }), toArray()),
    );
    const reconnects = events.filter((e) => e.type === 'reconnected');
    expect(reconnects.length).toBeGreaterThanOrEqual(2);
    expect(reconnects[0]).toMatchObject({ type: 'reconnected', attempt: 1 });
    expect(squash((reconnects[0] as { resent: string }).resent)).toBe(squash(SENTENCES.slice(1).join(' ')));
    const delivered = await lastValueFrom(from(events).pipe(concatSegments(), toArray()));
    expect(delivered.map((s) => s.text.trim())).toEqual(SENTENCES);
    expect(squash(delivered.map((s) => s.text).join(''))).toBe(squash(TEXT));
    const ids = delivered.map((s) => s.segment_id);
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    expect(events.at(-1)).toEqual({ type: 'done' });
    expect(upgrades(emu)).toBe(reconnects.length + 1);
  });

  it('reconnect with a streaming source: text pushed during the outage is not lost', async () => {
    const emu = await emulator({ faults: { dropAfterFrames: 3 } });
    const parts = tokens(TEXT);
    const text$ = interval(2).pipe(
      take(parts.length),
      map((i) => parts[i]!),
    );
    const events = await lastValueFrom(
      text$.pipe(speak(emu, { voice_id: 1, reconnect: { maxAttempts: 3, baseDelayMs: 5 } }), concatSegments(), toArray()),
    );
    expect(events.map((s) => s.text.trim())).toEqual(SENTENCES);
  });

  it('gives up after maxAttempts in a row without progress', async () => {
    const emu = await emulator({ faults: { dropAfterFrames: 0 } });
    const events: LiveSpeechEvent[] = [];
    const error = await failure(
      lastValueFrom(
        of('Hello there.').pipe(
          speak(emu, { voice_id: 1, reconnect: { maxAttempts: 2, baseDelayMs: 1 } }),
          map((e) => events.push(e)),
        ),
      ),
    );
    expectLiveError(error, 'connection');
    expect(error.unspoken).toBe('Hello there.');
    // the emulator drops each new session before session.ready: no `reconnected` event
    expect(events.filter((e) => e.type === 'reconnected')).toHaveLength(0);
    expect(upgrades(emu)).toBe(3);
  });

  it('does not reconnect after 4401', async () => {
    const emu = await emulator();
    const error = await failure(
      lastValueFrom(of('Hi.').pipe(speak({ ...emu, apiKey: 'nope' }, { voice_id: 1, reconnect: { maxAttempts: 3, baseDelayMs: 1 } }))),
    );
    expectLiveError(error, 'authentication');
    expect(upgrades(emu)).toBe(1);
  });
});

describe('client.speak', () => {
  it('speaks through the client with its address, key and WebSocket', async () => {
    const emu = await emulator();
    const { createClient } = await import('../../src/index.js');
    const client = createClient({ apiKey: emu.apiKey, baseUrl: emu.baseUrl });
    try {
      const segments = await lastValueFrom(
        of('Hello there. ', 'General Kenobi.').pipe(client.speak({ voice_id: 1, word_timestamps: true }), concatSegments(), toArray()),
      );
      expect(segments.map((s) => s.text.trim())).toEqual(['Hello there.', 'General Kenobi.']);
      expect(segments[0]!.format).toBe('wav');
      const bad = createClient({ apiKey: 'not-the-key', baseUrl: emu.baseUrl });
      const error = await failure(lastValueFrom(of('Hi.').pipe(bad.speak({ voice_id: 1 }))));
      expectLiveError(error, 'authentication');
      await bad.close();
    } finally {
      await client.close();
    }
  });
});

