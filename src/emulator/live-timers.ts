/**
 * The timers of one live session of the emulator (live.ts): each timer is tracked, so the
 * session's teardown clears every one of them at once, and a `sleep` on a torn-down
 * session never resolves (its synthesis stops there).
 */

/** A session's timers, cleared together at teardown. */
export class SessionTimers {
  private readonly timers = new Set<NodeJS.Timeout>();

  /** Run `fn` after `ms`, unless cleared first. */
  set(fn: () => void, ms: number): NodeJS.Timeout {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      fn();
    }, ms);
    this.timers.add(timer);
    return timer;
  }

  /** Clear one timer (`undefined`: nothing to do). */
  clear(timer: NodeJS.Timeout | undefined): void {
    if (timer === undefined) return;
    clearTimeout(timer);
    this.timers.delete(timer);
  }

  /** Resolves after `ms`; never resolves when {@link clearAll} comes first. */
  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.set(resolve, ms));
  }

  /** Clear every timer still pending. */
  clearAll(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }
}
