/**
 * `rxvoice speak -` with nothing on standard input (issue 28, item 5): exit 2 with
 * "nothing to speak", no output file, no session; control: a sentence on standard input
 * exits 0 with a WAV.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main, type CliIo } from '../../src/cli/main.js';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';

let emu: Emulator;
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'rxvoice-speak-empty-'));
  emu = await startEmulator({ synth: 'tone', toneWordSeconds: 0.01 });
});
afterAll(async () => {
  await emu?.close();
  rmSync(dir, { recursive: true, force: true });
});

class Collector extends Writable {
  readonly chunks: Buffer[] = [];
  isTTY = false;
  override _write(chunk: Buffer | string, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
    callback();
  }
  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}

async function speak(stdinPieces: string[], file: string): Promise<{ code: number; stderr: string }> {
  const stdout = new Collector();
  const stderr = new Collector();
  const io: CliIo = {
    stdout,
    stderr,
    stdin: Readable.from(stdinPieces.map((p) => Buffer.from(p))),
    env: { RXVOICE_API_KEY: emu.apiKey, RXVOICE_BASE_URL: emu.baseUrl },
    cwd: dir,
    onInterrupt: () => () => undefined,
  };
  const code = await main(['speak', '-', '-o', file], io);
  return { code, stderr: stderr.text() };
}

const upgrades = (): number => emu.requests.filter((r) => r.method === 'UPGRADE').length;

describe('rxvoice speak - with empty standard input', () => {
  for (const [name, pieces] of [
    ['empty', []],
    ['only whitespace', [' \n', '\t\n']],
  ] as const) {
    it(`${name}: exit 2, "nothing to speak", no file, no session`, async () => {
      const before = upgrades();
      const run = await speak([...pieces], `${name}.wav`);
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(/nothing to speak/);
      expect(existsSync(join(dir, `${name}.wav`))).toBe(false);
      // a source that ends before the socket opens opens none; a later end closes it unused
      expect(upgrades() - before).toBeLessThanOrEqual(1);
    });
  }

  it('control: a sentence on standard input exits 0 and writes the WAV', async () => {
    const run = await speak(['Hello ', 'there.'], 'spoken.wav');
    expect(run.code, run.stderr).toBe(0);
    expect(existsSync(join(dir, 'spoken.wav'))).toBe(true);
  });
});
