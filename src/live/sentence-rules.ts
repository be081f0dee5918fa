/**
 * Waiting for a language's sentence rules (`text/language-tables.ts`): a page loads the
 * words of a language other than English only when a session uses it, so `speak`,
 * `segmentSentences` and `resubmitSkipped` start their work once the table is in, holding
 * the text that comes meanwhile. English, languages without a table, and tables already
 * loaded start at once, synchronously, as before.
 * @internal
 */
import { Observable, type Subscriber, type Subscription } from 'rxjs';
import { loadLanguageTable, languageTableReady } from '../text/language-tables.js';

/**
 * `start(text$)`, once the sentence rules of `locale` are loaded. `text$` is subscribed at
 * once (a hot source loses nothing): its values, error and completion are held and replayed,
 * in order, to `start`'s subscription, then passed on as they come. A table that fails to
 * load (a page offline) errors the output with that error. Unsubscribing before the table is
 * in unsubscribes `text$` and starts nothing.
 */
export function afterSentenceRules<T>(locale: string | undefined, text$: Observable<string>, start: (text$: Observable<string>) => Observable<T>): Observable<T> {
  if (languageTableReady(locale)) return start(text$);
  return new Observable<T>((subscriber) => {
    const held = new HeldText(text$);
    let started: Subscription | undefined;
    let closed = false;
    loadLanguageTable(locale).then(
      () => {
        if (!closed) started = start(held.replay()).subscribe(subscriber);
      },
      (error: unknown) => subscriber.error(error),
    );
    return () => {
      closed = true;
      held.stop();
      started?.unsubscribe();
    };
  });
}

type Held = { kind: 'next'; value: string } | { kind: 'error'; error: unknown } | { kind: 'complete' };

/** A source subscribed now whose notifications wait for one later subscriber. */
class HeldText {
  private held: Held[] | undefined = [];
  private target: Subscriber<string> | undefined;
  private readonly source: Subscription;

  constructor(text$: Observable<string>) {
    this.source = text$.subscribe({
      next: (value) => this.push({ kind: 'next', value }),
      error: (error: unknown) => this.push({ kind: 'error', error }),
      complete: () => this.push({ kind: 'complete' }),
    });
  }

  /** The text: what was held, then what comes (one subscriber). */
  replay(): Observable<string> {
    return new Observable<string>((subscriber) => {
      this.target = subscriber;
      const held = this.held ?? [];
      this.held = undefined;
      for (const h of held) this.deliver(h);
      return () => this.stop();
    });
  }

  stop(): void {
    this.target = undefined;
    this.held = undefined;
    this.source.unsubscribe();
  }

  private push(h: Held): void {
    if (this.held) this.held.push(h);
    else this.deliver(h);
  }

  private deliver(h: Held): void {
    const target = this.target;
    if (!target) return;
    if (h.kind === 'next') target.next(h.value);
    else if (h.kind === 'error') target.error(h.error);
    else target.complete();
  }
}
