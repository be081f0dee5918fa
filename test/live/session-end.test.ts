/**
 * The session's end against a service that ends it wrong: `session.done` while the input is
 * still open (the contract sends it once the client ended its input), and a `session.done`
 * or a close that never comes. Text is never lost silently, and no wait is without a bound.
 * A scripted server on port 0 plays the service.
 */
import { Subject, lastValueFrom, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { WebSocket as NodeWebSocket } from 'ws';
import { speak, type LiveSpeechEvent } from '../../src/live/index.js';
import { encodeWav16 } from '../../src/audio/wav.js';
import { expectLiveError, failure, scriptedServer } from './helpers.js';

interface Frame {
  type: string;
  text?: string;
}

/**
 * A service that speaks each text chunk as one segment (its text as sent), and after the
 * first `firstSegments` segments does `then`: 'done' (session.done, then nothing), 'done+close'
 * (session.done and a clean close), 'silent' (nothing more, ever).
 */
function service(then: 'done' | 'done+close' | 'silent', firstSegments: number, afterTextDone = false) {
  return (socket: NodeWebSocket): void => {
    let id = 0;
    socket.on('message', (data) => {
      const frame = JSON.parse(String(data)) as Frame;
      if (frame.type === 'session.start') socket.send(JSON.stringify({ type: 'session.ready', session_id: 's1', run_id: 1 }));
      if (frame.type === 'text.chunk' && frame.text!.trim() !== '' && id < firstSegments) {
        socket.send(JSON.stringify({ type: 'segment.start', segment_id: id, text: frame.text }));
        socket.send(encodeWav16(new Int16Array(160), 16000));
        socket.send(JSON.stringify({ type: 'segment.done', segment_id: id }));
        id++;
        if (id === firstSegments && !afterTextDone) finish();
      }
      if (frame.type === 'text.done' && afterTextDone) finish();
    });
    const finish = (): void => {
      if (then === 'silent') return;
      socket.send(JSON.stringify({ type: 'session.done' }));
      if (then === 'done+close') socket.close(1000);
    };
  };
}

const options = { voice_id: 1, responseTimeoutMs: 400, closeGraceMs: 100 } as const;

describe('session.done before the input ended', () => {
  it('is a protocol error, its unspoken text the text the gate held (See Dr.); the text source is let go', async () => {
    const server = await scriptedServer(service('done+close', 1));
    const text$ = new Subject<string>();
    const out = lastValueFrom(text$.pipe(speak({ wsUrl: server.wsUrl }, options), toArray()));
    text$.next('First sentence. See Dr.');
    const error = await failure(out);
    expectLiveError(error, 'protocol');
    expect(error.message).toContain('before the input ended');
    expect(error.unspoken).toBe('See Dr.');
    expect(text$.observed).toBe(false);
  });

  it('control: the same service after the input ended completes, done and all', async () => {
    const server = await scriptedServer(service('done+close', 1, true));
    const text$ = new Subject<string>();
    const out = lastValueFrom(text$.pipe(speak({ wsUrl: server.wsUrl }, options), toArray()));
    text$.next('First sentence.');
    await new Promise((resolve) => setTimeout(resolve, 50));
    text$.complete();
    const events: LiveSpeechEvent[] = await out;
    expect(events.map((e) => e.type)).toEqual(['ready', 'segmentStart', 'audio', 'segmentDone', 'done']);
  });
});

describe('an end that never comes is bounded (responseTimeoutMs)', () => {
  it('session.done and no close: the session completes with done, and closes its socket', async () => {
    const server = await scriptedServer(service('done', 1, true));
    const events = await lastValueFrom(speak({ wsUrl: server.wsUrl }, options)(fromText('One sentence.')).pipe(toArray()));
    expect(events.map((e) => e.type)).toEqual(['ready', 'segmentStart', 'audio', 'segmentDone', 'done']);
    await until(() => server.closes.length === 1);
  });

  it('everything spoken, then neither session.done nor a close: the session completes (nothing is lost), and closes its socket', async () => {
    const server = await scriptedServer(service('silent', 1, true));
    const events = await lastValueFrom(speak({ wsUrl: server.wsUrl }, options)(fromText('One sentence.')).pipe(toArray()));
    expect(events.map((e) => e.type)).toEqual(['ready', 'segmentStart', 'audio', 'segmentDone']);
    await until(() => server.closes.length === 1);
  });

  it('control: a service silent while text waits is still a timeout error, the text unspoken', async () => {
    const server = await scriptedServer(service('silent', 1, true));
    const error = await failure(lastValueFrom(speak({ wsUrl: server.wsUrl }, options)(fromText('One sentence. Two sentences.')).pipe(toArray())));
    expectLiveError(error, 'timeout');
    expect(error.unspoken).toBe('Two sentences.');
  });
});

/** A text source of one chunk that then completes (`text.done`). */
function fromText(text: string): Subject<string> {
  const text$ = new Subject<string>();
  setTimeout(() => {
    text$.next(text);
    text$.complete();
  }, 20);
  return text$;
}

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(check()).toBe(true);
}
