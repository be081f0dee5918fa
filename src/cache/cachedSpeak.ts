/**
 * Live speech through a cache: an operator around the live session that cuts the text in
 * sentences, looks each up (in order), replays hits and sends misses to one live session,
 * opened on the first miss only (a text whose every sentence hits opens no connection).
 *
 * Order: sentences come out in the order they went in. A hit waits until every miss
 * before it is finished (delivered or skipped); which pushed text a live segment finished
 * is found by counting characters other than whitespace, as the session's metrics do
 * (segments, in order, cover the text sent in order; after a reconnect the count restarts
 * from the text sent again).
 *
 * Storing: a live segment is stored when it is done (never a skipped one, never one cut
 * short by a reconnect) and covers exactly one miss sentence: its audio bytes as received,
 * its word timestamps and the text the service reported. The output completes only after
 * those writes settle, so the next call sees them.
 *
 * Output: every segment is numbered again in output order (hits and live segments share
 * one sequence of `segment_id`s); a `ready` comes first (the live one, or, when a hit comes
 * out before any session is ready, one with `session_id: 'cache'` and `run_id: -1`); one
 * `done` comes last.
 */
import { concatMap, defer, Observable, Subject, type OperatorFunction, type Subscription } from 'rxjs';
import { MAX_AUDIO_FRAME_BYTES, SessionConfigSchema, type WordTimestamp } from '../live/protocol.js';
import type { LiveSpeechEvent } from '../live/events.js';
import { DEFAULT_LIVE_OUTPUT_FORMAT, type SpeakOptions } from '../live/options.js';
import { segmentSentences } from '../operators/segmentSentences.js';
import type { CacheCore } from './core.js';
import type { CacheEntry } from './entry.js';
import { cacheKey, type AudioSettings } from './key.js';

const nonSpace = (text: string): number => text.replace(/\s+/gu, '').length;

/** A sentence in the order it came: a hit to replay, or a miss sent to the live session. */
type Slot = { kind: 'hit'; entry: CacheEntry } | { kind: 'miss'; text: string; key: string | undefined; from: number; upTo: number };

/** The live segment being received. */
interface LiveSegment {
  liveId: number;
  outId: number;
  text: string;
  sent: string;
  word_timestamps: WordTimestamp[] | undefined;
  chunks: Uint8Array[];
  bytes: number;
  /** Where the text this segment covers starts, in non-whitespace characters sent. */
  from: number;
}

/** The settings of a live session that change its audio (the `session.start` frame but `idle_timeout`). */
export function liveAudioSettings(options: SpeakOptions): AudioSettings {
  const parsed = SessionConfigSchema.safeParse({ output_format: DEFAULT_LIVE_OUTPUT_FORMAT, ...sessionFields(options) });
  if (!parsed.success) return { path: 'live', invalid: true };
  const { idle_timeout: _idle, ...settings } = parsed.data;
  return { path: 'live', ...settings };
}

function sessionFields(options: SpeakOptions): Record<string, unknown> {
  const { reconnect: _r, scheduler: _s, readyTimeoutMs: _t, maxPayload: _m, clientBoundaries: _c, boundaryHoldMs: _b, responseTimeoutMs: _x, closeGraceMs: _g, metrics: _q, ...config } = options;
  return config;
}

/**
 * The operator (see the file comment). `live` is created at once (bad options throw its
 * `ValidationError` here) and subscribed on the first miss.
 */
export function cachedSpeak(core: CacheCore, options: SpeakOptions, live: (options: SpeakOptions) => OperatorFunction<string, LiveSpeechEvent>): OperatorFunction<string, LiveSpeechEvent> {
  const liveOperator = live(options);
  const settings = liveAudioSettings(options);
  const language = typeof options.language === 'string' ? options.language : undefined;
  return (source) =>
    new Observable<LiveSpeechEvent>((subscriber) => {
      const queue: Slot[] = [];
      const writes = new Set<Promise<void>>();
      let liveInput: Subject<string> | undefined;
      let liveSubscription: Subscription | undefined;
      let liveDone = false;
      let inputDone = false;
      let readySent = false;
      let nextOutId = 0;
      let sentChars = 0;
      let covered = 0;
      let segment: LiveSegment | undefined;
      /** After a skip, the service may still name its sent text (segmentMismatch): release waits for the next event. */
      let holdRelease = false;
      let format: string | undefined = typeof settings['output_format'] === 'string' ? settings['output_format'] : undefined;
      let sampleRate = typeof settings['sample_rate'] === 'number' ? settings['sample_rate'] : null;

      const emitReady = (): void => {
        if (readySent) return;
        readySent = true;
        subscriber.next({ type: 'ready', session_id: 'cache', run_id: -1, config: { output_format: format, sample_rate: sampleRate, cached: true } });
      };

      const replay = (entry: CacheEntry): void => {
        emitReady();
        const id = nextOutId++;
        subscriber.next(entry.word_timestamps === undefined ? { type: 'segmentStart', segment_id: id, text: entry.text } : { type: 'segmentStart', segment_id: id, text: entry.text, word_timestamps: entry.word_timestamps });
        for (let at = 0; at < entry.audio.byteLength; at += MAX_AUDIO_FRAME_BYTES) {
          subscriber.next({ type: 'audio', segment_id: id, bytes: entry.audio.slice(at, at + MAX_AUDIO_FRAME_BYTES) });
        }
        subscriber.next({ type: 'segmentDone', segment_id: id });
      };

      /** Emit the hits at the head of the queue and drop the misses the live segments finished. */
      const release = (): void => {
        for (;;) {
          const head = queue[0];
          if (head === undefined) break;
          if (head.kind === 'hit') replay(head.entry);
          else if (covered < head.upTo) break;
          queue.shift();
        }
        finishIfDone();
      };

      const finishIfDone = (): void => {
        if (!inputDone || (liveInput !== undefined && !liveDone) || subscriber.closed) return;
        for (const slot of queue.splice(0)) if (slot.kind === 'hit') replay(slot.entry);
        void Promise.allSettled([...writes]).then(() => {
          subscriber.next({ type: 'done' });
          subscriber.complete();
        });
      };

      const store = (done: LiveSegment): void => {
        const head = queue[0];
        if (head?.kind !== 'miss' || head.key === undefined || head.from !== done.from || head.text.trim() !== done.sent.trim()) return;
        const audio = new Uint8Array(done.bytes);
        let offset = 0;
        for (const chunk of done.chunks) {
          audio.set(chunk, offset);
          offset += chunk.byteLength;
        }
        const write = core.save(head.key, { text: done.text, word_timestamps: done.word_timestamps, format, sample_rate: sampleRate, audio });
        writes.add(write);
        void write.then(() => writes.delete(write));
      };

      const onLive = (event: LiveSpeechEvent): void => {
        if (holdRelease && event.type !== 'segmentMismatch') {
          holdRelease = false;
          release();
        }
        switch (event.type) {
          case 'ready': {
            const config = event.config;
            if (typeof config['output_format'] === 'string') format = config['output_format'];
            if (typeof config['sample_rate'] === 'number') sampleRate = config['sample_rate'];
            readySent = true;
            subscriber.next(event);
            return;
          }
          case 'segmentStart': {
            const outId = nextOutId++;
            segment = { liveId: event.segment_id, outId, text: event.text, sent: event.text, word_timestamps: event.word_timestamps, chunks: [], bytes: 0, from: covered };
            subscriber.next({ ...event, segment_id: outId });
            return;
          }
          case 'audio': {
            const outId = segment?.liveId === event.segment_id ? segment.outId : nextOutId - 1;
            if (segment?.liveId === event.segment_id && segment.bytes + event.bytes.byteLength <= core.maxBytes) {
              segment.chunks.push(event.bytes);
              segment.bytes += event.bytes.byteLength;
            } else if (segment) segment.bytes = Infinity;
            subscriber.next({ ...event, segment_id: outId });
            return;
          }
          case 'segmentMismatch': {
            if (segment?.liveId === event.segment_id) segment.sent = event.sent;
            else covered += nonSpace(event.sent) - nonSpace(event.reported); // a skipped segment's sent text
            subscriber.next({ ...event, segment_id: segment?.liveId === event.segment_id ? segment.outId : nextOutId - 1 });
            if (segment?.liveId !== event.segment_id) release();
            return;
          }
          case 'segmentDone': {
            const done = segment?.liveId === event.segment_id ? segment : undefined;
            segment = undefined;
            subscriber.next({ ...event, segment_id: done?.outId ?? nextOutId - 1 });
            if (done) {
              if (Number.isFinite(done.bytes)) store(done);
              covered = done.from + nonSpace(done.sent);
            }
            release();
            return;
          }
          case 'segmentSkipped': {
            const outId = segment?.liveId === event.segment_id ? segment.outId : nextOutId++;
            segment = undefined;
            covered += nonSpace(event.text);
            subscriber.next({ ...event, segment_id: outId });
            holdRelease = true;
            return;
          }
          case 'reconnected':
            segment = undefined;
            covered = sentChars - nonSpace(event.resent);
            subscriber.next(event);
            return;
          case 'done':
            return; // one `done` comes out at the very end
        }
      };

      const openLive = (): Subject<string> => {
        if (liveInput) return liveInput;
        const input = new Subject<string>();
        liveInput = input;
        liveSubscription = input.pipe(liveOperator).subscribe({
          next: onLive,
          error: (error: unknown) => subscriber.error(error),
          complete: () => {
            liveDone = true;
            holdRelease = false;
            release();
          },
        });
        return input;
      };

      const onSlot = (slot: Slot | { kind: 'blank'; text: string }): void => {
        if (slot.kind === 'blank') {
          // Whitespace alone: nothing to say or to cache; the session gets it if it is open.
          liveInput?.next(slot.text);
          return;
        }
        queue.push(slot);
        if (slot.kind === 'miss') {
          sentChars = slot.upTo;
          openLive().next(slot.text);
        }
        if (!holdRelease) release();
      };

      let position = 0;
      const lookup = (text: string): Observable<Slot | { kind: 'blank'; text: string }> =>
        defer(async () => {
          const chars = nonSpace(text);
          if (chars === 0) return { kind: 'blank' as const, text };
          const key = await cacheKey(text, settings).catch(() => undefined);
          const entry = key === undefined ? undefined : await core.lookup(key);
          if (entry) return { kind: 'hit' as const, entry };
          const from = position;
          position += chars;
          return { kind: 'miss' as const, text, key, from, upTo: position };
        });

      const inputSubscription = source.pipe(segmentSentences(language === undefined ? {} : { locale: language }), concatMap(lookup)).subscribe({
        next: onSlot,
        error: (error: unknown) => (liveInput ? liveInput.error(error) : subscriber.error(error)),
        complete: () => {
          inputDone = true;
          if (liveInput) liveInput.complete();
          else release();
        },
      });
      return () => {
        inputSubscription.unsubscribe();
        liveSubscription?.unsubscribe();
      };
    });
}

