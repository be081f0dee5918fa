/**
 * Slot renewal in virtual time: every third of a slot's lifetime (20 s) the store is asked to
 * renew the slots of the admitted, open sessions (never one still being admitted or closed);
 * starting twice renews once per tick; with no live session left it stops, and starts again
 * on the next admission; stop() ends it.
 */
import { describe, expect, it } from 'vitest';
import { VirtualAction, VirtualTimeScheduler } from 'rxjs';
import { memoryRelayStore, type RelayStore } from '../../src/relay/index.js';
import { slotRenewal, type RenewedSession } from '../../src/relay/renewal.js';

/** A memory store that records each renewal: when, and which sessions. */
function recordingStore(): { store: RelayStore; renewals: Array<{ at: number; sessions: string[] }> } {
  const inner = memoryRelayStore();
  const renewals: Array<{ at: number; sessions: string[] }> = [];
  const store: RelayStore = {
    ...inner,
    renew: async (list, ttlMs, now) => {
      renewals.push({ at: now, sessions: list.map((slot) => `${slot.client}/${slot.session}`) });
      return inner.renew(list, ttlMs, now);
    },
  };
  return { store, renewals };
}

describe('slotRenewal', () => {
  it('renews the live sessions every 20 s, stops when none is left, starts again', () => {
    const scheduler = new VirtualTimeScheduler(VirtualAction, 50_000); // flush() runs up to 50 s
    const { store, renewals } = recordingStore();
    const a: RenewedSession & { phase: string } = { client: 'ann', id: 's1', admitted: true, phase: 'relaying' };
    const b: RenewedSession & { phase: string } = { client: 'bob', id: 's2', admitted: false, phase: 'admitting' };
    const sessions = new Set<RenewedSession>([a, b]);
    const renewal = slotRenewal(sessions, store, scheduler, 2_000);
    renewal.start();
    renewal.start(); // idempotent
    scheduler.flush();
    expect(renewals).toEqual([
      { at: 20_000, sessions: ['ann/s1'] },
      { at: 40_000, sessions: ['ann/s1'] },
    ]);
    a.phase = 'closed'; // none live: the next tick stops renewing
    scheduler.maxFrames = 100_000;
    scheduler.flush();
    expect(renewals).toHaveLength(2);
    expect(scheduler.actions).toHaveLength(0); // nothing left scheduled
    Object.assign(b, { admitted: true, phase: 'starting' });
    renewal.start(); // started again by an admission
    scheduler.maxFrames = 90_000;
    scheduler.flush();
    expect(renewals.slice(2)).toEqual([{ at: 80_000, sessions: ['bob/s2'] }]);
    renewal.stop();
    scheduler.maxFrames = 200_000; // without stop() this would renew at 100 s, 120 s, ... (bounded, so a broken stop fails, never hangs)
    scheduler.flush();
    expect(renewals).toHaveLength(3);
  });
});
