/** speak() against hostile live servers: protocol errors (bad frames, out-of-order segments, audio before a segment) as typed errors. */
import { describe, expect, it } from 'vitest';
import { lastValueFrom, of } from 'rxjs';
import { WebSocket as NodeWebSocket } from 'ws';
import { speak } from '../../src/live/session.js';
import { waitFor } from '../fixtures/sinkFixtures.js';
import { scriptedServer, failure, expectLiveError } from '../live/helpers.js';

describe('speak: protocol errors from a hostile server', () => {
  const hostile = (script: (socket: NodeWebSocket) => void) =>
    scriptedServer((socket) => {
      socket.once('message', () => {
        socket.send(JSON.stringify({ type: 'session.ready', session_id: 's', run_id: 1 }));
        script(socket);
      });
    });

  // [name, script, message, the text still unspoken]
  const cases: [string, (socket: NodeWebSocket) => void, RegExp, string?][] = [
    ['invalid JSON', (s) => s.send('{nope'), /not JSON/],
    ['an unknown frame', (s) => s.send(JSON.stringify({ type: 'surprise' })), /invalid frame/],
    ['binary before segment.start', (s) => s.send(Buffer.from([1, 2, 3])), /audio outside/],
    [
      'binary after segment.done',
      (s) => {
        s.send(JSON.stringify({ type: 'segment.start', segment_id: 0, text: 'Hi.' }));
        s.send(JSON.stringify({ type: 'segment.done', segment_id: 0 }));
        s.send(Buffer.from([1]));
      },
      /audio outside/,
      'More text.',
    ],
    [
      'an audio frame over 64 KiB',
      (s) => {
        s.send(JSON.stringify({ type: 'segment.start', segment_id: 0, text: 'Hi.' }));
        s.send(Buffer.alloc(64 * 1024 + 1));
      },
      /at most 65536/,
    ],
    ['segment.done for a segment not started', (s) => s.send(JSON.stringify({ type: 'segment.done', segment_id: 4 })), /not started/],
    [
      'a non-monotonic segment id',
      (s) => {
        s.send(JSON.stringify({ type: 'segment.start', segment_id: 0, text: 'Hi.' }));
        s.send(JSON.stringify({ type: 'segment.done', segment_id: 0 }));
        s.send(JSON.stringify({ type: 'segment.start', segment_id: 0, text: 'Hi.' }));
      },
      /does not follow/,
      'More text.',
    ],
    [
      // segment 1 first: segment 0 may still come, so nothing is taken as spoken
      'segment 1 before segment 0',
      (s) => {
        s.send(JSON.stringify({ type: 'segment.start', segment_id: 1, text: 'More text.' }));
        s.send(JSON.stringify({ type: 'segment.done', segment_id: 1 }));
        s.send(JSON.stringify({ type: 'segment.start', segment_id: 0, text: 'Hi.' }));
      },
      /does not follow -1 \(expected 0\)/,
      'Hi. More text.',
    ],
  ];

  for (const [name, script, message, unspoken = 'Hi. More text.'] of cases) {
    it(`${name}: ProtocolError, socket closed`, async () => {
      const server = await hostile(script);
      const error = await failure(lastValueFrom(of('Hi. More text.').pipe(speak({ wsUrl: server.wsUrl, apiKey: 'k' }, { voice_id: 1 }))));
      expectLiveError(error, 'protocol');
      expect(error.message).toMatch(message);
      expect(error.unspoken).toBe(unspoken);
      await waitFor(() => server.closes.length > 0, 5000, 'the socket to close');
      expect(server.closes).toEqual([1002]);
    });
  }

  it('a clean close before session.done is a ConnectionError with the text', async () => {
    const server = await hostile((s) => s.close(1000));
    const error = await failure(lastValueFrom(of('Hi.').pipe(speak({ wsUrl: server.wsUrl, apiKey: 'k' }, { voice_id: 1 }))));
    expectLiveError(error, 'connection');
    expect(error.closeCode).toBe(1000);
    expect(error.unspoken).toBe('Hi.');
  });
});

