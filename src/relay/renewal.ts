/**
 * Keeps the store's session slots of a relay's admitted sessions alive: every third of a
 * slot's lifetime, while there are any, on the relay's scheduler.
 *
 * @internal
 */
import type { SchedulerLike, Subscription } from 'rxjs';
import { SLOT_TTL_MS } from './options.js';
import { within } from './rate.js';
import type { RelayStore } from './store.js';

/** A session as renewal sees it. */
export interface RenewedSession {
  readonly client: string;
  readonly id: string;
  readonly admitted: boolean;
  readonly phase: string;
}

/** Renewal of the slots of `sessions`: `start()` (idempotent) after an admission, `stop()` on close. */
export function slotRenewal(
  sessions: ReadonlySet<RenewedSession>,
  store: RelayStore,
  scheduler: SchedulerLike,
  storeTimeoutMs: number,
): { start(): void; stop(): void } {
  let renewal: Subscription | undefined;
  return {
    start() {
      if (renewal !== undefined) return;
      renewal = scheduler.schedule(function (this: { schedule(state?: undefined, delay?: number): void }) {
        const live = [...sessions].filter((s) => s.admitted && s.phase !== 'closed').map((s) => ({ client: s.client, session: s.id }));
        if (live.length === 0) {
          renewal = undefined;
          return;
        }
        within(store.renew(live, SLOT_TTL_MS, scheduler.now()), storeTimeoutMs, scheduler).catch(() => undefined);
        this.schedule(undefined, SLOT_TTL_MS / 3);
      }, SLOT_TTL_MS / 3);
    },
    stop() {
      renewal?.unsubscribe();
      renewal = undefined;
    },
  };
}
