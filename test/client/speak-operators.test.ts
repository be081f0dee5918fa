/**
 * `client.speak(options)` returns one operator for equal options (src/client/speak-operators.ts):
 * a thousand sessions with the same options hold one resolution of them. Sharing must never
 * change what a session sends or let bad options through: each subscription is still its
 * own session, a changed value gives a new operator, options holding an object are never
 * shared, and bad options throw at every call.
 */
import { from, lastValueFrom, toArray } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/index.js';
import { ValidationError } from '../../src/core/errors.js';
import type { LiveSpeechEvent } from '../../src/live/index.js';
import { clientFor, emulator, until } from './helpers.js';
import { scriptedServer } from '../live/helpers.js';

const spoken = (events: LiveSpeechEvent[]): string =>
  events
    .filter((e): e is Extract<LiveSpeechEvent, { type: 'segmentStart' }> => e.type === 'segmentStart')
    .map((e) => e.text)
    .join('');

describe('client.speak: one operator for equal options', () => {
  let emu: Emulator;
  beforeAll(async () => {
    emu = await emulator();
  });
  afterAll(async () => {
    await emu.close();
  });

  it('equal options give the same operator; each subscription is still its own session', async () => {
    const client = clientFor(emu);
    const first = client.speak({ voice_id: 1, language: 'en-us' });
    const second = client.speak({ voice_id: 1, language: 'en-us' });
    expect(second).toBe(first);
    const upgradesBefore = emu.requests.filter((r) => r.method === 'UPGRADE').length;
    const [a, b] = await Promise.all([
      lastValueFrom(from(['First session speaks. ', 'It says two things.']).pipe(first, toArray())),
      lastValueFrom(from(['Second session speaks once.']).pipe(second, toArray())),
    ]);
    expect(emu.requests.filter((r) => r.method === 'UPGRADE').length - upgradesBefore).toBe(2);
    expect(spoken(a)).toBe('First session speaks. It says two things.');
    expect(spoken(b)).toBe('Second session speaks once.');
    await client.close();
  });

  it('another value, another option or another client: not the same operator', async () => {
    const client = clientFor(emu);
    const other = clientFor(emu);
    const base = client.speak({ voice_id: 1, language: 'en-us' });
    expect(client.speak({ voice_id: 2, language: 'en-us' })).not.toBe(base);
    expect(client.speak({ voice_id: 1, language: 'de-de' })).not.toBe(base);
    expect(client.speak({ voice_id: 1, language: 'en-us', word_timestamps: true })).not.toBe(base);
    expect(other.speak({ voice_id: 1, language: 'en-us' })).not.toBe(base);
    await Promise.all([client.close(), other.close()]);
  });

  it('options holding an object (stall, reconnect, a scheduler) are never shared', async () => {
    const client = clientFor(emu);
    const reconnect = { maxAttempts: 2 };
    expect(client.speak({ voice_id: 1, reconnect })).not.toBe(client.speak({ voice_id: 1, reconnect }));
    // the control: the same options without the object are shared
    expect(client.speak({ voice_id: 1 })).toBe(client.speak({ voice_id: 1 }));
    await client.close();
  });

  it('bad options throw at every call, after a good call with the same keys', async () => {
    const client = clientFor(emu);
    expect(() => client.speak({ voice_id: 1, responseTimeoutMs: 5000 })).not.toThrow();
    for (const bad of [Number.NaN, -1, Number.POSITIVE_INFINITY, Number.NaN]) {
      expect(() => client.speak({ voice_id: 1, responseTimeoutMs: bad })).toThrow(ValidationError);
    }
    expect(() => client.speak({ voice_id: 1, responseTimeoutMs: '5000' as unknown as number })).toThrow(ValidationError);
    expect(() => client.speak({ voice_id: -1 })).toThrow(ValidationError);
    expect(() => client.speak({ voice_id: -1 })).toThrow(ValidationError);
    await client.close();
  });
});

describe('client.speak: what a shared operator sends', () => {
  it('a value changed on the caller\'s own options object starts the next session with it', async () => {
    const server = await scriptedServer((socket) => {
      socket.once('message', () => socket.send(JSON.stringify({ type: 'session.ready', session_id: 's', run_id: 1 })));
    });
    const client = clientFor({ baseUrl: 'http://127.0.0.1:9', apiKey: 'k' }, { liveUrl: server.wsUrl });
    const options = { voice_id: 3, language: 'de-de' };
    const started = async (operator: ReturnType<typeof client.speak>, at: number): Promise<unknown> => {
      const subscription = from(['Hallo. ']).pipe(operator).subscribe({ error: () => undefined });
      const arrived = await until(() => (server.received[at]?.length ?? 0) > 0);
      subscription.unsubscribe();
      expect(arrived).toBe(true);
      return JSON.parse(server.received[at]![0]!);
    };
    expect(await started(client.speak(options), 0)).toMatchObject({ type: 'session.start', voice_id: 3, language: 'de-de' });
    options.voice_id = 4;
    const changed = client.speak(options);
    expect(await started(changed, 1)).toMatchObject({ type: 'session.start', voice_id: 4, language: 'de-de' });
    // the shared operator of the first options still starts sessions with them
    expect(await started(client.speak({ voice_id: 3, language: 'de-de' }), 2)).toMatchObject({ voice_id: 3 });
    await client.close();
  });
});
