/**
 * `toAudioDevice`'s heard report: what the listener heard when playback ends or is
 * interrupted, with a clock the test controls (the sink's scheduler) and a real player process.
 */
import { join } from 'node:path';
import { asyncScheduler, from, lastValueFrom, Subject, type SchedulerLike } from 'rxjs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { HeardReport, SpokenSegment } from '../../src/live/index.js';
import { toAudioDevice, type AudioDeviceProgress } from '../../src/sinks/index.js';
import { makeTempDir, RECORDING_PLAYER, removeDir, samples16, waitFor, wavSegment } from '../fixtures/sinkFixtures.js';

let dir: string;
beforeEach(async () => {
  dir = await makeTempDir('rxvoice-device-heard-');
});
afterEach(async () => {
  await removeDir(dir);
});

/** The async scheduler with a clock the test sets. */
function clock(): { scheduler: SchedulerLike; set(ms: number): void } {
  let now = 0;
  const scheduler = Object.assign(Object.create(asyncScheduler) as SchedulerLike, { now: () => now });
  return { scheduler, set: (ms) => (now = ms) };
}

/** One second of audio at 22.05 kHz with two words. */
function segment(id: number, text: string, words: Array<[string, number, number]>): SpokenSegment {
  return { ...wavSegment(id, samples16(22050, id)), text, word_timestamps: words.map(([word, start, end]) => ({ word, start, end })) };
}
const ONE = segment(0, 'One two.', [
  ['One', 0, 0.4],
  ['two.', 0.5, 0.9],
]);
const TWO = segment(1, ' Three four.', [
  ['Three', 0.1, 0.5],
  ['four.', 0.6, 0.95],
]);
const player = (out: string) => ({ command: process.execPath, args: [RECORDING_PLAYER, `--out=${out}`] });

describe('toAudioDevice onHeard', () => {
  it.each([
    [500, 'One'],
    [950, 'One two.'],
    [1600, 'One two. Three four.'.slice(0, 'One two. Three'.length)],
  ])('barge-in %i ms after the audio started: heard %j', async (ms, heard) => {
    const time = clock();
    const reports: HeardReport[] = [];
    const segments = new Subject<SpokenSegment>();
    const events: AudioDeviceProgress[] = [];
    const playing = segments
      .pipe(toAudioDevice({ player: player(join(dir, 'out.raw')), scheduler: time.scheduler, onHeard: (r) => reports.push(r) }))
      .subscribe((e) => events.push(e));
    segments.next(ONE);
    segments.next(TWO);
    await waitFor(() => events.length === 2, 10_000, 'both segments sent');
    time.set(ms);
    playing.unsubscribe();
    expect(reports).toEqual([{ heard, unheard: 'One two. Three four.'.slice(heard.length), playedSeconds: ms / 1000, complete: false, method: 'timestamps' }]);
  });

  it('at the end: everything heard, reported once', async () => {
    const reports: HeardReport[] = [];
    await lastValueFrom(from([ONE, TWO]).pipe(toAudioDevice({ player: player(join(dir, 'all.raw')), onHeard: (r) => reports.push(r) })));
    expect(reports).toEqual([expect.objectContaining({ heard: 'One two. Three four.', unheard: '', complete: true, playedSeconds: 2 })]);
  });

  it('a bad onHeard throws at once', () => {
    expect(() => toAudioDevice({ onHeard: 1 as never })).toThrow(/onHeard/);
  });
});
