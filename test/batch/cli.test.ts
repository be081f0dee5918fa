/**
 * `rxvoice batch`: the jobs file (bad lines by number, --skip-invalid), plain lines,
 * the summary table, --json, exit codes; run in-process against the emulator.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { Readable, Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main, type CliIo } from '../../src/cli/main.js';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';

class Collector extends Writable {
  readonly chunks: string[] = [];
  isTTY = false;
  override _write(chunk: Buffer | string, _encoding: BufferEncoding, callback: () => void): void {
    this.chunks.push(chunk.toString());
    callback();
  }
  text(): string {
    return this.chunks.join('');
  }
}

let emu: Emulator;
let dir: string;
beforeAll(async () => {
  emu = await startEmulator({ synth: 'tone', taskDurationMs: 10, apiKeys: ['rxv-batch-cli-key', 'rxv-batch-poor-key'], credits: { 'rxv-batch-cli-key': 1000, 'rxv-batch-poor-key': 0 } });
  dir = await mkdtemp(join(tmpdir(), 'rxvoice-batch-cli-'));
});
afterAll(async () => {
  await emu?.close();
  await rm(dir, { recursive: true, force: true });
});

async function cli(argv: string[], key = 'rxv-batch-cli-key'): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdout = new Collector();
  const stderr = new Collector();
  const io: CliIo = { stdout, stderr, stdin: Readable.from([]), env: { RXVOICE_API_KEY: key, RXVOICE_BASE_URL: emu.baseUrl }, cwd: dir };
  const code = await main(argv, io);
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

const job = (id: string, text = `Hello ${id}.`): string =>
  JSON.stringify({ kind: 'translation', id, request: { texts: [text], source_language: 'en-us', target_language: 'es-es' } });
const posts = (): number => emu.requests.filter((r) => r.method === 'POST' && r.path === '/translation').length;

describe('rxvoice batch', () => {
  it('reports a bad line with its number and runs nothing; --skip-invalid runs the rest', async () => {
    await writeFile(join(dir, 'bad.jsonl'), [job('a'), '{"kind":"translation","id":"b"', job('c')].join('\n'));
    const before = posts();
    const refused = await cli(['batch', 'bad.jsonl', '--out', 'bad-out']);
    expect(refused.code).toBe(4);
    expect(refused.stderr).toMatch(/bad\.jsonl:2: not JSON/);
    expect(refused.stderr).toMatch(/nothing was run/);
    expect(posts()).toBe(before);

    const skipped = await cli(['batch', 'bad.jsonl', '--out', 'bad-out', '--skip-invalid']);
    expect(skipped.code, skipped.stderr).toBe(0);
    expect(skipped.stderr).toMatch(/bad\.jsonl:2: .*\(skipped\)/);
    expect(posts()).toBe(before + 2);
    expect(skipped.stdout).toMatch(/^translation\s+2\s+2\s+0\s+0$/m);
    expect(skipped.stderr).toMatch(/^a: done: /m);
  });

  it('resumes with the same command, prints JSON lines with --json, and refuses another jobs file in the same place', async () => {
    await writeFile(join(dir, 'jobs.jsonl'), [job('x'), job('y'), job('z')].join('\n'));
    const first = await cli(['batch', 'jobs.jsonl', '--out', 'out', '--json']);
    expect(first.code, first.stderr).toBe(0);
    const events = first.stdout.trim().split('\n').map((line) => JSON.parse(line) as { type: string; id?: string });
    expect(events.filter((e) => e.type === 'created').map((e) => e.id).sort()).toEqual(['x', 'y', 'z']);
    expect(events.at(-1)).toMatchObject({ type: 'progress', done: 3, total: 3 });
    expect(JSON.parse(await readFile(join(dir, 'out', 'x.json'), 'utf8'))).toHaveProperty('texts');

    const before = posts();
    const again = await cli(['batch', 'jobs.jsonl', '--out', 'out']);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/^total\s+3\s+0\s+3\s+0$/m);
    expect(posts()).toBe(before);

    await writeFile(join(dir, 'other.jsonl'), [job('x', 'Something else.')].join('\n'));
    const other = await cli(['batch', 'other.jsonl', '--out', 'out']);
    expect(other.code).toBe(1);
    expect(other.stderr).toMatch(/JournalError: The journal .* belongs to a different jobs file/);
    expect(posts()).toBe(before);
  });

  it('exits with the code of the failed jobs (5 when credits ran out), never retrying them', async () => {
    await writeFile(join(dir, 'poor.jsonl'), [job('p1'), job('p2')].join('\n'));
    const run = await cli(['batch', 'poor.jsonl', '--out', 'poor-out', '--retries', '3'], 'rxv-batch-poor-key');
    expect(run.code).toBe(5);
    expect(run.stderr).toMatch(/p1: failed: PaymentRequiredError/);
    expect(run.stderr).not.toMatch(/retrying/);
    expect(run.stdout).toMatch(/^total\s+2\s+0\s+0\s+2$/m);
  });

  it('an unreachable Redis: exit 6 with a typed error line, for batch --queue and worker alike', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    await new Promise((resolve) => server.close(resolve));
    await writeFile(join(dir, 'queued.jsonl'), job('queued'));
    const before = posts();
    const enqueue = await cli(['batch', 'queued.jsonl', '--queue', `redis://127.0.0.1:${port}`, '--connect-timeout-ms', '2000']);
    expect(enqueue.code).toBe(6);
    expect(enqueue.stderr).toMatch(/QueueConnectionError: Redis at 127\.0\.0\.1:\d+ cannot be reached/);
    const worker = await cli(['worker', '--queue', `redis://127.0.0.1:${port}`, '--out', 'w', '--connect-timeout-ms', '2000']);
    expect(worker.code).toBe(6);
    expect(worker.stderr).toMatch(/QueueConnectionError/);
    expect(posts()).toBe(before);
  });

  it('checks its options: a missing --out is a usage error', async () => {
    await writeFile(join(dir, 'one.jsonl'), job('one'));
    const run = await cli(['batch', 'one.jsonl']);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/missing --out/);
  });
});
