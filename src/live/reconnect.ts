/**
 * A live session's reconnect (`reconnect` option, off by default): the wait before the next
 * attempt, and what a session that is ready again sends and says. Apart from the session
 * (live-session.ts) so that a browser page whose sessions never reconnect does not load it:
 * in Node `features-node.ts` imports it; a page `import()`s it when a session with
 * `reconnect` starts (`features.ts`).
 * @internal
 */
import type { SchedulerLike, Subscription } from 'rxjs';
import { backoffDelay } from '../core/backoff.js';
import type { ClientOptions } from './checks.js';
import type { Connection } from './connection.js';
import type { LiveSpeechEvent } from './events.js';
import type { SpeechLedger } from './ledger.js';
import type { ClientFrame } from './protocol.js';
import type { ResponseWatch } from './response-watch.js';

/**
 * What the reconnect reads and sets of a session (live-session.ts's `LiveSession`, which
 * implements it): named here so that this file, loaded on demand, imports nothing that
 * imports it.
 */
export interface ReconnectingSession {
  attemptsInRow: number;
  idOffset: number;
  readonly maxConsumerId: number;
  reconnectTimer: Subscription | undefined;
  readonly textComplete: boolean;
  readonly ledger: Pick<SpeechLedger, 'abortInProgress' | 'resend'>;
  readonly responseWatch: Pick<ResponseWatch, 'watch'>;
  readonly options: { readonly scheduler: SchedulerLike };
  open(): void;
  send(connection: Connection, frame: ClientFrame): void;
  emit(event: LiveSpeechEvent): void;
}

/**
 * After a retryable error, with an attempt left (the session in its `backoff` phase): what
 * was in progress is unspoken again, the next ids follow the last one given, and a new socket
 * opens after the backoff delay.
 */
export function reconnectLater(session: ReconnectingSession, policy: NonNullable<ClientOptions['reconnect']>): void {
  session.attemptsInRow++;
  session.ledger.abortInProgress();
  session.idOffset = session.maxConsumerId + 1;
  const delay = backoffDelay(session.attemptsInRow - 1, policy, policy.random);
  session.reconnectTimer = session.options.scheduler.schedule(() => session.open(), delay);
}

/** Ready again after a reconnect: everything not yet delivered (sent, or pushed meanwhile) goes again, once. */
export function resumeReconnected(session: ReconnectingSession, connection: Connection, session_id: string, run_id: number): void {
  const resent = session.ledger.resend();
  if (resent.length > 0) session.send(connection, { type: 'text.chunk', text: resent });
  if (session.textComplete) session.send(connection, { type: 'text.done' });
  session.responseWatch.watch(connection);
  session.emit({ type: 'reconnected', attempt: session.attemptsInRow, session_id, run_id, resent });
}
