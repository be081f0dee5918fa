/**
 * The state a UI binds to, folded from playback events.
 */
import { scan, startWith, type OperatorFunction } from 'rxjs';
import { ValidationError } from '../core/errors.js';
import type { WordTimestamp } from '../live/protocol.js';
import type { HeardWord, PlaybackEvent } from './events.js';

/** A segment as a UI shows it: its text and words, and whether it is being heard. */
export interface PlaybackSegment {
  segment_id: number;
  text: string;
  words: WordTimestamp[];
  /** `'scheduled'` (audio arrived, not heard yet), `'playing'`, `'played'`. */
  status: 'scheduled' | 'playing' | 'played';
}

/** Where playback is, for a UI: a new object on every change (safe for `useSyncExternalStore`). */
export interface PlaybackState {
  /** `'waiting'` (nothing heard yet, or between segments), `'playing'`, `'ended'`. */
  status: 'waiting' | 'playing' | 'ended';
  /** The word being heard (the last one reached by the audio clock), if any. */
  currentWord: HeardWord | undefined;
  /** Words heard so far, in order (the last `maxWords`). */
  wordsHeard: readonly HeardWord[];
  /** Segments scheduled so far, in order (the last `maxSegments`). */
  segments: readonly PlaybackSegment[];
  /** Texts the service skipped, in order (the last `maxSegments`). */
  skipped: readonly string[];
}

/** Options of {@link playbackState}. */
export interface PlaybackStateOptions {
  /** Words kept in `wordsHeard` (the most recent). Default 10000. */
  maxWords?: number;
  /** Segments kept in `segments`, and skipped texts in `skipped` (the most recent). Default 1000. */
  maxSegments?: number;
}

/** The state before any playback event. */
export const INITIAL_PLAYBACK_STATE: PlaybackState = Object.freeze({
  status: 'waiting',
  currentWord: undefined,
  wordsHeard: [],
  segments: [],
  skipped: [],
});

const keepLast = <T>(items: readonly T[], item: T, max: number): readonly T[] =>
  items.length >= max ? [...items.slice(items.length - max + 1), item] : [...items, item];

/**
 * Folds `toWebAudio`'s events into one state object a UI renders: the current word, the
 * words heard so far, the segments and the status.
 *
 * <span class="informal">The `playback$` a view binds to (React's `useSyncExternalStore`,
 * a Svelte store, a plain `subscribe`).</span>
 *
 * Emits {@link INITIAL_PLAYBACK_STATE} at once, then a new state per event. Completes
 * (status `'ended'` last) and errors with its source. Bad options throw a
 * `ValidationError` at once.
 *
 * ## Example
 * ```ts
 * import type { Observable } from 'rxjs';
 * import { playbackState, type PlaybackEvent } from 'rxvoice/web';
 *
 * declare const playback$: Observable<PlaybackEvent>; // from toWebAudio()
 * playback$.pipe(playbackState()).subscribe((state) => {
 *   document.title = state.currentWord?.word ?? state.status;
 * });
 * ```
 *
 * @param options `maxWords` (default 10000) and `maxSegments` (default 1000).
 * @returns An operator from playback events to playback states.
 */
export function playbackState(options: PlaybackStateOptions = {}): OperatorFunction<PlaybackEvent, PlaybackState> {
  const maxWords = options.maxWords ?? 10_000;
  const maxSegments = options.maxSegments ?? 1000;
  for (const [name, value] of [['maxWords', maxWords], ['maxSegments', maxSegments]] as const) {
    if (!Number.isSafeInteger(value) || value < 1) {
      throw new ValidationError([{ loc: [name], msg: 'must be a positive integer', type: 'value_error' }], { source: 'local' });
    }
  }
  const setSegment = (state: PlaybackState, id: number, status: PlaybackSegment['status']): readonly PlaybackSegment[] =>
    state.segments.map((segment) => (segment.segment_id === id ? { ...segment, status } : segment));
  return (source) =>
    source.pipe(
      scan((state: PlaybackState, event: PlaybackEvent): PlaybackState => {
        switch (event.type) {
          case 'segmentScheduled':
            return {
              ...state,
              segments: keepLast(state.segments, { segment_id: event.segment_id, text: event.text, words: event.words, status: 'scheduled' }, maxSegments),
            };
          case 'segmentPlaying':
            return { ...state, status: 'playing', segments: setSegment(state, event.segment_id, 'playing') };
          case 'word':
            return { ...state, currentWord: event, wordsHeard: keepLast(state.wordsHeard, event, maxWords) };
          case 'segmentPlayed':
            return { ...state, status: 'waiting', segments: setSegment(state, event.segment_id, 'played') };
          case 'segmentSkipped':
            return { ...state, skipped: keepLast(state.skipped, event.text, maxSegments) };
          case 'ended':
            return { ...state, status: 'ended', currentWord: undefined };
        }
      }, INITIAL_PLAYBACK_STATE),
      startWith(INITIAL_PLAYBACK_STATE),
    );
}
