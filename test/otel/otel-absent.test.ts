/**
 * No OpenTelemetry installed: `rxvoice/otel` loads, and traceSpeech and tracedFetch pass
 * everything through. A child Node process runs the same script twice: with a resolve
 * hook hiding `@opentelemetry/*` (as without the optional peer), and, as the control, without
 * it (where the API is importable, so the hook is what made the difference).
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '../..');
const SCRIPT = join(import.meta.dirname, 'fixtures/otel-absent.ts');
const HIDE = join(import.meta.dirname, 'fixtures/hide-otel.mjs');

function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...args, SCRIPT], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('rxvoice/otel without @opentelemetry/api', () => {
  it('speaks and lists voices through traceSpeech and tracedFetch; control: the API is importable without the hook', async () => {
    const [hidden, control] = await Promise.all([run(['--import', 'tsx', '--import', HIDE]), run(['--import', 'tsx'])]);
    expect(hidden.code, hidden.stderr).toBe(0);
    expect(control.code, control.stderr).toBe(0);
    const absent = JSON.parse(hidden.stdout.trim().split('\n').at(-1)!);
    const present = JSON.parse(control.stdout.trim().split('\n').at(-1)!);
    expect(present.available).toBe(true);
    expect(absent.available).toBe(false);
    expect(absent.voices).toBeGreaterThan(0);
    expect(absent.types).toEqual(['ready', 'segmentStart', 'audio', 'segmentDone', 'done']);
    expect(absent.types).toEqual(present.types);
  }, 90_000);
});
