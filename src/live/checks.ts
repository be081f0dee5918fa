/**
 * The browser path's checks, written as plain functions: the server frames a session
 * receives, the `session.start` configuration and the client options of `speak`. They
 * accept, reject, default and report exactly as the zod schemas of `protocol.ts` and
 * `option-schemas.ts` (issues in the service's `{ loc, msg, type }` shape, the same
 * messages), which `test/live/checks.test.ts` proves on random input with fast-check.
 * The schemas stay the reference (the emulator, the relay and the HTTP client use them);
 * these exist so a page using `speak` does not download a schema library (about 9 KB
 * gzipped).
 *
 * @internal
 */
import { add, checkNumber, isNumber, isRecord, type Issues, type NumberRule } from '../core/checks.js';
import type { ValidationIssue } from '../core/schemas.js';
import type { ServerFrame, SessionConfig } from './protocol.js';
import type { FallbackSpeech } from './stall-fallback.js';

type Rec = Record<string, unknown>;

const LOCALE_TAG = /^[a-z]{2,3}-[a-z0-9]{2,4}$/;
const NUMERIC_ID = /^[0-9]+$/;
const OUTPUT_FORMATS: readonly string[] = ['wav', 'mp3', 'flac', 'aac'];
const isIndex = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;
const isInt = (v: unknown): v is number => Number.isSafeInteger(v);

/** Copies `input[key]` to `out` when it passes `check`; a default for undefined; absent stays absent. */
function field(out: Rec, input: Rec, key: string, check: (v: unknown) => boolean, fallback?: () => unknown): void {
  const v = input[key];
  if (v === undefined && fallback !== undefined) out[key] = fallback();
  else if (check(v) && (v !== undefined || key in input)) out[key] = v;
}

// ---------------------------------------------------------------------------
// The session.start configuration
// ---------------------------------------------------------------------------

const BOOL = 'must be true or false';

function booleanCheck(issues: Issues, key: string, nullish: boolean): (v: unknown) => boolean {
  return (v) => {
    if (typeof v === 'boolean' || (nullish && (v === null || v === undefined))) return true;
    add(issues, key, BOOL, v === undefined ? 'missing' : 'boolean_type');
    return false;
  };
}

function nullishNumber(issues: Issues, key: string, rule: NumberRule): (v: unknown) => boolean {
  return (v) => v === null || v === undefined || checkNumber(issues, key, v, rule);
}

function languageCheck(issues: Issues): (v: unknown) => boolean {
  return (v) => {
    // a whole number fails only on its own branch (a numeric id): zod reports that branch's issues
    if (typeof v === 'number' && Number.isInteger(v)) {
      return checkNumber(issues, 'language', v, { int: true, msg: 'must be an integer', min: [0, false, 'must be a positive integer'] });
    }
    if (typeof v === 'string' && (LOCALE_TAG.test(v) || NUMERIC_ID.test(v))) return true;
    add(issues, 'language', 'must be a lower-case locale tag like "en-us"', 'union_error');
    return false;
  };
}

/**
 * The `session.start` configuration of `input` (unknown keys dropped, defaults filled in),
 * or undefined with its issues added to `out` under `prefix`: what
 * `SessionConfigSchema.safeParse` decides.
 */
export function checkSessionConfig(input: Rec, out: ValidationIssue[], prefix: ReadonlyArray<string | number>): SessionConfig | undefined {
  const issues: Issues = { out, prefix };
  const before = out.length;
  const config: Rec = {};
  field(config, input, 'voice_id', (v) =>
    checkNumber(issues, 'voice_id', v, { int: true, msg: 'must be an integer voice id', min: [0, true, 'must be a non-negative integer voice id'] }),
  );
  field(config, input, 'language', languageCheck(issues), () => 'en-us');
  field(
    config,
    input,
    'output_format',
    (v) => OUTPUT_FORMATS.includes(v as string) || (add(issues, 'output_format', 'must be one of wav, mp3, flac, aac', 'enum'), false),
    () => 'mp3',
  );
  field(
    config,
    input,
    'sample_rate',
    nullishNumber(issues, 'sample_rate', {
      int: true,
      msg: 'must be an integer number of hertz',
      min: [8000, true, 'must be at least 8000 Hz'],
      max: [48000, true, 'must be at most 48000 Hz'],
    }),
  );
  field(config, input, 'word_timestamps', booleanCheck(issues, 'word_timestamps', false), () => false);
  field(
    config,
    input,
    'idle_timeout',
    (v) =>
      checkNumber(issues, 'idle_timeout', v, {
        msg: 'must be a number of seconds',
        min: [0, false, 'must be more than 0 seconds'],
        max: [60, true, 'must be at most 60 seconds'],
      }),
    () => 1.0,
  );
  for (const key of ['enhance_named_entities_pronunciation', 'enhance_reference_audio_quality', 'maintain_source_accent']) {
    field(config, input, key, booleanCheck(issues, key, false), () => false);
  }
  field(config, input, 'apply_enhancement', booleanCheck(issues, 'apply_enhancement', true));
  field(
    config,
    input,
    'speaking_rate',
    nullishNumber(issues, 'speaking_rate', {
      msg: 'must be a number',
      min: [0.25, true, 'must be at least 0.25'],
      max: [4, true, 'must be at most 4'],
    }),
  );
  return out.length === before ? (config as SessionConfig) : undefined;
}

// ---------------------------------------------------------------------------
// The client options of speak
// ---------------------------------------------------------------------------

/** The client options of `speak`, checked and completed with their defaults (see `SpeakOptions`). */
export interface ClientOptions {
  reconnect: { maxAttempts: number; baseDelayMs: number; maxDelayMs: number; random: () => number } | undefined;
  readyTimeoutMs: number;
  maxPayload: number;
  clientBoundaries: boolean;
  boundaryHoldMs: number;
  responseTimeoutMs: number;
  closeGraceMs: number;
  stall: { afterMs: number; fallback: 'tts-stream' | 'error' } | undefined;
  fallbackSpeech: FallbackSpeech | undefined;
}

const MS = 'must be a finite number of milliseconds';
const msRule = (extra: Partial<NumberRule> = {}): NumberRule => ({ msg: MS, min: [0, true, 'must be >= 0 ms'], ...extra });
const positiveMs: NumberRule = { msg: MS, min: [0, false, 'must be > 0 ms'] };

function checkReconnect(issues: Issues, v: unknown): boolean {
  if (v === undefined) return true;
  if (!isRecord(v)) {
    add(issues, 'reconnect', 'must be an object', 'object_type');
    return false;
  }
  const inner: Issues = { out: issues.out, prefix: [...issues.prefix, 'reconnect'] };
  const before = issues.out.length;
  checkNumber(inner, 'maxAttempts', v['maxAttempts'], {
    int: true,
    msg: 'must be an integer',
    min: [0, true, 'must be an integer >= 0'],
    max: [1000, true, 'must be at most 1000'],
  });
  for (const key of ['baseDelayMs', 'maxDelayMs']) if (v[key] !== undefined) checkNumber(inner, key, v[key], msRule());
  if (v['random'] !== undefined && typeof v['random'] !== 'function') add(inner, 'random', 'must be a function', 'value_error');
  return issues.out.length === before;
}

function checkStall(issues: Issues, v: unknown): boolean {
  if (v === undefined) return true;
  if (!isRecord(v)) {
    add(issues, 'stall', 'must be an object', 'object_type');
    return false;
  }
  const inner: Issues = { out: issues.out, prefix: [...issues.prefix, 'stall'] };
  const before = issues.out.length;
  checkNumber(inner, 'afterMs', v['afterMs'], positiveMs);
  if (v['fallback'] !== 'tts-stream' && v['fallback'] !== 'error') add(inner, 'fallback', "must be 'tts-stream' or 'error'", 'enum');
  return issues.out.length === before;
}

/**
 * The client options of `input` with their defaults, or undefined with its issues added
 * to `out` under `prefix`: what `ClientOptionsSchema.safeParse` (option-schemas.ts) decides.
 */
export function checkClientOptions(input: Rec, out: ValidationIssue[], prefix: ReadonlyArray<string | number>): ClientOptions | undefined {
  const issues: Issues = { out, prefix };
  const before = out.length;
  const options: Rec = {};
  field(options, input, 'reconnect', (v) => checkReconnect(issues, v));
  const reconnect = options['reconnect'];
  if (isRecord(reconnect)) {
    options['reconnect'] = {
      maxAttempts: reconnect['maxAttempts'],
      baseDelayMs: reconnect['baseDelayMs'] ?? 250,
      maxDelayMs: reconnect['maxDelayMs'] ?? 5000,
      random: reconnect['random'] ?? Math.random,
    };
  }
  const num = (key: string, rule: NumberRule, fallback: number): void =>
    field(options, input, key, (v) => checkNumber(issues, key, v, rule), () => fallback);
  num('readyTimeoutMs', positiveMs, 10_000);
  num('maxPayload', { int: true, msg: 'must be an integer', min: [1, true, 'must be an integer >= 1'] }, 1024 * 1024);
  field(options, input, 'clientBoundaries', booleanCheck(issues, 'clientBoundaries', false), () => true);
  num('boundaryHoldMs', msRule({ max: [60_000, true, 'must be at most 60000 ms'] }), 250);
  num('responseTimeoutMs', positiveMs, 15_000);
  num('closeGraceMs', msRule(), 1000);
  field(options, input, 'stall', (v) => checkStall(issues, v));
  const stall = options['stall'];
  if (isRecord(stall)) options['stall'] = { afterMs: stall['afterMs'], fallback: stall['fallback'] };
  field(options, input, 'fallbackSpeech', (v) => v === undefined || typeof v === 'function' || (add(issues, 'fallbackSpeech', 'must be a function', 'value_error'), false));
  return out.length === before ? (options as unknown as ClientOptions) : undefined;
}

// ---------------------------------------------------------------------------
// Server frames
// ---------------------------------------------------------------------------

const isString = (v: unknown): v is string => typeof v === 'string';

function words(list: unknown): Array<{ word: string; start: number; end: number }> | undefined {
  if (!Array.isArray(list)) return undefined;
  const out: Array<{ word: string; start: number; end: number }> = [];
  for (const w of list) {
    if (!isRecord(w) || !isString(w['word']) || !isNumber(w['start']) || !isNumber(w['end'])) return undefined;
    out.push({ word: w['word'], start: w['start'], end: w['end'] });
  }
  return out;
}

/**
 * The server frame `json` is (unknown keys dropped), or undefined when it is none: what
 * `ServerFrameSchema.safeParse` decides.
 */
export function checkServerFrame(json: unknown): ServerFrame | undefined {
  if (!isRecord(json)) return undefined;
  const f = json;
  switch (f['type']) {
    case 'session.ready': {
      if (!isString(f['session_id']) || !isInt(f['run_id'])) return undefined;
      const config = f['config'];
      if (config === undefined) return { type: 'session.ready', session_id: f['session_id'], run_id: f['run_id'], ...('config' in f ? { config: undefined } : {}) };
      if (!isRecord(config) || Object.getPrototypeOf(config) !== Object.prototype) return undefined;
      return { type: 'session.ready', session_id: f['session_id'], run_id: f['run_id'], config: { ...config } };
    }
    case 'segment.start': {
      if (!isIndex(f['segment_id']) || !isString(f['text'])) return undefined;
      const list = f['word_timestamps'];
      if (list === undefined) return { type: 'segment.start', segment_id: f['segment_id'], text: f['text'], ...('word_timestamps' in f ? { word_timestamps: undefined } : {}) };
      const timed = words(list);
      return timed && { type: 'segment.start', segment_id: f['segment_id'], text: f['text'], word_timestamps: timed };
    }
    case 'segment.done':
      return isIndex(f['segment_id']) ? { type: 'segment.done', segment_id: f['segment_id'] } : undefined;
    case 'segment.skipped':
      return isIndex(f['segment_id']) && isString(f['text']) ? { type: 'segment.skipped', segment_id: f['segment_id'], text: f['text'] } : undefined;
    case 'session.error':
      return isString(f['error']) ? { type: 'session.error', error: f['error'] } : undefined;
    case 'session.done':
      return { type: 'session.done' };
    default:
      return undefined;
  }
}
