/**
 * Plays a live speech session in the browser through Web Audio, segment after segment
 * with no gap, as the audio arrives, and says on the audio clock what is heard.
 */
import { Observable, asyncScheduler, type OperatorFunction, type SchedulerLike, type Subscriber, type Subscription } from 'rxjs';
import { ValidationError } from '../core/errors.js';
import { createWavStreamDecoder, type WavStreamDecoder } from '../audio/wavStream.js';
import type { LiveSpeechEvent } from '../live/events.js';
import { HeardTracker, type HeardReport } from '../live/heard.js';
import type { WordTimestamp } from '../live/protocol.js';
import { defaultAudioContext, type AudioBufferLike, type AudioBufferSourceNodeLike, type AudioContextLike, type AudioNodeLike, type GainNodeLike } from './audio.js';
import { WebAudioError } from './errors.js';
import { concatBytes } from '../core/bytes.js';
import type { PlaybackEvent } from './events.js';

/** Options of {@link toWebAudio}. */
export interface ToWebAudioOptions {
  /**
   * The `AudioContext` to play through (one per page is best; create or resume it in a
   * click handler so the autoplay policy lets it run). Default: a new `AudioContext`
   * per subscription, closed when the subscription ends.
   */
  context?: AudioContextLike;
  /** Where the audio goes; default `context.destination`. */
  destination?: AudioNodeLike;
  /**
   * Seconds between the arrival of audio that finds nothing playing and its first
   * sample: room for the next frames to arrive. Default 0.05.
   */
  bufferSeconds?: number;
  /** How long a suspended `AudioContext` may take to start running, ms; then a `WebAudioError`. Default 3000. */
  resumeTimeoutMs?: number;
  /** Scheduler of the timed events and of the resume timeout (virtual time in tests). Default `asyncScheduler`. */
  scheduler?: SchedulerLike;
  /**
   * Called once with what the listener heard (`heardText` on the audio clock) when playback
   * ends, fails, or is unsubscribed (barge-in): the text cut after the words whose audio had
   * played.
   */
  onHeard?: (report: HeardReport) => void;
}

interface Chunk {
  /** Seconds into the segment. */
  offset: number;
  /** Audio-clock time of its first sample. */
  start: number;
}
interface SegmentPlay {
  id: number;
  text: string;
  words: WordTimestamp[];
  chunks: Chunk[];
  /** Seconds of the segment scheduled so far. */
  scheduled: number;
  /** Audio-clock time its last scheduled buffer ends: where the next segment's audio starts, the same number. */
  endTime: number;
  wordIndex: number;
  receivedTime: number | undefined;
  decoder: WavStreamDecoder | undefined;
  /** Encoded bytes waiting for the segment's end (formats other than WAV). */
  encoded: Uint8Array[];
}

/** Audio-clock tolerance when comparing a due time with `currentTime`, seconds. */
const EPSILON = 0.0005;

/**
 * Plays live speech events (from `speak()`) through Web Audio and emits what is heard.
 *
 * <span class="informal">A sink for the browser: each segment's audio is scheduled on one
 * `AudioContext` right after the previous one (gapless, in order) as soon as it arrives;
 * WAV is decoded frame by frame as it streams in, other formats (mp3, flac, aac) with
 * `decodeAudioData` at the segment's end.</span>
 *
 * Emits `segmentScheduled` when a segment's first audio is scheduled (with its start time
 * on the audio clock), then, each when the audio clock reaches it, `segmentPlaying`, one
 * `word` per word timestamp (at the sample the timestamp names, not when it arrived),
 * and `segmentPlayed`; `segmentSkipped` as it arrives; `ended` once the session is done
 * and the last sample has played, then completes. Audio that arrives later than real
 * time leaves a gap, and the following words move with their audio.
 *
 * ```
 * speech:    r-s-a-a-d-s-a-d-D|
 * playback:  ----S---P-w-w--S-P-w-w--Y-E|   (S scheduled, P playing, w word, Y played, E ended)
 * ```
 *
 * Errors: no Web Audio in the page, or a context that is closed or does not start
 * running within `resumeTimeoutMs` (autoplay policy): `WebAudioError` (`reason`
 * `'no_web_audio'` / `'suspended'`), before any sound; audio that cannot be decoded:
 * `WebAudioError` (`'invalid_audio'`); an error of the session: the sound stops and the
 * error is passed on.
 *
 * Unsubscribing (barge-in) stops every scheduled source and disconnects the output at once
 * (silent from the next render quantum) and unsubscribes the session, which closes its
 * WebSocket. With `onHeard`, what the listener heard is reported then, and when playback
 * ends or fails (a `HeardReport` from `rxvoice/live`: the text cut at a word boundary after
 * the audio played on the audio clock).
 *
 * ## Example
 * ```ts
 * import { of, share } from 'rxjs';
 * import { speak } from 'rxvoice/live';
 * import { toWebAudio, wordsAsHeard } from 'rxvoice/web';
 *
 * const context = new AudioContext();
 * const playback$ = of('Hello there. How are you?').pipe(
 *   speak({ wsUrl: 'wss://example.com/speech', WebSocket }, { voice_id: 1, word_timestamps: true }),
 *   toWebAudio({ context }),
 *   share(),
 * );
 * playback$.pipe(wordsAsHeard()).subscribe((word) => console.log(word.word));
 * ```
 *
 * @param options `context`, `destination`, `bufferSeconds`, `resumeTimeoutMs`, `scheduler`, `onHeard`.
 * @returns An operator from live speech events to playback events.
 * @throws ValidationError at once when an option is invalid.
 */
export function toWebAudio(options: ToWebAudioOptions = {}): OperatorFunction<LiveSpeechEvent, PlaybackEvent> {
  const bufferSeconds = options.bufferSeconds ?? 0.05;
  const resumeTimeoutMs = options.resumeTimeoutMs ?? 3000;
  const issues = [];
  if (!(Number.isFinite(bufferSeconds) && bufferSeconds >= 0 && bufferSeconds <= 10)) {
    issues.push({ loc: ['bufferSeconds'], msg: 'must be a number of seconds from 0 to 10', type: 'value_error' });
  }
  if (!(Number.isFinite(resumeTimeoutMs) && resumeTimeoutMs > 0)) {
    issues.push({ loc: ['resumeTimeoutMs'], msg: 'must be a positive number of milliseconds', type: 'value_error' });
  }
  if (options.onHeard !== undefined && typeof options.onHeard !== 'function') {
    issues.push({ loc: ['onHeard'], msg: 'must be a function', type: 'value_error' });
  }
  if (issues.length > 0) throw new ValidationError(issues, { source: 'local' });
  const scheduler = options.scheduler ?? asyncScheduler;

  return (speech) =>
    new Observable<PlaybackEvent>((subscriber) => {
      let context = options.context;
      let owned = false;
      if (context === undefined) {
        const AudioContextClass = defaultAudioContext();
        if (AudioContextClass === undefined) {
          subscriber.error(new WebAudioError('no_web_audio', 'This page has no Web Audio (AudioContext): speech cannot be played here.'));
          return undefined;
        }
        try {
          context = new AudioContextClass();
        } catch (cause) {
          subscriber.error(new WebAudioError('no_web_audio', 'An AudioContext could not be created.', { cause }));
          return undefined;
        }
        owned = true;
      }
      if (context.state === 'closed') {
        subscriber.error(new WebAudioError('suspended', 'The AudioContext is closed: create a new one to play speech.'));
        return undefined;
      }
      const player = new Player(context, options.destination ?? context.destination, bufferSeconds, scheduler, subscriber, options.onHeard);
      const ctx = context;
      let resumeTimer: Subscription | undefined;
      if (ctx.state !== 'running') {
        ctx.resume().catch(() => undefined);
        resumeTimer = scheduler.schedule(() => {
          if (ctx.state !== 'running') {
            player.fail(
              new WebAudioError(
                'suspended',
                `The AudioContext did not start (state ${ctx.state}): browsers let audio start only after a user gesture, so create or resume it in a click handler.`,
              ),
            );
          }
        }, resumeTimeoutMs);
      }
      const session = speech.subscribe({
        next: (event) => player.onSpeech(event),
        error: (error: unknown) => player.fail(error),
        complete: () => player.onSpeechComplete(),
      });
      return () => {
        resumeTimer?.unsubscribe();
        session.unsubscribe();
        player.stop();
        if (owned) ctx.close().catch(() => undefined);
      };
    });
}

/** One subscription's playback: the schedule, the segments and the timed events. */
class Player {
  private readonly output: GainNodeLike;
  private readonly sources = new Set<AudioBufferSourceNodeLike>();
  private readonly segments = new Map<number, SegmentPlay>();
  private current: SegmentPlay | undefined;
  private format: string | undefined;
  /** Audio-clock time where the next audio goes (0 before any). */
  private nextTime = 0;
  /** Events waiting for the audio clock, in time order. */
  private readonly due: Array<{ time: number; event: PlaybackEvent }> = [];
  private timer: Subscription | undefined;
  private timerAt = Infinity;
  /** Decodes of non-WAV segments, in segment order. */
  private decoding: Promise<void> = Promise.resolve();
  private decodesPending = 0;
  private speechDone = false;
  private stopped = false;
  /** What was said, for the heard report. */
  private readonly tracker = new HeardTracker();
  /** Every buffer scheduled: audio-clock start and seconds. */
  private readonly buffers: Array<{ start: number; duration: number }> = [];

  constructor(
    private readonly context: AudioContextLike,
    destination: AudioNodeLike,
    private readonly bufferSeconds: number,
    private readonly scheduler: SchedulerLike,
    private readonly subscriber: Subscriber<PlaybackEvent>,
    private readonly onHeard?: (report: HeardReport) => void,
  ) {
    this.output = context.createGain();
    this.output.connect(destination);
  }

  onSpeech(event: LiveSpeechEvent): void {
    if (this.stopped) return;
    this.tracker.push(event);
    switch (event.type) {
      case 'ready': {
        const format = event.config['output_format'];
        this.format = typeof format === 'string' ? format : undefined;
        return;
      }
      case 'segmentStart': {
        const segment: SegmentPlay = {
          id: event.segment_id,
          text: event.text,
          words: event.word_timestamps ?? [],
          chunks: [],
          scheduled: 0,
          endTime: 0,
          wordIndex: 0,
          receivedTime: undefined,
          decoder: undefined,
          encoded: [],
        };
        this.segments.set(segment.id, segment);
        this.current = segment;
        return;
      }
      case 'audio':
        return this.onAudio(event.segment_id, event.bytes);
      case 'segmentDone': {
        const segment = this.segments.get(event.segment_id);
        if (segment === undefined) return;
        // all of it arrived: a reconnect from now on does not abandon it (its decode ends it)
        if (this.current === segment) this.current = undefined;
        if (segment.decoder === undefined && segment.encoded.length > 0) this.decodeWhole(segment);
        else this.endSegment(segment);
        return;
      }
      case 'segmentSkipped':
        this.subscriber.next({ type: 'segmentSkipped', segment_id: event.segment_id, text: event.text });
        return;
      case 'reconnected':
        // the segment that was arriving is abandoned (its text is spoken again): a streamed WAV's
        // audio already scheduled plays out, encoded audio not yet decoded is dropped; then it ends
        if (this.current !== undefined) this.endSegment(this.current);
        return;
      default:
        return;
    }
  }

  onSpeechComplete(): void {
    if (this.stopped) return;
    this.speechDone = true;
    if (this.decodesPending === 0) this.end();
  }

  /** After the speech completed and every decode finished: `ended` once the last sample has played. */
  private end(): void {
    const last = this.due.length > 0 ? this.due[this.due.length - 1]!.time : 0;
    const time = Math.max(this.nextTime, this.context.currentTime);
    this.at(Math.max(time, last), { type: 'ended', time });
  }

  fail(error: unknown): void {
    if (this.stopped) return;
    this.stop();
    this.subscriber.error(error);
  }

  /** Silence at once: every source stopped, the output disconnected, no timer left. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.reportHeard();
    for (const source of this.sources) {
      try {
        source.stop();
      } catch {
        // already stopped
      }
    }
    this.sources.clear();
    this.output.disconnect();
    this.timer?.unsubscribe();
    this.due.length = 0;
    this.segments.clear();
  }

  /** Seconds of audio played by now on the audio clock, and what they carried, to `onHeard`. */
  private reportHeard(): void {
    if (this.onHeard === undefined) return;
    const now = this.context.currentTime;
    const played = this.buffers.reduce((sum, b) => sum + Math.min(Math.max(now - b.start, 0), b.duration), 0);
    const report = this.tracker.report(played);
    // complete only when the speech is over and all of it played (not a barge-in before any text)
    const over = this.speechDone && this.decodesPending === 0 && played >= this.tracker.totalSeconds - EPSILON;
    this.onHeard({ ...report, complete: report.complete && over });
  }

  private onAudio(id: number, bytes: Uint8Array): void {
    const segment = this.segments.get(id);
    if (segment === undefined || bytes.byteLength === 0) return;
    segment.receivedTime ??= this.context.currentTime;
    const wav = segment.decoder !== undefined || (segment.encoded.length === 0 && (this.format === 'wav' || (this.format === undefined && startsWithRiff(bytes))));
    if (!wav) {
      segment.encoded.push(bytes);
      return;
    }
    segment.decoder ??= createWavStreamDecoder();
    let pcm;
    try {
      pcm = segment.decoder.feed(bytes);
    } catch (cause) {
      return this.fail(new WebAudioError('invalid_audio', `Segment ${id}: ${(cause as Error).message}`, { cause }));
    }
    if (pcm === undefined) return;
    const buffer = this.context.createBuffer(pcm.channels.length, pcm.frames, pcm.sampleRate);
    pcm.channels.forEach((samples, channel) => buffer.copyToChannel(samples as Float32Array<ArrayBuffer>, channel));
    this.play(segment, buffer);
  }

  private decodeWhole(segment: SegmentPlay): void {
    const bytes = concatBytes(segment.encoded);
    segment.encoded = [];
    this.decodesPending++;
    this.decoding = this.decoding.then(async () => {
      if (this.stopped) return;
      let buffer: AudioBufferLike;
      try {
        buffer = await this.context.decodeAudioData(bytes.buffer as ArrayBuffer);
      } catch (cause) {
        return this.fail(new WebAudioError('invalid_audio', `Segment ${segment.id}: its ${this.format ?? 'encoded'} audio could not be decoded.`, { cause }));
      }
      if (this.stopped) return;
      this.play(segment, buffer);
      this.endSegment(segment);
      this.decodesPending--;
      if (this.decodesPending === 0 && this.speechDone) this.end();
    });
  }

  /** Schedules a buffer right after what is scheduled (or shortly after now, if nothing plays). */
  private play(segment: SegmentPlay, buffer: AudioBufferLike): void {
    const now = this.context.currentTime;
    const start = this.nextTime > now ? this.nextTime : now + this.bufferSeconds;
    const source = this.context.createBufferSource();
    source.buffer = buffer;
    source.connect(this.output);
    source.onended = () => this.sources.delete(source);
    this.sources.add(source);
    source.start(start);
    this.nextTime = start + buffer.duration;
    segment.endTime = this.nextTime;
    this.buffers.push({ start, duration: buffer.duration });
    if (segment.chunks.length === 0) {
      this.subscriber.next({
        type: 'segmentScheduled',
        segment_id: segment.id,
        text: segment.text,
        words: segment.words,
        startTime: start,
        receivedTime: segment.receivedTime ?? now,
      });
      this.at(start, { type: 'segmentPlaying', segment_id: segment.id, text: segment.text, time: start });
    }
    segment.chunks.push({ offset: segment.scheduled, start });
    segment.scheduled += buffer.duration;
    this.timeWords(segment, false);
  }

  /** Puts on the clock the words whose first sample is scheduled (all of them at the end). */
  private timeWords(segment: SegmentPlay, final: boolean): void {
    if (segment.chunks.length === 0) return;
    while (segment.wordIndex < segment.words.length) {
      const word = segment.words[segment.wordIndex]!;
      if (!final && word.start >= segment.scheduled) return;
      const offset = Math.min(Math.max(word.start, 0), segment.scheduled);
      let chunk = segment.chunks[segment.chunks.length - 1]!;
      for (let i = segment.chunks.length - 1; i >= 0 && chunk.offset > offset; i--) chunk = segment.chunks[i]!;
      const time = chunk.start + (offset - chunk.offset);
      this.at(time, { type: 'word', segment_id: segment.id, index: segment.wordIndex, word: word.word, start: word.start, end: word.end, time });
      segment.wordIndex++;
    }
  }

  private endSegment(segment: SegmentPlay): void {
    this.timeWords(segment, true);
    this.tracker.setDuration(segment.id, segment.scheduled);
    this.segments.delete(segment.id);
    if (this.current === segment) this.current = undefined;
    // the very number the next segment starts at: computed apart, the two could differ by a
    // rounding and put this segment's end after the next one's start
    const end = segment.chunks.length === 0 ? this.context.currentTime : segment.endTime;
    this.at(end, { type: 'segmentPlayed', segment_id: segment.id, time: end });
  }

  /** Emits `event` when the audio clock reaches `time`. */
  private at(time: number, event: PlaybackEvent): void {
    let i = this.due.length;
    while (i > 0 && this.due[i - 1]!.time > time) i--;
    this.due.splice(i, 0, { time, event });
    this.arm();
  }

  private arm(): void {
    const head = this.due[0];
    if (head === undefined || this.stopped) return;
    if (this.timer !== undefined && !this.timer.closed && this.timerAt <= head.time) return;
    this.timer?.unsubscribe();
    this.timerAt = head.time;
    // whole milliseconds: what timers resolve anyway (and virtual time stays exact)
    const delayMs = Math.max(0, Math.round((head.time - this.context.currentTime) * 1000));
    this.timer = this.scheduler.schedule(() => this.flush(), delayMs);
  }

  private flush(): void {
    this.timer = undefined;
    const now = this.context.currentTime;
    while (!this.stopped && this.due.length > 0 && this.due[0]!.time <= now + EPSILON) {
      const { event } = this.due.shift()!;
      this.subscriber.next(event);
      if (event.type === 'ended') {
        this.stop();
        this.subscriber.complete();
        return;
      }
    }
    this.arm();
  }
}

function startsWithRiff(bytes: Uint8Array): boolean {
  return bytes.byteLength >= 4 && bytes[0] === 0x52 && bytes[1] === 0x49 && bytes[2] === 0x46 && bytes[3] === 0x46;
}

