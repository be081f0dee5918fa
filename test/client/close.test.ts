/**
 * `client.close()` with an agent that has no `close`, as under Bun (whose undici `Agent`
 * is a shim): the agent the client makes is replaced by a real undici Agent with `close`
 * and `destroy` taken away, so requests still go over real sockets to the emulator.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { lastValueFrom } from 'rxjs';

const made = vi.hoisted(() => ({ agents: [] as object[], shim: { on: false } }));

vi.mock('undici', async (importOriginal) => {
  const undici = await importOriginal<typeof import('undici')>();
  class MaybeShimAgent extends undici.Agent {
    constructor(options?: ConstructorParameters<typeof undici.Agent>[0]) {
      super(options);
      made.agents.push(this);
      if (made.shim.on) {
        Object.defineProperty(this, 'close', { value: undefined });
        Object.defineProperty(this, 'destroy', { value: undefined });
      }
    }
  }
  return { ...undici, Agent: MaybeShimAgent };
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

describe('client.close() when the agent has no close (Bun)', () => {
  it('resolves after a real request, where calling the missing close would throw', async () => {
    made.shim.on = true;
    const client = createClient({ baseUrl: emu.baseUrl, apiKey: emu.apiKey });
    const voices = await lastValueFrom(client.voices.list());
    expect(voices.length).toBeGreaterThan(0);
    // the client's agent is made by its first request (src/client/undici.ts)
    const agent = made.agents.at(-1) as { close?: unknown; destroy?: unknown };
    expect(agent.close).toBeUndefined();
    expect(agent.destroy).toBeUndefined();
    await expect(client.close()).resolves.toBeUndefined();
    // control: what the old close (`this.#ownedAgent?.close()`) did with this agent
    expect(() => (agent as { close: () => void }).close()).toThrow(TypeError);
  });

  it('control: with a real agent, close() closes it (a request after it fails)', async () => {
    made.shim.on = false;
    const client = createClient({ baseUrl: emu.baseUrl, apiKey: emu.apiKey, maxRetries: 0 });
    await lastValueFrom(client.voices.list());
    const agent = made.agents.at(-1) as { closed?: boolean };
    await client.close();
    expect(agent.closed).toBe(true);
    await expect(lastValueFrom(client.voices.list())).rejects.toThrow();
  });
});
