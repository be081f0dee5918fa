/**
 * The emulator's shared state: credit ledger, runs, tasks, voices, temporary result
 * files, fault bookkeeping and the request log. One instance per `startEmulator()`;
 * the HTTP side (http*.ts) and the live side (live.ts) both use it through
 * {@link EmulatorContext}.
 */
import { randomBytes } from 'node:crypto';
import type { RunKind, Voice } from '../core/schemas.js';
import { drawLatencyMs, type Faults, type ResolvedEmulatorOptions } from './options.js';
import type { CreditLedger, EmulatorContext, RunRecord, Synthesizer } from './types.js';

/**
 * The documented default voice id: `1`, the library voice "Alex" (en-us, male), matching
 * the service's default `gender` 1 (male).
 */
export const DEFAULT_VOICE_ID = 1;

/** First id given to custom voices; library voices sit below it. */
export const FIRST_CUSTOM_VOICE_ID = 1000;

/** The emulator's voice library. */
export const LIBRARY_VOICES: readonly Voice[] = [
  { id: 1, voice_name: 'Alex', gender: 1, age: 35, description: 'Calm narrator, American English', language: 'en-us', is_published: true },
  { id: 2, voice_name: 'Grace', gender: 2, age: 29, description: 'Bright conversational voice, American English', language: 'en-us', is_published: true },
  { id: 3, voice_name: 'Oliver', gender: 1, age: 42, description: 'Warm British English', language: 'en-gb', is_published: true },
  { id: 4, voice_name: 'Camille', gender: 2, age: 31, description: 'Parisian French', language: 'fr-fr', is_published: true },
  { id: 5, voice_name: 'Lukas', gender: 1, age: 38, description: 'Standard German', language: 'de-de', is_published: true },
  { id: 6, voice_name: 'Lucía', gender: 2, age: 27, description: 'Castilian Spanish', language: 'es-es', is_published: true },
];

/**
 * Deprecated numeric language ids the emulator knows, mapped to locale tags. Any other
 * numeric id is read as `en-us`.
 */
export const NUMERIC_LANGUAGE_IDS: Readonly<Record<string, string>> = {
  '1': 'en-us',
  '2': 'en-gb',
  '3': 'fr-fr',
  '4': 'de-de',
  '5': 'es-es',
};

/** A locale tag for a language parameter (a tag, or a deprecated numeric id). */
export function resolveLanguage(language: string | number): string {
  const text = String(language);
  if (/^[0-9]+$/.test(text)) return NUMERIC_LANGUAGE_IDS[String(Number(text))] ?? 'en-us';
  return text;
}

export type TaskOutcome = 'SUCCESS' | 'ERROR' | 'TIMEOUT' | 'PAYMENT_REQUIRED';

/** A submitted task. Its status is derived from timestamps, no timer per task. */
export interface TaskRecord {
  task_id: string;
  kind: RunKind;
  apiKey: string;
  createdAt: number;
  /**
   * How long this task stays PENDING, ms; set at creation when `options.taskDurationMs`
   * is a range, else unset (then the option's current value applies). Tests and
   * benchmarks may set it right after creation.
   */
  durationMs?: number;
  /** How the task ends once its duration has passed. */
  outcome: TaskOutcome;
  message?: string;
  /** Data handed to the run on SUCCESS. */
  data: unknown;
  /** Filled when the task is first seen finished with SUCCESS. */
  run?: RunRecord;
  /** Extra fields added to the SUCCESS status (e.g. text-to-sound `audio_url`). */
  extra?: Record<string, unknown>;
}

/** A temporary result address served under `/files/`. */
export interface TemporaryFile {
  token: string;
  contentType: string;
  expiresAt: number;
  /** Produces the bytes (lazily, on first download). */
  produce: () => Promise<Uint8Array>;
}

/** One HTTP request seen by the emulator (the key is never recorded). */
export interface RequestLogEntry {
  method: string;
  path: string;
}

/** The full state: the shared {@link EmulatorContext} plus what only the HTTP side uses. */
export interface EmulatorState extends EmulatorContext {
  /** Every HTTP request received (method and path without query), in order. */
  readonly requests: RequestLogEntry[];
  readonly tasks: Map<string, TaskRecord>;
  readonly runs: Map<number, RunRecord>;
  readonly files: Map<string, TemporaryFile>;
  /** Library and custom voices, by id. */
  readonly voices: Map<number, Voice>;
  /** Whether `apiKey` is one of the keys the emulator accepts. */
  isAcceptedKey(apiKey: string | undefined): apiKey is string;
  /** Create a task; decides its outcome now (faults, then credits). */
  createTask(kind: RunKind, apiKey: string, data: unknown): TaskRecord;
  /** Current status of a task; creates the run when it is first seen SUCCESS. */
  taskStatus(task: TaskRecord): { status: 'PENDING' | TaskOutcome; run_id: number | null; message?: string };
  /** Add a custom voice and return it. */
  addCustomVoice(fields: Omit<Voice, 'id' | 'is_published'>): Voice;
  /** Register a temporary file; returns its token-bearing file name (`<token>.<ext>`). */
  addFile(ext: string, contentType: string, produce: () => Promise<Uint8Array>): string;
  /**
   * Consume one injected HTTP error for this key, if any: returns the fault to answer
   * with, or undefined to serve normally.
   */
  takeHttpError(apiKey: string): NonNullable<Faults['httpErrors']> | undefined;
  /** Wait `ms` (cut short, resolving, when the emulator closes). */
  delay(ms: number): Promise<void>;
  /** Run every teardown; called by `close()`. */
  shutdown(): void;
}

/** A random case-sensitive identifier. */
export function randomId(bytes = 12): string {
  return randomBytes(bytes).toString('base64url');
}

function createLedger(options: ResolvedEmulatorOptions): CreditLedger {
  const balances = new Map<string, number>();
  const initial = (apiKey: string): number =>
    typeof options.credits === 'number' ? options.credits : (options.credits[apiKey] ?? 0);
  const balance = (apiKey: string): number => {
    let value = balances.get(apiKey);
    if (value === undefined) {
      value = initial(apiKey);
      balances.set(apiKey, value);
    }
    return value;
  };
  return {
    balance,
    charge(apiKey, amount) {
      const current = balance(apiKey);
      if (amount > current) return false;
      balances.set(apiKey, current - amount);
      return true;
    },
    set(apiKey, amount) {
      balances.set(apiKey, amount);
    },
  };
}

/** Teardowns run when the emulator closes, and waits that end early then. */
function createLifecycle() {
  const teardowns = new Set<() => void>();
  let closing = false;
  const onClose = (teardown: () => void): (() => void) => {
    teardowns.add(teardown);
    return () => {
      teardowns.delete(teardown);
    };
  };
  return {
    isClosing: (): boolean => closing,
    onClose,
    /** Resolves after `ms`, or at once when the emulator closes meanwhile. */
    delay(ms: number): Promise<void> {
      if (ms <= 0 || closing) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const done = (): void => {
          clearTimeout(timer);
          unregister();
          resolve();
        };
        const timer = setTimeout(done, ms);
        const unregister = onClose(done);
      });
    },
    shutdown(): void {
      closing = true;
      for (const teardown of [...teardowns]) {
        try {
          teardown();
        } catch {
          // a failing teardown must not stop the others
        }
      }
      teardowns.clear();
    },
  };
}

/** Runs, numbered from 1. */
function createRunStore() {
  const runs = new Map<number, RunRecord>();
  let nextRunId = 1;
  const createRun = (kind: RunKind, apiKey: string, data: unknown): RunRecord => {
    const run: RunRecord = { run_id: nextRunId++, kind, apiKey, data };
    runs.set(run.run_id, run);
    return run;
  };
  return { runs, createRun };
}

/**
 * Temporary files behind signed URLs. Expired files are kept a while (answering 403
 * rather than 404), then forgotten, so a long-running emulator does not grow without bound.
 */
function createFileStore(options: ResolvedEmulatorOptions) {
  const files = new Map<string, TemporaryFile>();
  let lastSweep = Date.now();
  const sweepFiles = (): void => {
    const now = Date.now();
    const grace = Math.max(options.urlTtlMs, 60_000);
    if (now - lastSweep < 1_000) return;
    lastSweep = now;
    for (const [token, file] of files) if (now - file.expiresAt > grace) files.delete(token);
  };
  const addFile: EmulatorState['addFile'] = (ext, contentType, produce) => {
    sweepFiles();
    const token = randomId(18);
    let cached: Promise<Uint8Array> | undefined;
    files.set(token, {
      token,
      contentType,
      expiresAt: Date.now() + options.urlTtlMs,
      produce: () => (cached ??= produce()),
    });
    return `${token}.${ext}`;
  };
  return { files, addFile };
}

/** Tasks: created with their outcome decided (faults, then credits), answered by age. */
function createTaskStore(
  options: ResolvedEmulatorOptions,
  credits: CreditLedger,
  faultsFor: (apiKey: string) => Faults,
  createRun: (kind: RunKind, apiKey: string, data: unknown) => RunRecord,
) {
  const tasks = new Map<string, TaskRecord>();
  const createTask: EmulatorState['createTask'] = (kind, apiKey, data) => {
    const faults = faultsFor(apiKey);
    const forced = faults.taskOutcome?.[kind] ?? faults.taskOutcome?.['*'];
    let outcome: TaskOutcome;
    let message: string | undefined;
    if (forced) {
      outcome = forced;
      if (forced === 'ERROR') message = `emulated failure of the ${kind} task (fault injection)`;
    } else if (!credits.charge(apiKey, options.prices.task)) {
      outcome = 'PAYMENT_REQUIRED';
    } else {
      outcome = 'SUCCESS';
    }
    const task: TaskRecord = { task_id: randomId(), kind, apiKey, createdAt: Date.now(), outcome, data };
    if (message !== undefined) task.message = message;
    if (typeof options.taskDurationMs !== 'number') task.durationMs = drawLatencyMs(options.taskDurationMs);
    tasks.set(task.task_id, task);
    return task;
  };
  const taskStatus: EmulatorState['taskStatus'] = (task) => {
    const durationMs = task.durationMs ?? (typeof options.taskDurationMs === 'number' ? options.taskDurationMs : 0);
    if (Date.now() - task.createdAt < durationMs) return { status: 'PENDING', run_id: null };
    if (task.outcome === 'SUCCESS') {
      task.run ??= createRun(task.kind, task.apiKey, task.data);
      return { status: 'SUCCESS', run_id: task.run.run_id };
    }
    if (task.outcome === 'ERROR') return { status: 'ERROR', run_id: null, message: task.message ?? 'task failed' };
    return { status: task.outcome, run_id: null };
  };
  return { tasks, createTask, taskStatus };
}

/**
 * Injected HTTP errors still to serve, keyed by the fault object itself, so that a test
 * replacing `options.faults.httpErrors` starts a fresh count.
 */
function createHttpErrorFaults(options: ResolvedEmulatorOptions): EmulatorState['takeHttpError'] {
  const httpErrorsLeft = new WeakMap<object, number>();
  return (apiKey) => {
    const own = options.faultsByKey[apiKey]?.httpErrors;
    const fault = own ?? options.faults.httpErrors;
    if (!fault) return undefined;
    const left = httpErrorsLeft.get(fault) ?? fault.count;
    if (left <= 0) return undefined;
    httpErrorsLeft.set(fault, left - 1);
    return fault;
  };
}

/** Build the state of one emulator instance from its stores (each a named step above). */
export function createEmulatorState(options: ResolvedEmulatorOptions, synthesizer: Synthesizer): EmulatorState {
  const credits = createLedger(options);
  const voices = new Map<number, Voice>(LIBRARY_VOICES.map((v) => [v.id, { ...v }]));
  let nextCustomVoiceId = FIRST_CUSTOM_VOICE_ID;
  const synth = Promise.resolve(synthesizer);
  const faultsFor = (apiKey: string): Faults => ({ ...options.faults, ...(options.faultsByKey[apiKey] ?? {}) });
  const lifecycle = createLifecycle();
  const { runs, createRun } = createRunStore();
  const { files, addFile } = createFileStore(options);
  const { tasks, createTask, taskStatus } = createTaskStore(options, credits, faultsFor, createRun);

  return {
    options,
    credits,
    requests: [],
    tasks,
    runs,
    files,
    voices,
    get closing() {
      return lifecycle.isClosing();
    },
    faultsFor,
    voice: (id) => voices.get(id),
    createRun,
    synthesizer: () => synth,
    onClose: lifecycle.onClose,
    isAcceptedKey(apiKey): apiKey is string {
      return typeof apiKey === 'string' && apiKey.length > 0 && options.apiKeys.includes(apiKey);
    },
    createTask,
    taskStatus,
    addCustomVoice(fields) {
      const voice: Voice = { id: nextCustomVoiceId++, is_published: false, ...fields };
      voices.set(voice.id, voice);
      return voice;
    },
    addFile,
    takeHttpError: createHttpErrorFaults(options),
    delay: lifecycle.delay,
    shutdown: lifecycle.shutdown,
  };
}
