/** Playback of the examples' speech that never costs the WAV file written alongside. */
import { catchError, EMPTY, throwError, type Observable } from 'rxjs';
import type { SpokenSegment } from '../../src/live/index.js';
import { SinkError, toAudioDevice, type PlayerCommand } from '../../src/sinks/index.js';

/**
 * Plays `segments$` with `player` (nothing without one). A player that cannot play (no
 * sound card, no audio server) errors with `SinkError`: `onFailure` hears it and playback
 * ends quietly; any other error passes.
 */
export function playUnlessBroken(
  segments$: Observable<SpokenSegment>,
  player: PlayerCommand | undefined,
  onFailure: (error: SinkError) => void,
): Observable<unknown> {
  if (!player) return EMPTY;
  return segments$.pipe(
    toAudioDevice({ player }),
    catchError((error: unknown) => {
      if (!(error instanceof SinkError)) return throwError(() => error);
      onFailure(error);
      return EMPTY;
    }),
  );
}
