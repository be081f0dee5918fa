/**
 * A client's session slots in the store when the store is slow, over real sockets: a slot the
 * store gives after the browser left, or after the relay gave up waiting, is released, so the
 * client's next session is served (with `sessionsPerClient: 1`, a held slot would refuse it 4429).
 */
import { describe, expect, it } from 'vitest';
import { memoryRelayStore, type RelayStore } from '../../src/relay/index.js';
import { START, browser, harness, upgrades, type Browser } from './helpers.js';

/** A memory store whose `acquire` takes the slot at once but answers only when let go (while `hold` is on). */
function slowStore(): { store: RelayStore; answers: Array<() => void>; hold: boolean } {
  const inner = memoryRelayStore();
  const state = {
    hold: true,
    answers: [] as Array<() => void>,
    store: {
      ...inner,
      acquire: (client, session, max, ttlMs, now) => {
        const took = inner.acquire(client, session, max, ttlMs, now);
        if (!state.hold) return took;
        return new Promise<boolean>((resolve) => state.answers.push(() => resolve(took)));
      },
    } satisfies RelayStore,
  };
  return state;
}

const DONE = JSON.stringify({ type: 'text.done' });

/** A browser of the client that speaks and is done: the code it was closed with. */
async function served(b: Browser): Promise<number> {
  await b.opened;
  b.ws.send(START);
  b.ws.send(DONE);
  return (await b.closed).code;
}

describe('rxvoice/relay: slots the store gives late', () => {
  it('the browser left before the store answered: the slot it then gives is released, the client’s next session is served', async () => {
    const slow = slowStore();
    const h = await harness({ store: slow.store, clientId: () => 'one', limits: { sessionsPerClient: 1 } });
    try {
      const left = browser(h.url);
      await left.opened;
      await expect.poll(() => slow.answers.length).toBe(1); // its claim is with the store
      left.ws.close();
      await left.closed;
      await expect.poll(() => h.relay.stats().sessions).toBe(0);
      slow.hold = false;
      slow.answers[0]!(); // the store took the slot for a session that is gone
      const next = browser(h.url);
      await next.opened;
      next.ws.send(START);
      await expect.poll(() => upgrades(h.emulator)).toBe(1); // served
      // control: the budget of one session is in force (a second at once is refused)
      expect((await browser(h.url).closed).code).toBe(4429);
      next.ws.send(DONE);
      expect((await next.closed).code).toBe(1000);
    } finally {
      await h.close();
    }
  });

  it('the store answered after storeTimeoutMs, or never: the refused claim’s slot is released, the client’s next session is served', async () => {
    const slow = slowStore();
    const h = await harness({ store: slow.store, clientId: () => 'one', limits: { sessionsPerClient: 1, storeTimeoutMs: 200 } });
    try {
      expect((await browser(h.url).closed).code).toBe(1013); // the store never answers this claim
      slow.hold = false;
      expect(await served(browser(h.url))).toBe(1000);
      expect(upgrades(h.emulator)).toBe(1);
    } finally {
      await h.close();
    }
  });
});
