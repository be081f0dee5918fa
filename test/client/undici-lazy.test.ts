/**
 * undici is loaded by a client's first HTTP request, not by importing the package
 * (`src/client/undici.ts`): a process that only speaks over live sessions never loads it.
 * The module's load is seen by a `vi.mock` factory (run once, when something first
 * imports `undici`), which hands back the real module.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { from, lastValueFrom, toArray } from 'rxjs';

const loads = vi.hoisted(() => ({ count: 0 }));

vi.mock('undici', async (importOriginal) => {
  loads.count++;
  return importOriginal<typeof import('undici')>();
});

const { createClient } = await import('../../src/index.js');
const { startEmulator } = await import('../../src/emulator/index.js');
type Emulator = Awaited<ReturnType<typeof startEmulator>>;

let emu: Emulator;
beforeAll(async () => {
  emu = await startEmulator({ synth: 'tone' });
});
afterAll(async () => {
  await emu.close();
});

describe('undici, loaded by the first HTTP request', () => {
  it('is not loaded by importing the package, making a client and speaking over a live session', async () => {
    const client = createClient({ baseUrl: emu.baseUrl, apiKey: emu.apiKey });
    const events = await lastValueFrom(from(['Hello there. ', 'Goodbye.']).pipe(client.speak({ voice_id: 1 }), toArray()));
    expect(events.filter((e) => e.type === 'segmentDone')).toHaveLength(2);
    expect(loads.count).toBe(0);
    // control: the client's first HTTP request loads it (the factory sees a load), once
    const voices = await lastValueFrom(client.voices.list());
    expect(voices.length).toBeGreaterThan(0);
    expect(loads.count).toBe(1);
    await lastValueFrom(createClient({ baseUrl: emu.baseUrl, apiKey: emu.apiKey }).voices.list());
    expect(loads.count).toBe(1);
    await client.close();
  });

  it('close() before any request: no agent is made afterwards, a request fails as on a closed agent', async () => {
    const client = createClient({ baseUrl: emu.baseUrl, apiKey: emu.apiKey, maxRetries: 0 });
    await client.close();
    await expect(lastValueFrom(client.voices.list())).rejects.toMatchObject({ name: 'ConnectionError' });
    // control: the same request on a client not closed
    const open = createClient({ baseUrl: emu.baseUrl, apiKey: emu.apiKey, maxRetries: 0 });
    await expect(lastValueFrom(open.voices.list())).resolves.not.toHaveLength(0);
    await open.close();
  });
});
