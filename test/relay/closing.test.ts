/**
 * `relay.close()` over real sockets: what is still being admitted while the relay closes is
 * never served (a browser whose `authorize` answers then is cut, and nothing goes upstream),
 * and no timer of the relay is left behind (a pending timer would hold the process open).
 */
import { describe, expect, it } from 'vitest';
import { VirtualTimeScheduler } from 'rxjs';
import { START, browser, harness, json, upgrades } from './helpers.js';

describe('rxvoice/relay: close()', () => {
  it('a browser whose authorize answers yes while the relay closes is cut, never served (control: answered before the close, served)', async () => {
    const answers: Array<(yes: boolean) => void> = [];
    const h = await harness({ authorize: () => new Promise<boolean>((resolve) => answers.push(resolve)) });
    try {
      // control: the same authorize answering yes before the close serves the page (and its session makes close() wait)
      const served = browser(h.url);
      await expect.poll(() => answers.length).toBe(1);
      answers[0]!(true);
      await served.opened;
      served.ws.send(START);
      await expect.poll(() => json(served.frames).length).toBeGreaterThan(0); // session.ready: served upstream
      expect(upgrades(h.emulator)).toBe(1);

      const late = browser(h.url);
      await expect.poll(() => answers.length).toBe(2);
      const closing = h.relay.close();
      answers[1]!(true);
      const outcome = await Promise.race([late.opened.then(() => 'opened'), late.closed.then(() => 'cut')]);
      await closing;
      expect(outcome).toBe('cut');
      expect(h.relay.stats().sessions).toBe(0);
      expect(upgrades(h.emulator)).toBe(1);
    } finally {
      await h.close();
    }
  });

  it('leaves no timer behind: the slot renewal still pending after the last browser left is stopped (control: pending until then)', async () => {
    const scheduler = new VirtualTimeScheduler();
    const pending = (): number => scheduler.actions.filter((action) => !action.closed).length;
    const h = await harness({ scheduler });
    try {
      const b = browser(h.url);
      await b.opened;
      b.ws.send(START);
      await expect.poll(() => json(b.frames).length).toBeGreaterThan(0); // admitted: the renewal runs
      b.ws.close();
      await b.closed;
      await expect.poll(() => h.relay.stats().sessions).toBe(0);
      // control: with no session left, the renewal's next run is still due (it stops itself only when it runs)
      expect(pending()).toBe(1);
      await h.relay.close();
      expect(pending()).toBe(0);
    } finally {
      await h.close();
    }
  });
});
