/**
 * Every example runs with one command and exits 0: the `npm start` demo (tone synth),
 * the chat-bot example (real `openai` package against the built-in fake endpoint),
 * translate-then-speak, and the captions server (starts, prints its URL, serves the page
 * without the key, stops on SIGTERM). Outputs are valid WAV files.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import wavefile from 'wavefile';

const { WaveFile } = wavefile;
const ROOT = fileURLToPath(new URL('..', import.meta.url));
let dir: string;

/** The environment of the examples: no service or OpenAI settings, so they use the built-in fakes. */
function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!/^(RXVOICE_|OPENAI_)/.test(key)) env[key] = value;
  }
  return env;
}

interface ChildResult {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

function runExample(script: string, args: string[], timeoutMs = 50_000): Promise<ChildResult> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, script), ...args], {
      cwd: ROOT,
      env: cleanEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ms: Date.now() - started });
    });
  });
}

function wavInfo(path: string): { seconds: number; sampleRate: number } {
  const wav = new WaveFile(readFileSync(path));
  const fmt = wav.fmt as { sampleRate: number; numChannels: number; bitsPerSample: number };
  const data = wav.data as { chunkSize: number };
  return { seconds: data.chunkSize / (fmt.sampleRate * fmt.numChannels * (fmt.bitsPerSample / 8)), sampleRate: fmt.sampleRate };
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'rxvoice-examples-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe.concurrent('examples', { timeout: 90_000 }, () => {
  it('demo (npm start, tone synth): writes the WAV and prints a timeline with totals', async () => {
    const out = join(dir, 'demo.wav');
    const run = await runExample('examples/demo.ts', ['--synth', 'tone', '--no-play', '--out', out]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('Timeline');
    expect(run.stdout).toMatch(/Totals: \d+ segments, \d+ words, [\d.]+ s of audio/);
    // One row per segment: id, time to first audio, duration, text.
    const rows = run.stdout.split('\n').filter((line) => /^\s+\d+\s+\d+ ms\s+[\d.]+ s\s+\S/.test(line));
    expect(rows.length).toBeGreaterThanOrEqual(5);
    const totalFromRows = rows.reduce((sum, row) => sum + Number(/ms\s+([\d.]+) s/.exec(row)?.[1] ?? 0), 0);
    const { seconds } = wavInfo(out);
    expect(seconds).toBeCloseTo(totalFromRows, 1);
    expect(seconds).toBeGreaterThan(10);
    expect(run.ms).toBeLessThan(45_000);
  });

  it('chatbot-to-speech: the openai package against the fake endpoint, to a WAV', async () => {
    const out = join(dir, 'chatbot.wav');
    const run = await runExample('examples/chatbot-to-speech.ts', ['--synth', 'tone', '--no-play', '--out', out]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('built-in fake OpenAI-compatible server');
    expect(run.stdout).toContain('Great question!');
    expect(run.stdout).toMatch(/spoke \d+ segments to /);
    expect(wavInfo(out).seconds).toBeGreaterThan(10);
  });

  it.skipIf(!existsSync(join(ROOT, 'examples/translate-then-speak.ts')))('translate-then-speak runs and exits 0', async () => {
    const run = await runExample('examples/translate-then-speak.ts', ['--tone']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.length).toBeGreaterThan(0);
  });

  it('captions-ui server prints its URL, serves the page (no key in it) and stops on SIGTERM', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'examples/captions-ui/server.ts'), '--synth', 'tone'], {
      cwd: ROOT,
      env: cleanEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      const started = Date.now();
      while (!/open http:\/\/\S+/.test(stdout)) {
        if (Date.now() - started > 30_000) throw new Error(`no URL printed: ${stderr}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const url = /open (http:\/\/\S+)/.exec(stdout)?.[1] as string;
      const page = await fetch(url);
      expect(page.status).toBe(200);
      const html = await page.text();
      expect(html).toContain('id="interrupt"');
      const app = await (await fetch(new URL('app.js', url))).text();
      expect(app).toContain('highlightUpTo');
      for (const body of [html, app]) expect(body).not.toContain('rxv-dev-key-0000');
      expect((await fetch(new URL('nope', url))).status).toBe(404);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  });
});
