/**
 * Sentence-boundary accuracy, every segmenter side by side in one run, on the Golden Rules
 * (our training set) and on public suites we did not tune on (`bench/sentence-suites.ts`):
 * rxvoice's sentence core against `Intl.Segmenter`, `sbd`, `sentence-splitter`, `compromise`,
 * `wink-nlp` (wink-eng-lite-web-model), `cldr-segmentation` and the basic sentence tokenizer of
 * `@livekit/agents` (minSentenceLength 1). Score: % of cases exact (pieces compared with all
 * whitespace removed; for `sbd-tests`, the sentence count and any piece the test names).
 *
 * The core is held to more: a case counts only when the pieces are the same fed whole, word by
 * word and in seeded random 1-6 code-unit tokens (as a model streams them).
 *
 * A peer that is not installed is reported as skipped. Run: `npx tsx bench/sentence-accuracy.ts`
 * (`--misses` lists the core's misses per suite).
 */
import { createRequire } from 'node:module';
import { randomTokens, segmentTokens as feed, wordTokens } from './golden-rules.js';
import { loadSuites, type Suite, type SuiteCase } from './sentence-suites.js';
import type { BenchRow } from './types.js';

type Split = (text: string, lang: string, c: SuiteCase) => string[];

interface Segmenter {
  name: string;
  split: Split;
}

/** The core: the pieces fed whole, or `['<token split changes it>']` when any split differs. */
const core: Split = (text, lang) => {
  const whole = feed(lang, [text]);
  const key = JSON.stringify(whole);
  const same =
    whole.join('') === text &&
    JSON.stringify(feed(lang, wordTokens(text))) === key &&
    [1, 2, 3].every((seed) => JSON.stringify(feed(lang, randomTokens(text, seed))) === key);
  return same ? whole : ['\u0000token split changes it'];
};

const intl: Split = (text, lang) => [...new Intl.Segmenter(lang, { granularity: 'sentence' }).segment(text)].map((x) => x.segment);

async function loadPeers(skipped: string[]): Promise<Segmenter[]> {
  const require = createRequire(import.meta.url);
  const peers: Segmenter[] = [{ name: 'Intl.Segmenter', split: intl }];
  const tryPeer = async (name: string, make: () => Promise<Split>): Promise<void> => {
    try {
      peers.push({ name, split: await make() });
    } catch (error) {
      skipped.push(`${name}: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
    }
  };
  await tryPeer('sbd', async () => {
    const sbd = require('sbd') as { sentences(text: string, options?: Record<string, unknown>): string[] };
    return (text, _lang, c) => sbd.sentences(text, c.sbdOptions ?? {});
  });
  await tryPeer('sentence-splitter', async () => {
    const { split } = (await import('sentence-splitter')) as { split(text: string): { type: string; raw: string }[] };
    return (text) => split(text).filter((n) => n.type === 'Sentence').map((n) => n.raw);
  });
  await tryPeer('compromise', async () => {
    const nlp = require('compromise') as (text: string) => { sentences(): { out(kind: 'array'): string[] } };
    return (text) => nlp(text).sentences().out('array');
  });
  await tryPeer('wink-nlp', async () => {
    const winkNLP = require('wink-nlp') as (model: unknown) => { readDoc(text: string): { sentences(): { out(): string[] } } };
    const nlp = winkNLP(require('wink-eng-lite-web-model'));
    return (text) => nlp.readDoc(text).sentences().out();
  });
  await tryPeer('cldr-segmentation', async () => {
    const cldr = require('cldr-segmentation') as {
      sentenceSplit(text: string, suppressions?: unknown): string[];
      suppressions: Record<string, unknown>;
    };
    return (text, lang) => cldr.sentenceSplit(text, cldr.suppressions[lang]);
  });
  await tryPeer('@livekit/agents basic', async () => {
    const { tokenize } = (await import('@livekit/agents')) as {
      tokenize: { basic: { SentenceTokenizer: new (o: { minSentenceLength: number }) => { tokenize(text: string): string[] } } };
    };
    const t = new tokenize.basic.SentenceTokenizer({ minSentenceLength: 1 });
    return (text) => t.tokenize(text);
  });
  return peers;
}

const squash = (pieces: readonly string[]): string[] => pieces.map((p) => p.replace(/\s+/gu, '')).filter((p) => p.length > 0);

/** Whether pieces meet a case's expectation. */
export function meets(c: SuiteCase, pieces: readonly string[]): boolean {
  const got = squash(pieces);
  if (c.pieces !== undefined && JSON.stringify(got) !== JSON.stringify(squash(c.pieces))) return false;
  if (c.count !== undefined && got.length !== c.count) return false;
  for (const [i, p] of Object.entries(c.some ?? {})) if (got[Number(i)] !== p.replace(/\s+/gu, '')) return false;
  return true;
}

export interface SuiteScore {
  suite: Suite;
  /** Cases met, by segmenter name (the core is `rxvoice`). */
  met: Map<string, number>;
  missesCore: string[];
  ms: Map<string, number>;
}

export function score(suites: readonly Suite[], peers: readonly Segmenter[]): SuiteScore[] {
  const all: Segmenter[] = [{ name: 'rxvoice', split: core }, ...peers];
  return suites.map((suite) => {
    const met = new Map<string, number>();
    const ms = new Map<string, number>();
    const missesCore: string[] = [];
    for (const seg of all) {
      const t0 = performance.now();
      let n = 0;
      for (const c of suite.cases) {
        let pieces: string[];
        try {
          pieces = seg.split(c.text, c.lang, c);
        } catch {
          pieces = ['\u0000threw'];
        }
        if (meets(c, pieces)) n++;
        else if (seg.name === 'rxvoice') missesCore.push(`${c.id} [${c.lang}] ${JSON.stringify(c.text.slice(0, 140))}\n    got ${JSON.stringify(pieces.map((p) => p.trim()))}`);
      }
      met.set(seg.name, n);
      ms.set(seg.name, performance.now() - t0);
    }
    return { suite, met, missesCore, ms };
  });
}

const pct = (n: number, of: number): number => Math.round((n / Math.max(1, of)) * 1000) / 10;

/** The table: one line per suite, one column per segmenter. */
export function renderMatrix(scores: readonly SuiteScore[], names: readonly string[]): string {
  const head = ['suite (cases)', ...names];
  const rows = scores.map((s) => [`${s.suite.name} (${s.suite.cases.length})`, ...names.map((n) => `${pct(s.met.get(n) ?? 0, s.suite.cases.length)}%`)]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: string[]): string => r.map((v, i) => (i === 0 ? v.padEnd(widths[i]!) : v.padStart(widths[i]!))).join(' | ');
  return [line(head), widths.map((w) => '-'.repeat(w)).join('-|-'), ...rows.map(line)].join('\n');
}

export async function run(): Promise<BenchRow[]> {
  const skipped: string[] = [];
  const suites = loadSuites();
  const peers = await loadPeers(skipped);
  const scores = score(suites, peers);
  const names = ['rxvoice', ...peers.map((p) => p.name)];
  console.error(renderMatrix(scores, names));
  for (const s of suites) console.error(`  ${s.name}: ${s.source} (${s.license})`);
  for (const s of skipped) console.error(`  peer skipped: ${s}`);
  const rows: BenchRow[] = [];
  for (const s of scores) {
    const n = s.suite.cases.length;
    const ours = pct(s.met.get('rxvoice') ?? 0, n);
    for (const p of peers) {
      const peer = pct(s.met.get(p.name) ?? 0, n);
      rows.push({
        name: `Sentence accuracy, ${s.suite.name} (${n} cases): core vs ${p.name}`,
        ours,
        peer,
        unit: '% cases exact',
        ratio: peer > 0 ? Math.round((ours / peer) * 100) / 100 : ours > 0 ? Infinity : 1,
        better: 'higher',
        note: `${s.met.get('rxvoice')}/${n} vs ${s.met.get(p.name)}/${n}; ${s.suite.source}, ${s.suite.license}${s.suite.name === 'golden-rules' ? '' : '; not tuned on'}`,
      });
    }
  }
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const t0 = performance.now();
  const skipped: string[] = [];
  const suites = loadSuites();
  const peers = await loadPeers(skipped);
  const scores = score(suites, peers);
  console.log(renderMatrix(scores, ['rxvoice', ...peers.map((p) => p.name)]));
  for (const s of suites) console.log(`  ${s.name}: ${s.source} (${s.license})`);
  for (const s of skipped) console.log(`  peer skipped: ${s}`);
  if (process.argv.includes('--misses')) for (const s of scores) console.log(`\n## ${s.suite.name} misses\n${s.missesCore.join('\n')}`);
  console.log(`${((performance.now() - t0) / 1000).toFixed(1)} s`);
}
