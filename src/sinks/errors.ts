/**
 * The error of the sinks: `RxVoiceError` with code `'sink'`.
 */
import { RxVoiceError, type RxVoiceErrorOptions } from '../core/errors.js';

/** Why a sink failed, for callers that branch on it. */
export type SinkErrorReason =
  | 'format_mismatch'
  | 'unsupported_format'
  | 'invalid_audio'
  | 'io'
  | 'no_player'
  | 'player_failed'
  | 'writable';

/** A sink could not write, play or finish its output. Never retryable by itself. */
export class SinkError extends RxVoiceError {
  override name = 'SinkError';
  readonly reason: SinkErrorReason;
  constructor(reason: SinkErrorReason, message: string, options: RxVoiceErrorOptions = {}) {
    super('sink', message, options);
    this.reason = reason;
  }
}

/** Wrap anything thrown by I/O into a SinkError (SinkErrors pass through). */
export function toSinkError(error: unknown, what: string, reason: SinkErrorReason = 'io'): SinkError {
  if (error instanceof SinkError) return error;
  const detail = error instanceof Error ? error.message : String(error);
  return new SinkError(reason, `${what}: ${detail}`, { cause: error });
}
