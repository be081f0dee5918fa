/**
 * A text source with nothing to speak (issue 28, item 5): `of('')`, `from([''])`, only
 * whitespace, through `client.speak`, ends with the local `ValidationError` on `text`
 * (as other bad input), and a source that ends at once opens no session: against the
 * emulator, no WebSocket upgrade is seen (control: a sentence opens exactly one).
 */
import { Subject, from, lastValueFrom, of, toArray, type Observable } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type RxVoiceClient } from '../../src/index.js';
import { ValidationError } from '../../src/core/errors.js';
import { isNothingToSpeak, nothingToSpeakError } from '../../src/live/nothing-to-speak.js';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';

let emu: Emulator;
let client: RxVoiceClient;
beforeAll(async () => {
  emu = await startEmulator({ synth: 'tone', toneWordSeconds: 0.01 });
  client = createClient({ apiKey: emu.apiKey, baseUrl: emu.baseUrl });
});
afterAll(async () => {
  await client?.close();
  await emu?.close();
});

const upgrades = (): number => emu.requests.filter((r) => r.method === 'UPGRADE').length;
const outcome = (text$: Observable<string>): Promise<unknown> =>
  lastValueFrom(text$.pipe(client.speak({ voice_id: 1, idle_timeout: 0.05 }), toArray())).then(
    (events) => events,
    (error: unknown) => error,
  );

describe('client.speak with nothing to speak', () => {
  const sources: Record<string, () => Observable<string>> = {
    "of('')": () => of(''),
    "from([''])": () => from(['']),
    'only whitespace': () => from([' ', '\n\n', '\t \u00a0']),
    'no text at all': () => from([] as string[]),
  };
  for (const [name, source] of Object.entries(sources)) {
    it(`${name}: a ValidationError on text, and no session opened`, async () => {
      const before = upgrades();
      const error = await outcome(source());
      expect(error).toBeInstanceOf(ValidationError);
      expect(error).toMatchObject({ source: 'local', issues: [{ loc: ['text'], type: 'value_error' }] });
      expect((error as Error).message).toMatch(/nothing to speak/);
      expect(isNothingToSpeak(error)).toBe(true);
      expect(upgrades()).toBe(before);
    });
  }

  it('control: a sentence opens one session and is spoken', async () => {
    const before = upgrades();
    const events = (await outcome(of('Hello there.'))) as Array<{ type: string }>;
    expect(events.map((e) => e.type)).toContain('segmentDone');
    expect(upgrades()).toBe(before + 1);
  });

  it('whitespace that ends later (the socket already open): the same error, nothing spoken', async () => {
    const text$ = new Subject<string>();
    const done = outcome(text$);
    text$.next('  ');
    await new Promise((resolve) => setImmediate(resolve));
    text$.next('\n');
    text$.complete();
    const error = await done;
    expect(isNothingToSpeak(error)).toBe(true);
    expect(emu.requests.some((r) => r.method === 'UPGRADE')).toBe(true);
  });

  it('control: whitespace around real text is spoken', async () => {
    const events = (await outcome(from(['  ', 'Hi there.', '\n']))) as Array<{ type: string }>;
    expect(events.at(-1)?.type).toBe('done');
  });
});

describe('isNothingToSpeak', () => {
  // the CLI (empty standard input) and rxvoice/livekit (a segment with nothing to hear gives no audio) act on it: another error must not pass for it
  it('is the error of a source with nothing to speak (local, for the live session), and no other', () => {
    const error = nothingToSpeakError();
    expect(isNothingToSpeak(error)).toBe(true);
    expect(error).toMatchObject({ source: 'local', endpoint: '/live-tts/ws' });
    const [issue] = error.issues;
    expect(isNothingToSpeak(new ValidationError([{ ...issue!, msg: 'must be a string' }], { source: 'local' }))).toBe(false);
    expect(isNothingToSpeak(new ValidationError([issue!, { loc: ['voice_id'], msg: 'must be an integer voice id', type: 'int_type' }], { source: 'local' }))).toBe(false);
    expect(isNothingToSpeak({ name: 'ValidationError', issues: [issue], message: error.message })).toBe(false);
    expect(isNothingToSpeak(new Error(error.message))).toBe(false);
  });
});
