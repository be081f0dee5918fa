/**
 * The benchmark modules load and their harness is sound (never timed: benchmarks are
 * not assertions). One tiny real session per client against the emulator checks that
 * the hand-written peer and the `client.speak` harness both see every sentence in order.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import { createClient } from '../../src/index.js';
import { readFile } from 'node:fs/promises';
import { renderTable } from '../../bench/index.js';
import { README_PATH, RESULTS_PATH, ROOT_README_PATH, renderReadmeSummary, renderReadmeTable, withSummary, withTable } from '../../bench/tools/readme-table.js';
import type { BenchResults } from '../../bench/types.js';
import { realisticMix, simulateOurs, simulatePeer, SERVICE_MS, type MixTask } from '../../bench/polling.js';
import { median, percentile, seeded, sentences } from '../../bench/util.js';
import { oursSession, peerSession, verifyOrder } from '../../bench/sessions.js';

describe('bench modules', () => {
  it('each exports run()', async () => {
    const modules: Record<string, () => Promise<{ run?: unknown }>> = {
      'live-overhead': () => import('../../bench/live-overhead.js'),
      concurrency: () => import('../../bench/concurrency.js'),
      'long-stream': () => import('../../bench/long-stream.js'),
      polling: () => import('../../bench/polling.js'),
      warm: () => import('../../bench/warm.js'),
      batch: () => import('../../bench/batch.js'),
      segmentation: () => import('../../bench/segmentation.js'),
      'golden-rules': () => import('../../bench/golden-rules.js'),
      'boundary-wait': () => import('../../bench/boundary-wait.js'),
      'live-budget': () => import('../../bench/live-budget.js'),
      'sentence-accuracy': () => import('../../bench/sentence-accuracy.js'),
      sse: () => import('../../bench/sse.js'),
      web: () => import('../../bench/web.js'),
      bundle: () => import('../../bench/bundle.js'),
      fairness: () => import('../../bench/fairness.js'),
    };
    for (const [name, load] of Object.entries(modules)) {
      const mod = await load();
      expect(typeof mod.run, name).toBe('function');
    }
  });

  it('statistics helpers', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 2, 3])).toBe(2.5);
    expect(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 90)).toBe(9);
    const a = seeded(1);
    const b = seeded(1);
    expect([a(), a()]).toEqual([b(), b()]);
  });

  it('polling simulation: the fixed loop, the mix, and the client learning as it goes', () => {
    const task = (durationMs: number): MixTask => ({ family: 'translation', size: 100, durationMs });
    // Status at 1000 ms reads the service at 1000 + 1.5 ms: a 1 s task is done.
    expect(simulatePeer(task(1000), 0)).toEqual({ calls: 1, latenessMs: 2 * SERVICE_MS });
    // At 50 ms one way the second call (sent at 2103 ms) reads the service at 2154.5 ms.
    expect(simulatePeer(task(2150), 50)).toEqual({ calls: 2, latenessMs: 2103 + 2 * 103 - 2100 });
    const mix = realisticMix(500, seeded(1));
    expect(Math.min(...mix.map((t) => t.durationMs))).toBeGreaterThanOrEqual(500);
    expect(Math.max(...mix.map((t) => t.durationMs))).toBeLessThanOrEqual(60_000);
    expect(mix.filter((t) => Number.isInteger(t.durationMs / 1000)).length).toBeLessThan(mix.length / 10);
    // The same task over and over: the first once a second (8 calls), after 3 a few calls near the end.
    const same = Array.from({ length: 10 }, () => task(7300));
    const ours = simulateOurs(same, 0, seeded(2));
    expect(ours[0]!.calls).toBe(8);
    expect(ours.at(-1)!.calls).toBeLessThanOrEqual(3);
    expect(ours.at(-1)!.latenessMs).toBeLessThan(ours[0]!.latenessMs);
  });

  it('renders one table with a header', () => {
    const table = renderTable([{ name: 'x', ours: 1, peer: 2, unit: 'ms', ratio: 0.5, note: 'n' }]);
    expect(table.split('\n')[0]).toMatch(/^name +\| +ours \| +peer \| unit \| +ratio \| note$/);
    expect(table).toContain('0.5');
  });
});

describe('SSE bench harness', () => {
  it('every cell of the grid: both parsers see the same event data (the run throws otherwise)', async () => {
    const { run, CHUNK_SIZES } = await import('../../bench/sse.js');
    const rows = await run({ megabytes: 0.02, rounds: 2 });
    expect(rows).toHaveLength(3 * CHUNK_SIZES.length);
    for (const r of rows) expect(r.ours).toBeGreaterThan(0);
  });
});

describe('bench session harness against the emulator', () => {
  let emulator: Emulator;
  beforeAll(async () => {
    emulator = await startEmulator({ synth: 'tone', toneWordSeconds: 0.005 });
  });
  afterAll(async () => {
    await emulator.close();
  });

  it('peer and client.speak both deliver every sentence in order', async () => {
    const client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.baseUrl });
    try {
      const texts = sentences(3, 4);
      for (const mode of ['burst', 'pingpong'] as const) {
        const peer = await peerSession(emulator.wsUrl, emulator.apiKey, texts, mode);
        expect(verifyOrder(peer, texts)).toBeUndefined();
        const ours = await oursSession(client, texts, mode);
        expect(verifyOrder(ours, texts)).toBeUndefined();
        if (mode === 'pingpong') {
          expect(ours.sentenceMs).toHaveLength(3);
          expect(peer.sentenceMs).toHaveLength(3);
        }
      }
      // verifyOrder catches a wrong order
      const peer = await peerSession(emulator.wsUrl, emulator.apiKey, texts, 'burst');
      expect(verifyOrder(peer, [...texts].reverse())).toMatch(/segment 0/);
    } finally {
      await client.close();
    }
  });
});

describe("the README's Benchmarks table", () => {
  it('is what bench/tools/readme-table.ts makes of the committed bench/results.json (a full run)', async () => {
    const results = JSON.parse(await readFile(RESULTS_PATH, 'utf8')) as BenchResults;
    const readme = await readFile(README_PATH, 'utf8');
    expect(results.quick).toBe(false);
    expect(results.only).toBeNull();
    expect(results.machineLine).toMatch(/cores/);
    expect(Number.isNaN(Date.parse(results.date))).toBe(false);
    expect(withTable(readme, renderReadmeTable(results))).toBe(readme);
    // The root README's three-line summary comes from the same run, by the same script.
    const root = await readFile(ROOT_README_PATH, 'utf8');
    expect(root).toContain('<!-- bench-summary:start -->');
    expect(withSummary(root, renderReadmeSummary(results))).toBe(root);
    // control: a hand edit of one figure is caught
    const row = results.rows[0]!;
    const edited = { ...results, rows: [{ ...row, ours: row.ours + 1 }, ...results.rows.slice(1)] };
    expect(withTable(readme, renderReadmeTable(edited))).not.toBe(readme);
  });

  it('escapes pipes in names and notes, prints n/a for a missing figure', () => {
    const table = renderReadmeTable({
      machine: {},
      machineLine: 'x, 2 cores',
      date: '2026-01-01T00:00:00.000Z',
      quick: false,
      only: null,
      seconds: 1,
      timingsMs: { a: 1000 },
      rows: [{ benchmark: 'a', name: 'p|q', ours: Number.NaN, peer: 1, unit: 'ms', ratio: Number.NaN, note: 'x | y', better: 'lower' }],
      skipped: [{ benchmark: 'b', reason: 'no tool' }],
    });
    expect(table).toContain('| a | p\\|q | n/a | 1 | ms | n/a (lower better) | x \\| y |');
    expect(table).toContain('skipped `b`: no tool');
  });
});
