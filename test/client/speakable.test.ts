/** client.speak({ speakable }): speakableText before the live session, against the emulator over real sockets (issue 31). */
import { describe, expect, it } from 'vitest';
import { from, lastValueFrom, toArray } from 'rxjs';
import { afterEach } from 'vitest';
import { createClient } from '../../src/index.js';
import type { RxVoiceClient } from '../../src/client/client.js';
import type { ClientSpeakOptions } from '../../src/client/client.js';
import { concatSegments } from '../../src/operators/concatSegments.js';
import { ValidationError } from '../../src/core/errors.js';
import { emulator, segmentsOf, squash } from '../live/helpers.js';

const clients: RxVoiceClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});
/** `client.speak(options)` of a client on the emulator. */
function speak(emu: { apiKey: string; baseUrl: string }, options: ClientSpeakOptions) {
  const client = createClient({ apiKey: emu.apiKey, baseUrl: emu.baseUrl });
  clients.push(client);
  return client.speak(options);
}

const LLM = '<think>The user wants SQL help. Let me think.</think>Use **SQL** with Nguyen. See https://example.com/docs?x=1 now. <tool_call>{"name":"search"}</tool_call>Bye.';
const SPOKEN = ['Use sequel with Win.', 'See example.com now.', 'Bye.'];
const lexicon = { words: { SQL: 'sequel', Nguyen: 'Win' } };

describe('client.speak({ speakable })', () => {
  it('speaks only what should be heard, lexicon applied; the text as written without it (control)', async () => {
    const emu = await emulator();
    for (const tokens of [[LLM], [...LLM]]) {
      const events = await lastValueFrom(from(tokens).pipe(speak(emu, { voice_id: 1, speakable: { lexicon } }), toArray()));
      expect(segmentsOf(events).map((s) => s.text.trim())).toEqual(SPOKEN);
    }
    const raw = await lastValueFrom(from([LLM]).pipe(speak(emu, { voice_id: 1 }), toArray()));
    expect(segmentsOf(raw).map((s) => s.text).join('')).toContain('<think>');
  });

  it('speakable: true uses the session language for spoken forms', async () => {
    const emu = await emulator();
    const events = await lastValueFrom(
      from(['Es kostet 3,50 € ', 'am 3. Mai.']).pipe(speak(emu, { voice_id: 1, language: 'de-de', speakable: { spokenForm: true } }), toArray()),
    );
    expect(segmentsOf(events).map((s) => s.text.trim())).toEqual(['Es kostet drei Euro und fünfzig Cent am dritte Mai.']);
  });

  it('after a drop, the reconnect re-sends the rewritten text (the ledger records what was sent)', async () => {
    const emu = await emulator({ faults: { dropAfterFrames: 2 } });
    const events = await lastValueFrom(
      from([LLM]).pipe(speak(emu, { voice_id: 1, speakable: { lexicon }, reconnect: { maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 20 } }), toArray()),
    );
    const reconnected = events.filter((e) => e.type === 'reconnected') as Array<{ resent: string }>;
    expect(reconnected.length).toBeGreaterThanOrEqual(1);
    expect(squash(reconnected[0]!.resent)).toBe(squash(SPOKEN.slice(1).join(' ')));
    const delivered = await lastValueFrom(from(events).pipe(concatSegments(), toArray()));
    expect(delivered.map((s) => s.text.trim())).toEqual(SPOKEN);
  });

  it('bad speakable options throw a ValidationError when speak is called, before anything is sent', () => {
    const connection = { apiKey: 'k', baseUrl: 'http://127.0.0.1:9' };
    expect(() => speak(connection, { voice_id: 1, speakable: { links: 'short' as never } })).toThrow(ValidationError);
    expect(() => speak(connection, { voice_id: 1, speakable: { spokenForm: true }, language: 'ja-jp' })).toThrow(/speakable/);
    expect(() => speak(connection, { voice_id: 1, speakable: 3 as never })).toThrow(ValidationError);
  });
});
