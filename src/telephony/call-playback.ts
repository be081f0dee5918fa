/**
 * One `say()` of a phone call: speech in, 20 ms mu-law frames out at real time on a
 * scheduler, a `mark` after each sentence, the echoed marks followed, and a `HeardReport`
 * when it ends, is interrupted, or the call goes away.
 */
import type { Observable, SchedulerLike, Subscriber, Subscription } from 'rxjs';
import { HeardTracker, type HeardInput, type HeardReport } from '../live/heard.js';
import { TelephonyError } from './errors.js';
import { PhoneFramer, type PhoneItem } from './phone-frames.js';

/** Milliseconds of one frame. */
export const FRAME_MS = 20;
/** The most a late frame timer is made up for by frames sent at once (beyond it, the gap is let be). */
const MAX_CATCH_UP_MS = 200;

/** What `say()` emits: sentences sent and heard, then the heard report, last. */
export type CallPlaybackEvent =
  /** A sentence's last frame and its mark were sent; `seconds` of this speech sent so far. */
  | { type: 'segmentSent'; segment_id: number; seconds: number }
  /** The call echoed the sentence's mark: its audio has played. */
  | { type: 'segmentPlayed'; segment_id: number }
  /** Last: what the caller heard (also given to `onHeard`). */
  | { type: 'heard'; report: HeardReport; reason: HeardReason };

/** Why a playback ended. */
export type HeardReason = 'ended' | 'interrupted' | 'stopped' | 'closed' | 'error';

/** What a playback needs of its call. */
export interface CallLink {
  /** Sends a message if the socket is open; false when it is not. */
  send(message: string): boolean;
  media(bytes: Uint8Array): string;
  mark(name: string): string;
  clear(): string;
  scheduler: SchedulerLike;
  markTimeoutMs: number;
  onHeard: ((report: HeardReport) => void) | undefined;
  /** Called once when the playback is over (the call forgets it). */
  released(): void;
}

interface SentMark {
  segment_id: number;
  frames: number;
}

/** One playback of speech into a call (see the file's summary). */
export class CallPlayback {
  private readonly tracker = new HeardTracker();
  private readonly framer = new PhoneFramer();
  private readonly queue: PhoneItem[] = [];
  private readonly marks = new Map<string, SentMark>();
  private static marksMade = 0;
  private speech: Subscription | undefined;
  private timer: Subscription | undefined;
  /** The wait for the marks after the last frame (apart from `timer`, which holds back `pump`). */
  private markWait: Subscription | undefined;
  /** When the next frame is due (scheduler time), kept on a fixed 20 ms grid while audio flows. */
  private nextAt = -Infinity;
  /** The queue ran dry (or nothing was sent yet): the next frame goes when its audio comes, the grid from there. */
  private resume = true;
  private sentFrames = 0;
  private confirmedFrames = 0;
  private speechDone = false;
  /** The speech errored (after what it sent plays out, the playback errors with it). */
  private speechFailed: { error: unknown } | undefined;
  private streaming = false;
  private over = false;

  constructor(
    private readonly link: CallLink,
    private readonly subscriber: Subscriber<CallPlaybackEvent>,
  ) {}

  /** Starts taking speech; frames go out once `streaming()` was called (the call has started). */
  begin(speech: Observable<HeardInput>): void {
    this.speech = speech.subscribe({
      next: (value) => this.onSpeech(value),
      error: (error: unknown) => this.onSpeechEnd({ error }),
      complete: () => this.onSpeechEnd(),
    });
    if (this.over) this.speech.unsubscribe();
  }

  /** The call's stream id is known: frames may go. */
  streamStarted(): void {
    this.streaming = true;
    this.pump();
  }

  /** A mark came back from the call. */
  onMark(name: string): void {
    const mark = this.marks.get(name);
    if (mark === undefined || this.over) return;
    this.marks.delete(name);
    this.confirmedFrames = Math.max(this.confirmedFrames, mark.frames);
    this.subscriber.next({ type: 'segmentPlayed', segment_id: mark.segment_id });
    this.pump();
  }

  /** Barge-in: `clear` to the call, the report, the end. */
  interrupt(): void {
    if (this.over) return;
    this.clearCall();
    this.finish('interrupted');
  }

  /** `clear`: the call drops the audio it holds; none before its `start` (nothing was sent, and no stream is named yet). */
  private clearCall(): void {
    if (this.streaming) this.link.send(this.link.clear());
  }

  /** The call ended (`stop`) or its socket closed (`error`: why, default a `'closed'` TelephonyError). */
  callEnded(how: 'stopped' | 'closed', error?: unknown): void {
    this.finish(how, how === 'closed' ? (error ?? new TelephonyError('closed', 'The call closed before its stop message: the speech was cut off.')) : undefined);
  }

  /** Unsubscribed while playing: as an interruption, with no one left to emit to. */
  teardown(): void {
    if (!this.over) this.interrupt();
  }

  /** Seconds of this speech sent to the call: paced at real time, what has played (to a frame and the network's delay). */
  private playedSeconds(): number {
    return (Math.max(this.sentFrames, this.confirmedFrames) * FRAME_MS) / 1000;
  }

  private onSpeech(value: HeardInput): void {
    if (this.over) return;
    this.tracker.push(value);
    let items: PhoneItem[];
    try {
      items = this.framer.push(value);
    } catch (error) {
      this.clearCall();
      this.finish('error', error);
      return;
    }
    this.queue.push(...items);
    this.pump();
  }

  /**
   * The speech completed, or failed (`failed`: a session out of credits, a dropped service):
   * what it left open is framed and queued, then the queue drains; the audio that arrived
   * (paid for) plays to its end either way, then a failure ends the playback with its error.
   */
  private onSpeechEnd(failed?: { error: unknown }): void {
    if (this.over) return;
    this.queue.push(...this.framer.finish());
    this.speechDone = true;
    this.speechFailed = failed;
    this.pump();
  }

  /** Sends what is due: marks at once, frames one per 20 ms on the scheduler's clock. */
  private pump(): void {
    if (this.over || !this.streaming || this.timer !== undefined) return;
    const scheduler = this.link.scheduler;
    for (;;) {
      const item = this.queue[0];
      if (item === undefined) {
        this.resume = true;
        if (this.speechDone) this.drained();
        return;
      }
      if (item.kind === 'mark') {
        this.queue.shift();
        this.sendMark(item.segment_id, item.frames);
        continue;
      }
      const now = scheduler.now();
      // A timer that fired late does not move the grid: the frames due go at once, so the call
      // gets 20 ms of audio every 20 ms on average (moving it, each late timer made the
      // speech slower than real time and the call's buffer ran dry). After a pause in the
      // audio, or a stall longer than MAX_CATCH_UP_MS, the grid starts again from now.
      if (this.resume || now - this.nextAt > MAX_CATCH_UP_MS) this.nextAt = Math.max(this.nextAt, now);
      this.resume = false;
      if (this.nextAt > now) {
        this.timer = scheduler.schedule(() => {
          this.timer = undefined;
          this.pump();
        }, this.nextAt - now);
        return;
      }
      this.queue.shift();
      if (!this.link.send(this.link.media(item.bytes))) return this.callEnded('closed');
      this.sentFrames++;
      this.nextAt += FRAME_MS;
    }
  }

  private sendMark(segment_id: number, frames: number): void {
    const name = `rxvoice-${++CallPlayback.marksMade}`;
    this.tracker.setDuration(segment_id, (frames * FRAME_MS) / 1000);
    this.marks.set(name, { segment_id, frames: this.sentFrames });
    this.link.send(this.link.mark(name));
    this.subscriber.next({ type: 'segmentSent', segment_id, seconds: this.playedSeconds() });
  }

  /** Everything was sent: wait for the marks to come back (at most `markTimeoutMs`), then end. */
  private drained(): void {
    const failed = this.speechFailed;
    const end = (): void => (failed ? this.finish('error', failed.error) : this.finish('ended'));
    if (this.marks.size === 0) return end();
    this.markWait ??= this.link.scheduler.schedule(end, this.link.markTimeoutMs);
  }

  private finish(reason: HeardReason, error?: unknown): void {
    if (this.over) return;
    this.over = true;
    // complete only when the whole speech was sent (an interruption before any text is not)
    const allSent = this.speechDone && this.speechFailed === undefined && this.queue.length === 0;
    this.timer?.unsubscribe();
    this.timer = undefined;
    this.markWait?.unsubscribe();
    this.speech?.unsubscribe();
    this.queue.length = 0;
    this.link.released();
    const played = this.tracker.report(this.playedSeconds());
    const report = { ...played, complete: played.complete && allSent };
    this.link.onHeard?.(report);
    if (this.subscriber.closed) return;
    this.subscriber.next({ type: 'heard', report, reason });
    if (error !== undefined) this.subscriber.error(error);
    else this.subscriber.complete();
  }
}
