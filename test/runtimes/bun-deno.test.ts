/**
 * The runtime matrix: an emulator started here in Node, then one script
 * (fixtures/speak-script.ts) run under Bun and under Deno against it. The script lists
 * voices, speaks two sentences through segmentSentences, client.speak and concatSegments,
 * writes a WAV file with toWavFile, closes the client and prints one JSON line. The test
 * checks that line, the file's bytes, and that the process exits on its own (a socket or
 * timer left open would keep Bun and Deno running until the kill below).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseWavHeader } from '../../src/audio/wav.js';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import { needs } from '../setup/tools.js';
import { findRuntime, type Runtime } from './binaries.js';

const SCRIPT = resolve(import.meta.dirname, 'fixtures/speak-script.ts');
const ROOT = resolve(import.meta.dirname, '../..');

/** How each runtime runs a TypeScript file of src/ (whose imports end in `.js`). */
const COMMANDS: Record<'bun' | 'deno', (path: string) => string[]> = {
  bun: (path) => ['run', path],
  // Sloppy imports map `./x.js` to `./x.ts`; packages come from node_modules (package.json at the root).
  deno: (path) => ['run', '--allow-all', '--unstable-sloppy-imports', '--quiet', path],
};

interface ScriptResult {
  runtime: string;
  steps: string[];
  voices?: number;
  segments?: { text: string; bytes: number; words: string[] }[];
  file?: { type: string; path: string; fileBytes: number; sampleRate: number };
  error?: string;
  closeError?: string;
}

/** Runs the script; resolves with its exit code, stdout and stderr; kills it after `timeoutMs`. */
function run(binary: string, args: string[], env: Record<string, string>, timeoutMs: number): Promise<{ code: number | null; killed: boolean; stdout: string; stderr: string }> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(binary, args, { cwd: ROOT, env: { ...process.env, ...env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let killed = false;
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => {
      killed = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolvePromise({ code, killed, stdout, stderr });
    });
  });
}

describe('runtimes: the client, speak, operators and the WAV sink under Bun and Deno', () => {
  let emulator: Emulator;
  let dir: string;
  beforeAll(async () => {
    emulator = await startEmulator({ synth: 'tone' });
    dir = mkdtempSync(join(tmpdir(), 'rxvoice-runtimes-'));
  });
  afterAll(async () => {
    await emulator?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  for (const runtime of ['bun', 'deno'] as const satisfies readonly Runtime[]) {
    const found = findRuntime(runtime);
    it.skipIf(!needs(found !== undefined, `the ${runtime} dev dependency (npm ci installs it)`, `runtimes: ${runtime}`))(
      `${runtime}: lists voices, speaks to segments and a WAV file, closes, exits by itself`,
      async () => {
        const out = join(dir, `${runtime}.wav`);
        const env = { RXVOICE_TEST_BASE_URL: emulator.baseUrl, RXVOICE_TEST_API_KEY: emulator.apiKey, RXVOICE_TEST_OUT: out };
        const result = await run(found!.path, COMMANDS[runtime](SCRIPT), env, 60_000);
        expect(result.killed, `${runtime} did not exit by itself (something left open)\n${result.stderr}`).toBe(false);
        expect(result.code, result.stderr).toBe(0);
        const line = result.stdout.trim().split('\n').at(-1) ?? '';
        const got = JSON.parse(line) as ScriptResult;
        expect(got.runtime).toBe(runtime);
        expect(got.error).toBeUndefined();
        expect(got.voices).toBeGreaterThan(0);
        expect(got.segments?.map((s) => s.text.trim())).toEqual(['Hello from every runtime.', 'The second sentence ends here.']);
        expect(got.segments?.map((s) => s.words)).toEqual([
          ['Hello', 'from', 'every', 'runtime.'],
          ['The', 'second', 'sentence', 'ends', 'here.'],
        ]);
        for (const segment of got.segments ?? []) {
          expect(segment.bytes).toBeGreaterThan(44 + 1000);
        }
        // The file the script wrote: a WAV whose header agrees with its size.
        const bytes = new Uint8Array(readFileSync(out));
        const header = parseWavHeader(bytes);
        expect(header, 'a valid WAV header').toBeDefined();
        expect(header!.sampleRate).toBe(got.file?.sampleRate);
        expect(bytes.byteLength).toBe(got.file?.fileBytes);
        expect(bytes.byteLength).toBeGreaterThan(44 + 1000);
        // close() works on every runtime (under Bun undici's Agent is a shim without close)
        expect(got.closeError).toBeUndefined();
        expect(got.steps).toEqual(['voices', 'speak', 'file', 'close']);
      },
      90_000,
    );
  }
});
