/** resubmitSkipped adds no latency: a skipped segment re-sent on the same live session against the emulator. */
import { describe, expect, it } from 'vitest';
import { Subject, lastValueFrom, map, of, toArray } from 'rxjs';
import { WebSocket as NodeWebSocket } from 'ws';
import { speak, type WebSocketConstructorLike } from '../../src/live/session.js';
import { resubmitSkipped } from '../../src/operators/resubmitSkipped.js';
import { emulator, upgrades, segmentsOf, TEXT, SENTENCES } from '../live/helpers.js';

describe('resubmitSkipped adds no latency (emulator)', () => {
  /**
   * One session whose text source completes right after `ready`, with text that has no
   * sentence boundary and an idle_timeout of 2 s: the service flushes it at once on
   * text.done, or only after 2 s without it. Returns the order of what was sent, what
   * was received and when the source completed, and how many sessions were opened.
   */
  async function trace(wrap: (op: ReturnType<typeof speak>) => ReturnType<typeof speak>): Promise<{ log: string[]; sessions: number }> {
    const emu = await emulator();
    const log: string[] = [];
    let sessions = 0;
    class Recording extends NodeWebSocket {
      constructor(url: string, protocols?: string | string[], options?: ConstructorParameters<typeof NodeWebSocket>[2]) {
        super(url, protocols, options);
        sessions++;
      }
      override send(data: string): void {
        log.push(`sent ${(JSON.parse(data) as { type: string }).type}`);
        super.send(data);
      }
    }
    const text$ = new Subject<string>();
    await lastValueFrom(
      text$.pipe(
        wrap(speak({ ...emu, WebSocket: Recording as unknown as WebSocketConstructorLike, headersSupported: true }, { voice_id: 1, idle_timeout: 2 })),
        map((event) => {
          log.push(`event ${event.type}`);
          if (event.type === 'ready') {
            text$.next('Hello there, this has no boundary');
            log.push('source complete');
            text$.complete();
          }
          return event;
        }),
      ),
    );
    return { log: log.filter((line) => line !== 'event audio'), sessions };
  }

  it('with nothing skipped, text.done goes out right after the source completes, as with plain speak', async () => {
    const plain = await trace((op) => op);
    const wrapped = await trace((op) => resubmitSkipped(op, { maxAttempts: 2 }));
    const expected = [
      'sent session.start',
      'event ready',
      'sent text.chunk',
      'source complete',
      'sent text.done',
      'event segmentStart',
      'event segmentDone',
      'event done',
    ];
    expect(plain).toEqual({ log: expected, sessions: 1 });
    expect(wrapped).toEqual({ log: expected, sessions: 1 });
  });

  it('a skip after text.done is spoken by a continuation session; done comes once, last', async () => {
    // The last sentence (segment 5) fails 4 times (1 try + the service's 3 retries): it is
    // skipped after text.done was sent, then spoken by a second session (as its segment 0).
    const emu = await emulator({ retryBaseMs: 1, faults: { failSynthesis: { segments: [5], times: 4 } } });
    const events = await lastValueFrom(
      of(TEXT).pipe(resubmitSkipped(speak(emu, { voice_id: 1 }), { maxAttempts: 2 }), toArray()),
    );
    expect(upgrades(emu)).toBe(2);
    expect(events.filter((e) => e.type === 'ready')).toHaveLength(2);
    expect(events.filter((e) => e.type === 'done')).toHaveLength(1);
    expect(events.at(-1)).toEqual({ type: 'done' });
    expect(segmentsOf(events).map((s) => s.text.trim())).toEqual(SENTENCES);
    const ids = events.filter((e) => e.type === 'segmentStart' || e.type === 'segmentSkipped').map((e) => (e as { segment_id: number }).segment_id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(new Set(ids).size).toBe(ids.length);
  });
});

