/**
 * The words of playback events, each when it is heard.
 */
import { filter, type OperatorFunction } from 'rxjs';
import type { HeardWord, PlaybackEvent } from './events.js';

/**
 * Keeps only the `word` events of `toWebAudio`: each word when the audio clock reaches
 * the sample its timestamp names, in order.
 *
 * <span class="informal">Captions that follow what is heard, not what has arrived.</span>
 *
 * ```
 * playback: --S--P-w--w--Y--E|
 * words:    -------w--w-----|
 * ```
 *
 * Completes and errors with its source. Needs `word_timestamps: true` in the session's
 * options (without them no word is emitted).
 *
 * ## Example
 * ```ts
 * import type { Observable } from 'rxjs';
 * import { wordsAsHeard, type PlaybackEvent } from 'rxvoice/web';
 *
 * declare const playback$: Observable<PlaybackEvent>; // from toWebAudio()
 * playback$.pipe(wordsAsHeard()).subscribe((word) => console.log(word.word, word.time));
 * ```
 *
 * @returns An operator from playback events to heard words.
 */
export function wordsAsHeard(): OperatorFunction<PlaybackEvent, HeardWord> {
  return filter((event): event is HeardWord => event.type === 'word');
}
