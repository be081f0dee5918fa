/**
 * speak(): the `responseTimeoutMs` watch runs only while text waits to be spoken. Once the
 * last segment is done no timer is kept (a session waiting for its next sentence holds no
 * interval), and the next text sent starts the watch again. Virtual time, a scripted peer.
 */
import { describe, expect, it } from 'vitest';
import { Subject } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { speak, type WebSocketConstructorLike } from '../../src/live/session.js';
import type { LiveSpeechEvent } from '../../src/live/events.js';
import { LiveSessionError } from '../../src/core/errors.js';

/** A WHATWG-style socket whose peer the test drives. */
class ScriptedSocket {
  static last: ScriptedSocket | undefined;
  readyState = 0;
  binaryType = 'blob';
  readonly sent: string[] = [];
  private readonly listeners = new Map<string, ((event: unknown) => void)[]>();
  constructor(readonly url: string) {
    ScriptedSocket.last = this;
  }
  addEventListener(type: string, listener: (event: unknown) => void): void {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), listener]);
  }
  send(data: string): void {
    this.sent.push(data);
  }
  close(): void {
    this.readyState = 3;
  }
  peer(type: 'open' | 'message', frame?: object): void {
    if (type === 'open') this.readyState = 1;
    for (const listener of this.listeners.get(type) ?? []) listener(type === 'open' ? {} : { data: JSON.stringify(frame) });
  }
}

describe('speak: the response watch', () => {
  it('keeps no timer once the last segment is done; the next text starts it again and a silent service still times out', () => {
    const scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
    scheduler.run(() => {
      const text$ = new Subject<string>();
      const events: LiveSpeechEvent[] = [];
      let error: unknown;
      let errorAt = -1;
      text$
        .pipe(
          speak(
            { wsUrl: 'ws://fake', apiKey: 'k', WebSocket: ScriptedSocket as unknown as WebSocketConstructorLike, headersSupported: false },
            { voice_id: 1, scheduler, clientBoundaries: false, responseTimeoutMs: 30 },
          ),
        )
        .subscribe({ next: (event) => events.push(event), error: (e: unknown) => {
            error = e;
            errorAt = scheduler.now();
          },
        });
      const socket = ScriptedSocket.last as ScriptedSocket;
      socket.peer('open');
      socket.peer('message', { type: 'session.ready', session_id: 's', run_id: 1 });
      text$.next('Hello.');
      // control: text waits to be spoken, so the watch is queued on the scheduler
      expect(scheduler.actions.length).toBeGreaterThan(0);
      socket.peer('message', { type: 'segment.start', segment_id: 0, text: 'Hello.' });
      socket.peer('message', { type: 'segment.done', segment_id: 0 });
      expect(events.map((e) => e.type)).toEqual(['ready', 'segmentStart', 'segmentDone']);
      // nothing waits: no timer is left (the watch used to stay until its next check)
      expect(scheduler.actions).toEqual([]);
      // a long quiet while nothing waits is no timeout; then a sentence the service never answers
      let sentAt = -1;
      scheduler.schedule(() => {
        expect(error).toBeUndefined();
        sentAt = scheduler.now();
        text$.next(' World.');
      }, 1000);
      scheduler.flush();
      expect(sentAt).toBe(1000);
      expect(socket.sent.map((s) => (JSON.parse(s) as { text?: string }).text).filter(Boolean)).toEqual(['Hello.', ' World.']);
      // the restarted watch ends the session: silence counted from the text sent, checked each 10 ms
      expect(error).toBeInstanceOf(LiveSessionError);
      expect((error as LiveSessionError).code).toBe('timeout');
      expect(errorAt - sentAt).toBeGreaterThanOrEqual(30);
      expect(errorAt - sentAt).toBeLessThanOrEqual(40);
    });
  });
});
