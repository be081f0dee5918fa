/**
 * The error of a phone call adapter: `RxVoiceError` with code `'sink'` and a `reason`.
 */
import { RxVoiceError, type RxVoiceErrorOptions } from '../core/errors.js';

/** Why a call's speech could not go on, for code that branches on it. */
export type TelephonyErrorReason =
  /** The call's socket closed (or failed) before its `stop` message. */
  | 'closed'
  /** No `start` message came within `startTimeoutMs`. */
  | 'no_start'
  /** `say()` was called while another `say()` of the same call was playing. */
  | 'busy'
  /** The speech's audio is not WAV (ask the session for `output_format: 'wav'`), or cannot be decoded. */
  | 'unsupported_audio'
  /** The call's media format is not 8 kHz mu-law (`audio/x-mulaw`). */
  | 'media_format';

/** A phone call's speech failed (`twilioMediaStream`). Never retryable by itself. */
export class TelephonyError extends RxVoiceError {
  override name = 'TelephonyError';
  readonly reason: TelephonyErrorReason;
  /**
   * @param reason Why the speech failed.
   * @param message What happened, for a person.
   * @param options `cause` and the other common fields.
   */
  constructor(reason: TelephonyErrorReason, message: string, options: RxVoiceErrorOptions = {}) {
    super('sink', message, options);
    this.reason = reason;
  }
}
