/**
 * The world the CLI talks to, injected so `main(argv, io)` runs in-process in tests:
 * standard streams, environment, and interrupt signals.
 */

import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';

/** A stream the CLI writes to (process.stdout / process.stderr, or a test double). */
export type CliOutput = NodeJS.WritableStream & { isTTY?: boolean; columns?: number };

export interface CliIo {
  stdout: CliOutput;
  stderr: CliOutput;
  /** Read by `rxvoice speak -` (text tokens as they arrive). */
  stdin: NodeJS.ReadableStream;
  env: Readonly<Record<string, string | undefined>>;
  /** Working directory relative paths resolve against (default `process.cwd()`). */
  cwd?: string;
  /**
   * Call `handler` on SIGINT/SIGTERM (or whatever the host calls an interrupt); returns
   * a function that removes the handler. Default: process signals.
   */
  onInterrupt?: (handler: (signal: string) => void) => () => void;
}

/** The real process: stdio, env and SIGINT/SIGTERM. */
export function processIo(): CliIo {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
    env: process.env,
    cwd: process.cwd(),
    onInterrupt: processInterrupts,
  };
}

/**
 * Subscribe to SIGINT and SIGTERM of this process. A second signal while the first is
 * being handled (cleanup stuck) exits at once with 130.
 */
export function processInterrupts(handler: (signal: string) => void): () => void {
  let received = 0;
  const onSignal = (signal: NodeJS.Signals): void => {
    received++;
    if (received > 1) process.exit(130);
    handler(signal);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return () => {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  };
}

/** Write a line (adds `\n`). */
export function writeLine(out: CliOutput, line: string): void {
  out.write(`${line}\n`);
}

/** Write one JSON object as one line (`--json` output). */
export function writeJson(out: CliOutput, value: unknown): void {
  out.write(`${JSON.stringify(value)}\n`);
}

/** A file the command reads that is missing, not a file, or unreadable (exit code 1: a file error). */
export class InputFileError extends Error {
  override name = 'InputFileError';
}

/**
 * Checks that `path` is a readable file, before anything is sent. Throws
 * {@link InputFileError} (`cannot read the audio sample /x/a.wav: no such file`).
 */
export async function checkReadableFile(path: string, what: string): Promise<void> {
  let reason: string | undefined;
  try {
    if (!(await stat(path)).isFile()) reason = 'not a file';
    else await access(path, constants.R_OK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    reason = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : (error as Error).message;
  }
  if (reason !== undefined) throw new InputFileError(`cannot read ${what} ${path}: ${reason}`);
}
