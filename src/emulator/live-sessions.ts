/**
 * The emulator's open live sessions, per emulator and key: counted for
 * `liveSessionsPerKey` (live.ts adds a session when it starts and removes it at cleanup),
 * and read by tests and benchmarks of the emulator's fairness.
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
