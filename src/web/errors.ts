/**
 * The error of browser playback: `RxVoiceError` with code `'sink'` and a `reason`.
 */
import { RxVoiceError, type RxVoiceErrorOptions } from '../core/errors.js';

/** Why playback failed, for a UI that branches on it. */
export type WebAudioErrorReason =
  /** The page has no Web Audio (`AudioContext`). */
  | 'no_web_audio'
  /** The `AudioContext` stayed suspended (autoplay policy: no user gesture yet) or is closed. */
  | 'suspended'
  /** A segment's audio could not be decoded. */
  | 'invalid_audio';

/** Browser playback could not start or go on (from `toWebAudio`). Never retryable by itself. */
export class WebAudioError extends RxVoiceError {
  override name = 'WebAudioError';
  readonly reason: WebAudioErrorReason;
  /**
   * @param reason Why playback failed.
   * @param message What happened and what to do, for a person.
   * @param options `cause` and the other common fields.
   */
  constructor(reason: WebAudioErrorReason, message: string, options: RxVoiceErrorOptions = {}) {
    super('sink', message, options);
    this.reason = reason;
  }
}
