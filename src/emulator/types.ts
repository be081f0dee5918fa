/**
 * Internal interfaces between the parts of the emulator: the HTTP server and state
 * (server.ts, http.ts, state.ts), the live session handler (live.ts) and the
 * synthesizers (synth/). The emulator imports nothing of the client beyond the
 * shared schemas, routes and text rules.
 */
import type { IncomingMessage } from 'node:http';
import type { WebSocket } from 'ws';
import type { Voice, RunKind } from '../core/schemas.js';
import type { WordTimestamp } from '../live/protocol.js';
import type { Faults, ResolvedEmulatorOptions } from './options.js';

export interface SynthRequest {
  text: string;
  /** Locale tag or numeric id as given. */
  language: string;
  voice: Voice;
  /** Desired output rate; the synthesizer may resample. */
  sampleRate?: number | undefined;
  speakingRate?: number | null | undefined;
  wordTimestamps: boolean;
}

export interface SynthResult {
  /** Mono 16-bit PCM. */
  pcm: Int16Array;
  sampleRate: number;
  /** Word timings in seconds relative to the start of `pcm` (always filled; callers drop them if not asked). */
  words: WordTimestamp[];
}

export interface Synthesizer {
  readonly name: 'espeak' | 'tone';
  /** Locale tags this synthesizer speaks (used to reject unsupported languages with 4400). */
  supportsLanguage(language: string): boolean;
  synthesize(request: SynthRequest): Promise<SynthResult>;
  /** Release what it holds (worker threads); called once, when the emulator closes. */
  close?(): Promise<void>;
}

/** Credit ledger per API key. */
export interface CreditLedger {
  balance(apiKey: string): number;
  /** Deduct `amount`; false (and nothing deducted) when the balance is too low. */
  charge(apiKey: string, amount: number): boolean;
  set(apiKey: string, amount: number): void;
}

export interface RunRecord {
  run_id: number;
  kind: RunKind;
  apiKey: string;
  data: unknown;
}

/** Shared state the HTTP side and the live side both use. */
export interface EmulatorContext {
  readonly options: ResolvedEmulatorOptions;
  readonly credits: CreditLedger;
  /** Faults in force for a key (emulator-wide merged with per-key). */
  faultsFor(apiKey: string): Faults;
  /** Voice by id (library or custom). */
  voice(id: number): Voice | undefined;
  /** Create a run of a kind and return its id. */
  createRun(kind: RunKind, apiKey: string, data: unknown): RunRecord;
  /** The synthesizer the emulator started with (`options.synth`, or the fallback). */
  synthesizer(): Promise<Synthesizer>;
  /** Register a teardown run by `close()` (timers, sockets). Returns an unregister function. */
  onClose(teardown: () => void): () => void;
  /** Whether the emulator is closing (stop new work). */
  readonly closing: boolean;
}

/** Signature of the live session handler (live.ts); called after the key was checked. */
export type LiveConnectionHandler = (
  socket: WebSocket,
  request: IncomingMessage,
  apiKey: string,
  context: EmulatorContext,
) => void;
