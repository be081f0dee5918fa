/**
 * rxvoice/web: live speech in the browser. `toWebAudio()` plays a session from
 * `speak()` (`rxvoice/live`) through Web Audio as its audio arrives; `wordsAsHeard()` and
 * `playbackState()` follow the audio clock, for captions and a UI. No Node built-in.
 *
 * ```ts
 * import { of, share } from 'rxjs';
 * import { speak } from 'rxvoice/live';
 * import { playbackState, toWebAudio } from 'rxvoice/web';
 *
 * const context = new AudioContext(); // in a click handler
 * const state$ = of('Hello there.').pipe(
 *   speak({ wsUrl: 'wss://example.com/speech', WebSocket }, { voice_id: 1, word_timestamps: true }),
 *   toWebAudio({ context }),
 *   playbackState(),
 * );
 * ```
 */
export { toWebAudio, type ToWebAudioOptions } from './toWebAudio.js';
export { wordsAsHeard } from './wordsAsHeard.js';
export {
  playbackState,
  INITIAL_PLAYBACK_STATE,
  type PlaybackState,
  type PlaybackSegment,
  type PlaybackStateOptions,
} from './playbackState.js';
export type {
  PlaybackEvent,
  HeardWord,
  SegmentScheduledEvent,
  SegmentPlayingEvent,
  SegmentPlayedEvent,
  SegmentSkippedPlaybackEvent,
  PlaybackEndedEvent,
} from './events.js';
export { WebAudioError, type WebAudioErrorReason } from './errors.js';
export type { AudioContextLike, AudioNodeLike, AudioBufferLike, AudioBufferSourceNodeLike, GainNodeLike } from './audio.js';
