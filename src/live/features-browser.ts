/**
 * The browser stand-in for `features-node.ts` (`"browser"` in package.json): no optional
 * feature up front; `features.ts` loads each by `import()` when a session uses it.
 * @internal
 */
import type { SpeechMetricsRecorder as Recorder } from './metrics.js';
import type { takeOverStalled as TakeOver } from './stall-fallback.js';
import type * as Reconnect from './reconnect.js';

/** Loaded when a session with `metrics` starts. */
export const SpeechMetricsRecorder: typeof Recorder | undefined = undefined;
/** Loaded when a session with `stall: { fallback: 'tts-stream' }` starts. */
export const takeOverStalled: typeof TakeOver | undefined = undefined;
/** Loaded when a session with `reconnect` starts. */
export const reconnect: typeof Reconnect | undefined = undefined;
