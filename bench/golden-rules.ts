/**
 * Sentence boundaries on the pragmatic-segmenter "Golden Rules" (324 cases, 23 languages,
 * as kept in the pySBD repository, MIT License): rxvoice's sentence core against
 * `Intl.Segmenter(lang, { granularity: 'sentence' })`, per language.
 *
 * A case counts for rxvoice when the pieces match AND the same pieces come out whether the
 * text is fed whole, word by word, or in random 1-6 code-unit tokens. Pieces are compared
 * with all whitespace removed: the expected sentences are pySBD's, which cleans whitespace
 * (drops line breaks inside a sentence); boundaries are what is compared.
 *
 * The data is not part of the project: it is read from `shared/data/golden-rules.json` next
 * to (or one level above) the checkout, or from `RXVOICE_GOLDEN_RULES`. Without it, this
 * benchmark returns no rows. Run: `npx tsx bench/golden-rules.ts` (`--misses` lists misses).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createSentenceSegmenter } from '../src/text/sentences.js';
import type { BenchRow } from './types.js';

export interface GoldenCase {
  id: string;
  lang: string;
  text: string;
  sentences: string[];
  xfail: boolean;
}

/** Where the data file may be: `RXVOICE_GOLDEN_RULES`, or `shared/data/` beside the checkout. */
export function goldenRulesPath(): string | undefined {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
  const candidates = [
    process.env['RXVOICE_GOLDEN_RULES'],
    resolve(root, '../shared/data/golden-rules.json'),
    resolve(root, '../../shared/data/golden-rules.json'),
  ];
  return candidates.find((p): p is string => p !== undefined && p.length > 0 && existsSync(p));
}

export function loadGoldenRules(): GoldenCase[] | undefined {
  const path = goldenRulesPath();
  return path ? (JSON.parse(readFileSync(path, 'utf8')) as GoldenCase[]) : undefined;
}

const squash = (pieces: readonly string[]): string[] => pieces.map((p) => p.replace(/\s+/gu, '')).filter((p) => p.length > 0);

/** The core's pieces for `tokens` fed one by one. */
export function segmentTokens(lang: string, tokens: readonly string[]): string[] {
  const s = createSentenceSegmenter({ locale: lang });
  const out: string[] = [];
  for (const t of tokens) out.push(...s.feed(t));
  out.push(...s.end());
  return out;
}

/** Word-by-word tokens (each with its leading whitespace, as LLM tokens come). */
export function wordTokens(text: string): string[] {
  return text.match(/\s*\S+|\s+$/gu) ?? [];
}

/** Tokens of 1 to 6 code units, from a seeded generator (the same split every run). */
export function randomTokens(text: string, seed: number): string[] {
  let state = seed >>> 0 || 1;
  const out: string[] = [];
  for (let i = 0; i < text.length; ) {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    const n = 1 + (state % 6);
    out.push(text.slice(i, i + n));
    i += n;
  }
  return out;
}

export interface GoldenScore {
  lang: string;
  cases: number;
  ours: number;
  peer: number;
  missesOurs: string[];
}

/** Per-language scores (and a total row, `lang: 'all'`). */
export function scoreGoldenRules(cases: readonly GoldenCase[]): GoldenScore[] {
  const byLang = new Map<string, GoldenScore>();
  const total: GoldenScore = { lang: 'all', cases: 0, ours: 0, peer: 0, missesOurs: [] };
  for (const c of cases) {
    let row = byLang.get(c.lang);
    if (!row) byLang.set(c.lang, (row = { lang: c.lang, cases: 0, ours: 0, peer: 0, missesOurs: [] }));
    const expected = JSON.stringify(squash(c.sentences));
    const whole = segmentTokens(c.lang, [c.text]);
    const same =
      whole.join('') === c.text &&
      JSON.stringify(segmentTokens(c.lang, wordTokens(c.text))) === JSON.stringify(whole) &&
      [1, 2, 3].every((seed) => JSON.stringify(segmentTokens(c.lang, randomTokens(c.text, seed))) === JSON.stringify(whole));
    const ours = same && JSON.stringify(squash(whole)) === expected;
    const peerPieces = [...new Intl.Segmenter(c.lang, { granularity: 'sentence' }).segment(c.text)].map((x) => x.segment);
    const peer = JSON.stringify(squash(peerPieces)) === expected;
    for (const r of [row, total]) {
      r.cases++;
      if (ours) r.ours++;
      if (peer) r.peer++;
    }
    if (!ours) total.missesOurs.push(`${c.id}${same ? '' : ' (token split changes it)'}: ${JSON.stringify(c.text.slice(0, 160))}`);
  }
  return [total, ...[...byLang.values()].sort((a, b) => b.cases - a.cases || a.lang.localeCompare(b.lang))];
}

export async function run(): Promise<BenchRow[]> {
  const cases = loadGoldenRules();
  if (!cases) return [];
  return scoreGoldenRules(cases).map((s) => {
    const ours = Math.round((s.ours / s.cases) * 1000) / 10;
    const peer = Math.round((s.peer / s.cases) * 1000) / 10;
    return {
      name: `Golden Rules sentence boundaries, ${s.lang === 'all' ? 'all 23 languages' : s.lang}: core vs Intl.Segmenter`,
      ours,
      peer,
      unit: '% cases exact',
      ratio: peer > 0 ? Math.round((ours / peer) * 100) / 100 : ours > 0 ? Infinity : 1,
      better: 'higher' as const,
      note: `${s.ours}/${s.cases} vs ${s.peer}/${s.cases}; ours must also match fed word by word and in random 1-6 char tokens`,
    };
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const cases = loadGoldenRules();
  if (!cases) console.log('golden-rules.json not found (set RXVOICE_GOLDEN_RULES)');
  else {
    const scores = scoreGoldenRules(cases);
    for (const s of scores) console.log(`${s.lang.padEnd(4)} ours ${s.ours}/${s.cases}  Intl.Segmenter ${s.peer}/${s.cases}`);
    if (process.argv.includes('--misses')) console.log(scores[0]!.missesOurs.join('\n'));
  }
}
