/** Helpers of the batch tests: the `rxvoice` command as a child process, its stdout as lines. */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '../..');

/** A running `rxvoice` process. */
export interface CliProcess {
  child: ChildProcess;
  /** Whole stdout lines so far. */
  lines: string[];
  stderr: string[];
  /** Resolves with the exit code (null when killed by a signal). */
  exited: Promise<number | null>;
}

/** Start `rxvoice ...argv` against a service; `onLine` sees each whole stdout line with its 1-based number. */
export function spawnCli(argv: string[], service: { apiKey: string; baseUrl: string }, onLine?: (line: string, count: number) => void, cwd?: string): CliProcess {
  const child = spawn(process.execPath, [join(ROOT, 'bin/rxvoice.js'), ...argv], {
    ...(cwd ? { cwd } : {}),
    env: { ...process.env, RXVOICE_API_KEY: service.apiKey, RXVOICE_BASE_URL: service.baseUrl },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const stderr: string[] = [];
  let partial = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    const parts = (partial + chunk).split('\n');
    partial = parts.pop() ?? '';
    for (const line of parts) {
      lines.push(line);
      onLine?.(line, lines.length);
    }
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => stderr.push(chunk));
  return { child, lines, stderr, exited: new Promise((resolve) => child.on('exit', (code) => resolve(code))) };
}
