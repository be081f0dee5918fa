/**
 * The browser-safe entries under workerd (the Cloudflare Workers runtime, a dev
 * dependency): fixtures/worker.ts is bundled with esbuild (browser conditions, as
 * Wrangler does) and served by workerd; a request makes the Worker speak over its outbound
 * WebSocket to an emulator started here in Node. The HTTP client (`rxvoice`) does not load
 * in a Worker (it imports node:fs, node:net, node:tls and undici): see docs/runtimes.md.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { buildSync } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import { freePort } from '../setup/redis.js';
import { needs } from '../setup/tools.js';
import { findRuntime } from './binaries.js';

const WORKERD = findRuntime('workerd');

const config = (port: number): string => `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    (name = "main", worker = .worker),
    (name = "net", network = (allow = ["public", "private", "local"])),
  ],
  sockets = [ (name = "http", address = "127.0.0.1:${port}", http = (), service = "main") ],
);
const worker :Workerd.Worker = (
  modules = [ (name = "worker.js", esModule = embed "worker.js") ],
  compatibilityDate = "2025-01-01",
  globalOutbound = "net",
);
`;

/** Polls `url` until it answers (workerd is listening), at most `ms`. */
async function whenListening(url: string, child: ChildProcess, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`workerd exited with ${child.exitCode}`);
    try {
      await fetch(url, { signal: AbortSignal.timeout(1000) });
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

describe.skipIf(!needs(WORKERD !== undefined, 'the workerd dev dependency (npm ci installs it)', 'runtimes: workerd'))('runtimes: rxvoice/live, operators and web under workerd', () => {
  let emulator: Emulator;
  let dir: string;
  let workerd: ChildProcess;
  let port: number;
  let stderr = '';
  beforeAll(async () => {
    emulator = await startEmulator({ synth: 'tone' });
    dir = mkdtempSync(join(tmpdir(), 'rxvoice-workerd-'));
    buildSync({
      entryPoints: [resolve(import.meta.dirname, 'fixtures/worker.ts')],
      bundle: true,
      format: 'esm',
      platform: 'browser',
      conditions: ['workerd', 'worker', 'browser'],
      outfile: join(dir, 'worker.js'),
      logLevel: 'silent',
    });
    port = await freePort();
    writeFileSync(join(dir, 'config.capnp'), config(port));
    workerd = spawn(WORKERD!.path, ['serve', join(dir, 'config.capnp')], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
    workerd.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    await whenListening(`http://127.0.0.1:${port}/health`, workerd, 20_000);
  }, 60_000);
  afterAll(async () => {
    if (workerd && workerd.exitCode === null) {
      const exited = new Promise((r) => workerd.once('exit', r));
      workerd.kill('SIGTERM');
      await exited;
    }
    await emulator?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('a Worker speaks over its outbound WebSocket: segments, WAV audio, words; the socket is closed after', async () => {
    const ws = emulator.baseUrl.replace(/^http/, 'ws');
    const answer = await fetch(`http://127.0.0.1:${port}/?ws=${encodeURIComponent(ws)}&key=${encodeURIComponent(emulator.apiKey)}`, { signal: AbortSignal.timeout(30_000) });
    const got = (await answer.json()) as { error?: string; web: string[]; types: string[]; segments: { text: string; bytes: number; riff: string; words: string[] }[] };
    expect(got.error, stderr).toBeUndefined();
    expect(got.web).toEqual(['function', 'function']);
    expect(got.types).toEqual(['ready', 'segmentStart', 'audio', 'segmentDone', 'done']);
    expect(got.segments.map((s) => s.text)).toEqual(['Hello from a worker.', 'Second sentence here.']);
    expect(got.segments.map((s) => s.words)).toEqual([
      ['Hello', 'from', 'a', 'worker.'],
      ['Second', 'sentence', 'here.'],
    ]);
    for (const segment of got.segments) {
      expect(segment.riff).toBe('RIFF');
      expect(segment.bytes).toBeGreaterThan(1000);
    }
    // The Worker's session closed its socket: the emulator holds none now (it held one: `ready` came from it).
    for (let i = 0; i < 50 && emulator.liveConnections > 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect(emulator.liveConnections).toBe(0);
  }, 60_000);
});
