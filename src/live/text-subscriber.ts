/**
 * The text source's subscriber of a live session (live-session.ts): a `Subscription` that is
 * also an `Observer`, which RxJS takes as a subscriber as it is (no `SafeSubscriber` and
 * `ConsumerObserver` wrapped around an observer), and which keeps the one finalizer a source
 * adds (a `Subject`'s removal of its observer) in a field, not in an array grown to 17 slots.
 * @internal
 */
import { Subscription, type Observer, type TeardownLogic } from 'rxjs';
import { reportUnhandledError } from './report-unhandled.js';

/** What the source's subscriber asks of its session. */
export interface TextSourceHost {
  /** A token from the source. */
  pushText(text: string): void;
  /** The text source failed. */
  textFailed(error: unknown): void;
  /** The text source completed. */
  textCompleted(): void;
}

/**
 * Subscribes a session to its text source: forwards to the session (prototype methods, no
 * closures built per session) until the source ends or the session unsubscribes, and nothing
 * after. The session is in a private field: the source holds this subscriber, and
 * `util.inspect` of the source must not reach the session's socket (its headers hold the key).
 *
 * RxJS uses as a subscriber, unwrapped, any object that is an `Observer` and a `Subscription`
 * (`isSubscriber` in RxJS 7: `instanceof Subscriber`, or `next`/`error`/`complete` with
 * `closed`/`add`/`remove`/`unsubscribe`), all public API. What `SafeSubscriber` did that matters
 * here is kept: no notification after the end or after unsubscribing, the subscription ended
 * after `error`/`complete`, and an exception of the session's `next` reported as RxJS reports
 * it (`config.onUnhandledError`, else thrown on a later task), never into the source.
 */
export class TextSubscriber extends Subscription implements Observer<string> {
  readonly #session: TextSourceHost;
  /** The first finalizer added (the source's own teardown), kept without an array. */
  #finalizer: Exclude<TeardownLogic, void> | undefined;

  constructor(session: TextSourceHost) {
    super();
    this.#session = session;
  }

  next(text: string): void {
    if (this.closed) return;
    try {
      this.#session.pushText(text);
    } catch (error) {
      reportUnhandledError(error);
    }
  }

  error(error: unknown): void {
    if (this.closed) return;
    this.unsubscribe();
    this.#session.textFailed(error);
  }

  complete(): void {
    if (this.closed) return;
    this.unsubscribe();
    this.#session.textCompleted();
  }

  override add(teardown: TeardownLogic): void {
    // the first one, kept while open (closed, the base class runs it at once); a closed
    // Subscription or this subscriber kept here is harmless: its unsubscribe does nothing
    if (this.#finalizer === undefined && teardown && !this.closed) {
      this.#finalizer = teardown;
      return;
    }
    super.add(teardown);
  }

  override remove(teardown: Exclude<TeardownLogic, void>): void {
    if (teardown === this.#finalizer) this.#finalizer = undefined;
    else super.remove(teardown);
  }

  override unsubscribe(): void {
    // a second call finds no finalizer, and the base class does nothing once closed
    const finalizer = this.#finalizer;
    this.#finalizer = undefined;
    super.unsubscribe();
    if (typeof finalizer === 'function') finalizer();
    else finalizer?.unsubscribe();
  }
}
