import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lastValueFrom } from 'rxjs';
import type { Emulator } from '../../src/emulator/index.js';
import type { RxVoiceClient } from '../../src/index.js';
import { clientFor, emulator } from './helpers.js';

let emu: Emulator;
let client: RxVoiceClient;
const warnings: string[] = [];
beforeAll(async () => {
  emu = await emulator();
  client = clientFor(emu, { warn: (message: string) => warnings.push(message) });
});
afterAll(async () => {
  await client.close();
  await emu.close();
});

describe('client.ttsTask: the /tts task flow under a name that does not read as speak\'s twin', () => {
  it('runs the task over real HTTP, warns once that the flow is deprecated, and names ttsTask', async () => {
    const event = await lastValueFrom(client.ttsTask.task({ text: 'Hello there.', voice_id: 1, language: 'en-us' }));
    expect(event.type).toBe('result');
    const audio = (event as { result: Uint8Array }).result;
    expect(audio.byteLength).toBeGreaterThan(44);
    expect(emu.requests.some((r) => r.method === 'POST' && r.path === '/tts')).toBe(true);
    expect(warnings.filter((w) => w.includes('client.ttsTask.task()'))).toHaveLength(1);
  });

  it('client.speech is a deprecated alias: the very same object, so both share one family and one warning', async () => {
    expect(client.speech).toBe(client.ttsTask);
    const before = warnings.length;
    await lastValueFrom(client.speech.task({ text: 'Again.', voice_id: 1, language: 'en-us' }));
    // the warning of `task` was already given through ttsTask: not again
    expect(warnings.length).toBe(before);
  });
});
