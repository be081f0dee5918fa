/**
 * The `rxvoice` command: every command's happy path against a real emulator (tone synth),
 * usage, auth, validation and payment failures with their exit codes, `--json`, `--help`,
 * the embedded emulator, interrupts, and the real binary as a child process.
 */
import { spawn } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import wavefile from 'wavefile';
import { encodeWav16 } from '../../src/audio/wav.js';
import { VirtualTimeScheduler, VirtualAction } from 'rxjs';
import { main, type CliIo } from '../../src/cli/main.js';
import { startProgress } from '../../src/cli/progress.js';
import { pseudoLocalize, startEmulator, TRANSLATION_FAIL_TRIGGER, type Emulator } from '../../src/emulator/index.js';
import { RECORDING_PLAYER } from '../fixtures/sinkFixtures.js';

const { WaveFile } = wavefile;
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const WORD_SECONDS = 0.1;
const POOR_KEY = 'rxv-poor-key-without-credits';
/** Synthesis of text containing "doomed" always fails; of segment 0 fails 4 times (skipped once, then works when resubmitted). */
const DOOMED_KEY = 'rxv-doomed-synthesis-key';
const FLAKY_KEY = 'rxv-flaky-synthesis-key';

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
  bytes(): Buffer {
    return Buffer.concat(this.chunks);
  }
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
  stdoutBytes: Buffer;
}

let emulator: Emulator;
let dir: string;

function envFor(key: string = emulator.apiKey): Record<string, string> {
  return { RXVOICE_API_KEY: key, RXVOICE_BASE_URL: emulator.baseUrl };
}

function makeIo(env: Record<string, string | undefined>, stdin: NodeJS.ReadableStream = Readable.from([])) {
  const stdout = new Collector();
  const stderr = new Collector();
  let handler: ((signal: string) => void) | undefined;
  const io: CliIo = {
    stdout,
    stderr,
    stdin,
    env,
    cwd: dir,
    onInterrupt: (h) => {
      handler = h;
      return () => {
        handler = undefined;
      };
    },
  };
  return { io, stdout, stderr, interrupt: (signal = 'SIGINT') => handler?.(signal) };
}

async function cli(argv: string[], env: Record<string, string | undefined> = envFor(), stdin?: NodeJS.ReadableStream): Promise<Run> {
  const { io, stdout, stderr } = makeIo(env, stdin);
  const code = await main(argv, io);
  return { code, stdout: stdout.text(), stderr: stderr.text(), stdoutBytes: stdout.bytes() };
}

function jsonLines(text: string): Array<Record<string, unknown>> {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

function lines(text: string): string[] {
  return text.split('\n').filter((line) => line.trim() !== '');
}

/** The error lines (progress lines on stderr are plain text without the prefix). */
function errorLines(text: string): string[] {
  const all = lines(text);
  const errors = all.filter((line) => line.startsWith('rxvoice: '));
  expect(all.at(-1)).toBe(errors.at(-1));
  return errors;
}

function wavSeconds(bytes: Buffer | Uint8Array): number {
  const wav = new WaveFile(bytes);
  const fmt = wav.fmt as { sampleRate: number; numChannels: number; bitsPerSample: number };
  const data = wav.data as { chunkSize: number };
  return data.chunkSize / (fmt.sampleRate * fmt.numChannels * (fmt.bitsPerSample / 8));
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'rxvoice-cli-'));
  emulator = await startEmulator({
    synth: 'tone',
    toneWordSeconds: WORD_SECONDS,
    taskDurationMs: 20,
    apiKeys: ['rxv-test-key-1111', POOR_KEY, DOOMED_KEY, FLAKY_KEY],
    credits: { 'rxv-test-key-1111': 1_000_000, [POOR_KEY]: 0, [DOOMED_KEY]: 1_000_000, [FLAKY_KEY]: 1_000_000 },
    retryBaseMs: 1,
    faultsByKey: {
      [DOOMED_KEY]: { failSynthesisMatching: { text: 'doomed', times: 1000 } },
      [FLAKY_KEY]: { failSynthesis: { segments: [0], times: 4 } },
    },
  });
});

afterAll(async () => {
  await emulator?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('rxvoice speak', () => {
  it('writes a WAV file with the duration of the words spoken', async () => {
    const text = 'Hello there. This is a test of the speak command.';
    const run = await cli(['speak', text, '-o', 'speak.wav', '--voice', '1', '--language', 'en-us']);
    expect(run.code).toBe(0);
    const bytes = readFileSync(join(dir, 'speak.wav'));
    const words = text.split(/\s+/).length;
    expect(wavSeconds(bytes)).toBeCloseTo(words * WORD_SECONDS, 2);
    // One line per segment on stdout, in order.
    expect(lines(run.stdout).map((l) => l.replace(/^\[\d+\] [\d.]+-[\d.]+ s\s+/, ''))).toEqual([
      'Hello there.',
      'This is a test of the speak command.',
    ]);
  });

  it('speaks stdin as a token stream (-), with --json segments and word timestamps', async () => {
    const text = 'Tokens arrive in pieces. They still make sentences!\nAnd a last one';
    const pieces = text.match(/.{1,4}/gs) ?? [];
    const stdin = Readable.from(pieces.map((p) => Buffer.from(p)));
    const run = await cli(['speak', '-', '-o', 'stdin.wav', '--json', '--word-timestamps'], envFor(), stdin);
    expect(run.code, run.stderr).toBe(0);
    const events = jsonLines(run.stdout);
    expect(events[0]?.['type']).toBe('ready');
    const segments = events.filter((e) => e['type'] === 'segment');
    expect(segments.map((s) => String(s['text']).trim())).toEqual([
      'Tokens arrive in pieces.',
      'They still make sentences!',
      'And a last one',
    ]);
    const words = segments.flatMap((s) => (s['word_timestamps'] as Array<{ word: string }>).map((w) => w.word));
    expect(words).toHaveLength(text.split(/\s+/).length);
    const done = events.at(-1);
    expect(done?.['type']).toBe('done');
    expect(done?.['segments']).toBe(3);
    expect(wavSeconds(readFileSync(join(dir, 'stdin.wav')))).toBeCloseTo(words.length * WORD_SECONDS, 2);
    // One "word" line per word, timed in the output audio: word k of the tone synth starts at k * WORD_SECONDS.
    const wordLines = events.filter((e) => e['type'] === 'word') as Array<{ segment_id: number; index: number; word: string; start: number; end: number }>;
    expect(wordLines.map((w) => w.word)).toEqual(words);
    wordLines.forEach((w, k) => {
      expect(w.start).toBeCloseTo(k * WORD_SECONDS, 2);
      expect(w.end).toBeGreaterThan(w.start);
      const segment = segments.find((s) => s['segment_id'] === w.segment_id) as { start: number; seconds: number };
      expect(w.start).toBeGreaterThanOrEqual(segment.start - 1e-3);
      expect(w.end).toBeLessThanOrEqual(segment.start + segment.seconds + 1e-3);
    });
    expect(wordLines.at(-1)?.end).toBeCloseTo(words.length * WORD_SECONDS, 2);
  });

  it('--play streams the audio to a player found on PATH (here a recorder named aplay), along with -o', async () => {
    const bin = join(dir, 'bin-recorder');
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(bin, 'aplay'), `#!/bin/sh\nexec "${process.execPath}" "${RECORDING_PLAYER}" "$@"\n`, { mode: 0o755 });
    const recorded = join(dir, 'played.raw');
    const run = await cli(['speak', 'Play this aloud. And this too.', '-o', 'played.wav', '--play'], {
      ...envFor(),
      PATH: bin,
      RECORDING_PLAYER_OUT: recorded,
    });
    expect(run.code, run.stderr).toBe(0);
    const file = readFileSync(join(dir, 'played.wav'));
    const played = readFileSync(recorded);
    expect(existsSync(`${recorded}.done`)).toBe(true); // the player read to the end of its stdin
    expect(played.subarray(0, 4).toString('latin1')).toBe('RIFF');
    expect(played.subarray(44).equals(file.subarray(44))).toBe(true);
    expect(wavSeconds(file)).toBeCloseTo(6 * WORD_SECONDS, 2);
  });

  it('--play with -o: a player that fails (no sound card) does not cost the file; exits 1 with its reason in one line', async () => {
    const bin = join(dir, 'bin-broken');
    mkdirSync(bin, { recursive: true });
    writeFileSync(
      join(bin, 'aplay'),
      `#!/bin/sh\necho 'ALSA lib confmisc.c: cannot find card 0' >&2\necho 'aplay: main:831: audio open error: No such file or directory' >&2\nexit 1\n`,
      { mode: 0o755 },
    );
    const run = await cli(['speak', 'Nobody hears this. But the file is kept.', '-o', 'kept.wav', '--play'], { ...envFor(), PATH: bin });
    expect(run.code).toBe(1);
    const errors = errorLines(run.stderr);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/^rxvoice: SinkError: .*aplay exited with code 1: .*audio open error/);
    expect(wavSeconds(readFileSync(join(dir, 'kept.wav')))).toBeCloseTo(8 * WORD_SECONDS, 2);
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('--play alone: a player that fails at once is an error with its message, for a short and a long text', async () => {
    const bin = join(dir, 'bin-fails-at-once');
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(bin, 'aplay'), `#!/bin/sh\necho 'aplay: main:831: audio open error: No such file or directory' >&2\nexit 1\n`, { mode: 0o755 });
    // one word (its audio fits in the pipe's buffer before the player is gone) and twenty
    // sentences (far more audio than the buffer holds: writes meet the closed pipe)
    const long = Array.from({ length: 20 }, (_, i) => `Sentence number ${i + 1} is here.`).join(' ');
    for (const text of ['Hi.', long]) {
      const run = await cli(['speak', text, '--play'], { ...envFor(), PATH: bin });
      expect(run.code, text).toBe(1);
      expect(errorLines(run.stderr), text).toEqual([expect.stringMatching(/^rxvoice: SinkError: .*aplay exited with code 1: aplay: main:831: audio open error/)]);
    }
  });

  it('writes one WAV stream to stdout with -o -', async () => {
    const run = await cli(['speak', 'One two three.', '-o', '-']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdoutBytes.subarray(0, 4).toString('latin1')).toBe('RIFF');
    // Streaming header (sizes unknown): the PCM after the 44-byte header is 3 words long.
    const pcmBytes = run.stdoutBytes.byteLength - 44;
    const fmt = new WaveFile(run.stdoutBytes.subarray(0, 44)).fmt as { sampleRate: number };
    expect(pcmBytes / (fmt.sampleRate * 2)).toBeCloseTo(3 * WORD_SECONDS, 2);
    // the sizes of a stream of unknown length, as the README and --help say
    expect(run.stdoutBytes.readUInt32LE(4)).toBe(0xffffffff);
    expect(run.stdoutBytes.subarray(36, 40).toString('latin1')).toBe('data');
    expect(run.stdoutBytes.readUInt32LE(40)).toBe(0xffffffff);
    const help = await cli(['speak', '--help']);
    expect(help.stdout).toContain('0xFFFFFFFF');
    // Segment reports moved to stderr.
    expect(run.stderr).toContain('One two three.');
  });

  it('stops at once on interrupt, exits 130 and leaves no file behind', async () => {
    const stdin = new PassThrough();
    const { io, stdout, stderr, interrupt } = makeIo(envFor(), stdin);
    const running = main(['speak', '-', '-o', 'interrupted.wav', '--json'], io);
    stdin.write('First sentence is here. ');
    await waitFor(() => stdout.text().includes('"segment"'));
    interrupt('SIGINT');
    const code = await running;
    expect(code).toBe(130);
    expect(lines(stderr.text())).toEqual(['rxvoice: interrupted (SIGINT)']);
    expect(existsSync(join(dir, 'interrupted.wav'))).toBe(false);
    expect(readdirSync(dir).filter((f) => f.includes('interrupted'))).toEqual([]);
    stdin.destroy();
  });

  it('a skipped segment is reported and exits 1 with the unspoken text; --resubmit-skipped speaks it again', async () => {
    const doomed = await cli(['speak', 'This part is fine. This doomed part fails. The end is fine.', '-o', 'doomed.wav'], envFor(DOOMED_KEY));
    expect(doomed.code).toBe(1);
    const errors = errorLines(doomed.stderr);
    expect(errors[0]).toMatch(/segment 1 skipped: "This doomed part fails\."/);
    expect(errors.at(-1)).toMatch(/1 segment\(s\) could not be synthesized.*\[unspoken: "This doomed part fails\."\]/);
    expect(existsSync(join(dir, 'doomed.wav'))).toBe(true); // what was spoken is kept
    // The emulator's fault fails segment 0 of a session 4 times (3 attempts: skipped). The
    // text stays open on stdin until the skip is seen, so the text is pushed again into the
    // same session, where it is a later segment and succeeds.
    const stdin = new PassThrough();
    const { io, stdout: flakyOut, stderr: flakyErr } = makeIo(envFor(FLAKY_KEY), stdin);
    const running = main(['speak', '-', '-o', 'flaky.wav', '--resubmit-skipped', '--json'], io);
    stdin.write('A flaky sentence here. Then another one. ');
    await waitFor(() => flakyOut.text().includes('"skipped"'));
    stdin.end();
    const code = await running;
    expect(code, flakyErr.text()).toBe(0);
    const events = jsonLines(flakyOut.text());
    expect(events.filter((e) => e['type'] === 'skipped')).toEqual([
      expect.objectContaining({ text: 'A flaky sentence here.', final: false }),
    ]);
    const spoken = events.filter((e) => e['type'] === 'segment').map((e) => String(e['text']).trim());
    expect(spoken.sort()).toEqual(['A flaky sentence here.', 'Then another one.']);
    expect(wavSeconds(readFileSync(join(dir, 'flaky.wav')))).toBeCloseTo(7 * WORD_SECONDS, 2);
  });

  it('--play without any audio player exits 1 with one line naming the players', async () => {
    const run = await cli(['speak', 'Nobody can hear this.', '--play'], { ...envFor(), PATH: join(dir, 'no-players-here') });
    expect(run.code).toBe(1);
    expect(errorLines(run.stderr)).toHaveLength(1);
    expect(run.stderr).toMatch(/aplay/);
  });

  it('exits 5 when the credits run out (live close 4402)', async () => {
    const run = await cli(['speak', 'No credits for this.', '-o', 'poor.wav'], envFor(POOR_KEY));
    expect(run.code).toBe(5);
    expect(errorLines(run.stderr)).toHaveLength(1);
    expect(run.stderr).not.toContain(POOR_KEY);
  });
});

describe('rxvoice translate', () => {
  it('streams the translation to stdout', async () => {
    const text = 'Good morning. How are you today? The weather is fine.';
    const run = await cli(['translate', '--from', 'en-us', '--to', 'de-de', text]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe(`${pseudoLocalize(text, 'de-de')}\n`);
  });

  it('--json prints each piece as it arrives, then done', async () => {
    const text = 'Good morning. How are you today? The weather is fine.';
    const run = await cli(['translate', '--from', 'en-us', '--to', 'fr-fr', '--json', text]);
    expect(run.code, run.stderr).toBe(0);
    const events = jsonLines(run.stdout);
    const pieces = events.filter((e) => e['type'] === 'text');
    expect(pieces.length).toBeGreaterThan(1);
    expect(pieces.map((p) => p['text']).join('')).toBe(pseudoLocalize(text, 'fr-fr'));
    expect(events.at(-1)).toEqual({ type: 'done', text: pseudoLocalize(text, 'fr-fr') });
  });

  it('a stream that fails midway keeps what arrived and exits 1 with the service message', async () => {
    const run = await cli(['translate', '--from', 'en-us', '--to', 'de-de', `Good morning. ${TRANSLATION_FAIL_TRIGGER} Never sent.`]);
    expect(run.code).toBe(1);
    expect(run.stdout.startsWith(pseudoLocalize('Good morning.', 'de-de').slice(0, 10))).toBe(true);
    expect(run.stdout.endsWith('\n')).toBe(true);
    expect(run.stdout).not.toContain('Never');
    expect(errorLines(run.stderr)).toHaveLength(1);
    expect(run.stderr).toMatch(/translation failed/);
  });
});

describe('rxvoice sound', () => {
  it('runs the task and writes a WAV of the asked duration', async () => {
    const run = await cli(['sound', 'rain on a tin roof', '--duration', '2', '-o', 'rain.wav', '--json']);
    expect(run.code, run.stderr).toBe(0);
    const events = jsonLines(run.stdout);
    expect(events[0]?.['type']).toBe('created');
    const result = events.at(-1);
    expect(result?.['type']).toBe('result');
    expect(result?.['path']).toBe(join(dir, 'rain.wav'));
    expect(wavSeconds(readFileSync(join(dir, 'rain.wav')))).toBeCloseTo(2, 1);
  });

  it('--music makes a music clip (fixed length: --duration is not used for music)', async () => {
    const run = await cli(['sound', 'calm piano', '--music', '--duration', '2', '-o', 'piano.wav', '--json']);
    expect(run.code, run.stderr).toBe(0);
    expect(jsonLines(run.stdout).at(-1)).toMatchObject({ type: 'result', path: join(dir, 'piano.wav') });
    expect(wavSeconds(readFileSync(join(dir, 'piano.wav')))).toBeCloseTo(10, 1);
  });

  it('shows a spinner with the task status and elapsed time on a TTY, and a final line', async () => {
    const { io, stdout, stderr } = makeIo(envFor());
    stderr.isTTY = true;
    const code = await main(['sound', 'wind in the trees', '--duration', '1', '-o', 'wind.wav'], io);
    expect(code, stderr.text()).toBe(0);
    const frames = stderr.text().split('\r\x1b[2K').filter((f) => f !== '');
    expect(frames.some((f) => /^[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] sound: PENDING task \S+.* \(\d+\.\d s\)$/.test(f))).toBe(true);
    expect(frames.at(-1)).toMatch(new RegExp(`^wrote ${join(dir, 'wind.wav').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(1\\.00 s of audio\\), run \\S+ \\(\\d+\\.\\d s\\)\\n$`));
    expect(stdout.text()).toBe('');
  });

  it('-o writes the file whole or not at all: a write that fails (a file size limit, as a full disk) keeps the earlier file, no temporary left', async () => {
    const target = join(dir, 'kept.wav');
    writeFileSync(target, 'an earlier take');
    const argv = ['sound', 'rain on a tin roof', '--duration', '2', '-o', 'kept.wav'];
    // 2 s of audio is 32 KB or more; the shell's limit is 16 blocks of 512 bytes (Node ignores SIGXFSZ: the write fails with EFBIG)
    const limited = await runShell(`ulimit -f 16; exec "${process.execPath}" "${join(ROOT, 'bin/rxvoice.js')}" ${argv.map((a) => `'${a}'`).join(' ')}`, envFor());
    expect(limited.code, limited.stderr).toBe(1);
    expect(readFileSync(target, 'utf8')).toBe('an earlier take');
    expect(readdirSync(dir).filter((name) => name.includes('kept.wav') && name !== 'kept.wav')).toEqual([]);
    // control: without the limit the same command replaces it
    const free = await runChild(argv, envFor());
    expect(free.code, free.stderr).toBe(0);
    expect(wavSeconds(readFileSync(target))).toBeCloseTo(2, 1);
  });

  it('exits 4 on a validation error (duration over 10 s)', async () => {
    const run = await cli(['sound', 'thunder', '--duration', '11', '-o', 'x.wav']);
    expect(run.code).toBe(4);
    expect(errorLines(run.stderr)).toHaveLength(1);
    expect(run.stderr).toMatch(/^rxvoice: ValidationError: .*duration/);
  });

  it('exits 5 when the task ends in PAYMENT_REQUIRED', async () => {
    const run = await cli(['sound', 'thunder', '-o', 'poor.wav'], envFor(POOR_KEY));
    expect(run.code).toBe(5);
    expect(run.stderr).not.toContain(POOR_KEY);
  });
});

describe('rxvoice voices and voice create', () => {
  it('lists voices as a table and as JSON lines', async () => {
    const table = await cli(['voices']);
    expect(table.code).toBe(0);
    expect(lines(table.stdout)[0]).toMatch(/^ID\s+NAME\s+GENDER/);
    expect(table.stdout).toMatch(/^1\s+Alex\s+1\s+35\s+en-us/m);
    const json = await cli(['voices', '--json']);
    const voices = jsonLines(json.stdout);
    expect(voices.length).toBeGreaterThanOrEqual(1);
    expect(voices.find((v) => v['id'] === 1)?.['voice_name']).toBe('Alex');
  });

  it('uploads a sample and the new voice is listed', async () => {
    const samples = new Int16Array(22050).map((_, i) => Math.round(Math.sin(i / 8) * 8000));
    writeFileSync(join(dir, 'sample.wav'), encodeWav16(samples, 22050));
    const run = await cli(['voice', 'create', '--name', 'CLI Voice', '--gender', '2', '--age', '40', 'sample.wav']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/uploading/); // the progress line the failures below must not print
    const id = Number(run.stdout.trim());
    expect(Number.isInteger(id)).toBe(true);
    const voices = jsonLines((await cli(['voices', '--json'])).stdout);
    expect(voices.find((v) => v['id'] === id)).toMatchObject({ voice_name: 'CLI Voice', gender: 2, age: 40 });
  });

  it('exits 4 (invalid request, checked before sending) for a gender the service does not allow', async () => {
    const bad = await cli(['voice', 'create', '--name', 'X', '--gender', '3', 'sample.wav']);
    expect(bad.code).toBe(4);
  });

  it('a sample that cannot be read is a file error: exit 1, as --help files it, one line, nothing printed or sent before', async () => {
    const help = await cli(['voice', 'create', '--help']);
    expect(help.stdout).toMatch(/^\s+1\s+failure \(.*file error/m);
    mkdirSync(join(dir, 'a-directory.wav'), { recursive: true });
    const before = emulator.requests.length;
    for (const [path, reason] of [['nope.wav', 'no such file'], ['a-directory.wav', 'not a file']] as const) {
      const run = await cli(['voice', 'create', '--name', 'X', '--gender', '1', path]);
      expect(run.code, path).toBe(1);
      expect(run.stderr.trim().split('\n'), path).toEqual([`rxvoice: cannot read the audio sample ${join(dir, path)}: ${reason}`]);
      expect(run.stdout).toBe('');
    }
    expect(emulator.requests.length).toBe(before); // nothing sent
  });
});

describe('rxvoice speak: speakable text (issue 31)', () => {
  const llm = '<think>Plan the answer.</think>Use **SQL**, see https://example.com/a?b=1 for 25% off.';
  const spokenLines = (stdout: string): string[] => lines(stdout).map((l) => l.replace(/^\[\d+\] [\d.]+-[\d.]+ s\s+/, ''));
  it('speaks LLM text as a listener would want it by default; --no-speakable sends it as it is (control)', async () => {
    const run = await cli(['speak', llm, '-o', 'llm.wav']);
    expect(run.code, run.stderr).toBe(0);
    expect(spokenLines(run.stdout)).toEqual(['Use SQL, see example.com for 25% off.']);
    const raw = await cli(['speak', llm, '-o', 'raw.wav', '--no-speakable']);
    expect(raw.code, raw.stderr).toBe(0);
    expect(spokenLines(raw.stdout).join(' ')).toContain('<think>');
  });
  it('--links, --lexicon file.json (rules as /regex/) and --spoken-form', async () => {
    writeFileSync(join(dir, 'lexicon.json'), JSON.stringify({ words: { SQL: 'sequel' }, rules: [{ match: '/^v(\\d+)$/', replace: 'version $1' }] }));
    const run = await cli(['speak', `${llm} Try v2.`, '-o', 'lex.wav', '--links', 'drop', '--lexicon', 'lexicon.json', '--spoken-form']);
    expect(run.code, run.stderr).toBe(0);
    expect(spokenLines(run.stdout)).toEqual(['Use sequel, see  for twenty-five percent off.', 'Try version 2.']);
  });
  it.each([
    [['--links', 'short']],
    [['--lexicon', 'missing.json']],
    [['--no-speakable', '--spoken-form']],
  ])('bad speakable flags %j: usage error, exit 2, nothing sent', async (flags) => {
    const run = await cli(['speak', 'Hello there.', '-o', 'bad.wav', ...flags]);
    expect(run.code).toBe(2);
    expect(lines(run.stderr)).toHaveLength(1);
  });
});

describe('exit codes and messages', () => {
  it.each([
    [['bogus']],
    [['speak']],
    [['speak', 'text']],
    [['speak', 'text', '-o', 'a.wav', '--nope']],
    [['speak', 'a', 'b', '-o', 'a.wav']],
    [['speak', 'text', '-o', '-', '--json']],
    [['translate', 'text', '--to', 'de-de']],
    [['sound', 'rain', '--duration', 'long']],
    [['voice', 'delete']],
    [['voices', 'extra']],
    [['emulator', '--port', 'abc']],
    [['emulator', '--synth', 'flute']],
    [['speak', 'text', '-o']],
  ])('usage error %j exits 2 with one line on stderr', async (argv) => {
    const run = await cli(argv);
    expect(run.code).toBe(2);
    const errorLines = lines(run.stderr);
    expect(errorLines).toHaveLength(1);
    expect(errorLines[0]).toMatch(/^rxvoice: .*\(see: rxvoice( \w+)? --help\)$/);
    expect(run.stdout).toBe('');
  });

  it('exits 3 on a wrong key, without printing the key (HTTP and live)', async () => {
    const secret = 'sk-very-secret-key-123456';
    for (const argv of [['voices'], ['speak', 'Hello.', '-o', 'auth.wav'], ['sound', 'rain', '-o', 'auth.wav']]) {
      const run = await cli(argv, envFor(secret));
      expect(run.code, `${argv.join(' ')}: ${run.stderr}`).toBe(3);
      expect(errorLines(run.stderr)).toHaveLength(1);
      expect(run.stderr + run.stdout).not.toContain(secret);
      expect(run.stderr).toMatch(/^rxvoice: /);
    }
  });

  it('exits 3 when only the base URL is set, 2 for a base URL without a scheme (value shown, key not)', async () => {
    expect((await cli(['voices'], { RXVOICE_BASE_URL: emulator.baseUrl })).code).toBe(3);
    expect((await cli(['voices'], { CAMB_BASE_URL: emulator.baseUrl })).code).toBe(3);
    const noScheme = await cli(['voices'], { CAMB_API_KEY: 'sk-only-key-abcdef', CAMB_BASE_URL: 'client.camb.ai/apis' });
    expect(noScheme.code).toBe(2);
    expect(noScheme.stderr).toContain('"client.camb.ai/apis"');
    expect(noScheme.stderr).toContain('https://client.camb.ai/apis');
    expect(noScheme.stderr).not.toContain('sk-only-key-abcdef');
    // control: the same key with a full address reaches the service (the emulator refuses it: 3)
    expect((await cli(['voices'], { CAMB_API_KEY: 'sk-only-key-abcdef', CAMB_BASE_URL: emulator.baseUrl })).code).toBe(3);
    // (only a key: the public service; test/client/real-service.test.ts checks it without network)
  });

  it('exits 6 when the service cannot be reached', async () => {
    const run = await cli(['voices'], { RXVOICE_API_KEY: 'k-unreachable', RXVOICE_BASE_URL: 'http://127.0.0.1:9' });
    expect(run.code).toBe(6);
    expect(lines(run.stderr)).toHaveLength(1);
  });
});

describe('progress on stderr', () => {
  it('draws a spinner with status and elapsed time on a TTY, and clears it at the end', () => {
    const tty = new Collector();
    tty.isTTY = true;
    const scheduler = new VirtualTimeScheduler(VirtualAction, 1000);
    const progress = startProgress(tty, 'sound', { scheduler, now: () => scheduler.now() });
    progress.update('PENDING', 'task t1');
    scheduler.flush();
    const frames = tty.text().split('\r\x1b[2K').filter((f) => f !== '');
    expect(frames.length).toBeGreaterThan(10);
    expect(frames.at(-1)).toMatch(/^[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] sound: PENDING task t1 \(1\.0 s\)$/);
    expect(new Set(frames.map((f) => f[0])).size).toBeGreaterThan(5);
    progress.above(() => tty.write('a line\n'));
    expect(tty.text()).toMatch(/\r\x1b\[2Ka line\n\r\x1b\[2K. sound: PENDING task t1 \(1\.0 s\)$/);
    // control: with more virtual time, the spinner draws on (the flush stops at maxFrames)
    let length = tty.text().length;
    scheduler.maxFrames = 1500;
    scheduler.flush();
    expect(tty.text().length).toBeGreaterThan(length);
    progress.succeed('wrote x.wav');
    expect(tty.text()).toMatch(/\r\x1b\[2Kwrote x\.wav \(1\.4 s\)\n$/); // the last frame drawn: 1440 ms
    length = tty.text().length;
    scheduler.maxFrames = 3000;
    scheduler.flush();
    progress.update('LATE', 'after the end');
    expect(tty.text().length).toBe(length); // the spinner stopped, and a late update draws nothing
  });

  it('stop() on a TTY clears the line and stops the spinner (control: it was drawing)', () => {
    const tty = new Collector();
    tty.isTTY = true;
    const scheduler = new VirtualTimeScheduler(VirtualAction, 500);
    const progress = startProgress(tty, 'speak', { scheduler, now: () => scheduler.now() });
    scheduler.flush();
    expect(tty.text().split('\r\x1b[2K').filter((f) => f !== '').length).toBeGreaterThan(5);
    progress.stop();
    expect(tty.text().endsWith('\r\x1b[2K')).toBe(true);
    const length = tty.text().length;
    scheduler.maxFrames = 2000;
    scheduler.flush();
    expect(tty.text().length).toBe(length);
  });

  it('prints one plain line per status change otherwise, and nothing when silent', () => {
    const plain = new Collector();
    let now = 0;
    const progress = startProgress(plain, 'sound', { now: () => now });
    progress.update('PENDING', 'task t1');
    now = 500;
    progress.update('PENDING', 'task t1');
    now = 1500;
    progress.update('SUCCESS', 'run 3');
    progress.succeed('wrote x.wav');
    progress.update('LATE'); // after the end: nothing
    expect(plain.text()).toBe('sound: PENDING task t1 (0.0 s)\nsound: SUCCESS run 3 (1.5 s)\nwrote x.wav (1.5 s)\n');
    const silent = new Collector();
    const quiet = startProgress(silent, 'sound', { silent: true });
    quiet.update('PENDING');
    quiet.succeed('done');
    expect(silent.text()).toBe('');
  });
});

describe('help', () => {
  it.each(['speak', 'translate', 'sound', 'voices', 'voice', 'emulator'])('%s --help and -h print usage and exit 0', async (command) => {
    for (const flag of ['--help', '-h']) {
      const run = await cli(command === 'voice' ? ['voice', 'create', flag] : [command, flag]);
      expect(run.code).toBe(0);
      expect(run.stdout).toContain('Usage:');
      expect(run.stdout).toContain(`rxvoice ${command}`);
      expect(run.stdout).toContain('Exit codes:');
    }
  });

  it('rxvoice --help lists commands, environment and exit codes; no command exits 2', async () => {
    const help = await cli(['--help']);
    expect(help.code).toBe(0);
    for (const word of ['speak', 'translate', 'sound', 'voices', 'voice create', 'emulator', 'RXVOICE_API_KEY', 'RXVOICE_EMULATOR_SYNTH', '130']) {
      expect(help.stdout).toContain(word);
    }
    expect((await cli([])).code).toBe(2);
    expect((await cli(['--version'])).stdout).toMatch(/^rxvoice \d+\.\d+\.\d+/);
  });
});

describe('embedded emulator and the emulator command', () => {
  it('starts an embedded emulator when neither variable is set, and says so in one line', async () => {
    const run = await cli(['voices', '--json'], { RXVOICE_EMULATOR_SYNTH: 'tone' });
    expect(run.code).toBe(0);
    expect(lines(run.stderr)).toHaveLength(1);
    expect(run.stderr).toMatch(/embedded emulator at http:\/\/127\.0\.0\.1:\d+ \(synth tone\)/);
    expect(jsonLines(run.stdout).length).toBeGreaterThan(0);
  });

  it('rxvoice emulator --port N listens on that port', async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = createServer();
      probe.listen(0, '127.0.0.1', () => {
        const { port: free } = probe.address() as AddressInfo;
        probe.close(() => resolve(free));
      });
    });
    const { io, stdout, interrupt } = makeIo({});
    const running = main(['emulator', '--port', String(port), '--synth', 'tone', '--json'], io);
    await waitFor(() => stdout.text().includes('\n'));
    const info = JSON.parse(stdout.text()) as { baseUrl: string };
    expect(info.baseUrl).toBe(`http://127.0.0.1:${port}`);
    interrupt('SIGINT');
    expect(await running).toBe(0);
  });

  it('rxvoice emulator serves until interrupted, then closes', async () => {
    const { io, stdout, stderr, interrupt } = makeIo({});
    const running = main(['emulator', '--synth', 'tone', '--json'], io);
    await waitFor(() => stdout.text().includes('\n'));
    const info = JSON.parse(stdout.text()) as { baseUrl: string; wsUrl: string; apiKey: string };
    expect(info.wsUrl).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/live-tts\/ws$/);
    const response = await fetch(`${info.baseUrl}/list-voices`, { headers: { 'x-api-key': info.apiKey } });
    expect(response.status).toBe(200);
    await response.arrayBuffer();
    interrupt('SIGTERM');
    expect(await running).toBe(0);
    expect(stderr.text()).toContain('emulator closed');
    await expect(fetch(`${info.baseUrl}/list-voices`)).rejects.toThrow();
  });
});

describe('the real binary (child process)', { timeout: 60_000 }, () => {
  it('node bin/rxvoice.js speak writes a WAV; emulator stops cleanly on SIGTERM', async () => {
    const out = join(dir, 'child.wav');
    const speak = await runChild(['speak', 'From a child process.', '-o', out], { RXVOICE_EMULATOR_SYNTH: 'tone' });
    expect(speak.code, speak.stderr).toBe(0);
    expect(wavSeconds(readFileSync(out))).toBeCloseTo(4 * 0.25, 2); // default toneWordSeconds
    expect(lines(speak.stderr)[0]).toMatch(/embedded emulator/);

    const child = spawn(process.execPath, [join(ROOT, 'bin/rxvoice.js'), 'emulator', '--synth', 'tone'], {
      cwd: dir,
      env: { PATH: process.env['PATH'] ?? '', RXVOICE_FROM_SOURCE: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    await waitFor(() => /Press Ctrl-C/.test(stdout), 20_000);
    const baseUrl = /base URL:\s+(\S+)/.exec(stdout)?.[1];
    expect(baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const res = await fetch(`${baseUrl}/list-voices`, { headers: { 'x-api-key': 'rxv-dev-key-0000' } });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(stderr).toContain('emulator closed');
  });
});

function runChild(argv: string[], env: Record<string, string>): Promise<ChildRun> {
  return collect(process.execPath, [join(ROOT, 'bin/rxvoice.js'), ...argv], env);
}

type ChildRun = { code: number | null; stdout: string; stderr: string };

/** Runs `command` in the test's folder with the source build (never a possibly stale dist/), collecting its output. */
function collect(command: string, args: string[], env: Record<string, string>): Promise<ChildRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: dir, env: { PATH: process.env['PATH'] ?? '', RXVOICE_FROM_SOURCE: '1', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/** `script` run by bash, as `runChild` runs the CLI. */
function runShell(script: string, env: Record<string, string>): Promise<ChildRun> {
  return collect('bash', ['-c', script], env);
}

async function waitFor(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const started = Date.now();
  while (!condition()) {
    if (Date.now() - started > timeoutMs) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
