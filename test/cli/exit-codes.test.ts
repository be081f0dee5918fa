/**
 * The CLI's error mapping and option readers on their own: `exitCodeOf` for errors that
 * the command tests cannot easily provoke (a live session ended by its text source, raw
 * Node socket errors), `readNumber`'s bounds at their edges, and the API key scrubbed from
 * an error line that would echo it, whichever variable holds it.
 */
import { Readable, Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { readNumber } from '../../src/cli/args.js';
import { ExitCode, UsageError, errorLine, exitCodeOf } from '../../src/cli/exit-codes.js';
import { main, type CliIo } from '../../src/cli/main.js';
import { ConnectionError, LiveSessionError, ValidationError } from '../../src/core/errors.js';

/** A Node socket error with `code`, as `net` and `fetch` causes carry them. */
const socketError = (code: string): Error => Object.assign(new Error(`connect ${code}`), { code });

describe('exitCodeOf', () => {
  it('a live session ended by its text source exits as the source failed (usage, validation, connection, other)', () => {
    const ended = (cause: unknown) => new LiveSessionError('text_source', 'The text source failed', { cause, unspoken: '' });
    expect(exitCodeOf(ended(new UsageError('nothing to speak', 'speak')))).toBe(ExitCode.usage);
    expect(exitCodeOf(ended(new ValidationError([{ loc: ['text'], msg: 'bad', type: 'value_error' }], { source: 'local' })))).toBe(ExitCode.validation);
    expect(exitCodeOf(ended(new ConnectionError('down')))).toBe(ExitCode.connection);
    expect(exitCodeOf(ended(new Error('disk full')))).toBe(ExitCode.failure);
  });

  it('Node socket errors: refused, not found, reset and timed out are connection (6); another code is a failure (1)', () => {
    for (const code of ['ECONNREFUSED', 'ENOTFOUND', 'ECONNRESET', 'ETIMEDOUT']) expect(exitCodeOf(socketError(code)), code).toBe(ExitCode.connection);
    expect(exitCodeOf(socketError('EACCES'))).toBe(ExitCode.failure);
    expect(exitCodeOf(null)).toBe(ExitCode.failure);
  });
});

describe('errorLine', () => {
  it("a cause's message is added once, in parentheses; not when the message has it already, nor for a validation error", () => {
    const cause = new Error('connect ECONNREFUSED 127.0.0.1:9');
    expect(errorLine(new ConnectionError('could not reach the service', { cause }), [])).toBe(
      'rxvoice: ConnectionError: could not reach the service (connect ECONNREFUSED 127.0.0.1:9)',
    );
    expect(errorLine(new ConnectionError('down: connect ECONNREFUSED 127.0.0.1:9', { cause }), [])).toBe('rxvoice: ConnectionError: down: connect ECONNREFUSED 127.0.0.1:9');
    const invalid = new ValidationError([{ loc: ['text'], msg: 'bad', type: 'value_error' }], { source: 'local', cause });
    expect(errorLine(invalid, [])).not.toContain('ECONNREFUSED');
  });
});

describe('readNumber', () => {
  const read = (value: string, bounds: Parameters<typeof readNumber>[3]) => readNumber('batch', value, 'retries', bounds);

  it('the bounds are inclusive: min and max themselves are accepted, one past them refused', () => {
    expect(read('0', { min: 0, integer: true })).toBe(0);
    expect(() => read('-1', { min: 0, integer: true })).toThrow('--retries must be at least 0');
    expect(read('65535', { min: 0, max: 65535 })).toBe(65535);
    expect(() => read('65536', { min: 0, max: 65535 })).toThrow('--retries must be at most 65535');
  });

  it('integer: a fraction is refused (control: without integer it is read)', () => {
    expect(() => read('1.5', { min: 0, integer: true })).toThrow(UsageError);
    expect(() => read('1.5', { min: 0, integer: true })).toThrow('--retries must be an integer');
    expect(read('1.5', { min: 0 })).toBe(1.5);
    expect(() => read(' ', {})).toThrow('--retries must be a number');
    expect(readNumber('batch', undefined, 'retries')).toBeUndefined();
  });
});

describe('the API key in an error line', () => {
  class Collector extends Writable {
    text = '';
    override _write(chunk: Buffer | string, _encoding: BufferEncoding, callback: () => void): void {
      this.text += chunk.toString();
      callback();
    }
  }
  /** Runs `main`; `interruptHandlers` counts the interrupt handlers it left installed. */
  async function stderrOf(argv: string[], env: Record<string, string>): Promise<{ code: number; stderr: string; interruptHandlers: number }> {
    const stderr = new Collector();
    let installed = 0;
    const onInterrupt = (): (() => void) => {
      installed += 1;
      return () => (installed -= 1);
    };
    const io: CliIo = { stdout: new Collector(), stderr, stdin: Readable.from([]), env, cwd: process.cwd(), onInterrupt };
    return { code: await main(argv, io), stderr: stderr.text, interruptHandlers: installed };
  }

  it('a key pasted where a value goes is not echoed, from CAMB_API_KEY or RXVOICE_API_KEY (control: another value is)', async () => {
    const key = 'sk-pasted-in-the-wrong-place-0123456789';
    for (const variable of ['CAMB_API_KEY', 'RXVOICE_API_KEY']) {
      const run = await stderrOf(['sound', 'rain', '--duration', key, '-o', 'x.wav'], { [variable]: key });
      expect(run.code, variable).toBe(ExitCode.usage);
      expect(run.stderr, variable).toMatch(/^rxvoice: --duration must be a number/);
      expect(run.stderr, variable).not.toContain(key);
      expect(run.interruptHandlers, 'the interrupt handler removed once the command ended').toBe(0);
    }
    const control = await stderrOf(['sound', 'rain', '--duration', key, '-o', 'x.wav'], { CAMB_API_KEY: 'sk-another-key-0123456789' });
    expect(control.stderr).toContain(key);
  });
});
