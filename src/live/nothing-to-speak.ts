/**
 * A text source that ended with nothing to speak (no text, or only whitespace): a local
 * `ValidationError` on `text`, as for any other bad input, raised before any session is
 * opened when the source ends at once (`of('')`), and before any text is sent otherwise.
 */
import { ValidationError } from '../core/errors.js';
import { LIVE_TTS_PATH } from '../core/routes.js';

const MESSAGE = 'nothing to speak: the text is empty or only whitespace';

/** The error of a text source that ended with nothing to speak. */
export function nothingToSpeakError(): ValidationError {
  return new ValidationError([{ loc: ['text'], msg: MESSAGE, type: 'value_error' }], { source: 'local', endpoint: LIVE_TTS_PATH });
}

/** Whether `error` is {@link nothingToSpeakError}'s. */
export function isNothingToSpeak(error: unknown): boolean {
  return error instanceof ValidationError && error.issues.length === 1 && error.issues[0]?.msg === MESSAGE;
}
