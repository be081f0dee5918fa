/**
 * A call that may have been charged is never sent twice: a creation call (JSON, multipart,
 * the deprecated translation stream) answered 503 fails at once, while a GET with the same
 * answer is retried, and a 429 (nothing was created) is retried for a creation call too
 * (src/client/retry-policy.ts, rule 3, through the transport).
 */
import { lastValueFrom, type Observable } from 'rxjs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, type RxVoiceClient } from '../../src/index.js';
import type { Emulator } from '../../src/emulator/index.js';
import { clientFor, emulator } from './helpers.js';

let emu: Emulator;
let client: RxVoiceClient;
/** 44 bytes of a WAV header: enough for the emulator to take as a sample. */
const SAMPLE = Buffer.alloc(44, 1);

beforeAll(async () => {
  emu = await emulator();
  client = clientFor(emu, { maxRetries: 2 });
});
afterAll(async () => {
  await client.close();
  await emu.close();
});
afterEach(() => {
  emu.context.options.faults.httpErrors = undefined;
});

const sent = (method: string, path: string): number => emu.requests.filter((r) => r.method === method && r.path === path).length;

/** Answer the next request with `status`, run `call$`, and say what it ended with and how often `method path` was sent. */
async function onceAnswered(status: number, method: string, path: string, call$: Observable<unknown>): Promise<{ error: unknown; sends: number }> {
  const before = sent(method, path);
  emu.context.options.faults.httpErrors = { status, count: 1 };
  const error = await lastValueFrom(call$).then(
    () => undefined,
    (e: unknown) => e,
  );
  return { error, sends: sent(method, path) - before };
}

describe('a creation call answered 503 is not repeated (it may have created a task and spent credits)', () => {
  const creations: Array<[string, string, () => Observable<unknown>]> = [
    ['JSON: POST /translation', '/translation', () => client.translation.create({ texts: ['Hi'], source_language: 'en-us', target_language: 'de-de' })],
    ['multipart: POST /create-custom-voice', '/create-custom-voice', () => client.voices.create({ voice_name: 'once', gender: 1, file: { data: SAMPLE, filename: 'v.wav' } })],
    [
      'the deprecated stream: POST /translation/stream',
      '/translation/stream',
      () => client.translateStream({ text: 'Hi.', source_language: 'en-us', target_language: 'de-de' }),
    ],
  ];
  for (const [name, path, call] of creations) {
    it(name, async () => {
      const { error, sends } = await onceAnswered(503, 'POST', path, call());
      expect(error).toBeInstanceOf(ApiError);
      expect((error as ApiError).status).toBe(503);
      expect(sends).toBe(1);
      // control: a 429 says nothing was created, so the same call is sent again and succeeds
      const limited = await onceAnswered(429, 'POST', path, call());
      expect(limited).toEqual({ error: undefined, sends: 2 });
    });
  }

  it('control: a GET answered 503 is sent again and succeeds', async () => {
    const { error, sends } = await onceAnswered(503, 'GET', '/list-voices', client.voices.list());
    expect(error).toBeUndefined();
    expect(sends).toBe(2);
  });
});
