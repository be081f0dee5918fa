/**
 * Progress of long operations on stderr: a spinner with status and elapsed time on a
 * TTY, plain lines (one per status change) otherwise, nothing in `--json` mode (the
 * JSON lines on stdout carry the same information).
 */
import { interval, type SchedulerLike, type Subscription } from 'rxjs';
import type { CliOutput } from './io.js';

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

export interface ProgressOptions {
  /** Suppress all output (e.g. `--json`). */
  silent?: boolean;
  /** Force TTY rendering on or off (default: `out.isTTY`). */
  tty?: boolean;
  /** Clock, ms (default `Date.now`). */
  now?: () => number;
  /** Scheduler of the spinner (default: async). */
  scheduler?: SchedulerLike;
}

export interface Progress {
  /** A new status (e.g. `PENDING`, `uploading`); printed when it changes. */
  update(status: string, detail?: string): void;
  /** Final line: success. */
  succeed(message: string): void;
  /** Stop the spinner without a final line (an error line follows elsewhere). */
  stop(): void;
  /** Seconds since start. */
  elapsed(): number;
  /** Run `print` (which writes whole lines to the terminal) with the spinner line cleared, then redraw it. */
  above(print: () => void): void;
}

/** Start showing progress of `label` on `out`. */
export function startProgress(out: CliOutput, label: string, options: ProgressOptions = {}): Progress {
  const now = options.now ?? Date.now;
  const started = now();
  const tty = options.tty ?? out.isTTY === true;
  const silent = options.silent === true;
  let status = 'starting';
  let detail: string | undefined;
  let frame = 0;
  let spinner: Subscription | undefined;
  let stopped = false;

  const elapsed = (): number => (now() - started) / 1000;
  const text = (): string => `${label}: ${status}${detail ? ` ${detail}` : ''} (${elapsed().toFixed(1)} s)`;
  const render = (): void => {
    const line = `${FRAMES[frame % FRAMES.length]} ${text()}`;
    const width = out.columns && out.columns > 10 ? out.columns - 1 : 200;
    out.write(`\r\x1b[2K${line.slice(0, width)}`);
  };
  const clear = (): void => {
    if (tty && !silent) out.write('\r\x1b[2K');
  };

  if (!silent && tty) {
    render();
    spinner = interval(80, options.scheduler).subscribe(() => {
      frame++;
      render();
    });
  }

  return {
    update(next, nextDetail) {
      if (stopped) return;
      const changed = next !== status || nextDetail !== detail;
      status = next;
      detail = nextDetail;
      if (silent || !changed) return;
      if (tty) render();
      else out.write(`${text()}\n`);
    },
    succeed(message) {
      if (stopped) return;
      stopped = true;
      spinner?.unsubscribe();
      clear();
      if (!silent) out.write(`${message} (${elapsed().toFixed(1)} s)\n`);
    },
    stop() {
      if (stopped) return;
      stopped = true;
      spinner?.unsubscribe();
      clear();
    },
    elapsed,
    above(print) {
      if (!tty || silent || stopped) {
        print();
        return;
      }
      clear();
      print();
      render();
    },
  };
}
