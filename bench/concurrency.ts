/**
 * Concurrency: N simultaneous live sessions in one process against the emulator (tone
 * synth, 10 ms per word), each speaking 10 sentences pushed at once. Sockets are opened
 * as fast as handshakes complete, at most 256 of them between connect and
 * `session.ready` (the emulator's accept queue, listen backlog 511, is never overrun);
 * every session then stays open until all have their 10 segments: N simultaneous. Every session must
 * complete with its 10 segments in order (checked). Measured: total time (all sockets
 * opened at once -> last session closed), memory per session (heap and RSS after a
 * forced GC once every session has received its 10 segments and is still open, minus
 * the baseline, divided by N), event-loop delay p99 (`monitorEventLoopDelay`, 10 ms
 * resolution, paused during the forced GC). Peer: the same with the hand-written `ws`
 * client.
 *
 * Then the count doubles (ours, then the peer) until the first failure or the time cap
 * (loopback only). Each session holds two descriptors in this process (the client's
 * socket and the emulator's), so with `ulimit -n` 20000 the level of 16,000 runs out of
 * descriptors: it is tried once, to show how it breaks.
 *
 * Caveat: the emulator and the clients share one process, so every figure includes the
 * emulator's side of the sessions (the same for ours and the peer), on a 2-core machine.
 *
 * Each level runs in a child process of its own (fresh heap, a crash is a result).
 *
 * Run alone: `npx tsx bench/concurrency.ts [sessions]`.
 */
import { execFileSync, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createClient } from '../src/index.js';
import { startEmulator } from '../src/emulator/index.js';
import type { BenchRow } from './types.js';
import { QUICK, gc, median, memory, now, round, row, sentences, tick } from './util.js';
import { oursSession, peerSession, verifyOrder, type SessionResult } from './sessions.js';

const SENTENCES = 10;
/** Sessions at most between socket creation and `session.ready` (and opened per turn). */
const PENDING = 256;

export interface LevelResult {
  who: 'ours' | 'peer';
  sessions: number;
  ok: boolean;
  completed: number;
  totalMs: number;
  heapPerSessionKB: number;
  rssPerSessionKB: number;
  eldP99Ms: number;
  eldMaxMs: number;
  failure?: string;
}

/** A level that produced no measurement, only `failure`. */
function failedLevel(who: LevelResult['who'], sessions: number, failure: string): LevelResult {
  return {
    who,
    sessions,
    ok: false,
    completed: 0,
    totalMs: Number.NaN,
    heapPerSessionKB: Number.NaN,
    rssPerSessionKB: Number.NaN,
    eldP99Ms: Number.NaN,
    eldMaxMs: Number.NaN,
    failure,
  };
}

/** The soft limit on open files of this process (`ulimit -n`), or undefined. */
function fileLimit(): number | undefined {
  try {
    const out = execFileSync('sh', ['-c', 'ulimit -n'], { encoding: 'utf8' }).trim();
    const n = Number(out);
    return Number.isFinite(n) ? n : undefined;
  } catch {
    return undefined;
  }
}

/** Run `sessions` simultaneous sessions of one kind; never throws. */
export async function level(who: 'ours' | 'peer', sessions: number, capMs: number): Promise<LevelResult> {
  const emulator = await startEmulator({
    synth: 'tone',
    toneWordSeconds: 0.01,
    concurrency: 3,
    liveStartTimeoutMs: capMs + 60_000,
    // every session is one key's: the emulator's per-key limit (32 by default) lifted
    liveSessionsPerKey: sessions + 1,
    credits: sessions * SENTENCES * 2 + 1000,
  });
  const client = createClient({ apiKey: emulator.apiKey, baseUrl: emulator.baseUrl });
  const texts = sentences(SENTENCES, 6);
  let releaseAll: () => void = () => undefined;
  const holdOpen = new Promise<void>((resolve) => {
    releaseAll = resolve;
  });
  let delivered = 0;
  let ready = 0;
  /** Sessions that failed (before or after ready). */
  let failed = 0;
  let plateau: { heap: number; rss: number } | undefined;
  const eld = monitorEventLoopDelay({ resolution: 10 });
  let onAllDelivered: () => void = () => undefined;
  const allDelivered = new Promise<void>((resolve) => {
    onAllDelivered = resolve;
  });
  let wakeOpener: (() => void) | undefined;
  const hooks = {
    holdOpen,
    onReady: () => {
      ready++;
      wakeOpener?.();
    },
    onSegments: () => {
      delivered++;
      if (delivered + failed === sessions) onAllDelivered();
    },
  };
  let capTimer: NodeJS.Timeout | undefined;
  try {
    gc();
    const base = memory();
    eld.enable();
    const t0 = now();
    let capped = false;
    const cap = new Promise<'cap'>((resolve) => {
      capTimer = setTimeout(() => {
        capped = true;
        wakeOpener?.();
        resolve('cap');
      }, capMs);
    });
    const runs: Promise<SessionResult>[] = [];
    let firstError: Promise<SessionResult> | undefined;
    // At most PENDING sessions between socket creation and session.ready: a storm of
    // thousands of connects overflows the emulator's accept queue (listen backlog 511),
    // and the kernel's SYN/ACK retransmission backoff (1 s, 2 s, 4 s, ...) then stalls
    // some handshakes for tens of seconds, whichever client is used.
    for (let i = 0; i < sessions && !capped; i++) {
      while (i - ready - failed >= PENDING && !capped) {
        await new Promise<void>((resolve) => {
          wakeOpener = resolve;
        });
        wakeOpener = undefined;
      }
      if (capped) break;
      if (i > 0 && i % PENDING === 0) await tick();
      const session =
        who === 'ours'
          ? oursSession(client, texts, 'burst', hooks, { readyTimeoutMs: capMs + 60_000 })
          : peerSession(emulator.wsUrl, emulator.apiKey, texts, 'burst', hooks);
      // Handled at once (no unhandled rejection while the others are being opened).
      session.catch(() => {
        failed++;
        firstError ??= session;
        wakeOpener?.();
        if (delivered + failed === sessions) onAllDelivered();
      });
      runs.push(session);
    }
    const openedAll = runs.length;
    // Once every session holds its 10 segments (all sockets still open): memory.
    void allDelivered.then(() => {
      eld.disable();
      gc();
      plateau = memory();
      eld.enable();
      releaseAll();
    });
    const outcome = capped ? 'cap' : await Promise.race([Promise.allSettled(runs), cap]);
    const totalMs = now() - t0;
    eld.disable();
    const result: LevelResult = {
      who,
      sessions,
      ok: false,
      completed: 0,
      totalMs,
      heapPerSessionKB: plateau ? (plateau.heap - base.heap) / 1024 / sessions : Number.NaN,
      rssPerSessionKB: plateau ? (plateau.rss - base.rss) / 1024 / sessions : Number.NaN,
      eldP99Ms: eld.percentile(99) / 1e6,
      eldMaxMs: eld.max / 1e6,
    };
    if (outcome === 'cap') {
      const why = firstError ? await firstError.then(() => '', (e: unknown) => (e instanceof Error ? `; first error ${e.name}: ${e.message.slice(0, 160)}` : '')) : '';
      result.failure = `time cap of ${capMs / 1000} s: ${openedAll} of ${sessions} sessions opened, ${ready} ready, ${delivered} had all 10 segments, ${failed} failed${why}`;
      for (const r of runs) r.catch(() => undefined);
      releaseAll();
      return result;
    }
    const failures: string[] = [];
    outcome.forEach((o) => {
      if (o.status === 'rejected') failures.push(o.reason instanceof Error ? `${o.reason.name}: ${o.reason.message}` : String(o.reason));
      else {
        const problem = verifyOrder(o.value, texts);
        if (problem) failures.push(`out of order: ${problem}`);
      }
    });
    result.completed = sessions - failures.length;
    result.ok = failures.length === 0;
    if (!result.ok) {
      // Grouped by message, ports and the like masked.
      const kinds = new Map<string, number>();
      for (const f of failures) {
        const key = f.replace(/127\.0\.0\.1:\d+/g, '127.0.0.1:*').replace(/ - Local \(undefined:undefined\)/g, '').replace('The live session closed abnormally ', 'closed ').slice(0, 100);
        kinds.set(key, (kinds.get(key) ?? 0) + 1);
      }
      result.failure = `${failures.length} of ${sessions} failed: ${[...kinds].slice(0, 3).map(([k, n]) => `${n}x ${k}`).join('; ')}`;
    }
    return result;
  } catch (error) {
    return failedLevel(who, sessions, error instanceof Error ? `${error.name}: ${error.message}` : String(error));
  } finally {
    if (capTimer) clearTimeout(capTimer);
    releaseAll();
    eld.disable();
    await client.close();
    await emulator.close();
  }
}

/**
 * Run one level in a fresh child process (same loader flags), so that every level starts
 * from the same memory and a crash (out of memory, descriptors) is a result, not the end.
 */
export function levelInChild(who: 'ours' | 'peer', sessions: number, capMs: number): Promise<LevelResult> {
  return new Promise((resolve) => {
    const child = fork(fileURLToPath(import.meta.url), ['--child', who, String(sessions), String(capMs)], {
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-2000);
    });
    let result: LevelResult | undefined;
    child.on('message', (message) => {
      // NaN travels as null over IPC (JSON).
      const raw = message as Record<string, unknown>;
      const fixed = Object.fromEntries(Object.entries(raw).map(([k, v]) => [k, v === null ? Number.NaN : v]));
      result = fixed as unknown as LevelResult;
    });
    const killer = setTimeout(() => child.kill('SIGKILL'), capMs + 60_000);
    child.on('exit', (code, signal) => {
      clearTimeout(killer);
      if (result) resolve(result);
      else {
        const lines = stderr.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('npm warn'));
        const tail = (lines.find((l) => /Error|error:|heap/i.test(l)) ?? lines.slice(-1)[0] ?? '').trim();
        resolve(failedLevel(who, sessions, `the process died (${signal ?? `exit ${code}`})${tail ? `: ${tail.slice(0, 300)}` : ''}`));
      }
    });
  });
}

export interface ConcurrencyOptions {
  /** Sessions of the side-by-side measurement. Default 1000. */
  sessions?: number;
  /** Counts to try after it (doubling), ours then peer; stops at the first failure. */
  scale?: number[];
  /** Time cap per level, ms. */
  capMs?: number;
  /** Overall cap of the scaling part, ms. */
  scaleBudgetMs?: number;
  /** Runs of each side at `sessions` (medians quoted). Default 3 (quick: 1). */
  repeats?: number;
  /** Progress lines on stderr. */
  log?: (line: string) => void;
}

function describe(r: LevelResult): string {
  return `${r.who} ${r.sessions}: ${r.ok ? 'ok' : 'FAILED'} in ${(r.totalMs / 1000).toFixed(1)} s, heap ${r.heapPerSessionKB.toFixed(1)} KB/session, RSS ${r.rssPerSessionKB.toFixed(1)} KB/session, ELD p99 ${r.eldP99Ms.toFixed(1)} ms${r.failure ? ` (${r.failure})` : ''}`;
}

export async function run(options: ConcurrencyOptions = {}): Promise<BenchRow[]> {
  const log = options.log ?? ((line: string) => process.stderr.write(`  concurrency: ${line}\n`));
  const sessions = options.sessions ?? 1000;
  const capMs = options.capMs ?? (QUICK ? 30_000 : 45_000);
  const limit = fileLimit();
  const maxByFds = limit === undefined ? Number.POSITIVE_INFINITY : Math.floor((limit - 256) / 2);
  const scale = (options.scale ?? (QUICK ? [2000] : [2000, 4000, 8000, 16000])).filter((n) => n > sessions);
  const budget = options.scaleBudgetMs ?? (QUICK ? 45_000 : 150_000);

  // Side by side: each run in its own process, from a fresh emulator and a forced GC;
  // runs alternate (ours, peer, peer, ours, ...) and the medians are quoted.
  const repeats = options.repeats ?? (QUICK ? 1 : 3);
  const all: Record<'ours' | 'peer', LevelResult[]> = { ours: [], peer: [] };
  for (let i = 0; i < repeats; i++) {
    for (const who of i % 2 === 0 ? (['ours', 'peer'] as const) : (['peer', 'ours'] as const)) {
      const r = await levelInChild(who, sessions, capMs);
      log(describe(r));
      all[who].push(r);
    }
  }
  const summary = (list: LevelResult[]): LevelResult => {
    const first = list[0] as LevelResult;
    const failed = list.find((r) => !r.ok);
    const pick = (f: (r: LevelResult) => number): number => median(list.map(f));
    const merged: LevelResult = {
      ...first,
      ok: failed === undefined,
      completed: Math.min(...list.map((r) => r.completed)),
      totalMs: pick((r) => r.totalMs),
      heapPerSessionKB: pick((r) => r.heapPerSessionKB),
      rssPerSessionKB: pick((r) => r.rssPerSessionKB),
      eldP99Ms: pick((r) => r.eldP99Ms),
      eldMaxMs: Math.max(...list.map((r) => r.eldMaxMs)),
    };
    if (failed?.failure !== undefined) merged.failure = failed.failure;
    return merged;
  };
  const ours = summary(all.ours);
  const peer = summary(all.peer);
  const n = sessions.toLocaleString('en-US');
  const both = `median of ${repeats} runs each (alternating, one process per run); ${n} sessions x ${SENTENCES} sentences, emulator in the same process (2 cores)`;
  const status = (r: LevelResult): string =>
    r.ok ? `all ${r.sessions} complete, in order, every run` : (r.failure ?? 'failed').slice(0, 200);
  const rows: BenchRow[] = [
    row(`concurrency: ${n} sessions, total time`, ours.totalMs / 1000, peer.totalMs / 1000, 's', `${both}; ours: ${status(ours)}; peer: ${status(peer)}`, 'lower'),
    row(
      `concurrency: heap per session`,
      ours.heapPerSessionKB,
      peer.heapPerSessionKB,
      'KB',
      `after GC with all ${n} sockets open, 10 segments received each; includes the emulator's side`,
      'lower',
    ),
    row(`concurrency: RSS per session`, ours.rssPerSessionKB, peer.rssPerSessionKB, 'KB', `same moment as heap; includes the emulator's side`, 'lower'),
    row(
      `concurrency: event-loop delay p99`,
      ours.eldP99Ms,
      peer.eldP99Ms,
      'ms',
      `monitorEventLoopDelay, 10 ms resolution, whole run (paused for the forced GC); worst max ours ${round(ours.eldMaxMs)} ms, peer ${round(peer.eldMaxMs)} ms`,
      'lower',
    ),
  ];

  // Scaling: double until something breaks.
  const started = now();
  const reached = { ours: ours.ok ? sessions : 0, peer: peer.ok ? sessions : 0 };
  const broke: Partial<Record<'ours' | 'peer', string>> = {};
  const seen: string[] = [];
  for (const count of scale) {
    // Past the descriptor limit the level is still tried once: that is where it breaks.
    if (count > maxByFds) seen.push(`${count.toLocaleString('en-US')} needs ~${(count * 2).toLocaleString('en-US')} descriptors > ulimit -n ${limit}`);
    if (now() - started > budget) {
      seen.push(`stopped before ${count.toLocaleString('en-US')}: scaling budget of ${budget / 1000} s spent`);
      break;
    }
    for (const who of ['ours', 'peer'] as const) {
      if (broke[who] !== undefined || reached[who] < count / 2) continue;
      const r = await levelInChild(who, count, capMs);
      log(describe(r));
      seen.push(
        `${who} ${count.toLocaleString('en-US')}: ${r.ok ? 'ok' : `${r.completed} complete`} in ${(r.totalMs / 1000).toFixed(1)} s, ELD p99 ${r.eldP99Ms.toFixed(0)} ms, heap ${r.heapPerSessionKB.toFixed(0)} KB/session`,
      );
      if (r.ok) reached[who] = count;
      else broke[who] = `${count.toLocaleString('en-US')}: ${r.failure}`;
    }
    if (broke.ours !== undefined && broke.peer !== undefined) break;
  }
  const how = (who: 'ours' | 'peer'): string => (broke[who] ? `${who} broke at ${(broke[who] as string).slice(0, 260)}` : `${who} did not break`);
  rows.push(
    row(
      'concurrency: most simultaneous sessions, all complete',
      reached.ours,
      reached.peer,
      'sessions',
      `doubling from ${n} (cap ${capMs / 1000} s per level, loopback, ulimit -n ${limit ?? '?'}); ${how('ours')}; ${how('peer')}; ${seen.join(' | ')}`,
      'higher',
    ),
  );
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}` && process.argv[2] === '--child') {
  const who = process.argv[3] === 'peer' ? 'peer' : 'ours';
  const result = await level(who, Number(process.argv[4]), Number(process.argv[5]));
  process.send?.(result, () => process.exit(0));
} else if (import.meta.url === `file://${process.argv[1]}`) {
  const sessions = process.argv[2] ? Number(process.argv[2]) : undefined;
  run(sessions === undefined ? {} : { sessions, scale: [] }).then((rows) => console.table(rows), (error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
