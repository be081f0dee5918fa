/**
 * The package as a user gets it: built, packed with `npm pack`, unpacked into a fresh
 * project's node_modules (its dependencies linked from ours, nothing else: no @types/ws
 * unless the package depends on it, no devDependencies), then:
 *
 * - a strict consumer (`strict`, `module`/`moduleResolution` `nodenext`, no
 *   `skipLibCheck`) type-checks every TypeScript block of the README as printed (each
 *   block its own module, nothing declared for it), every entry of `exports`, every
 *   TypeScript block of the JSDoc in `src/` (fragments: a shared prelude declares the
 *   names they use), real `openai` chat completion chunks into `fromTokens`, and a
 *   CommonJS file that `require`s the package;
 * - every README block marked ```` ```ts runnable ```` runs as pasted (transpiled only)
 *   with Node in the consumer, against the emulator, and writes the WAV files it names;
 * - Node loads every entry both with `import` and with `require` (require(esm), Node
 *   20.19+);
 * - every source map in the tarball points at sources the tarball ships;
 * - without the optional peers bullmq and ioredis (the consumer has neither), all of the
 *   above holds for `rxvoice/batch` too, and Node runs `batch()` against the packed
 *   emulator, while the queue errors with a `QueueUnavailableError` naming bullmq;
 * - the entries for frameworks (`FRAMEWORKS`: `rxvoice/livekit`, `rxvoice/ai-sdk`): their
 *   types compile in that consumer, which lacks the framework (its types too), and loading
 *   them fails with an error naming the framework (`rxvoice/ai-sdk` loads, and its first
 *   call fails so); a second strict consumer, with the frameworks (and LangChain) linked,
 *   type-checks code that hands them to the framework and the README and JSDoc blocks
 *   that import it (as printed, nothing declared), and Node loads them with import and
 *   require.
 *
 * The entries and the blocks are read in helpers.ts; blocks.test.ts checks, without a
 * build, that blocks are found and that the README's Entry points table names their imports.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync, cpSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAi } from '../../examples/lib/fake-openai.js';
import { startEmulator } from '../../src/emulator/index.js';
import { requireTool } from '../setup/tools.js';
import {
  ENTRIES,
  FRAMEWORK_ENTRIES,
  FRAMEWORK_PEERS,
  FRAMEWORKS,
  PLAIN_ENTRIES,
  ROOT,
  jsdocBlocks,
  needsFramework,
  pkg,
  readmeBlocks,
  type Block,
} from './helpers.js';

const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

const work = mkdtempSync(join(tmpdir(), 'rxvoice-package-'));
const consumer = join(work, 'consumer');
const installed = join(consumer, 'node_modules', pkg.name);
afterAll(() => rmSync(work, { recursive: true, force: true }));

/**
 * Names the fragments in the README and JSDoc may use without defining them: a script (no
 * import or export), so its declarations are global and a block's own declarations and
 * imports shadow them. Every value export of every entry (the first entry naming it), the
 * rxjs functions the blocks use, and a few variables.
 */
function prelude(blocks: readonly Block[]): string {
  const script = `
    (async () => {
      const out = {};
      for (const e of ${JSON.stringify([...PLAIN_ENTRIES, 'rxjs'])}) out[e] = Object.keys(await import(e));
      process.stdout.write(JSON.stringify(out));
    })();
  `;
  const keys = JSON.parse(execFileSync(process.execPath, ['-e', script], { cwd: consumer, encoding: 'utf8' })) as Record<string, string[]>;
  const used = new Set(blocks.flatMap((b) => b.code.match(/[A-Za-z_$][\w$]*/g) ?? []));
  const declared = new Map<string, string>();
  for (const [entry, names] of Object.entries(keys)) {
    for (const name of names) {
      if (declared.has(name) || name === 'default') continue;
      if (entry === 'rxjs' && !used.has(name)) continue;
      declared.set(name, `declare const ${name}: typeof import('${entry}').${name};`);
    }
  }
  return [
    ...declared.values(),
    "declare const client: import('rxvoice').RxVoiceClient;",
    "declare const apiKey: string;",
    "declare const baseUrl: string;",
    "declare const wsUrl: string;",
    "declare const runId: number;",
    "declare const connection: import('rxvoice/live').LiveConnection;",
    "declare const userStartedTalking$: import('rxjs').Observable<unknown>;",
    "declare const player: { enqueue(audio: Uint8Array): void };",
    "declare function play(audio: Uint8Array): void;",
    "declare function onUserSpeaks(handler: () => void): void;",
    "declare const text: string;",
    "declare const text$: import('rxjs').Observable<string>;",
    "declare const tokens$: import('rxjs').Observable<string>;",
    "declare const segments$: import('rxjs').Observable<import('rxvoice/live').SpokenSegment>;",
    "declare const openai: import('openai').OpenAI;",
    "declare const model: string;",
    "declare const messages: import('openai/resources/chat/completions').ChatCompletionMessageParam[];",
  ].join('\n');
}

/** Compiler options of the strict consumer. */
const STRICT = { strict: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', noEmit: true, skipLibCheck: false };

/**
 * Writes each block as a module of its own (its names shadow any prelude's; top-level
 * await allowed) into `dir`, runs tsc on the project whose tsconfig.json is `dir`'s or its
 * parent's, checks that every block and each of `alsoChecked` (names in `dir`) was part of
 * the program, and returns the diagnostics, each failing block named by where it is written.
 * Diagnostics inside the declaration files of `theirs` (packages) are left out.
 */
function typeCheck(dir: string, blocks: readonly Block[], alsoChecked: readonly string[], packageDir = installed, theirs: readonly string[] = []): string {
  const names = blocks.map((b, i) => {
    const name = `block-${String(i).padStart(3, '0')}.ts`;
    writeFileSync(join(dir, name), `${b.code}\nexport {};\n`);
    return name;
  });
  const project = existsSync(join(dir, 'tsconfig.json')) ? dir : dirname(dir);
  let output = '';
  try {
    output = execFileSync(process.execPath, [TSC, '-p', project, '--listFiles'], { cwd: project, encoding: 'utf8', stdio: 'pipe' });
  } catch (error) {
    output = String((error as { stdout?: string }).stdout ?? error);
  }
  // --listFiles: the files checked, one absolute path a line; the rest are diagnostics
  const checked = output.split('\n').filter((line) => line.startsWith('/'));
  for (const name of [...names, ...alsoChecked]) expect(checked, name).toContain(join(dir, name));
  expect(checked).toContain(join(packageDir, 'dist', 'index.d.ts'));
  return output
    .split(/\n(?=\S)/)
    .filter((d) => !d.startsWith('/') && d.trim() !== '' && !theirs.some((name) => d.includes(`node_modules/${name}/`)))
    .join('\n')
    .replace(/(?:[\w-]+\/)?(block-\d+\.ts)\((\d+),(\d+)\)/g, (_, file: string, line: string) => {
      const b = blocks[names.indexOf(file)]!;
      const [origin, start] = b.origin.split(/:(?=\d+$)/) as [string, string];
      return `${origin} (block line ${line}, near line ${Number(start) + Number(line)})`;
    });
}

/** Runs a Node script; resolves with its exit code (or `'timeout'`, after killing it) and stderr. */
function runNode(file: string, cwd: string, env: NodeJS.ProcessEnv, timeoutMs: number): Promise<{ code: number | string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [file], { cwd, env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? (signal === 'SIGKILL' ? 'timeout' : String(signal)), stderr });
    });
  });
}

/** Uses of the package that must compile, and two that must not (the checker really checks). */
const SMOKE = `
import { from, lastValueFrom } from 'rxjs';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { fromTokens, type ChatCompletionChunkLike, type MessageChunkLike } from 'rxvoice/sources';
import { createClient } from 'rxvoice';
${ENTRIES.map((e, i) => `import * as entry${i} from '${e}';`).join('\n')}
export const entries = [${ENTRIES.map((_, i) => `entry${i}`).join(', ')}];

// real chunks of the openai package: role announcement, content, finish_reason
declare const stream: AsyncIterable<ChatCompletionChunk>;
export const text$ = fromTokens(stream);
async function* fake(): AsyncGenerator<ChatCompletionChunkLike> {
  yield { id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] };
  yield { choices: [{ index: 0, delta: { content: 'Hello.' }, finish_reason: null }] };
  yield { choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] };
}
export const fake$ = fromTokens(fake());
export const done = lastValueFrom(fake$);
const real: ChatCompletionChunk = { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [] };
export const items = from([real]);

// @ts-expect-error createClient takes an options object, not a number
createClient(42);
// @ts-expect-error fromTokens takes a stream, not a number
fromTokens(7);
// LangChain message chunks, by their shape (no LangChain here)
declare const messageChunks: AsyncIterable<MessageChunkLike>;
export const langchain$ = fromTokens(messageChunks);
// @ts-expect-error the optional peer bullmq is not installed here (rxvoice/batch compiles without it)
import type { Queue } from 'bullmq';
export type Q = Queue;
`;

const CJS = `
import root = require('rxvoice');
import operators = require('rxvoice/operators');
export const create: typeof root.createClient = root.createClient;
export const parse: typeof operators.parseSse = operators.parseSse;
// @ts-expect-error createClient takes an options object, not a number
root.createClient(42);
`;

let peersConsumer: { dir: string; copied: string } | undefined;

/**
 * A second consumer: a copy of the unpacked package (Node resolves a package's imports
 * from where it really is), the same dependencies, and the frameworks (made once).
 */
function consumerWithPeers(): { dir: string; copied: string } {
  if (peersConsumer) return peersConsumer;
  const withPeers = join(work, 'consumer-frameworks');
  const copied = join(withPeers, 'node_modules', pkg.name);
  mkdirSync(join(withPeers, 'src'), { recursive: true });
  for (const name of readdirSync(join(consumer, 'node_modules'))) {
    const names = name.startsWith('@') ? readdirSync(join(consumer, 'node_modules', name)).map((n) => `${name}/${n}`) : [name];
    for (const n of names) {
      mkdirSync(dirname(join(withPeers, 'node_modules', n)), { recursive: true });
      if (n === pkg.name) cpSync(installed, copied, { recursive: true });
      else symlinkSync(join(consumer, 'node_modules', n), join(withPeers, 'node_modules', n), 'dir');
    }
  }
  for (const peer of FRAMEWORK_PEERS) {
    mkdirSync(dirname(join(withPeers, 'node_modules', peer)), { recursive: true });
    symlinkSync(join(ROOT, 'node_modules', peer), join(withPeers, 'node_modules', peer), 'dir');
  }
  writeFileSync(join(withPeers, 'package.json'), JSON.stringify({ name: 'consumer-frameworks', private: true, type: 'module' }));
  writeFileSync(join(withPeers, 'tsconfig.json'), JSON.stringify({ compilerOptions: STRICT, include: ['src'] }));

  peersConsumer = { dir: withPeers, copied };
  return peersConsumer;
}

let pack: { files: string[]; tarball: string };

beforeAll(() => {
  // build into a copy of the package directory, as `npm publish` would see it
  const staged = join(work, 'package');
  mkdirSync(staged);
  for (const name of ['package.json', 'README.md', 'LICENSE', 'tsconfig.json', 'tsconfig.build.json']) {
    if (existsSync(join(ROOT, name))) cpSync(join(ROOT, name), join(staged, name));
  }
  for (const name of pkg.files.filter((f) => f !== 'dist')) cpSync(join(ROOT, name), join(staged, name), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules'), join(staged, 'node_modules'), 'dir');
  execFileSync(process.execPath, [TSC, '-p', join(staged, 'tsconfig.build.json')], { cwd: staged, stdio: 'pipe' });
  // the rest of `npm run build`: the ready browser build (dist/browser/rxvoice.js)
  execFileSync(process.execPath, [join(ROOT, 'scripts', 'build-browser.mjs'), staged], { cwd: staged, stdio: 'pipe' });
  const out = execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', work], { cwd: staged, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const info = (JSON.parse(out) as Array<{ filename: string; files: Array<{ path: string }> }>)[0]!;
  pack = { tarball: join(work, info.filename), files: info.files.map((f) => f.path) };

  // the consumer: the tarball unpacked as npm installs it, dependencies linked from ours
  mkdirSync(installed, { recursive: true });
  execFileSync('tar', ['-xzf', pack.tarball, '-C', installed, '--strip-components=1']);
  const link = (name: string): void => {
    const target = join(consumer, 'node_modules', name);
    mkdirSync(dirname(target), { recursive: true });
    if (!existsSync(target)) symlinkSync(join(ROOT, 'node_modules', name), target, 'dir');
  };
  // the package's dependencies and what a strict Node consumer of openai has itself; no
  // optional peer (bullmq, ioredis, espeak-ng, the mp3 encoder)
  for (const name of [...Object.keys(pkg.dependencies), '@types/node', 'openai']) link(name);
  for (const name of Object.keys(pkg.dependencies)) {
    const deps = (JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> }).dependencies ?? {};
    for (const dep of Object.keys(deps)) link(dep);
  }
  writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  writeFileSync(
    join(consumer, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: STRICT, include: ['src'] }),
  );
  mkdirSync(join(consumer, 'src'));
  writeFileSync(join(consumer, 'src', 'smoke.ts'), SMOKE);
  writeFileSync(join(consumer, 'src', 'cjs.cts'), CJS);
}, 240_000);

describe('the packed package in a strict consumer', () => {
  it('npm pack and npm publish build dist/ first (dist/ is not in git: a pack from a clean checkout would ship no code)', () => {
    const scripts = (pkg as unknown as { scripts: Record<string, string> }).scripts;
    expect(scripts['prepack']).toBe('npm run build');
    expect(readFileSync(join(ROOT, '.gitignore'), 'utf8')).toMatch(/^dist\/$/m); // control: why it is needed
    expect(pack.files.some((f) => f.startsWith('dist/'))).toBe(true);
  });

  it('type-checks every README TypeScript block as printed: each its own module, nothing declared for it', { timeout: 240_000 }, () => {
    // a project of their own, next to src/ (the prelude's global declarations are not in it)
    const dir = join(consumer, 'readme');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: STRICT, include: ['*.ts'] }));
    // control: a name the JSDoc prelude declares is unknown here (the directive fails if it is not)
    writeFileSync(join(dir, 'control.ts'), '// @ts-expect-error no prelude: `openai` is declared nowhere\nexport const o = openai;\n');
    expect(typeCheck(dir, readmeBlocks().filter((b) => !needsFramework(b)), ['control.ts'])).toBe('');
  });

  it('type-checks every entry in a Node project without the DOM library (lib es2022, types node)', { timeout: 240_000 }, () => {
    const dir = join(consumer, 'nodom');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { ...STRICT, lib: ['es2022'], types: ['node'] }, include: ['*.ts'] }));
    // control: a DOM name is unknown in this project (the directive fails if it is not)
    writeFileSync(join(dir, 'control.ts'), '// @ts-expect-error no DOM library\nexport type D = HTMLElement;\n');
    const blocks: Block[] = PLAIN_ENTRIES.map((entry, i) => ({ origin: entry, runnable: false, code: `import * as entry${i} from '${entry}';\nexport const e${i} = entry${i};` }));
    expect(typeCheck(dir, blocks, ['control.ts'])).toBe('');
  });

  it('type-checks: every entry (framework entries without their framework), every JSDoc TypeScript block, openai chunks, CommonJS require', { timeout: 240_000 }, () => {
    // JSDoc examples are fragments: the prelude declares the names they use
    const blocks = jsdocBlocks().filter((b) => !needsFramework(b));
    writeFileSync(join(consumer, 'src', 'prelude.d.ts'), prelude(blocks));
    const frameworks = Object.values(FRAMEWORKS).map((f, i) => {
      writeFileSync(join(consumer, 'src', `framework-${i}.ts`), f.withoutPeer);
      return `framework-${i}.ts`;
    });
    expect(typeCheck(join(consumer, 'src'), blocks, ['smoke.ts', 'cjs.cts', ...frameworks])).toBe('');
  });

  it('runs every README block marked runnable, as pasted, against the emulator', { timeout: 300_000 }, async () => {
    // The blocks run in the consumer (the packed package, no optional peer: the Quick start's
    // own emulator speaks tones), each in a fresh directory for the files it writes. Blocks
    // that use createClient() find an emulator (tone synth) in CAMB_*; the openai block a
    // tiny OpenAI-compatible server in OPENAI_BASE_URL.
    const dir = join(consumer, 'readme');
    mkdirSync(dir, { recursive: true });
    const emulator = await startEmulator({ synth: 'tone', taskDurationMs: 5 });
    const llm = await startFakeOpenAi({ answer: 'The **Moon** is bright. It has no air!', pace: { delayMs: [1, 3] } });
    const env: NodeJS.ProcessEnv = {
      ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(RXVOICE|OPENAI|CAMB)_/.test(name))),
      // the variables the README names
      CAMB_API_KEY: emulator.apiKey,
      CAMB_BASE_URL: emulator.baseUrl,
      OPENAI_BASE_URL: llm.baseURL,
      OPENAI_API_KEY: 'sk-fake',
    };
    const outcomes: Array<{ origin: string; code: number | string; stderr: string; files: Record<string, string> }> = [];
    try {
      for (const [i, block] of readmeBlocks().filter((b) => b.runnable).entries()) {
        // a block that imports a framework runs where the framework is installed
        const file = join(needsFramework(block) ? consumerWithPeers().dir : dir, `run-${i}.mjs`);
        writeFileSync(file, ts.transpileModule(block.code, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText);
        const cwd = mkdtempSync(join(work, 'run-'));
        const { code, stderr } = await runNode(file, cwd, env, 60_000);
        // every WAV the block names is written, whole
        const files: Record<string, string> = {};
        for (const [, name] of block.code.matchAll(/'([\w.-]+\.wav)'/g)) {
          const path = join(cwd, name as string);
          const bytes = existsSync(path) ? readFileSync(path) : undefined;
          files[name as string] = !bytes ? 'missing' : bytes.length > 44 && bytes.subarray(0, 4).toString('latin1') === 'RIFF' && bytes.readUInt32LE(4) === bytes.length - 8 ? 'wav' : 'broken';
        }
        outcomes.push({ origin: block.origin, code, stderr: code === 0 ? '' : stderr, files });
      }
    } finally {
      await Promise.all([emulator.close(), llm.close()]);
    }
    expect(outcomes.length).toBeGreaterThan(3);
    // each failing block, with its exit code, stderr and files
    expect(outcomes.filter((o) => o.code !== 0 || Object.values(o.files).some((state) => state !== 'wav'))).toEqual([]);
    // the Quick start and the chat-bot pipeline both wrote their WAV
    expect(outcomes.flatMap((o) => Object.keys(o.files))).toEqual(expect.arrayContaining(['hello.wav', 'answer.wav']));
    // the chat-bot pipeline really asked the OpenAI-compatible server
    expect(llm.requests).toBe(1);
  });

  it('Node loads every entry with import and with require (framework entries: below)', () => {
    const script = `
      const { createRequire } = require('node:module');
      const entries = ${JSON.stringify(PLAIN_ENTRIES)};
      (async () => {
        const out = {};
        for (const e of entries) {
          const required = require(e);
          const imported = await import(e);
          out[e] = { required: Object.keys(required).length, same: Object.keys(required).every((k) => required[k] === imported[k]) };
        }
        process.stdout.write(JSON.stringify({ out, createClient: typeof require('rxvoice').createClient }));
      })().catch((e) => { console.error(e); process.exit(1); });
    `;
    writeFileSync(join(consumer, 'load.cjs'), script);
    const result = JSON.parse(execFileSync(process.execPath, [join(consumer, 'load.cjs')], { cwd: consumer, encoding: 'utf8' })) as {
      out: Record<string, { required: number; same: boolean }>;
      createClient: string;
    };
    expect(result.createClient).toBe('function');
    for (const e of PLAIN_ENTRIES) {
      expect(result.out[e]?.required, e).toBeGreaterThan(0);
      expect(result.out[e]?.same, e).toBe(true);
    }
  });

  it('rxvoice/batch without bullmq and ioredis: batch() runs against the emulator, the queue names the missing package', { timeout: 60_000 }, () => {
    // ES module in the consumer, the packed package only; the emulator with its tone voice
    // (espeak-ng, an optional peer too, is not installed here either)
    const script = `
      import { readFileSync } from 'node:fs';
      import { lastValueFrom, toArray } from 'rxjs';
      import { createClient } from 'rxvoice';
      import { batch, enqueueBatch, runWorker, validateJobs, QueueUnavailableError } from 'rxvoice/batch';
      import { startEmulator } from 'rxvoice/emulator';

      const outcome = {};
      outcome.bullmqResolves = await import('bullmq').then(() => true, () => false);
      const emulator = await startEmulator({ synth: 'tone', taskDurationMs: 5 });
      try {
        const client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.baseUrl });
        const jobs = validateJobs([
          { kind: 'translation', id: 'hello-de', request: { texts: ['Hello.'], source_language: 'en-us', target_language: 'de-de' } },
          { kind: 'sound', id: 'rain', request: { prompt: 'rain on a tin roof' } },
        ]);
        const events = await lastValueFrom(batch(jobs, { client, out: process.argv[2] }).pipe(toArray()));
        outcome.done = events.filter((e) => e.type === 'done').map((e) => e.id).sort();
        outcome.translated = JSON.parse(readFileSync(events.find((e) => e.type === 'done' && e.id === 'hello-de').output, 'utf8'));
        outcome.wavHeader = readFileSync(events.find((e) => e.type === 'done' && e.id === 'rain').output).subarray(0, 4).toString('latin1');
        // the queue: its error names the package, before any Redis is asked (none runs at port 1)
        outcome.queue = [];
        for (const queue$ of [enqueueBatch(jobs, { queue: 'redis://127.0.0.1:1' }), runWorker({ queue: 'redis://127.0.0.1:1', client, out: process.argv[2] })]) {
          const error = await lastValueFrom(queue$).then(() => undefined, (e) => e);
          outcome.queue.push({ unavailable: error instanceof QueueUnavailableError, name: error?.name, code: error?.code, packageName: error?.packageName, message: error?.message });
        }
      } finally {
        await emulator.close();
      }
      process.stdout.write(JSON.stringify(outcome));
    `;
    writeFileSync(join(consumer, 'batch.mjs'), script);
    const out = join(work, 'batch-out');
    const outcome = JSON.parse(execFileSync(process.execPath, [join(consumer, 'batch.mjs'), out], { cwd: consumer, encoding: 'utf8' })) as {
      bullmqResolves: boolean;
      done: string[];
      translated: unknown;
      wavHeader: string;
      queue: Array<{ unavailable: boolean; name: string; code: string; packageName: string; message: string }>;
    };
    // control: bullmq really is absent from this consumer
    expect(outcome.bullmqResolves).toBe(false);
    expect(outcome.done).toEqual(['hello-de', 'rain']);
    expect(JSON.stringify(outcome.translated)).toContain('[de-de]');
    expect(outcome.wavHeader).toBe('RIFF');
    expect(outcome.queue).toHaveLength(2);
    for (const error of outcome.queue) {
      expect(error).toMatchObject({ unavailable: true, name: 'QueueUnavailableError', code: 'queue', packageName: 'bullmq' });
      expect(error.message).toContain('npm install bullmq');
    }
  });

  it('a fresh install speaks: npx rxvoice speak without espeak-ng exits 0 with one warning and a WAV; startEmulator() runs a pipeline; with espeak-ng, speech', { timeout: 180_000 }, () => {
    // what npm does for the package's bin on install
    const bin = join(consumer, 'node_modules', '.bin');
    mkdirSync(bin, { recursive: true });
    if (!existsSync(join(bin, 'rxvoice'))) symlinkSync(join('..', pkg.name, 'bin', 'rxvoice.js'), join(bin, 'rxvoice'));
    chmodSync(join(installed, 'bin', 'rxvoice.js'), 0o755);
    // a user's shell: no service configured, the built package (not the tests' source mode)
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const name of ['RXVOICE_API_KEY', 'RXVOICE_BASE_URL', 'RXVOICE_FROM_SOURCE', 'RXVOICE_EMULATOR_SYNTH']) delete env[name];
    const speak = (out: string) =>
      spawnSync('npx', ['--no', 'rxvoice', 'speak', 'Hello there.', '-o', out], { cwd: consumer, env, encoding: 'utf8', timeout: 120_000 });
    const espeakResolves = (): boolean =>
      spawnSync(process.execPath, ['--input-type=module', '-e', "await import('espeak-ng')"], { cwd: consumer, env }).status === 0;

    // control: espeak-ng really is absent from this consumer
    expect(espeakResolves()).toBe(false);
    const wav = join(work, 'fresh.wav');
    const run = speak(wav);
    expect(run.status, run.stderr).toBe(0);
    const warnings = run.stderr.split('\n').filter((line) => line.includes('espeak-ng'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/npm install espeak-ng/);
    expect(run.stderr).toMatch(/embedded emulator .*\(synth tone\)/);
    const bytes = readFileSync(wav);
    expect(bytes.subarray(0, 4).toString('latin1')).toBe('RIFF');
    expect(bytes.subarray(8, 12).toString('latin1')).toBe('WAVE');
    expect(bytes.byteLength).toBeGreaterThan(44 + 1000);

    // the library the same way: startEmulator() with no options, a live pipeline on it
    const script = `
      import { lastValueFrom, of, toArray } from 'rxjs';
      import { createClient } from 'rxvoice';
      import { concatSegments } from 'rxvoice/operators';
      import { startEmulator } from 'rxvoice/emulator';
      const warnings = [];
      const emulator = await startEmulator({ warn: (line) => warnings.push(line) });
      try {
        const client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.baseUrl });
        const segments = await lastValueFrom(of('Hello there. ', 'How are you?').pipe(client.speak({ voice_id: 1 }), concatSegments(), toArray()));
        await client.close();
        process.stdout.write(JSON.stringify({ synth: emulator.synth, warnings, segments: segments.map((s) => ({ text: s.text, bytes: s.audio.byteLength })) }));
      } finally {
        await emulator.close();
      }
    `;
    writeFileSync(join(consumer, 'fresh.mjs'), script);
    const pipeline = JSON.parse(execFileSync(process.execPath, [join(consumer, 'fresh.mjs')], { cwd: consumer, env, encoding: 'utf8' })) as {
      synth: string;
      warnings: string[];
      segments: Array<{ text: string; bytes: number }>;
    };
    expect(pipeline.synth).toBe('tone');
    expect(pipeline.warnings).toHaveLength(1);
    expect(pipeline.segments.map((s) => s.text)).toEqual(['Hello there.', ' How are you?']);
    for (const segment of pipeline.segments) expect(segment.bytes).toBeGreaterThan(44);

    // with espeak-ng added (as `npm install espeak-ng` would): speech, no warning
    const espeak = join(consumer, 'node_modules', 'espeak-ng');
    symlinkSync(join(ROOT, 'node_modules', 'espeak-ng'), espeak, 'dir');
    try {
      expect(espeakResolves()).toBe(true);
      const spoken = speak(join(work, 'speech.wav'));
      expect(spoken.status, spoken.stderr).toBe(0);
      expect(spoken.stderr).toMatch(/embedded emulator .*\(synth espeak\)/);
      expect(spoken.stderr).not.toMatch(/npm install espeak-ng/);
      // spoken by espeak in a worker thread loaded from the packed dist/
      const speech = readFileSync(join(work, 'speech.wav'));
      expect(speech.subarray(0, 4).toString('latin1')).toBe('RIFF');
      expect(speech.byteLength).toBeGreaterThan(44 + 22050 * 2 * 0.3);
    } finally {
      rmSync(espeak);
    }
  });

  it('framework entries without their framework: loading them (rxvoice/ai-sdk: its first call) fails with an error naming it', () => {
    const firstCalls = Object.fromEntries(Object.entries(FRAMEWORKS).flatMap(([e, f]) => (f.firstCall ? [[e, f.firstCall]] : [])));
    const script = `
      (async () => {
        const out = {};
        const firstCalls = ${JSON.stringify(firstCalls)};
        for (const e of ${JSON.stringify(FRAMEWORK_ENTRIES)}) {
          let module;
          const imported = await import(e).then((m) => ((module = m), 'loaded'), (error) => error.message);
          let required = 'loaded';
          try { require(e); } catch (error) { required = error.message; }
          out[e] = { imported, required };
          if (firstCalls[e] && module) out[e].firstCall = await new Function('m', 'return ' + firstCalls[e])(module).then(() => 'resolved', (error) => error.message);
        }
        // control: the peers really are absent from this consumer
        out.peers = {};
        for (const p of ${JSON.stringify(FRAMEWORK_PEERS)}) out.peers[p] = await import(p).then(() => true, () => false);
        process.stdout.write(JSON.stringify(out));
      })().catch((e) => { console.error(e); process.exit(1); });
    `;
    writeFileSync(join(consumer, 'frameworks.cjs'), script);
    const out = JSON.parse(execFileSync(process.execPath, [join(consumer, 'frameworks.cjs')], { cwd: consumer, encoding: 'utf8' })) as Record<string, unknown> & {
      peers: Record<string, boolean>;
    };
    for (const peer of FRAMEWORK_PEERS) expect(out.peers[peer], peer).toBe(false);
    for (const [entry, { peers, firstCall }] of Object.entries(FRAMEWORKS)) {
      const { imported, required, firstCall: first } = out[entry] as { imported: string; required: string; firstCall?: string };
      if (firstCall === undefined) {
        expect(imported, entry).toContain(`'${peers[0]}'`);
        expect(required, entry).toContain(`'${peers[0]}'`);
      } else {
        // nothing of the framework is loaded on import: the entry loads without it
        expect([imported, required], entry).toEqual(['loaded', 'loaded']);
        expect(first, entry).toContain(`npm install ai ${peers[0]}`);
      }
    }
  });

  it('framework entries with their framework: strict types (and the README and JSDoc blocks that import it, as printed), import and require', { timeout: 240_000 }, () => {
    const { dir: withPeers, copied } = consumerWithPeers();
    const blocks = [...readmeBlocks(), ...jsdocBlocks()].filter(needsFramework);
    expect(blocks.length).toBeGreaterThan(0);
    const frameworks = Object.values(FRAMEWORKS).map((f, i) => {
      writeFileSync(join(withPeers, 'src', `framework-${i}.ts`), f.withPeer);
      return `framework-${i}.ts`;
    });
    // the frameworks' own declaration files are theirs (@livekit/agents 1.9 names the types
    // of json-schema, which it does not depend on): not checked here
    expect(typeCheck(join(withPeers, 'src'), blocks, frameworks, copied, FRAMEWORK_PEERS)).toBe('');

    const script = `
      (async () => {
        const out = {};
        for (const e of ${JSON.stringify(FRAMEWORK_ENTRIES)}) {
          const imported = await import(e);
          const required = require(e);
          out[e] = { names: Object.keys(imported), same: Object.keys(imported).every((k) => imported[k] === required[k]) };
        }
        process.stdout.write(JSON.stringify(out));
      })().catch((e) => { console.error(e); process.exit(1); });
    `;
    writeFileSync(join(withPeers, 'frameworks.cjs'), script);
    const out = JSON.parse(execFileSync(process.execPath, [join(withPeers, 'frameworks.cjs')], { cwd: withPeers, encoding: 'utf8' })) as Record<
      string,
      { names: string[]; same: boolean }
    >;
    expect(out['rxvoice/livekit']?.names).toContain('TTS');
    expect(out['rxvoice/ai-sdk']?.names).toEqual(expect.arrayContaining(['camb', 'createCamb']));
    for (const e of FRAMEWORK_ENTRIES) expect(out[e]?.same, e).toBe(true);
  });

  it('every entry of exports has types, import and require conditions pointing into dist/', () => {
    for (const [key, conditions] of Object.entries(pkg.exports)) {
      expect(Object.keys(conditions), key).toEqual(expect.arrayContaining(['types', 'import', 'require']));
      for (const target of Object.values(conditions)) {
        expect(target).toMatch(/^\.\/dist\//);
        expect(pack.files, `${key}: ${target}`).toContain(target.slice(2));
      }
    }
  });

  it('source maps point at sources the package ships', () => {
    const maps = pack.files.filter((f) => f.endsWith('.map'));
    expect(maps.length).toBeGreaterThan(10);
    const missing: string[] = [];
    for (const map of maps) {
      const { sources } = JSON.parse(readFileSync(join(installed, map), 'utf8')) as { sources: string[] };
      for (const source of sources) {
        const path = relative(installed, resolve(dirname(join(installed, map)), source));
        if (!pack.files.includes(path)) missing.push(`${map} -> ${path}`);
      }
    }
    expect(missing).toEqual([]);
  });
});

/** The README's relay guide as printed, run from the consumer of the tarball against `emulator`: its address and its process. */
async function startRelayGuide(emulator: { apiKey: string; baseUrl: string }): Promise<{ address: string; stop: () => void }> {
  const block = readmeBlocks().find((b) => b.origin.startsWith('README.md') && b.code.includes('attachLiveRelay(server'));
  if (!block) throw new Error('the README has no relay guide');
  const file = join(consumer, 'relay-guide.mjs');
  writeFileSync(file, ts.transpileModule(block.code, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText);
  const env: NodeJS.ProcessEnv = {
    ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(RXVOICE|OPENAI|CAMB)_/.test(name))),
    CAMB_API_KEY: emulator.apiKey,
    CAMB_BASE_URL: emulator.baseUrl,
    PORT: '0',
  };
  const server = spawn(process.execPath, [file], { cwd: consumer, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  server.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const stop = (): void => void server.kill('SIGKILL');
  // the guide prints its address first
  const address = await new Promise<string>((resolvePage, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`the guide's server printed no address in 20 s: ${stderr}`)), 20_000);
    server.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      const match = /http:\/\/localhost:\d+\//.exec(out);
      if (match) {
        clearTimeout(timer);
        resolvePage(match[0]);
      }
    });
    server.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the guide's server exited (${code}): ${stderr}`));
    });
  }).catch((error: unknown) => {
    stop();
    throw error;
  });
  return { address, stop };
}

describe('the relay guide, as printed', () => {
  const CHROMIUM = requireTool('chromium', "the README's relay guide in headless Chromium (test/project/package.test.ts)");

  it('serves its page and the ready browser build, whose speak() speaks through the relay with the page origin (Node)', { timeout: 120_000 }, async () => {
    expect(pack.files).toContain('dist/browser/rxvoice.js');
    const emulator = await startEmulator({ synth: 'tone' });
    const guide = await startRelayGuide(emulator);
    try {
      const page = await (await fetch(guide.address)).text();
      expect(page).toContain("from '/rxvoice.js'");
      const moduleAnswer = await fetch(`${guide.address}rxvoice.js`);
      expect(moduleAnswer.headers.get('content-type')).toBe('text/javascript');
      const moduleFile = join(consumer, 'served-rxvoice.mjs');
      writeFileSync(moduleFile, await moduleAnswer.text());
      // the module the page loads, run in Node: its speak() through the guide's relay, with
      // the page's Origin (what a browser sends) and no key
      const script = `
        import { WebSocket as Ws } from 'ws';
        import { of, speak } from ${JSON.stringify(pathToFileURL(moduleFile).href)};
        class PageSocket extends Ws { constructor(url) { super(url, { headers: { origin: ${JSON.stringify(guide.address.replace(/\/$/, ''))} } }); } }
        const events = [];
        of('Hello from the browser.')
          .pipe(speak({ wsUrl: ${JSON.stringify(`${guide.address.replace('http', 'ws')}speech`)}, WebSocket: PageSocket }, { voice_id: 1, word_timestamps: true }))
          .subscribe({
            next: (event) => events.push(event),
            error: (error) => { console.error(error.message); process.exit(1); },
            complete: () => {
              const words = events.filter((e) => e.type === 'segmentStart').flatMap((e) => (e.word_timestamps ?? []).map((w) => w.word));
              console.log(JSON.stringify({ words, audio: events.filter((e) => e.type === 'audio').length }));
            },
          });
      `;
      const runner = join(consumer, 'served-run.mjs');
      writeFileSync(runner, script);
      // not spawnSync: the emulator runs in this process and must keep answering
      const run = await new Promise<{ stdout: string; stderr: string }>((resolveRun) => {
        const child = spawn(process.execPath, [runner], { cwd: consumer, stdio: ['ignore', 'pipe', 'pipe'] });
        let stdout = '';
        let stderr = '';
        child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
        child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
        const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
        child.on('close', () => {
          clearTimeout(timer);
          resolveRun({ stdout, stderr });
        });
      });
      expect(run.stderr).toBe('');
      const result = JSON.parse(run.stdout.trim()) as { words: string[]; audio: number };
      expect(result.words.join(' ').replace(/[.]/g, '')).toBe('Hello from the browser');
      expect(result.audio).toBeGreaterThan(0);
    } finally {
      guide.stop();
      await emulator.close();
    }
  });

  it.skipIf(!CHROMIUM)('in Chromium: the page speaks through the relay and hears the words', { timeout: 120_000 }, async () => {
    const emulator = await startEmulator({ synth: 'tone' });
    const guide = await startRelayGuide(emulator);
    const { chromium } = await import('playwright-core');
    const browser = await chromium.launch({
      executablePath: CHROMIUM!,
      timeout: 20_000,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--autoplay-policy=no-user-gesture-required'],
    });
    try {
      const page = await browser.newPage();
      const heard: string[] = [];
      const errors: string[] = [];
      page.on('console', (message) => {
        const text = message.text();
        if (text.startsWith('heard ')) heard.push(text.slice('heard '.length));
        else if (message.type() === 'error') errors.push(text);
      });
      page.on('pageerror', (error) => errors.push(error.message));
      await page.goto(guide.address);
      await page.click('#say');
      const deadline = Date.now() + 60_000;
      while (heard.length < 4 && errors.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      expect(errors).toEqual([]);
      expect(heard.join(' ').replace(/[.]/g, '')).toBe('Hello from the browser');
    } finally {
      await browser.close();
      guide.stop();
      await emulator.close();
    }
  });
});
