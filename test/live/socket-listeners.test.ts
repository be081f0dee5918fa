/** A `ws` socket's listeners: module functions shared by every session, each finding its own session through its socket. */
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { Subject, lastValueFrom, merge, of, toArray } from 'rxjs';
import { WebSocket as NodeWebSocket } from 'ws';
import { speak } from '../../src/live/session.js';
import type { LiveSpeechEvent } from '../../src/live/events.js';
import { emulator, recordingWebSocket, segmentsOf } from './helpers.js';

describe('speak: the listeners of a ws socket', () => {
  it('are the same functions for every socket (three at a time), and each session hears only its own socket', async () => {
    const emu = await emulator();
    const { sockets, WebSocket: Recording } = recordingWebSocket();
    const connection = { ...emu, WebSocket: Recording };
    const one$ = of('First session speaks here.').pipe(speak(connection, { voice_id: 1 }), toArray());
    const two$ = of('Second one says something else.').pipe(speak(connection, { voice_id: 1 }), toArray());
    const [one, two] = await lastValueFrom(merge(one$, two$).pipe(toArray()));
    expect(sockets).toHaveLength(2);
    const [a, b] = sockets as [NodeWebSocket, NodeWebSocket];
    for (const event of ['message', 'close', 'error'] as const) {
      expect(a.listeners(event)).toHaveLength(1);
      expect(a.listeners(event)[0]).toBe(b.listeners(event)[0]);
    }
    // 'open' was listened to until it came, 'message' from then on: three events listened to at a time
    expect(a.listeners('open')).toHaveLength(0);
    expect(a.eventNames()).toHaveLength(3);
    const texts = (events: LiveSpeechEvent[] | undefined) => segmentsOf(events ?? []).map((s) => s.text.trim());
    // which session got which events: by text (the merge may finish them in either order)
    expect([texts(one), texts(two)].sort()).toEqual([['First session speaks here.'], ['Second one says something else.']]);
    for (const events of [one, two]) expect(events?.at(-1)).toEqual({ type: 'done' });
  });

  it("the socket's link to its session is not enumerable: inspecting the socket does not show the session", async () => {
    const emu = await emulator();
    const { sockets, WebSocket: Recording } = recordingWebSocket();
    const text$ = new Subject<string>();
    const ready = new Promise<void>((resolve, reject) => {
      text$.pipe(speak({ ...emu, WebSocket: Recording }, { voice_id: 1 })).subscribe({
        next: (event) => {
          if (event.type === 'ready') resolve();
        },
        error: reject,
      });
    });
    text$.next('Hello there.');
    await ready;
    const socket = sockets[0]!;
    expect(inspect(socket, { depth: 1 })).not.toContain('rxvoice.connection');
    // control: with hidden properties shown, the link is there to be seen
    expect(inspect(socket, { depth: 0, showHidden: true })).toContain('rxvoice.connection');
    text$.complete();
  });
});
