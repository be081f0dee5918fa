/**
 * Public sentence-boundary suites, read for `bench/sentence-accuracy.ts` (never by tests):
 *
 * - `golden-rules`: the pragmatic-segmenter Golden Rules (324 cases, 23 languages), from
 *   `../shared/data/golden-rules.json` when present (our training set: it overstates us);
 * - `sentencex`: the test fixtures of wikimedia/sentencex (MIT), English, German, French,
 *   Spanish, Italian, Russian and lists, kept in `bench/data/sentencex/` (see its README);
 * - `sbd-tests`: the mocha tests shipped inside the `sbd` npm package (MIT), read from
 *   `node_modules/sbd/test/*.js` at run time. They state a sentence count (and sometimes
 *   pieces) per text, so a case here is "the same number of sentences, and the same pieces
 *   where the test names them".
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runInNewContext } from 'node:vm';
import { loadGoldenRules } from './golden-rules.js';

export interface SuiteCase {
  id: string;
  lang: string;
  text: string;
  /** The expected pieces (compared with whitespace removed), when the suite gives them. */
  pieces?: string[];
  /** The expected number of pieces, when the suite gives only that. */
  count?: number;
  /** Pieces the suite names by index (`sentences[1] === '...'`). */
  some?: Record<number, string>;
  /** Options the suite's own segmenter was given (only `sbd` reads them). */
  sbdOptions?: Record<string, unknown>;
}

export interface Suite {
  name: string;
  source: string;
  license: string;
  cases: SuiteCase[];
}

const here = dirname(fileURLToPath(import.meta.url));

/** The sentencex fixture format: input, `---`, one expected piece a line, `===`. */
export function parseSentencex(text: string, lang: string, file: string): SuiteCase[] {
  const cases: SuiteCase[] = [];
  for (const [n, block] of text.split(/^===[ \t]*$/mu).entries()) {
    const lines = block.split('\n').filter((l) => !l.startsWith('#'));
    const sep = lines.indexOf('---');
    if (sep < 0) continue;
    const input = lines.slice(0, sep).join('\n').replace(/^\s+/u, '').replace(/\n+$/u, '');
    const pieces = lines.slice(sep + 1).filter((l) => l.trim().length > 0).map((l) => l.replace(/\\n/gu, '\n'));
    if (input.length > 0) cases.push({ id: `${file}#${n + 1}`, lang, text: input, pieces });
  }
  return cases;
}

export function loadSentencex(): Suite | undefined {
  const dir = resolve(here, 'data/sentencex');
  if (!existsSync(dir)) return undefined;
  const cases: SuiteCase[] = [];
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.txt')).sort()) {
    const lang = file === 'lists.txt' ? 'en' : file.replace(/\.txt$/u, '');
    cases.push(...parseSentencex(readFileSync(join(dir, file), 'utf8'), lang, file));
  }
  return {
    name: 'sentencex',
    source: 'github.com/wikimedia/sentencex tests/*.txt (en de fr es it ru lists), see bench/data/sentencex/README.md',
    license: 'MIT',
    cases,
  };
}

/** Options of an sbd test that change what is expected in ways no other segmenter is told. */
const SBD_FOREIGN_OPTIONS = ['html_boundaries', 'abbreviations', 'html_boundaries_tags', 'allowed_tags'];

/**
 * The `sbd` package's own tests, run in a sandbox where `tokenizer.sentences(text, options)`
 * records a case and `assert` records what the test expects of it.
 */
export function loadSbdTests(): Suite | undefined {
  const require = createRequire(import.meta.url);
  let dir: string;
  try {
    dir = join(dirname(require.resolve('sbd/package.json')), 'test');
  } catch {
    return undefined;
  }
  if (!existsSync(dir)) return undefined;
  const version = (JSON.parse(readFileSync(join(dir, '../package.json'), 'utf8')) as { version: string }).version;
  const cases: SuiteCase[] = [];
  const refOf = new WeakMap<object, SuiteCase>();
  const marker = (c: SuiteCase, what: 'length' | 'join' | number): object => ({ c, what });
  const markers = new WeakMap<object, { c: SuiteCase; what: 'length' | 'join' | number }>();
  const tokenizer = {
    sentences(text: string, options?: Record<string, unknown>): unknown {
      const c: SuiteCase = { id: '', lang: 'en', text, ...(options ? { sbdOptions: { ...options } } : {}) };
      cases.push(c);
      const target: object = {};
      const proxy = new Proxy(target, {
        get(_t, key) {
          const what = key === 'length' ? 'length' : key === 'join' ? 'join' : typeof key === 'string' && /^\d+$/u.test(key) ? Number(key) : undefined;
          if (what === undefined) return undefined;
          if (what === 'join') return () => { const m = marker(c, 'join'); markers.set(m, { c, what }); return m; };
          const m = marker(c, what);
          markers.set(m, { c, what });
          return m;
        },
      });
      refOf.set(proxy, c);
      return proxy;
    },
  };
  const record = (actual: unknown, expected: unknown): void => {
    if (typeof actual !== 'object' || actual === null) return;
    const whole = refOf.get(actual);
    if (whole && Array.isArray(expected)) {
      whole.pieces = expected.map(String);
      return;
    }
    const m = markers.get(actual);
    if (!m) return;
    if (m.what === 'length' && typeof expected === 'number') m.c.count = expected;
    else if (typeof m.what === 'number' && typeof expected === 'string') m.c.some = { ...m.c.some, [m.what]: expected };
  };
  const assert = Object.assign((..._a: unknown[]) => undefined, { equal: record, strictEqual: record, deepEqual: record, deepStrictEqual: record });
  let path: string[] = [];
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.js')).sort()) {
    const before = cases.length;
    const sandbox = {
      require: (name: string) => (name === 'assert' ? assert : tokenizer),
      describe: (name: string, fn: () => void) => {
        path = [...path, name];
        try {
          fn();
        } finally {
          path = path.slice(0, -1);
        }
      },
      it: (_name: string, fn: () => void) => {
        try {
          fn();
        } catch {
          /* a test that reads what the stub cannot give: its case keeps what was recorded */
        }
      },
      console,
    };
    try {
      runInNewContext(readFileSync(join(dir, file), 'utf8'), sandbox, { filename: file });
    } catch {
      /* a file the sandbox cannot run adds no cases */
    }
    for (let i = before; i < cases.length; i++) cases[i]!.id = `${file}#${i - before + 1}`;
  }
  // `sentences(text)` beside `sentences(text, { abbreviations })` shows what sbd does without the
  // abbreviation list (a known wrong count), not what is right: such a pair keeps neither.
  const configured = new Set(cases.filter((c) => c.sbdOptions?.['abbreviations'] !== undefined).map((c) => c.text));
  const usable = cases.filter(
    (c) =>
      typeof c.text === 'string' &&
      !configured.has(c.text) &&
      (c.count !== undefined || c.pieces !== undefined) &&
      !SBD_FOREIGN_OPTIONS.some((k) => c.sbdOptions?.[k] !== undefined && c.sbdOptions[k] !== false) &&
      c.sbdOptions?.['sanitize'] !== true,
  );
  return {
    name: 'sbd-tests',
    source: `the tests shipped in the sbd npm package ${version} (node_modules/sbd/test/*.js), cases without HTML or custom-abbreviation options`,
    license: 'MIT',
    cases: usable,
  };
}

export function loadGoldenSuite(): Suite | undefined {
  const cases = loadGoldenRules();
  if (!cases) return undefined;
  return {
    name: 'golden-rules',
    source: 'pragmatic-segmenter Golden Rules as kept in pySBD (shared/data/golden-rules.json); our training set',
    license: 'MIT',
    cases: cases.map((c) => ({ id: c.id, lang: c.lang, text: c.text, pieces: c.sentences })),
  };
}

/** Every suite present on this machine, the training set first. */
export function loadSuites(): Suite[] {
  return [loadGoldenSuite(), loadSentencex(), loadSbdTests()].filter((s): s is Suite => s !== undefined);
}
