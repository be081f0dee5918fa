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
    // the source's notifications, in order, until they are replayed (undefined after), and the text among them
    let held: Delivery[] | undefined = [];
    let heldText = '';
    let target: Subscriber<string> | undefined;
    let started: Subscription | undefined;
    const pass = (deliver: Delivery): unknown => (held ? held.push(deliver) : target && deliver(target));
    const source = text$.subscribe({
      next: (value) => {
        if (held && typeof value === 'string') heldText += value;
        pass((to) => to.next(value));
      },
      error: (error: unknown) => pass((to) => to.error(error)),
      complete: () => pass((to) => to.complete()),
    });
    const stop = (): void => {
      held = target = undefined;
      source.unsubscribe();
    };
    // the text: what was held, then what comes (one subscriber)
    const replay = new Observable<string>((to) => {
      target = to;
      const deliveries = held ?? [];
      held = undefined;
      for (const deliver of deliveries) deliver(to);
      return stop;
    });
    load().then(
      () => {
        if (!subscriber.closed) started = start(replay).subscribe(subscriber);
      },
      (error: unknown) => {
        if (!subscriber.closed) subscriber.error(failed(error, heldText));
      },
    );
    return () => {
      stop();
      started?.unsubscribe();
    };
  });
}

/** A delivery of one notification of the source to the later subscriber. */
type Delivery = (target: Subscriber<string>) => void;
