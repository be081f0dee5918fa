/**
 * Waiting for a language's sentence rules (`text/language-tables.ts`): a page loads the
 * words of a language other than English only when a session uses it, so `speak`,
 * `segmentSentences` and `resubmitSkipped` start their work once the table is in, holding
 * the text that comes meanwhile (`load-then-start.ts`). English, languages without a table,
 * and tables already loaded start at once, synchronously, as before.
 * @internal
 */
import type { Observable } from 'rxjs';
import { loadLanguageTable, languageTableReady } from '../text/language-tables.js';
import { startWhenLoaded } from './load-then-start.js';

/**
 * `start(text$)`, once the sentence rules of `locale` are loaded. `text$` is subscribed at
 * once (a hot source loses nothing): its values, error and completion are held and replayed,
 * in order, to `start`'s subscription, then passed on as they come. A table that fails to
 * load (a page offline) errors the output with that error. Unsubscribing before the table is
 * in unsubscribes `text$` and starts nothing.
 */
export function afterSentenceRules<T>(locale: string | undefined, text$: Observable<string>, start: (text$: Observable<string>) => Observable<T>): Observable<T> {
  return startWhenLoaded(sentenceRulesLoad(locale), text$, start);
}

/** The load of `locale`'s sentence rules, or undefined when they can be made now. */
export function sentenceRulesLoad(locale: string | undefined): (() => Promise<void>) | undefined {
  return languageTableReady(locale) ? undefined : () => loadLanguageTable(locale);
}
