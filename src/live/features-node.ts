/**
 * The live session's optional features, loaded with the library, for Node: the timing
 * metrics (`metrics` option), the stall fallback (`stall: { fallback: 'tts-stream' }`) and the
 * reconnect (`reconnect`). `features.ts` imports this file, so in Node a session with any of
 * them starts synchronously, as every session does. A browser bundle replaces this file with
 * `features-browser.ts` (`"browser"` in package.json), which holds none: a page loads a
 * feature's code by `import()` when a session that uses it starts (see `features.ts`).
 * @internal
 */
export { SpeechMetricsRecorder } from './metrics.js';
export { takeOverStalled } from './stall-fallback.js';
export * as reconnect from './reconnect.js';
