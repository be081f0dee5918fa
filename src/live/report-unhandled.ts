/**
 * An error that has nowhere to go (thrown by a session's own handler, where the caller is a
 * source or a timer shared with other sessions), reported as RxJS reports an error thrown by
 * an observer: to `config.onUnhandledError`, else thrown on a later task.
 * @internal
 */
import { config } from 'rxjs';

/** Report `error` on a later task: `config.onUnhandledError` when set, else thrown there. */
export function reportUnhandledError(error: unknown): void {
  setTimeout(() => {
    const { onUnhandledError } = config;
    if (onUnhandledError) onUnhandledError(error);
    else throw error;
  });
}
