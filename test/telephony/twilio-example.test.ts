/**
 * `examples/twilio.ts` as a user runs it (a child process, `PORT=0`): its first stdout line is
 * its Media Streams address; a fake carrier calls it, hears the greeting, presses a key
 * (clear, no audio after it, the heard report as one JSON line), calls again and hangs up
 * (stop: the report again), calls a third time and presses a key with the start (clear before any
 * audio), and the process stops on SIGTERM with exit code 0.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeTwilio } from './fake-twilio.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const GREETING = 'Hello! Thanks for calling. How can I help you today?';

let child: ChildProcess;
const lines: string[] = [];
let lineWaiters: Array<() => void> = [];
let stderr = '';

beforeAll(() => {
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: '0' };
  for (const key of Object.keys(env)) if (/^(RXVOICE_|CAMB_)/.test(key)) delete env[key];
  child = spawn(process.execPath, ['--import', 'tsx', 'examples/twilio.ts'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  createInterface({ input: child.stdout! }).on('line', (line) => {
    lines.push(line);
    for (const wake of lineWaiters) wake();
    lineWaiters = [];
  });
});

afterAll(() => {
  if (child.exitCode === null) child.kill('SIGKILL');
});

async function line(index: number, ms = 30_000): Promise<string> {
  const deadline = Date.now() + ms;
  while (lines.length <= index) {
    if (child.exitCode !== null) throw new Error(`example exited (${child.exitCode}): ${stderr}`);
    if (Date.now() > deadline) throw new Error(`no line ${index} in time; stderr: ${stderr}`);
    await new Promise<void>((resolve) => {
      lineWaiters.push(resolve);
      setTimeout(resolve, 100);
    });
  }
  return lines[index]!;
}

describe('examples/twilio.ts', () => {
  it('prints its address first, says the greeting, stops on a key with a heard report, reports a hang-up, exits on SIGTERM', async () => {
    const address = await line(0);
    expect(address).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/media$/);

    // call 1: a key half a second into the greeting
    const first = new FakeTwilio(address);
    await first.open();
    await new Promise<void>((resolve) => first.whenBytes(4000, resolve));
    first.send({ event: 'dtmf', streamSid: 'MZ0001', sequenceNumber: '5', dtmf: { track: 'inbound_track', digit: '1' } });
    const interrupted = JSON.parse(await line(1)) as Record<string, unknown>;
    expect(Object.keys(interrupted).slice(0, 2)).toEqual(['heard', 'unheard']);
    expect(interrupted).toMatchObject({ complete: false, reason: 'interrupted', streamSid: 'MZ0001' });
    expect(first.clearAt).toBeDefined();
    expect(interrupted['playedSeconds']).toBeCloseTo(first.clearAt! / 8000, 9);
    expect(String(interrupted['heard']) + String(interrupted['unheard'])).toBe(GREETING);
    first.send({ event: 'stop', streamSid: 'MZ0001', stop: {} });
    first.socket.close();
    await first.closed;
    expect(first.mediaAfterClear).toBe(0);
    expect(first.bytes).toBeGreaterThanOrEqual(4000); // control: media did flow before the key

    // call 2: hangs up after a second of audio
    const second = new FakeTwilio(address);
    await second.open();
    await new Promise<void>((resolve) => second.whenBytes(8000, resolve));
    second.send({ event: 'stop', streamSid: 'MZ0001', stop: {} });
    const stopped = JSON.parse(await line(2)) as Record<string, unknown>;
    expect(stopped).toMatchObject({ reason: 'stop', complete: false });
    expect(String(stopped['heard']).length).toBeGreaterThan(0);
    second.socket.close();

    // call 3: a key pressed right with the start, before any audio: clear, nothing played
    const third = new FakeTwilio(address);
    await third.open();
    third.send({ event: 'dtmf', streamSid: 'MZ0001', sequenceNumber: '3', dtmf: { track: 'inbound_track', digit: '#' } });
    const early = JSON.parse(await line(3)) as Record<string, unknown>;
    expect(early).toMatchObject({ heard: '', unheard: GREETING, complete: false, reason: 'interrupted', streamSid: 'MZ0001' });
    third.send({ event: 'stop', streamSid: 'MZ0001', stop: {} });
    third.socket.close();
    await third.closed;
    expect(third.clearAt).toBe(0);
    expect(third.mediaAfterClear).toBe(0);

    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(lines).toHaveLength(4); // one JSON line per call, nothing else on stdout
  });
});
