/**
 * The CLI's process-facing parts, in-process (so coverage sees them): `run()` (what
 * bin/rxvoice.js calls) on the real process streams with `process.exit` stubbed, the
 * SIGINT/SIGTERM wiring, reading all of stdin (`readAll`), and `rxvoice translate -`.
 */
import { Readable, Writable } from 'node:stream';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { main, run, type CliIo } from '../../src/cli/main.js';
import { processInterrupts } from '../../src/cli/io.js';
import { readAll } from '../../src/cli/stdin.js';
import { runToEnd } from '../../src/cli/run.js';
import { NEVER, finalize } from 'rxjs';
import { pseudoLocalize, startEmulator, type Emulator } from '../../src/emulator/index.js';
import { waitFor } from '../fixtures/sinkFixtures.js';

const encoder = new TextEncoder();

/** `text` as UTF-8 bytes cut into chunks of `size` bytes (cutting through multi-byte characters). */
function byteChunks(text: string, size: number): Uint8Array[] {
  const bytes = encoder.encode(text);
  const out: Uint8Array[] = [];
  for (let i = 0; i < bytes.length; i += size) out.push(bytes.subarray(i, i + size));
  return out;
}

describe('readAll (stdin)', () => {
  const text = 'Grüße aus Köln, 日本語のテキスト, emoji 🎙️ and the end.';
  it.each([1, 2, 3, 5, 64])('keeps multi-byte characters whole when cut every %i bytes', async (size) => {
    const chunks = byteChunks(text, size);
    expect(chunks.length).toBeGreaterThan(1);
    expect(await readAll(Readable.from(chunks))).toBe(text);
  });

  it('reads string chunks, and an empty stream as ""', async () => {
    expect(await readAll(Readable.from(['one ', 'two']))).toBe('one two');
    expect(await readAll(Readable.from([]))).toBe('');
  });

  it('a stream cut inside its last character ends in U+FFFD, not silently short (control: whole, it is read)', async () => {
    const bytes = encoder.encode('Köln é');
    expect(await readAll(Readable.from([bytes]))).toBe('Köln é');
    expect(await readAll(Readable.from([bytes.subarray(0, -1)]))).toBe('Köln \uFFFD');
  });
});

describe('runToEnd', () => {
  it('an abort rejects with AbortError and unsubscribes the source (control: unaborted, it still runs)', async () => {
    const controller = new AbortController();
    let unsubscribed = false;
    const source$ = NEVER.pipe(finalize(() => (unsubscribed = true)));
    const running = runToEnd(source$, controller.signal).catch((e: unknown) => e);
    await Promise.resolve();
    expect(unsubscribed).toBe(false);
    controller.abort();
    expect(((await running) as Error).name).toBe('AbortError');
    expect(unsubscribed).toBe(true);
  });
});

class Collector extends Writable {
  text = '';
  override _write(chunk: Buffer | string, _encoding: BufferEncoding, callback: () => void): void {
    this.text += chunk.toString();
    callback();
  }
}

describe('rxvoice translate - (text from stdin)', () => {
  let emu: Emulator;
  beforeAll(async () => {
    emu = await startEmulator({ synth: 'tone' });
  });
  afterAll(async () => {
    await emu?.close();
  });

  const io = (stdin: NodeJS.ReadableStream): { io: CliIo; stdout: Collector; stderr: Collector } => {
    const stdout = new Collector();
    const stderr = new Collector();
    return { io: { stdout, stderr, stdin, env: { RXVOICE_API_KEY: emu.apiKey, RXVOICE_BASE_URL: emu.baseUrl } }, stdout, stderr };
  };

  it('translates all of stdin (cut through multi-byte characters) and streams it to stdout', async () => {
    const text = 'Good morning, café owners. How are you today?';
    const t = io(Readable.from(byteChunks(text, 3)));
    const code = await main(['translate', '--from', 'en-us', '--to', 'de-de', '-'], t.io);
    expect(code, t.stderr.text).toBe(0);
    expect(t.stdout.text).toBe(`${pseudoLocalize(text, 'de-de')}\n`);
  });

  it('empty stdin: a usage error (exit 2), nothing sent', async () => {
    const before = emu.requests.length;
    const t = io(Readable.from([encoder.encode('  \n')]));
    expect(await main(['translate', '--from', 'en-us', '--to', 'de-de', '-'], t.io)).toBe(2);
    expect(t.stderr.text).toMatch(/^rxvoice: .*the text to translate is empty/);
    expect(emu.requests.length).toBe(before);
  });
});

describe('run() on the real process', () => {
  const savedExitCode = process.exitCode;
  afterEach(() => {
    vi.restoreAllMocks();
    process.exitCode = savedExitCode;
  });

  /** Run `argv` with process.exit stubbed; what was written and the code passed to exit. */
  async function runIt(argv: string[]): Promise<{ stdout: string; stderr: string; exitCode: number | string | null | undefined; exit: number }> {
    let stdout = '';
    let stderr = '';
    const exits: number[] = [];
    vi.spyOn(process, 'exit').mockImplementation(((code?: number) => {
      exits.push(code ?? 0);
    }) as typeof process.exit);
    const write = (sink: (text: string) => void) =>
      ((chunk: string | Uint8Array, ...rest: unknown[]) => {
        sink(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString());
        const callback = rest.find((r): r is () => void => typeof r === 'function');
        callback?.();
        return true;
      }) as typeof process.stdout.write;
    vi.spyOn(process.stdout, 'write').mockImplementation(write((t) => (stdout += t)));
    vi.spyOn(process.stderr, 'write').mockImplementation(write((t) => (stderr += t)));
    await run(argv);
    const exitCode = process.exitCode;
    await waitFor(() => exits.length > 0, 5_000, 'process.exit');
    return { stdout, stderr, exitCode, exit: exits[0]! };
  }

  it('--version: prints the version, sets exitCode 0, then exits with it', async () => {
    const result = await runIt(['--version']);
    expect(result.stdout).toMatch(/^rxvoice \d+\.\d+\.\d+\n$/);
    expect(result.exitCode).toBe(0);
    expect(result.exit).toBe(0);
  });

  it('an unknown command: one error line on stderr, exit code 2', async () => {
    const result = await runIt(['no-such-command']);
    expect(result.stderr).toMatch(/^rxvoice: .*unknown command "no-such-command"/);
    expect(result.exitCode).toBe(2);
    expect(result.exit).toBe(2);
  });
});

describe('processInterrupts', () => {
  afterEach(() => vi.restoreAllMocks());

  it('calls the handler on SIGINT and SIGTERM; a second signal exits with 130; removing it removes both listeners', () => {
    const before = { INT: process.listeners('SIGINT'), TERM: process.listeners('SIGTERM') };
    const seen: string[] = [];
    const remove = processInterrupts((signal) => seen.push(signal));
    const added = (name: 'SIGINT' | 'SIGTERM') => process.listeners(name).filter((l) => !before[name === 'SIGINT' ? 'INT' : 'TERM'].includes(l));
    expect(added('SIGINT')).toHaveLength(1);
    expect(added('SIGTERM')).toHaveLength(1);
    const exits: number[] = [];
    vi.spyOn(process, 'exit').mockImplementation(((code?: number) => {
      exits.push(code ?? 0);
    }) as typeof process.exit);
    (added('SIGINT')[0] as (signal: NodeJS.Signals) => void)('SIGINT');
    expect(seen).toEqual(['SIGINT']);
    expect(exits).toEqual([]);
    (added('SIGTERM')[0] as (signal: NodeJS.Signals) => void)('SIGTERM');
    expect(exits).toEqual([130]);
    remove();
    expect(added('SIGINT')).toHaveLength(0);
    expect(added('SIGTERM')).toHaveLength(0);
  });
});
