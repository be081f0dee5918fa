/**
 * The client's undici and its agent: loaded and made by the first HTTP request
 * (`src/client/undici.ts`), never by importing the package or speaking over a live session;
 * and `client.close()` with an agent that has no `close`, as under Bun (whose undici `Agent`
 * is a shim): the agent the client makes is replaced by a real undici Agent with `close`
 * and `destroy` taken away, so requests still go over real sockets to the emulator. The
 * module's load is seen by the `vi.mock` factory (run once, when something first imports
 * `undici`), which hands back the real module with that agent.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { from, lastValueFrom, toArray } from 'rxjs';

const made = vi.hoisted(() => ({ agents: [] as object[], shim: { on: false }, loads: 0 }));

vi.mock('undici', async (importOriginal) => {
  made.loads++;
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

// first in the file: the tests below load undici
describe('undici, loaded by the first HTTP request', () => {
  it('is not loaded by importing the package, making a client and speaking over a live session', async () => {
    const client = createClient({ baseUrl: emu.baseUrl, apiKey: emu.apiKey });
    const events = await lastValueFrom(from(['Hello there. ', 'Goodbye.']).pipe(client.speak({ voice_id: 1 }), toArray()));
    expect(events.filter((e) => e.type === 'segmentDone')).toHaveLength(2);
    expect(made.loads).toBe(0);
    expect(made.agents).toHaveLength(0);
    // control: the client's first HTTP request loads it (the factory sees a load) and makes the agent, once a process
    const voices = await lastValueFrom(client.voices.list());
    expect(voices.length).toBeGreaterThan(0);
    expect(made.loads).toBe(1);
    expect(made.agents).toHaveLength(1);
    await lastValueFrom(createClient({ baseUrl: emu.baseUrl, apiKey: emu.apiKey }).voices.list());
    expect(made.loads).toBe(1);
    await client.close();
  });

  it('close() before any request: no agent is made afterwards, a request fails at once (not retried)', async () => {
    const agents = made.agents.length;
    const client = createClient({ baseUrl: emu.baseUrl, apiKey: emu.apiKey });
    await client.close();
    await expect(lastValueFrom(client.voices.list())).rejects.toMatchObject({ name: 'ConnectionError', retryable: false, notSent: true });
    expect(made.agents).toHaveLength(agents);
    // control: the same request on a client not closed (its agent made then)
    const open = createClient({ baseUrl: emu.baseUrl, apiKey: emu.apiKey, maxRetries: 0 });
    await expect(lastValueFrom(open.voices.list())).resolves.not.toHaveLength(0);
    expect(made.agents).toHaveLength(agents + 1);
    await open.close();
  });
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

describe('client.close() with a fetch of the caller', () => {
  it('makes no agent of its own, and after close() the caller\'s fetch still sends (it is the caller\'s to close)', async () => {
    const agents = made.agents.length;
    const calls: string[] = [];
    const client = createClient({
      baseUrl: emu.baseUrl,
      apiKey: emu.apiKey,
      maxRetries: 0,
      fetch: (url, init) => {
        calls.push(url);
        return fetch(url, init as RequestInit);
      },
    });
    await lastValueFrom(client.voices.list());
    await client.close();
    await expect(lastValueFrom(client.voices.list())).resolves.not.toHaveLength(0);
    expect(calls).toHaveLength(2);
    expect(made.agents).toHaveLength(agents);
  });
});
