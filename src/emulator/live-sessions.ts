/**
 * The emulator's open live sessions, per emulator and key: counted for
 * `liveSessionsPerKey` (live.ts admits a session when it starts and releases it at
 * cleanup), and read by tests and benchmarks of the emulator's fairness.
 */
import type { EmulatorContext } from './types.js';

/** What the registry needs of a session. */
export interface OpenLiveSession {
  stats(): LiveSessionStats;
}

/** Open live sessions per emulator and key (for `liveSessionsPerKey`). */
export const openSessions = new WeakMap<EmulatorContext, Map<string, Set<OpenLiveSession>>>();

/** What one open live session holds (for tests and benchmarks of the emulator's fairness). */
export interface LiveSessionStats {
  /** Received text not yet sent as segments, characters (segmenter buffer included). */
  pendingTextChars: number;
  /** Reading of the socket is paused (backpressure on the client). */
  readingPaused: boolean;
  /** An `idle_timeout` timer is running (trailing text without a boundary waits for it). */
  idleFlushArmed: boolean;
  /** Segments created / sent so far. */
  segments: number;
  sent: number;
}

/** Stats of every open live session of an emulator, by key order of opening. */
export function liveSessionStats(context: EmulatorContext): LiveSessionStats[] {
  const perKey = openSessions.get(context);
  if (!perKey) return [];
  return [...perKey.values()].flatMap((sessions) => [...sessions].map((session) => session.stats()));
}

/**
 * Count `session` as open for `apiKey`, unless the key already holds
 * `liveSessionsPerKey` sessions. Returns whether it was admitted.
 */
export function admitSession(context: EmulatorContext, apiKey: string, session: OpenLiveSession): boolean {
  const perKey = openSessions.get(context) ?? new Map<string, Set<OpenLiveSession>>();
  openSessions.set(context, perKey);
  const open = perKey.get(apiKey) ?? new Set<OpenLiveSession>();
  if (open.size >= context.options.liveSessionsPerKey) return false;
  open.add(session);
  perKey.set(apiKey, open);
  return true;
}

/** No longer count `session` as open for `apiKey` (nothing when it was never admitted). */
export function releaseSession(context: EmulatorContext, apiKey: string, session: OpenLiveSession): void {
  const perKey = openSessions.get(context);
  const open = perKey?.get(apiKey);
  open?.delete(session);
  if (open?.size === 0) perKey?.delete(apiKey);
}
