/**
 * Options of the emulator, and its fault-injection settings, as zod schemas. Tests,
 * the CLI and the benchmarks all configure the emulator through these.
 */
import { availableParallelism } from 'node:os';
import { z } from 'zod';
import { RunKindSchema } from '../core/schemas.js';

/** The development API key the emulator accepts when no `apiKeys` are given. */
export const DEFAULT_DEV_API_KEY = 'rxv-dev-key-0000';

/** Default `synthThreads`: one per core but one for the event loop, 1 to 4. */
export function defaultSynthThreads(): number {
  return Math.max(1, Math.min(4, availableParallelism() - 1));
}

/** Latency: a fixed number of milliseconds, or a [min, max] range drawn uniformly (min <= max). */
export const LatencySchema = z.union([
  z.number().nonnegative(),
  z
    .tuple([z.number().nonnegative(), z.number().nonnegative()])
    .refine(([min, max]) => min <= max, { message: 'a [min, max] range needs min <= max' }),
]);
/** A latency in ms: a fixed number, or a `[min, max]` range drawn uniformly for each use. */
export type Latency = z.infer<typeof LatencySchema>;

/** Draw one latency in ms from a fixed number or a uniform `[min, max]` range. */
export function drawLatencyMs(latency: Latency | undefined, random: () => number = Math.random): number {
  if (latency === undefined) return 0;
  if (typeof latency === 'number') return latency;
  const [min, max] = latency;
  return min + random() * Math.max(0, max - min);
}

/** Faults to inject, per emulator or per API key (`faultsByKey`). */
export const FaultsSchema = z.object({
  /**
   * Fail synthesis of chosen live segments (by segment_id) `times` times. With
   * `times` >= 4 (1 try + 3 retries) the segment is skipped.
   */
  failSynthesis: z
    .object({
      segments: z.union([z.array(z.int().nonnegative()), z.literal('all')]),
      times: z.int().nonnegative(),
    })
    .optional(),
  /** Fail synthesis of any segment whose text contains this substring, `times` times. */
  failSynthesisMatching: z.object({ text: z.string(), times: z.int().nonnegative() }).optional(),
  /**
   * Drop the live connection (TCP closed, no close frame) once this many binary (audio)
   * frames went out on it, counted across its segments: the next frame, JSON or binary,
   * is not sent. Each connection counts from 0, a client's reconnection too, so every
   * connection is dropped after as many frames. 0 drops at the first frame after
   * `session.ready`. Unset (the default): never.
   */
  dropAfterFrames: z.int().nonnegative().optional(),
  /** Extra latency added to each synthesis, ms. */
  synthesisLatencyMs: LatencySchema.optional(),
  /** Extra latency before each HTTP answer, ms. */
  httpLatencyMs: LatencySchema.optional(),
  /** End tasks of these kinds (or every task with '*') in a failed status. */
  taskOutcome: z.partialRecord(z.union([RunKindSchema, z.literal('*')]), z.enum(['ERROR', 'TIMEOUT', 'PAYMENT_REQUIRED'])).optional(),
  /** Live session: credits run out after this many segments (then session.error + 4402). */
  creditsAfterSegments: z.int().nonnegative().optional(),
  /** Answer the next N HTTP requests with this status (e.g. 429 or 503) before serving normally. */
  httpErrors: z.object({ status: z.int().min(400).max(599), count: z.int().positive(), retryAfter: z.number().optional() }).optional(),
});
/** Faults to inject (see {@link FaultsSchema}). */
export type Faults = z.infer<typeof FaultsSchema>;

/** Credits charged per operation. */
export const PricesSchema = z.object({
  /** Credits per live or tts-stream segment. */
  speechSegment: z.number().nonnegative().default(1),
  /** Credits per task created, by run kind. */
  task: z.number().nonnegative().default(1),
  /** Credits per translation stream. */
  translationStream: z.number().nonnegative().default(1),
});

/** Options of `startEmulator` (every field optional, with the defaults shown). */
export const EmulatorOptionsSchema = z.object({
  /** TCP port; 0 (the default) picks a free port. */
  port: z.int().min(0).max(65535).default(0),
  host: z.string().default('127.0.0.1'),
  /** Accepted API keys; default one documented development key. */
  apiKeys: z.array(z.string().min(1)).min(1).default([DEFAULT_DEV_API_KEY]),
  /**
   * Speech engine: `'espeak'` (real speech, espeak-ng compiled to WASM: the optional
   * package `espeak-ng`; `startEmulator` rejects with an `EspeakUnavailableError` when it
   * cannot be loaded) or `'tone'` (a deterministic tone per word). Left out: espeak when
   * espeak-ng loads, else tone, with one `warn` line naming `npm install espeak-ng`.
   */
  synth: z.enum(['espeak', 'tone']).optional(),
  /**
   * Worker threads that run the espeak synthesizer, so that synthesis never blocks the
   * event loop (other clients keep being answered). Default: one per core but one for
   * the event loop, 1 to 4 (`max(1, min(4, availableParallelism() - 1))`). 0: synthesize
   * on the event loop (the old way; for comparison). The tone synth always runs inline.
   */
  synthThreads: z.int().min(0).max(64).default(() => defaultSynthThreads()),
  /** Where the emulator's warnings go, one line each (default: stderr). */
  warn: z.custom<(message: string) => void>((value) => typeof value === 'function', { message: 'must be a function' }).optional(),
  /** Starting credit balance per key (a number for every key, or a map by key). */
  credits: z.union([z.number().nonnegative(), z.record(z.string(), z.number().nonnegative())]).default(1_000_000),
  prices: PricesSchema.default({ speechSegment: 1, task: 1, translationStream: 1 }),
  /**
   * How long a task stays PENDING, ms: a number, or `[min, max]` drawn uniformly per
   * task (the drawn value is the task's `durationMs`, which a test or bench may set
   * itself right after creation).
   */
  taskDurationMs: LatencySchema.default(50),
  /**
   * Emulated network: one-way latency, ms (a number, or `[min, max]` drawn uniformly per
   * chunk), applied to every byte in both directions (HTTP requests and answers, the
   * WebSocket upgrade, every live frame), order kept; a new connection pays one extra
   * round trip (TCP handshake). Default 0: no relay, direct loopback.
   */
  latencyMs: LatencySchema.default(0),
  /**
   * Emulated network: capacity of each direction of each connection, bytes per second.
   * Default: unlimited.
   */
  bandwidthBytesPerSecond: z.number().positive().optional(),
  /** Lifetime of temporary result addresses, ms. */
  urlTtlMs: z.number().positive().default(10 * 60_000),
  /** Live segments synthesized at once per session. */
  concurrency: z.int().positive().default(3),
  /** Live session: close 4400 when no `session.start` arrives within this many ms. */
  liveStartTimeoutMs: z.number().positive().default(10_000),
  /**
   * Live session: close 4408 (after a `session.error`) when, for this many ms, the client
   * sent no frame and no frame reached it. Default 2 minutes.
   */
  liveIdleTimeoutMs: z.number().positive().default(120_000),
  /**
   * Live sessions open at once per API key; one more is refused with a `session.error`
   * and close 4429. Default 32.
   */
  liveSessionsPerKey: z.int().positive().default(32),
  /**
   * Live session: text received but not yet spoken (characters) above which the
   * emulator stops reading the socket until half of it went out, so a client pushing
   * text faster than it is spoken meets TCP backpressure instead of growing memory.
   * Default 64 Ki characters.
   */
  livePendingTextChars: z.int().positive().default(64 * 1024),
  /** Base backoff between synthesis retries, ms (doubles each retry). */
  retryBaseMs: z.number().nonnegative().default(20),
  /** Tone synth: seconds per word and sample rate. */
  toneWordSeconds: z.number().positive().default(0.25),
  faults: FaultsSchema.default({}),
  faultsByKey: z.record(z.string(), FaultsSchema).default({}),
  /** Pause between pieces of streamed answers (translation SSE pieces, tts-stream sentences), ms. */
  streamDelayMs: z.number().nonnegative().default(5),
  /** Largest accepted HTTP request body, bytes (larger: 413). */
  maxBodyBytes: z.int().positive().default(25 * 1024 * 1024),
  /** Log requests to stderr (the key is never logged). */
  log: z.boolean().default(false),
});
/** Options of `startEmulator` (see {@link EmulatorOptionsSchema}). */
export type EmulatorOptions = z.input<typeof EmulatorOptionsSchema>;
/** {@link EmulatorOptions} after parsing: every default filled in. */
export type ResolvedEmulatorOptions = z.infer<typeof EmulatorOptionsSchema>;
