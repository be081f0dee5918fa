/**
 * The state of one cached speech (see `cachedSpeak.ts`): sentences in order, hits waiting
 * for the misses before them, the live segment being received, and the output. The
 * operator feeds it the looked-up sentences (`sentence`) and the live session's events
 * (`live`); it emits on the subscriber.
 *
 * Which sent text a live segment finished is found by counting characters other than
 * whitespace, as the session's metrics do: segments, in order, cover the text sent, in
 * order; a `segmentMismatch` names the sent text when the service reported another; after
 * a reconnect the count restarts from the text sent again.
 */
import type { Subscriber } from 'rxjs';
import type { LiveSpeechEvent } from '../live/events.js';
import { MAX_AUDIO_FRAME_BYTES, type WordTimestamp } from '../live/protocol.js';
import type { CacheCore } from './core.js';
import type { CacheEntry } from './entry.js';

/** Characters other than whitespace: what the coverage count counts. */
export const nonSpace = (text: string): number => text.replace(/\s+/gu, '').length;

/** A sentence in the order it came: a hit to replay, or a miss sent to the live session (`from`/`upTo`: its place in the count). */
export type Slot = { kind: 'hit'; entry: CacheEntry } | { kind: 'miss'; text: string; key: string | undefined; from: number; upTo: number };

/** The live segment being received. */
interface LiveSegment {
  liveId: number;
  outId: number;
  text: string;
  sent: string;
  word_timestamps: WordTimestamp[] | undefined;
  chunks: Uint8Array[];
  /** Infinity once the segment grew past what the cache may hold (it is then not stored). */
  bytes: number;
  /** Where the text this segment covers starts in the count. */
  from: number;
}

/** One subscription's merge of hits and live segments. */
export class HitMissMerge {
  readonly #core: CacheCore;
  readonly #subscriber: Subscriber<LiveSpeechEvent>;
  readonly #queue: Slot[] = [];
  readonly #writes = new Set<Promise<void>>();
  #format: string | undefined;
  #sampleRate: number | null;
  #readySent = false;
  #nextOutId = 0;
  /** Characters covered by finished live segments. */
  #covered = 0;
  /** Characters sent to the live session. */
  #sent = 0;
  #segment: LiveSegment | undefined;
  /** After a skip the service may still name its sent text (segmentMismatch): release waits for the next event. */
  #holdRelease = false;
  #inputDone = false;
  /** The live session fell back to `POST /tts-stream` (`segmentFallback`): its later segments are not stored. */
  #fellBack = false;
  /** The settings ask for word timestamps: a segment that came without them is not stored. */
  readonly #wantsTimestamps: boolean;
  /** 'none': no session was needed; 'open': it runs; 'done': it completed. */
  #live: 'none' | 'open' | 'done' = 'none';
  #finished = false;

  constructor(core: CacheCore, subscriber: Subscriber<LiveSpeechEvent>, format: string | undefined, sampleRate: number | null, wantsTimestamps: boolean) {
    this.#core = core;
    this.#subscriber = subscriber;
    this.#format = format;
    this.#sampleRate = sampleRate;
    this.#wantsTimestamps = wantsTimestamps;
  }

  /** A looked-up sentence, in order. Returns true for a miss: the caller sends its text to the live session. */
  sentence(slot: Slot): boolean {
    this.#queue.push(slot);
    if (slot.kind === 'miss') {
      this.#sent = slot.upTo;
      this.#live = this.#live === 'none' ? 'open' : this.#live;
    }
    if (!this.#holdRelease) this.#release();
    return slot.kind === 'miss';
  }

  /** No more sentences. */
  inputDone(): void {
    this.#inputDone = true;
    this.#release();
  }

  /** The live session completed. */
  liveDone(): void {
    this.#live = 'done';
    this.#holdRelease = false;
    this.#release();
  }

  /** An event of the live session. */
  live(event: LiveSpeechEvent): void {
    if (this.#holdRelease && event.type !== 'segmentMismatch') {
      this.#holdRelease = false;
      this.#release();
    }
    const segment = this.#segment;
    const current = segment !== undefined && 'segment_id' in event && segment.liveId === event.segment_id ? segment : undefined;
    switch (event.type) {
      case 'ready':
        if (typeof event.config['output_format'] === 'string') this.#format = event.config['output_format'];
        if (typeof event.config['sample_rate'] === 'number') this.#sampleRate = event.config['sample_rate'];
        this.#readySent = true;
        this.#subscriber.next(event);
        return;
      case 'segmentStart': {
        const outId = this.#nextOutId++;
        this.#segment = { liveId: event.segment_id, outId, text: event.text, sent: event.text, word_timestamps: event.word_timestamps, chunks: [], bytes: 0, from: this.#covered };
        this.#subscriber.next({ ...event, segment_id: outId });
        return;
      }
      case 'audio':
        if (current && current.bytes + event.bytes.byteLength <= this.#core.maxBytes) {
          current.chunks.push(event.bytes);
          current.bytes += event.bytes.byteLength;
        } else if (current) {
          current.bytes = Infinity;
          current.chunks = [];
        }
        this.#subscriber.next({ ...event, segment_id: current?.outId ?? this.#nextOutId - 1 });
        return;
      case 'segmentMismatch':
        if (current) current.sent = event.sent;
        // A skipped segment's sent text: correct the count made from the reported text.
        else this.#covered += nonSpace(event.sent) - nonSpace(event.reported);
        this.#subscriber.next({ ...event, segment_id: current?.outId ?? this.#nextOutId - 1 });
        if (!current) this.#release();
        return;
      case 'segmentDone':
        this.#segment = undefined;
        this.#subscriber.next({ ...event, segment_id: current?.outId ?? this.#nextOutId - 1 });
        if (current) {
          if (Number.isFinite(current.bytes)) this.#store(current);
          this.#covered = current.from + nonSpace(current.sent);
        }
        this.#release();
        return;
      case 'segmentSkipped':
        this.#segment = undefined;
        this.#covered += nonSpace(event.text);
        this.#subscriber.next({ ...event, segment_id: current?.outId ?? this.#nextOutId++ });
        this.#holdRelease = true;
        return;
      case 'segmentFallback':
        // the sentences from here on are spoken over tts-stream: passed on, numbered as the segment that follows, not stored
        this.#fellBack = true;
        this.#subscriber.next({ ...event, segment_id: this.#nextOutId });
        return;
      case 'reconnected':
        this.#segment = undefined;
        this.#covered = this.#sent - nonSpace(event.resent);
        this.#subscriber.next(event);
        return;
      case 'done':
        return; // one `done` comes out at the very end
    }
  }

  /** Emit the hits at the head of the queue, drop the misses the live segments finished, and end when all is out. */
  #release(): void {
    for (;;) {
      const head = this.#queue[0];
      if (head === undefined) break;
      if (head.kind === 'hit') this.#replay(head.entry);
      else if (this.#covered < head.upTo) break;
      this.#queue.shift();
    }
    if (!this.#inputDone || this.#live === 'open' || this.#finished || this.#subscriber.closed) return;
    this.#finished = true;
    for (const slot of this.#queue.splice(0)) if (slot.kind === 'hit') this.#replay(slot.entry);
    void Promise.allSettled([...this.#writes]).then(() => {
      this.#subscriber.next({ type: 'done' });
      this.#subscriber.complete();
    });
  }

  #replay(entry: CacheEntry): void {
    if (!this.#readySent) {
      this.#readySent = true;
      this.#subscriber.next({ type: 'ready', session_id: 'cache', run_id: -1, config: { output_format: this.#format, sample_rate: this.#sampleRate, cached: true } });
    }
    const id = this.#nextOutId++;
    const { text, word_timestamps } = entry;
    this.#subscriber.next(word_timestamps === undefined ? { type: 'segmentStart', segment_id: id, text, cached: true } : { type: 'segmentStart', segment_id: id, text, word_timestamps, cached: true });
    for (let at = 0; at < entry.audio.byteLength; at += MAX_AUDIO_FRAME_BYTES) {
      this.#subscriber.next({ type: 'audio', segment_id: id, bytes: entry.audio.slice(at, at + MAX_AUDIO_FRAME_BYTES) });
    }
    this.#subscriber.next({ type: 'segmentDone', segment_id: id });
  }

  /**
   * Store a finished live segment when it covers exactly the miss at the head of the queue,
   * and is what the live session would give again: not one spoken by the stall fallback, not
   * one whose word timestamps were asked for and did not come.
   */
  #store(done: LiveSegment): void {
    if (this.#fellBack || (this.#wantsTimestamps && !(done.word_timestamps !== undefined && done.word_timestamps.length > 0))) return;
    const head = this.#queue[0];
    if (head?.kind !== 'miss' || head.key === undefined || head.from !== done.from || head.text.trim() !== done.sent.trim()) return;
    const audio = new Uint8Array(done.bytes);
    let offset = 0;
    for (const chunk of done.chunks) {
      audio.set(chunk, offset);
      offset += chunk.byteLength;
    }
    const write = this.#core.save(head.key, { text: done.text, word_timestamps: done.word_timestamps, format: this.#format, sample_rate: this.#sampleRate, audio });
    this.#writes.add(write);
    void write.then(() => this.#writes.delete(write));
  }
}
