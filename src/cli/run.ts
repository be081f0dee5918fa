/**
 * Running an Observable to its end from a command: resolves with the last value, rejects
 * with its error, and unsubscribes (tearing the pipeline down) when interrupted.
 */
import { Observable, type MonoTypeOperatorFunction } from 'rxjs';
import { AbortError } from '../core/errors.js';

/**
 * Subscribe to `source$` and settle when it ends. On `signal` abort: reject with
 * `AbortError` and unsubscribe, at once or, with `graceMs`, after giving the pipeline that
 * long to end by itself (a pipeline that turns the abort into an error, so that its sinks
 * clean up before erroring).
 */
export function runToEnd<T>(source$: Observable<T>, signal: AbortSignal, graceMs = 0): Promise<T | undefined> {
  return new Promise<T | undefined>((resolve, reject) => {
    if (signal.aborted) {
      reject(new AbortError('Interrupted'));
      return;
    }
    let last: T | undefined;
    let graceTimer: ReturnType<typeof setTimeout> | undefined;
    const onAbort = (): void => {
      if (graceMs <= 0) {
        subscription.unsubscribe();
        reject(new AbortError('Interrupted'));
        return;
      }
      graceTimer = setTimeout(() => {
        subscription.unsubscribe();
        reject(new AbortError('Interrupted'));
      }, graceMs);
    };
    const subscription = source$.subscribe({
      next: (value) => {
        last = value;
      },
      error: (error: unknown) => {
        clearTimeout(graceTimer);
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
      complete: () => {
        clearTimeout(graceTimer);
        signal.removeEventListener('abort', onAbort);
        resolve(last);
      },
    });
    if (!subscription.closed) signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Resolves when `signal` aborts. */
export function untilAborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}

/**
 * Errors the stream with `AbortError` when `signal` aborts, so that downstream sinks see
 * an error (and remove their temporary files before passing it on) rather than an
 * unsubscribe (whose cleanup nobody can await).
 */
export function errorOnAbort<T>(signal: AbortSignal): MonoTypeOperatorFunction<T> {
  return (source) =>
    new Observable<T>((subscriber) => {
      const onAbort = (): void => subscriber.error(new AbortError('Interrupted'));
      if (signal.aborted) {
        onAbort();
        return undefined;
      }
      signal.addEventListener('abort', onAbort, { once: true });
      const subscription = source.subscribe(subscriber);
      return () => {
        signal.removeEventListener('abort', onAbort);
        subscription.unsubscribe();
      };
    });
}
