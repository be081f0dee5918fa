/**
 * Suite-wide secret scan (a vitest `setupFiles` entry): every test file's console calls
 * and writes to stdout / stderr are checked for the canary marker `SECRET-canary`. Any
 * suite may use an API key holding the marker (e.g. `sk-rxv-SECRET-canary-...`, as the
 * reliability suite does): if that key ever shows up in a log line, a warning or printed
 * output, the file fails at its end. Only lines holding the marker are kept, so the scan
 * costs one `includes` per write and never changes what other suites see or print.
 */
import { afterAll } from 'vitest';
import { format } from 'node:util';

export const SECRET_MARKER = 'SECRET-canary';

const hits: string[] = [];
const note = (where: string, text: string): void => {
  const at = text.indexOf(SECRET_MARKER);
  if (at >= 0) hits.push(`${where}: …${text.slice(Math.max(0, at - 60), at + 20)}…`);
};
const textOf = (chunk: unknown): string =>
  typeof chunk === 'string' ? chunk : chunk instanceof Uint8Array ? Buffer.from(chunk).toString('utf8') : String(chunk);

const original = {
  stdout: process.stdout.write,
  stderr: process.stderr.write,
  console: { log: console.log, info: console.info, warn: console.warn, error: console.error, debug: console.debug, trace: console.trace },
};

for (const name of ['stdout', 'stderr'] as const) {
  const stream = process[name];
  const write = stream.write;
  stream.write = function (this: NodeJS.WriteStream, chunk: unknown, ...rest: unknown[]): boolean {
    note(name, textOf(chunk));
    return (write as (...args: unknown[]) => boolean).call(this, chunk, ...rest);
  } as typeof stream.write;
}
for (const method of ['log', 'info', 'warn', 'error', 'debug', 'trace'] as const) {
  const call = console[method];
  console[method] = function (this: Console, ...args: unknown[]): void {
    note(`console.${method}`, format(...args));
    call.apply(this, args);
  };
}

afterAll(() => {
  process.stdout.write = original.stdout;
  process.stderr.write = original.stderr;
  Object.assign(console, original.console);
  if (hits.length > 0) {
    // Printed without the key itself (the excerpt is cut at the marker's end).
    throw new Error(`An API key holding ${SECRET_MARKER} was printed:\n${hits.map((h) => h.replace(/SECRET-canary\S*/g, `${SECRET_MARKER}…`)).join('\n')}`);
  }
});
