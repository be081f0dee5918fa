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

// ---------------------------------------------------------------------------
// Objects as tables of fields
// ---------------------------------------------------------------------------

/** What a {@link Check} returns for a value it rejects (its issues added). */
const INVALID = Symbol('invalid');

/** Checks the value at `key`: the value to keep, or {@link INVALID} with its issues added. */
type Check = (issues: Issues, key: string, v: unknown) => unknown;

/**
 * One key of an object, in the schema's order: its check, and the value an undefined one
 * takes (a function is called for it, as zod's `_default` does; without a fallback,
 * undefined goes to the check: optional checks accept it).
 */
type Field = readonly [key: string, check: Check, fallback?: unknown];

/**
 * The object `input` is by `fields`, as a zod object decides: fields in order, unknown keys
 * dropped, defaults for undefined, an optional key kept (as undefined) only when present;
 * undefined when a field was rejected (every issue added, under `issues.prefix`).
 */
function parseObject(fields: readonly Field[], input: Rec, issues: Issues): Rec | undefined {
  const before = issues.out.length;
  const out: Rec = {};
  for (const [key, check, ...fallback] of fields) {
    const v = input[key];
    if (v === undefined && fallback.length > 0) out[key] = typeof fallback[0] === 'function' ? (fallback[0] as () => unknown)() : fallback[0];
    else {
      const value = check(issues, key, v);
      if (value !== INVALID && (v !== undefined || key in input)) out[key] = value;
    }
  }
  return issues.out.length === before ? out : undefined;
}

/** A number by `rule` (`checkNumber`). */
const number =
  (rule: NumberRule): Check =>
  (issues, key, v) =>
    checkNumber(issues, key, v, rule) ? v : INVALID;

/** `check`, or null and undefined as they are (zod's `nullish`). */
const nullish =
  (check: Check): Check =>
  (issues, key, v) =>
    v === null || v === undefined ? v : check(issues, key, v);

/** One of `values`, else `msg` (type `enum`). */
const oneOf =
  (values: readonly unknown[], msg: string): Check =>
  (issues, key, v) =>
    values.includes(v) ? v : (add(issues, key, msg, 'enum'), INVALID);

/** A nested object by `fields`, or undefined (optional). */
const object =
  (fields: readonly Field[]): Check =>
  (issues, key, v) => {
    if (v === undefined) return v;
    if (!isRecord(v)) return add(issues, key, 'must be an object', 'object_type'), INVALID;
    return parseObject(fields, v, { out: issues.out, prefix: [...issues.prefix, key] }) ?? INVALID;
  };

const flag: Check = (issues, key, v) => (typeof v === 'boolean' ? v : (add(issues, key, 'must be true or false', v === undefined ? 'missing' : 'boolean_type'), INVALID));
const func: Check = (issues, key, v) => (typeof v === 'function' ? v : (add(issues, key, 'must be a function', 'value_error'), INVALID));

// ---------------------------------------------------------------------------
// The session.start configuration
// ---------------------------------------------------------------------------

/** A numeric id (deprecated), or a locale tag or a string of digits: zod's union reports a whole number's own branch. */
const language: Check = (issues, key, v) => {
  if (typeof v === 'number' && Number.isInteger(v)) return number({ int: true, msg: 'must be an integer', min: [0, false, 'must be a positive integer'] })(issues, key, v);
  if (typeof v === 'string' && (LOCALE_TAG.test(v) || NUMERIC_ID.test(v))) return v;
  return add(issues, key, 'must be a lower-case locale tag like "en-us"', 'union_error'), INVALID;
};

/** `SessionConfigSchema` (protocol.ts), field by field. */
const SESSION_CONFIG: readonly Field[] = [
  ['voice_id', number({ int: true, msg: 'must be an integer voice id', min: [0, true, 'must be a non-negative integer voice id'] })],
  ['language', language, 'en-us'],
  ['output_format', oneOf(OUTPUT_FORMATS, 'must be one of wav, mp3, flac, aac'), 'mp3'],
  ['sample_rate', nullish(number({ int: true, msg: 'must be an integer number of hertz', min: [8000, true, 'must be at least 8000 Hz'], max: [48000, true, 'must be at most 48000 Hz'] }))],
  ['word_timestamps', flag, false],
  ['idle_timeout', number({ msg: 'must be a number of seconds', min: [0, false, 'must be more than 0 seconds'], max: [60, true, 'must be at most 60 seconds'] }), 1.0],
  ['enhance_named_entities_pronunciation', flag, false],
  ['enhance_reference_audio_quality', flag, false],
  ['maintain_source_accent', flag, false],
  ['apply_enhancement', nullish(flag)],
  ['speaking_rate', nullish(number({ msg: 'must be a number', min: [0.25, true, 'must be at least 0.25'], max: [4, true, 'must be at most 4'] }))],
];

/**
 * The `session.start` configuration of `input` (unknown keys dropped, defaults filled in),
 * or undefined with its issues added to `out` under `prefix`: what
 * `SessionConfigSchema.safeParse` decides.
 */
export function checkSessionConfig(input: Rec, out: ValidationIssue[], prefix: ReadonlyArray<string | number>): SessionConfig | undefined {
  return parseObject(SESSION_CONFIG, input, { out, prefix }) as SessionConfig | undefined;
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
/** `milliseconds()` of core/options.ts: >= 0. */
const ms = (extra: Partial<NumberRule> = {}): Check => number({ msg: MS, min: [0, true, 'must be >= 0 ms'], ...extra });
/** `positiveMilliseconds()`: > 0. */
const positiveMs = number({ msg: MS, min: [0, false, 'must be > 0 ms'] });

/** `ClientOptionsSchema` (option-schemas.ts), field by field. */
const CLIENT_OPTIONS: readonly Field[] = [
  [
    'reconnect',
    object([
      ['maxAttempts', number({ int: true, msg: 'must be an integer', min: [0, true, 'must be an integer >= 0'], max: [1000, true, 'must be at most 1000'] })],
      ['baseDelayMs', ms(), 250],
      ['maxDelayMs', ms(), 5000],
      ['random', func, () => Math.random],
    ]),
  ],
  ['readyTimeoutMs', positiveMs, 10_000],
  ['maxPayload', number({ int: true, msg: 'must be an integer', min: [1, true, 'must be an integer >= 1'] }), 1024 * 1024],
  ['clientBoundaries', flag, true],
  ['boundaryHoldMs', ms({ max: [60_000, true, 'must be at most 60000 ms'] }), 250],
  ['responseTimeoutMs', positiveMs, 15_000],
  ['closeGraceMs', ms(), 1000],
  [
    'stall',
    object([
      ['afterMs', positiveMs],
      ['fallback', oneOf(['tts-stream', 'error'], "must be 'tts-stream' or 'error'")],
    ]),
  ],
  ['fallbackSpeech', (issues, key, v) => (v === undefined ? v : func(issues, key, v))],
];

/**
 * The client options of `input` with their defaults, or undefined with its issues added
 * to `out` under `prefix`: what `ClientOptionsSchema.safeParse` (option-schemas.ts) decides.
 */
export function checkClientOptions(input: Rec, out: ValidationIssue[], prefix: ReadonlyArray<string | number>): ClientOptions | undefined {
  return parseObject(CLIENT_OPTIONS, input, { out, prefix }) as ClientOptions | undefined;
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
