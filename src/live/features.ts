/**
 * The code a live session loads only when its options use it, in a browser page: the
 * timing metrics (`metrics`, `metrics.ts`), the stall fallback
 * (`stall: { fallback: 'tts-stream' }`, `stall-fallback.ts`) and the reconnect (`reconnect`,
 * `reconnect.ts`), besides the sentence rules of its language (`sentence-rules.ts`).
 *
 * - In Node all are there from the start: this file imports `features-node.ts`, so every
 *   session starts synchronously, as before;
 * - in a browser bundle `features-node.ts` is `features-browser.ts` (`"browser"` in
 *   package.json): a feature's module is `import()`ed when a session that uses it is
 *   subscribed, before its socket opens (the text waits, `load-then-start.ts`); a page that
 *   does not use it never downloads it.
 *
 * {@link sessionCodeLoad} says what a session must load first; {@link newMetricsRecorder},
 * {@link startStallFallback} and {@link reconnectCode} use the features once they are in.
 * @internal
 */
import type { SchedulerLike } from 'rxjs';
import * as bundled from './features-node.js';
import type { SpeechMetricsObserver, SpeechMetricsRecorder } from './metrics.js';
import { createSentenceSegmenter } from '../text/sentences.js';
import { sentenceRulesLoad } from './sentence-rules.js';
import type { FallbackSpeech, StalledSession, takeOverStalled } from './stall-fallback.js';
import type { ClientOptions } from './checks.js';

/** The features at hand: both in Node; in a browser bundle, those loaded so far. */
let Recorder: typeof SpeechMetricsRecorder | undefined = bundled.SpeechMetricsRecorder;
let takeOver: typeof takeOverStalled | undefined = bundled.takeOverStalled;
let reconnect: typeof bundled.reconnect | undefined = bundled.reconnect;

/** What decides the code a session needs: its language and the options that turn features on. */
export interface SessionNeeds {
  locale: string | undefined;
  metrics: SpeechMetricsObserver | undefined;
  stall: { fallback: 'tts-stream' | 'error' } | undefined;
  reconnect?: ClientOptions['reconnect'];
}

/**
 * One load of the code a session with these needs lacks (its language's table, the
 * features' modules, each by `import()` with a literal path, so that a bundler makes each a
 * chunk of its own), or undefined when every part is here: always in Node; in a page, for
 * English without metrics or fallback, or for parts an earlier session loaded.
 */
export function sessionCodeLoad(needs: SessionNeeds): (() => Promise<unknown>) | undefined {
  const rules = sentenceRulesLoad(needs.locale);
  const metrics = needs.metrics !== undefined && Recorder === undefined;
  const fallback = needs.stall?.fallback === 'tts-stream' && takeOver === undefined;
  const reconnects = needs.reconnect !== undefined && reconnect === undefined;
  if (rules === undefined && !metrics && !fallback && !reconnects) return undefined;
  return () =>
    Promise.all([
      rules?.(),
      metrics && import('./metrics.js').then((module) => void (Recorder = module.SpeechMetricsRecorder)),
      fallback && import('./stall-fallback.js').then((module) => void (takeOver = module.takeOverStalled)),
      reconnects && import('./reconnect.js').then((module) => void (reconnect = module)),
    ]);
}

/** The metrics recorder of a session. */
export function newMetricsRecorder(observer: SpeechMetricsObserver, scheduler: SchedulerLike): SpeechMetricsRecorder {
  return new (loaded(Recorder))(observer, scheduler);
}

/**
 * A stalled session's switch to its fallback (`takeOverStalled`), cutting sentences by
 * `locale`'s rules with the sentence engine the session already has (the fallback's chunk
 * holds none of it).
 */
export function startStallFallback(session: StalledSession, speech: FallbackSpeech, afterMs: number, locale: string | undefined): void {
  loaded(takeOver)(session, speech, afterMs, createSentenceSegmenter({ locale }));
}

/** The reconnect of a session (`reconnect.ts`): its wait before the next attempt, and its resumption once ready again. */
export function reconnectCode(): typeof bundled.reconnect {
  return loaded(reconnect);
}

/** A feature, once its module is loaded: a session made before is a bug, never a session silently without the feature. */
function loaded<T>(feature: T | undefined): T {
  if (feature === undefined) throw new Error('rxvoice: a session feature used before its code loaded');
  return feature;
}
