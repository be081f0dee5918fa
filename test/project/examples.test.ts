/**
 * Every example runs with one command and exits 0: the `npm start` demo (espeak speech,
 * as a new user gets it, played through a recording stand-in for `aplay` put on PATH; and
 * again with an `aplay` that fails like one on a machine without a sound card), the
 * chat-bot example (real `openai` package against the built-in fake endpoint, to the
 * stand-in player and a WAV), translate-then-speak, the LiveKit agent session (words aligned,
 * to a WAV), the AI SDK example (its own generateSpeech and transcribe), the LangChain
 * example (a fake chat model's stream spoken), and the captions server (starts,
 * prints its URL, serves the page without the key, stops on SIGTERM). Outputs are valid
 * WAV files.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import wavefile from 'wavefile';
import fc from 'fast-check';
import { CHAT_ANSWER, MARKDOWN_ANSWER, tokenize } from '../../examples/lib/chat-answer.js';
import { synthOption } from '../../examples/lib/speech-service.js';
import { wordPrinter } from '../../examples/lib/word-printer.js';
import { createSpeakableText } from '../../src/text/speakable.js';
import { RECORDING_PLAYER } from '../fixtures/sinkFixtures.js';

const { WaveFile } = wavefile;
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
let dir: string;

/** The environment of the examples: no service or OpenAI settings, so they use the built-in fakes. */
function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!/^(RXVOICE_|OPENAI_|CAMB_)/.test(key)) env[key] = value;
  }
  return env;
}

interface ChildResult {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

function runExample(script: string, args: string[], timeoutMs = 50_000, env: NodeJS.ProcessEnv = cleanEnv()): Promise<ChildResult> {
  return runCommand(process.execPath, ['--import', 'tsx', join(ROOT, script), ...args], timeoutMs, env);
}

function runCommand(command: string, args: string[], timeoutMs = 50_000, env: NodeJS.ProcessEnv = cleanEnv()): Promise<ChildResult> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: ROOT,
      env,
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

/**
 * A directory with an executable `aplay` (the first player looked for) put first on PATH:
 * the recording player (records its stdin to RECORDING_PLAYER_OUT), or a player that
 * fails like aplay on a machine without a sound card.
 */
function playerOnPath(kind: 'recording' | 'broken'): string {
  const bin = join(dir, `bin-${kind}`);
  mkdirSync(bin, { recursive: true });
  const script =
    kind === 'recording'
      ? `#!/bin/sh\nexec "${process.execPath}" "${RECORDING_PLAYER}" "$@"\n`
      : `#!/bin/sh\necho 'aplay: main:831: audio open error: No such file or directory' >&2\nexit 1\n`;
  writeFileSync(join(bin, 'aplay'), script, { mode: 0o755 });
  return bin;
}

function lines(text: string): string[] {
  return text.split('\n').filter((line) => line.trim() !== '');
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
  it('demo (npm start: espeak speech by default): writes the WAV, plays it, prints a timeline with totals', async () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts['start']).toBe('tsx examples/demo.ts');
    const out = join(dir, 'demo.wav');
    const played = join(dir, 'demo-played.raw');
    const env = { ...cleanEnv(), PATH: `${playerOnPath('recording')}:${process.env['PATH'] ?? ''}`, RECORDING_PLAYER_OUT: played };
    // over 10 s of espeak speech synthesized beside ten other examples (concurrent) on 2 cores:
    // 37 s in CI with two busy loops, over 50 s with more load; the limit bounds a hang, not speed
    const run = await runExample('examples/demo.ts', ['--out', out], 85_000, env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('(synth espeak)');
    expect(run.stdout).toContain('Timeline');
    expect(run.stdout).toMatch(/Totals: \d+ segments, \d+ words, [\d.]+ s of audio/);
    // One row per segment: id, time to first audio, duration, text.
    const rows = run.stdout.split('\n').filter((line) => /^\s+\d+\s+\d+ ms\s+[\d.]+ s\s+\S/.test(line));
    expect(rows.length).toBeGreaterThanOrEqual(5);
    const totalFromRows = rows.reduce((sum, row) => sum + Number(/ms\s+([\d.]+) s/.exec(row)?.[1] ?? 0), 0);
    const { seconds } = wavInfo(out);
    expect(seconds).toBeCloseTo(totalFromRows, 1);
    expect(seconds).toBeGreaterThan(10);
    // Each row's text is the next sentence of the answer made speakable (long ones cut with
    // "..."): no markdown markers, list numbers, addresses or emoji; each list item its own.
    const core = createSpeakableText();
    const spoken = [...core.feed(MARKDOWN_ANSWER), ...core.end()].map((p) => p.text).join('');
    expect(rows.some((row) => /\d s\s+Buy whole beans roasted/.test(row)), 'a list item, bold markers gone, is its own segment').toBe(true);
    let from = 0;
    for (const row of rows) {
      const text = (/\d s\s+(\S.*)$/.exec(row)?.[1] ?? '').replace(/\.\.\.$/, '');
      expect(text).not.toMatch(/\*|#|\[|\]\(|https?:|^\d+\. |\p{Extended_Pictographic}/u);
      const at = spoken.indexOf(text, from);
      expect(at, row).toBeGreaterThanOrEqual(from);
      from = at + text.length;
    }
    // Real speech (espeak, see above): not silence.
    const wav = readFileSync(out);
    const pcm = new Int16Array(wav.buffer.slice(wav.byteOffset + 44, wav.byteOffset + wav.byteLength - ((wav.byteLength - 44) % 2)));
    const rms = Math.sqrt(pcm.reduce((sum, v) => sum + v * v, 0) / pcm.length) / 32768;
    expect(rms).toBeGreaterThan(0.02);
    // Played through the player found on PATH: the same PCM as the file, to the end.
    expect(run.stdout).toMatch(/played with .*aplay/);
    expect(existsSync(`${played}.done`)).toBe(true);
    expect(readFileSync(played).subarray(44).equals(wav.subarray(44))).toBe(true);
  });

  it('demo as `npm start --synth tone` (npm keeps the flag, the demo reads it back): a player that cannot play does not cost the WAV', async () => {
    const out = join(dir, 'demo-broken-player.wav');
    const env = { ...cleanEnv(), PATH: `${playerOnPath('broken')}:${process.env['PATH'] ?? ''}` };
    const run = await runCommand('npm', ['start', '--synth', 'tone', '--', '--out', out], 50_000, env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('(synth tone)');
    expect(run.stderr).toContain('playback failed');
    expect(run.stdout).toMatch(/playback with .*aplay failed: .*audio open error/);
    expect(wavInfo(out).seconds).toBeGreaterThan(10);
    expect(readdirSync(dir).filter((name) => name.startsWith('.demo-broken-player.wav.'))).toEqual([]); // no temp file left
  });

  it('chatbot-to-speech: the openai package against the fake endpoint, to a WAV', async () => {
    const out = join(dir, 'chatbot.wav');
    const played = join(dir, 'chatbot-played.raw');
    const env = { ...cleanEnv(), PATH: `${playerOnPath('recording')}:${process.env['PATH'] ?? ''}`, RECORDING_PLAYER_OUT: played };
    const run = await runExample('examples/chatbot-to-speech.ts', ['--synth', 'tone', '--out', out], 50_000, env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('built-in fake OpenAI-compatible server');
    expect(run.stdout).toMatch(/spoke \d+ segments to .* and through .*aplay/);
    // The answer as it streamed, with a note per spoken segment, each between words.
    const notes = [...run.stdout.matchAll(/\[segment (\d+) spoken\]/g)];
    expect(notes.map((m) => Number(m[1]))).toEqual(notes.map((_, i) => i));
    expect(notes.length).toBeGreaterThan(3);
    for (const m of notes) {
      expect(run.stdout.slice(m.index - 1, m.index + m[0].length + 1), 'a note inside a word').toMatch(/^\s\[segment \d+ spoken\] $/);
    }
    const answer = run.stdout.replace(/\[segment \d+ spoken\] /g, '');
    expect(answer).toContain(CHAT_ANSWER);
    expect(wavInfo(out).seconds).toBeGreaterThan(10);
    // To the speaker too: the player got the same PCM as the file.
    expect(readFileSync(played).subarray(44).equals(readFileSync(out).subarray(44))).toBe(true);
  });

  it('livekit: a LiveKit AgentSession says three sentences through rxvoice/livekit, every word aligned, to a WAV', async () => {
    const out = join(dir, 'livekit.wav');
    const run = await runExample('examples/livekit.ts', ['--synth', 'tone', '--out', out]);
    expect(run.code, run.stderr).toBe(0);
    // one line per word, in order, with its time in the audio (the tone voice: 0.25 s a word)
    const words = lines(run.stdout)
      .map((line) => /^\s*(\d+\.\d\d) s {2}(\S+)$/.exec(line))
      .filter((m) => m !== null);
    expect(words.map((m) => m[2]).join(' ')).toBe('Good morning, this is Dr. Smith. The train to Berlin leaves at 9.30 from platform four. Have a pleasant journey!');
    expect(words.map((m) => Number(m[1]))).toEqual(words.map((_, i) => i * 0.25));
    expect(run.stdout).toMatch(/tts metrics: first audio after \d+ ms, 5000 ms of audio for 112 characters/);
    expect(wavInfo(out).seconds).toBeCloseTo(5, 3);
  });

  it('translate-then-speak: each translated sentence spoken in order, the first before the translation ends', async () => {
    const run = await runExample('examples/translate-then-speak.ts', ['--tone']);
    expect(run.code, run.stderr).toBe(0);
    const out = lines(run.stdout);
    expect(out[0]).toMatch(/^source \(en-us\): Good morning everyone\. .* We wish you a pleasant journey\.$/);
    // One line per segment: ids 0, 1, 2, 3 in order, each a pseudo-German sentence with one
    // word timestamp per word.
    const segments = out.map((line) => /^\s*(\d+) ms {2}segment (\d+): (.+?) {2}\[(\d+) word timestamps\]$/.exec(line)).filter((m) => m !== null);
    expect(segments.map((m) => Number(m[2]))).toEqual([0, 1, 2, 3]);
    expect(segments.map((m) => Number(m[4]))).toEqual(segments.map((m) => m[3]!.split(/\s+/).length));
    expect(segments.map((m) => Number(m[4]))).toEqual([4, 10, 5, 6]);
    expect(segments[0]![3]).toMatch(/^\[de-de\] /);
    expect(out.some((line) => / segment \d+ skipped: /.test(line))).toBe(false);
    // The first sentence is heard before the translation stream completes.
    const complete = out.findIndex((line) => line.endsWith('(translation stream complete)'));
    expect(complete).toBeGreaterThan(out.indexOf(segments[0]![0]));
    const done = /done: (\d+) bytes of audio$/.exec(out.at(-1) ?? '');
    expect(Number(done?.[1])).toBeGreaterThan(0);
  });

  it('ai-sdk: the AI SDK speaks to a WAV and transcribes it, segments in seconds', async () => {
    const out = join(dir, 'ai-sdk.wav');
    const run = await runExample('examples/ai-sdk.ts', ['--synth', 'tone', '--out', out]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/spoke \d+ bytes of audio\/wav to .*ai-sdk\.wav \(2 credits\)/);
    expect(wavInfo(out).seconds).toBeGreaterThan(1);
    const transcribed = /transcribed ([\d.]+) s of en audio:/.exec(run.stdout);
    expect(Number(transcribed?.[1])).toBeCloseTo(wavInfo(out).seconds, 1);
    expect(lines(run.stdout).filter((line) => /^\s+\d+\.\d\d-\d+\.\d\d s {2}\S/.test(line)).length).toBeGreaterThan(0);
  });

  it('langchain: a LangChain chat model stream spoken segment by segment to a WAV', async () => {
    const out = join(dir, 'langchain.wav');
    const run = await runExample('examples/langchain.ts', ['--synth', 'tone', '--out', out]);
    expect(run.code, run.stderr).toBe(0);
    const segments = lines(run.stdout).filter((line) => /^segment \d+: /.test(line));
    expect(segments.length).toBeGreaterThanOrEqual(5);
    for (const line of segments) expect(line).not.toMatch(/\*|#|\]\(|https?:/);
    expect(run.stdout).toContain(`spoke ${segments.length} segments to ${out}`);
    expect(wavInfo(out).seconds).toBeGreaterThan(5);
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
      expect(app).toContain('/speech'); // the page speaks to the relay
      expect((await fetch(new URL('react.html', url))).status).toBe(200);
      for (const body of [html, app]) expect(body).not.toContain('rxv-dev-key-0000');
      expect((await fetch(new URL('nope', url))).status).toBe(404);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  });
});

/** `a` ends with a high surrogate whose low surrogate starts `b`: one code point cut in two. */
function splitsPair(a: string, b: string): boolean {
  return /[\uD800-\uDBFF]$/.test(a) && /^[\uDC00-\uDFFF]/.test(b);
}

describe('the examples\' token splitter and answer printer', () => {
  /** Text with astral code points (emoji, with skin tones and ZWJ), CJK and plain words. */
  const text = fc
    .array(fc.oneof(fc.string({ unit: 'binary', maxLength: 8 }), fc.constantFrom('😀', '👍🏽', '👩‍💻', '𝄞', '你好', ' ', '\n\n', 'word')), { maxLength: 30 })
    .map((parts) => parts.join(''));
  const pace = fc.tuple(fc.integer({ min: 1, max: 6 }), fc.integer({ min: 0, max: 6 }), fc.double({ min: 0, max: 0.999999, noNaN: true }));

  it('tokenize never cuts a code point (no token starts or ends inside a surrogate pair), and joins back to the text', () => {
    fc.assert(
      fc.property(text, pace, (input, [min, extra, r]) => {
        const tokens = tokenize(input, { chars: [min, min + extra], random: () => r });
        expect(tokens.join('')).toBe(input);
        // no two neighbours split a surrogate pair (a high one ending a token, its low one starting the next)
        tokens.slice(1).forEach((token, i) => expect(splitsPair(tokens[i]!, token), JSON.stringify([tokens[i], token])).toBe(false));
      }),
      { numRuns: 300 },
    );
    // control: cutting by UTF-16 units, as the splitter used to, splits an emoji
    expect(splitsPair('😀 ok'.slice(0, 1), '😀 ok'.slice(1))).toBe(true);
  });

  it('the answer printer puts notes between words only, and prints the answer whole', () => {
    const words = fc.array(fc.oneof(fc.stringMatching(/^[a-z]{1,8}$/), fc.constantFrom(' ', '\n', '. ', ', ')), { minLength: 1, maxLength: 40 }).map((p) => p.join(''));
    fc.assert(
      fc.property(words, fc.array(fc.nat(), { maxLength: 40 }), fc.array(fc.nat(), { maxLength: 10 }), (answer, cuts, noteAt) => {
        // the answer in tokens cut anywhere; notes arriving after random tokens
        const bounds = [...new Set([0, ...cuts.map((c) => c % (answer.length + 1)), answer.length])].sort((a, b) => a - b);
        const tokens = bounds.slice(1).map((end, i) => answer.slice(bounds[i], end));
        let out = '';
        const printer = wordPrinter((s) => (out += s));
        let next = 0;
        tokens.forEach((token, i) => {
          printer.text(token);
          for (const at of noteAt) if (at % tokens.length === i) printer.note(`[n${next++}]`);
        });
        printer.end();
        const notes = [...out.matchAll(/\[n\d+\] /g)];
        expect(notes.length).toBe(next);
        for (const m of notes) {
          const before = out[m.index - 1];
          expect(before === undefined || /\s/.test(before), JSON.stringify(out)).toBe(true);
        }
        expect(out.replace(/\[n\d+\] /g, '').trimEnd()).toBe(answer.trimEnd());
      }),
      { numRuns: 300 },
    );
    // control: a note printed the moment it comes lands inside a word
    let naive = '';
    ['Hel', 'lo there'].forEach((token, i) => {
      naive += token;
      if (i === 0) naive += '[n0] ';
    });
    expect(naive).toMatch(/\w\[n0\]/);
  });

  it('--synth: the flag, else what npm makes of `npm start --synth tone` or `--synth=tone`, else the emulator\'s choice', () => {
    expect(synthOption('tone', {})).toEqual({ synth: 'tone', positionals: [] });
    // npm 10/11: `npm start --synth tone` -> npm_config_synth=true, `tone` the first argument
    expect(synthOption(undefined, { npm_config_synth: 'true' }, ['tone', 'Why?'])).toEqual({ synth: 'tone', positionals: ['Why?'] });
    expect(synthOption(undefined, { npm_config_synth: 'tone' }, ['Why?'])).toEqual({ synth: 'tone', positionals: ['Why?'] });
    expect(synthOption('espeak', { npm_config_synth: 'tone' })).toEqual({ synth: 'espeak', positionals: [] });
    expect(synthOption(undefined, {}, ['tone'])).toEqual({ synth: undefined, positionals: ['tone'] }); // a question, not a flag
    expect(synthOption(undefined, {})).toEqual({ synth: undefined, positionals: [] });
    expect(() => synthOption('beep', {})).toThrow(/espeak or tone/);
  });
});
