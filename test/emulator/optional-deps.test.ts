/**
 * The optional packages (`espeak-ng`, `@breezystack/lamejs`) are loaded by the emulator
 * only, and the library works without them. A child Node process runs with a resolve
 * hook that makes both packages unresolvable (as after `npm install --omit=optional`),
 * then: loads the package root, runs the tone emulator, the default emulator (tones after
 * one warning line), and checks the clear errors when espeak (or mp3) is asked for. The imports are also checked statically.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const OPTIONAL = ['espeak-ng', '@breezystack/lamejs'];

const dir = mkdtempSync(join(tmpdir(), 'rxvoice-optional-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const HOOKS = `
const blocked = new Set(${JSON.stringify(OPTIONAL)});
export async function resolve(specifier, context, next) {
  if (blocked.has(specifier)) {
    const error = new Error("Cannot find package '" + specifier + "' (blocked by the test)");
    error.code = 'ERR_MODULE_NOT_FOUND';
    throw error;
  }
  return next(specifier, context);
}
`;

const src = (path: string): string => pathToFileURL(join(ROOT, 'src', path)).href;

const CHILD = `
import { register } from 'node:module';
register(${JSON.stringify(pathToFileURL(join(dir, 'hooks.mjs')).href)});
const { default: WebSocket } = await import(${JSON.stringify(pathToFileURL(createRequire(join(ROOT, 'package.json')).resolve('ws')).href)});
const root = await import(${JSON.stringify(src('index.ts'))});
const emulatorEntry = await import(${JSON.stringify(src('emulator/index.ts'))});
const { startEmulator } = emulatorEntry;
const out = { rootExports: typeof root.createClient };

function session(url, start) {
  return new Promise((resolve) => {
    const ws = new WebSocket(url);
    const frames = [];
    ws.on('open', () => {
      ws.send(JSON.stringify({ type: 'session.start', voice_id: 1, ...start }));
      ws.send(JSON.stringify({ type: 'text.chunk', text: 'Hello there.' }));
      ws.send(JSON.stringify({ type: 'text.done' }));
    });
    ws.on('message', (data, binary) => { if (!binary) frames.push(JSON.parse(data.toString())); });
    ws.on('close', (code) => resolve({ code, frames: frames.map((f) => f.type), error: frames.find((f) => f.type === 'session.error')?.error }));
  });
}

const tone = await startEmulator({ synth: 'tone' });
const key = '?api_key=' + encodeURIComponent(tone.apiKey);
out.toneWav = await session(tone.wsUrl + key, { output_format: 'wav' });
out.toneMp3 = await session(tone.wsUrl + key, { output_format: 'mp3' });
await tone.close();

// synth left out: espeak-ng cannot load, so tones after one warning line (on stderr)
const auto = await startEmulator();
out.autoSynth = auto.synth;
out.autoLive = await session(auto.wsUrl + '?api_key=' + encodeURIComponent(auto.apiKey), { output_format: 'wav' });
await auto.close();
// espeak asked for: fails at start, typed
out.typed = await startEmulator({ synth: 'espeak' }).then(
  async (e) => { await e.close(); return undefined; },
  (e) => ({ name: e.name, packageName: e.packageName, typed: e instanceof (emulatorEntry.EspeakUnavailableError), message: e.message }),
);
process.stdout.write(JSON.stringify(out));
`;

interface ChildResult {
  rootExports: string;
  toneWav: { code: number; frames: string[] };
  toneMp3: { code: number; error?: string };
  autoSynth: string;
  autoLive: { code: number; frames: string[] };
  typed: { name: string; packageName: string; typed: boolean; message: string };
}

function runChild(): Promise<{ code: number | null; stdout: string; stderr: string }> {
  writeFileSync(join(dir, 'hooks.mjs'), HOOKS);
  writeFileSync(join(dir, 'child.mts'), CHILD);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(dir, 'child.mts')], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

function sourceFiles(path: string): string[] {
  return readdirSync(path).flatMap((name) => {
    const full = join(path, name);
    return statSync(full).isDirectory() ? sourceFiles(full) : full.endsWith('.ts') ? [full] : [];
  });
}

describe('optional dependencies', () => {
  it('only the emulator (synth/espeak.ts, audio/mp3.ts used by it) names them', () => {
    const naming = sourceFiles(join(ROOT, 'src'))
      .filter((file) => {
        const code = readFileSync(file, 'utf8').replace(/^\s*(\*|\/\/).*$/gm, '');
        return OPTIONAL.some((pkg) => code.includes(`'${pkg}'`) || code.includes(`"${pkg}"`));
      })
      .map((file) => relative(ROOT, file).replaceAll('\\', '/'))
      .sort();
    expect(naming).toEqual(['src/audio/mp3.ts', 'src/emulator/synth/espeak.ts']);
    // audio/mp3.ts is reached only through audio/encode.ts, which only the emulator imports.
    const importers = (target: RegExp): string[] =>
      sourceFiles(join(ROOT, 'src'))
        .filter((file) => target.test(readFileSync(file, 'utf8')))
        .map((file) => relative(ROOT, file).replaceAll('\\', '/'))
        .sort();
    expect(importers(/from '\.\/mp3\.js'|audio\/mp3\.js'/)).toEqual(['src/audio/encode.ts']);
    for (const file of importers(/from '[./]*audio\/encode\.js'|from '\.\/encode\.js'/)) expect(file).toMatch(/^src\/emulator\//);
  });

  it('without them: the package loads, the tone emulator speaks WAV, the default falls back to tones with one warning, espeak and mp3 fail clearly', async () => {
    const { code, stdout, stderr } = await runChild();
    expect(code, stderr).toBe(0);
    const out = JSON.parse(stdout) as ChildResult;
    expect(out.rootExports).toBe('function');
    expect(out.toneWav.code).toBe(1000);
    expect(out.toneWav.frames).toEqual(['session.ready', 'segment.start', 'segment.done', 'session.done']);
    // mp3 without the encoder: 4400 with a message naming the way out.
    expect(out.toneMp3.code).toBe(4400);
    expect(out.toneMp3.error).toMatch(/output_format "mp3" is not supported.*"wav".*npm install @breezystack\/lamejs/);
    // synth left out: tones, and exactly one warning line on stderr naming the package to install
    expect(out.autoSynth).toBe('tone');
    expect(out.autoLive).toEqual({ code: 1000, frames: ['session.ready', 'segment.start', 'segment.done', 'session.done'] });
    const warnings = stderr.split('\n').filter((line) => line.includes('espeak-ng'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/espeak-ng is not installed.*tones.*npm install espeak-ng/);
    // synth: 'espeak' asked for: startEmulator rejects with the typed error, exported from rxvoice/emulator
    expect(out.typed).toMatchObject({ name: 'EspeakUnavailableError', packageName: 'espeak-ng', typed: true });
    expect(out.typed.message).toMatch(/espeak-ng.*npm install espeak-ng.*synth: 'tone'/);
  });
});
