/**
 * Starting a stream's work once code it needs is loaded, holding the text that comes
 * meanwhile: a browser page loads a language's sentence rules (`sentence-rules.ts`) and a
 * session's optional features (`features.ts`) by `import()` when a subscription needs
 * them. Code already loaded (always, in Node) starts at once, synchronously.
 * @internal
 */
import { Observable, type Subscriber, type Subscription } from 'rxjs';

/**
 * `start(text$)`, once `load` resolves (at once when `load` is undefined). `text$` is
 * subscribed at once (a hot source loses nothing): its values, error and completion are held
 * and replayed, in order, to `start`'s subscription, then passed on as they come. A load
 * that fails (a page offline) errors the output with `failed(error, heldText)` (the error
 * itself by default), `heldText` being the text held, in order. Unsubscribing before the
 * load is done unsubscribes `text$` and starts nothing. Each subscription loads anew, so
 * one after a failure tries again.
 */
export function startWhenLoaded<T>(
  load: (() => Promise<unknown>) | undefined,
  text$: Observable<string>,
  start: (text$: Observable<string>) => Observable<T>,
  failed: (error: unknown, heldText: string) => unknown = (error) => error,
): Observable<T> {
  if (load === undefined) return start(text$);
  return new Observable<T>((subscriber) => {
    const held = new HeldText(text$);
    let started: Subscription | undefined;
    let closed = false;
    load().then(
      () => {
        if (!closed) started = start(held.replay()).subscribe(subscriber);
      },
      (error: unknown) => {
        if (!closed) subscriber.error(failed(error, held.text()));
      },
    );
    return () => {
      closed = true;
      held.stop();
      started?.unsubscribe();
    };
  });
}

/** A delivery of one notification of the source to the later subscriber. */
type Delivery = (target: Subscriber<string>) => void;

/** A source subscribed now whose notifications wait for one later subscriber. */
class HeldText {
  /** The source's notifications, in order, until they are replayed (undefined after). */
  private held: Delivery[] | undefined = [];
  /** The text among them (string values), in order. */
  private heldText = '';
  private target: Subscriber<string> | undefined;
  private readonly source: Subscription;

  constructor(text$: Observable<string>) {
    this.source = text$.subscribe({
      next: (value) => {
        if (this.held && typeof value === 'string') this.heldText += value;
        this.pass((target) => target.next(value));
      },
      error: (error: unknown) => this.pass((target) => target.error(error)),
      complete: () => this.pass((target) => target.complete()),
    });
  }

  /** The text: what was held, then what comes (one subscriber). */
  replay(): Observable<string> {
    return new Observable<string>((subscriber) => {
      this.target = subscriber;
      const held = this.held ?? [];
      this.held = undefined;
      for (const deliver of held) deliver(subscriber);
      return () => this.stop();
    });
  }

  /** The text held so far, in order. */
  text(): string {
    return this.heldText;
  }

  stop(): void {
    this.target = undefined;
    this.held = undefined;
    this.source.unsubscribe();
  }

  private pass(deliver: Delivery): void {
    if (this.held) this.held.push(deliver);
    else if (this.target) deliver(this.target);
  }
}
